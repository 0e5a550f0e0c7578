"""synth: environment specs, the capability taxonomy, the procedural generator and validation by execution.

Public API (stable; other packages rely on it):
- `EnvironmentSpec`, `load_spec(path)`, `loads_spec(text)`, `parse_spec(doc)`, `spec_json_schema()`
- `validate_spec(spec_or_doc) -> ValidationReport` with `Feedback(check, path, problem, hint)` items
- `CAPABILITIES` (id -> Capability), `generate(capability, seed)` and `synthesize(...)` (batches)
- `SpecDriver` / `run_reference`: the spec's turn semantics (scripted user, world events, working days)
- `synth.baselines` / `synth.blind_check`: the stale, forgetful, idle and blind agents validation requires to fail
- `synth.choices` (mutants equivalent by another allowed choice), `synth.answer_mutants` (wrong reports a read-only
  task must reject), `synth.evidence` (facts only an evidence file holds, and the evidence-blind baseline)
"""

from .capabilities import CAPABILITIES, Capability, capability
from .spec import SpecDriver, run_reference
from .errors import SpecLoadError
from .feedback import Feedback, ValidationReport
from .spec import EnvironmentSpec, load_spec, loads_spec, parse_spec, spec_json_schema
from .spec import ScriptedUser
from .validate import validate_spec

__all__ = [
    "CAPABILITIES", "Capability", "EnvironmentSpec", "Feedback", "ScriptedUser", "SpecDriver", "SpecLoadError",
    "ValidationReport", "capability", "load_spec", "loads_spec", "parse_spec", "run_reference", "spec_json_schema",
    "validate_spec",
]
