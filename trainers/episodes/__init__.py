"""Headless episodes: run policies in environment specs, record them, replay them, batch them locally or on Ray.

- `EpisodeSession` (trainers.episodes.session) is the episode protocol every face drives: reset, step, done,
  finish, close. `run_episode(spec, policy, ...)` runs and records one episode with it (direct, in-process MCP, or on a
  remote coworkenv HTTP server with `connect=RemoteTarget(url, token)`, or spread over several with
  `connect=RemoteServers(...)`, each episode routed by its id);
  `PreparedSpec` builds a spec's start state once for many episodes; `EpisodeLimits` caps turns,
  tool calls and wall time (scaled to the environment's reference when not given). A multi-day
  scenario plays as one conversation whose days close when the user is satisfied with the day's report.
- `make_policy(name, **settings)` / `PolicySpec`: `teacher`, its `stale` and `forgetful` baselines,
  the blind `spray`, `first_pick`, `blind_writer` and `answer_only`, `noop`, `random`, `openai`, `hf`.
- `ScriptedUserSim` and `LLMUserSim` answer the agent; `UserSpec` picks one for a batch.
- `run_batch(specs, BatchConfig(...), workers, ray)` and `summarize(records)`.
- `replay_record(record, spec)` checks a record reproduces step by step.
"""

from workspace_sim.record import ReplayReport, replay_record, replay_records

from .batch import BatchConfig, CapabilityRow, UserSpec, run_local, summarize
from .execute import run_batch
from .policies import POLICY_NAMES, PolicyConfigError, PolicySpec, make_policy
from .remote import RemoteError, RemoteServers, RemoteTarget
from .prepared import EpisodeLimits, PreparedSpec, system_prompt
from .runner import run_episode
from .session import EpisodeSession
from .turns import AgentTurn, EpisodeContext, Policy, PolicyCall, TurnTokens
from .users import LLMUserSim, ScriptedUserSim, SimulatedUser

__all__ = [
    "POLICY_NAMES", "AgentTurn", "BatchConfig", "CapabilityRow", "EpisodeContext", "EpisodeLimits", "EpisodeSession", "LLMUserSim",
    "Policy", "PolicyCall", "PolicyConfigError", "PolicySpec", "PreparedSpec", "RemoteError", "RemoteServers", "RemoteTarget", "ReplayReport", "ScriptedUserSim",
    "SimulatedUser", "TurnTokens", "UserSpec", "make_policy", "replay_record", "replay_records", "run_batch",
    "run_episode", "run_local", "summarize", "system_prompt",
]
