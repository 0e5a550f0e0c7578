"""TRL's GRPOTrainer `environment_factory` adapter, listed with the other framework adapters.

The implementation lives in `trainers.training.trl_adapter` (next to the GRPO loop it shares the
`EpisodeRecorder` with); this module is its place among the adapters.
"""

from ..training.trl_adapter import DEFAULT_SYSTEM_PROMPT, TRLAdapter

__all__ = ["DEFAULT_SYSTEM_PROMPT", "TRLAdapter"]
