"""The LLM generator: any OpenAI-compatible endpoint writes EnvironmentSpecs, the validator's feedback repairs them.

- `LLMSettings.from_env(...)`: endpoint, model and key (COWORKENV_OPENAI_BASE_URL/_MODEL/_API_KEY).
- `generate_with_repair(capability, requirement, settings, validator, max_rounds, spec_model=...)`:
  the generic generate-validate-repair loop, returning (spec or None, GenerationStats).
- `generate_spec(capability, requirement, settings, max_repairs)`: the loop wired to EnvironmentSpec
  and synth's validator.
- `synthesize_llm(capabilities, count, settings, ...)`: a batch for `coworkenv synth --generator llm`.
"""

from .batch import BatchResult, Tally, synthesize_llm
from .client import ChatClient, Completion, Usage
from .environment import generate_spec
from .errors import LLMError
from .parse import AnswerRejected, Problem
from .repair import GenerationStats, RoundRecord, generate_with_repair
from .settings import LLMSettings, SettingsError

__all__ = [
    "AnswerRejected", "BatchResult", "ChatClient", "Completion", "GenerationStats", "LLMError", "LLMSettings",
    "Problem", "RoundRecord", "SettingsError", "Tally", "Usage", "generate_spec", "generate_with_repair",
    "synthesize_llm",
]
