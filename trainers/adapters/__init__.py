"""Framework adapters: coworkenv episodes inside the trainers people use, all over one episode core.

Every adapter is a thin face over `trainers.episodes.session.EpisodeSession` (the runner's turn
semantics) and writes the same `EpisodeRecord`s, so episodes from any of them replay with
`coworkenv replay` and score as `coworkenv run` scores them. Each lives in its own module and
imports its framework only there (install the matching extra):

- `trainers.adapters.gym`: `CoworkEnv(gymnasium.Env)` (extra `gym`);
- `trainers.adapters.openenv`: an OpenEnv server (`create_app`) and its `CoworkEnvClient` (extra `openenv`);
- `trainers.adapters.verifiers_env`: `load_environment(envs=...)`, a verifiers MultiTurnEnv (extra `verifiers`);
- `trainers.adapters.trl`: TRL's GRPOTrainer `environment_factory` (extra `train`).

`trainers.adapters.common` holds what they share (spec sources, settings, action parsing, step rewards).
"""

from .common import ActionError, EpisodeSettings, SpecSource, StepRewards, parse_action, turn_from_message

__all__ = ["ActionError", "EpisodeSettings", "SpecSource", "StepRewards", "parse_action", "turn_from_message"]
