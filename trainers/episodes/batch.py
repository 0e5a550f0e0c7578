"""Batches of episodes: every environment times G seeds, run here (N processes), summarised (trainers.episodes.
execute picks here or Ray).

A batch is a list of jobs (environment, seed) under one `BatchConfig`. Whoever executes it, the
records come back in job order (environment order, then seed), so the same batch gives the same
records locally, with any number of workers, or on Ray (timings aside). Work is shipped to
workers as canonical spec JSON plus the config, all picklable; each worker prepares a spec once
for all its seeds.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Literal

from synth.judge import JudgeConfig
from synth.spec import EnvironmentSpec, loads_spec

from workspace_sim.record import EpisodeRecord, parse_lines, stage_verdicts
from ..rewards import RewardConfig
from .policies import PolicySpec
from .remote import RemoteServers, RemoteTarget, close_pools
from .backends import Transport
from .prepared import EpisodeLimits, PreparedSpec
from .runner import run_episode
from .users import LLMUserSim, ScriptedUserSim, SimulatedUser

OnRecord = Callable[[EpisodeRecord], None]


@dataclass(frozen=True)
class UserSpec:
    """Which simulated user answers the agent: `scripted` (from the spec) or `llm` (with LLMSettings fields)."""

    kind: Literal["scripted", "llm"] = "scripted"
    settings: dict[str, Any] = field(default_factory=dict)

    def preflight(self) -> None:
        """For the `llm` user, check its endpoint answers and serves the model (LLMError says why not)."""
        if self.kind == "llm":
            from synth.llm.settings import LLMSettings

            from .llm import ChatEndpoint

            settings = LLMSettings.from_env(**{k: v for k, v in self.settings.items() if k != "backoff"})
            endpoint = ChatEndpoint(settings)
            try:
                endpoint.preflight()
            finally:
                endpoint.close()

    def factory(self) -> Callable[[EnvironmentSpec, int], SimulatedUser]:
        """A function (spec, seed) -> simulated user; bad LLM settings raise ValueError naming them."""
        if self.kind == "scripted":
            return lambda spec, seed: ScriptedUserSim(spec.user_simulator)
        if self.kind != "llm":
            raise ValueError(f"user simulator must be 'scripted' or 'llm', got {self.kind!r}")
        from synth.llm.settings import LLMSettings

        from .llm import ChatEndpoint

        settings = LLMSettings.from_env(**{k: v for k, v in self.settings.items() if k != "backoff"})
        endpoint = ChatEndpoint(settings, backoff=float(self.settings.get("backoff", 0.5)))

        def build(spec: EnvironmentSpec, seed: int) -> SimulatedUser:
            person = next((p for p in spec.world.people if p.email.lower() == spec.user.lower()), None)
            return LLMUserSim(spec.user_simulator, spec.request, person.name if person else spec.user, settings,
                              endpoint=endpoint, seed=seed)

        return build


@dataclass(frozen=True)
class BatchConfig:
    """Everything but the environments: policy, group size, first seed, limits, transport, user, reward,
    `connect`: a remote coworkenv server (or several, each episode routed by id) to run the episodes on
    instead of this process, and `judge`:
    the model that decides `judged` predicates (default: none, their key facts)."""

    policy: PolicySpec
    episodes_per_env: int = 1
    seed: int = 0
    limits: EpisodeLimits = EpisodeLimits()
    transport: Transport = "direct"
    user: UserSpec = UserSpec()
    reward: RewardConfig = RewardConfig()
    connect: RemoteTarget | RemoteServers | None = None
    judge: JudgeConfig = JudgeConfig()

    def __post_init__(self) -> None:
        if not isinstance(self.episodes_per_env, int) or self.episodes_per_env < 1:
            raise ValueError(f"episodes_per_env must be at least 1, got {self.episodes_per_env!r}")
        if self.transport not in ("direct", "mcp"):
            raise ValueError(f"transport must be 'direct' or 'mcp', got {self.transport!r}")

    def seeds(self) -> list[int]:
        """The seeds every environment is run with."""
        return [self.seed + k for k in range(self.episodes_per_env)]


def episode_id(spec_id: str, policy: str, seed: int) -> str:
    """The id of an environment's episode under a policy and seed (unique across batches of policies)."""
    return f"{spec_id}.{policy}.s{seed}"


class EnvRunner:
    """Runs one environment's episodes under a config, building the policy and user once per process."""

    def __init__(self, config: BatchConfig) -> None:
        self.config = config
        self.policy = config.policy.build()
        self.user = config.user.factory()
        self.judge = config.judge.build()
        self._portal_cm: Any = None
        self._portal: Any = None

    def run(self, spec: EnvironmentSpec, seeds: Sequence[int]) -> list[EpisodeRecord]:
        """The records of the spec's episodes for the seeds, in seed order."""
        prepared = PreparedSpec(spec, self.judge)
        c = self.config
        if (c.transport == "mcp" or c.connect is not None) and self._portal is None:
            from anyio.from_thread import start_blocking_portal

            self._portal_cm = start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
        return [run_episode(prepared, self.policy, seed=s, episode_id=episode_id(spec.id, c.policy.name, s), limits=c.limits,
                            user=self.user, transport=c.transport, group=spec.id, reward=c.reward,
                            portal=self._portal, connect=c.connect) for s in seeds]

    def close(self) -> None:
        """Stop the shared MCP event loop, if one was started."""
        if self._portal_cm is not None:
            close_pools(self._portal)
            self._portal_cm.__exit__(None, None, None)
            self._portal_cm = self._portal = None


def run_env_jsonl(spec_json: str, config: BatchConfig, seeds: Sequence[int]) -> str:
    """Worker entry: run one environment's episodes and return them as JSONL text (cheap to ship back)."""
    runner = _worker_runner(config)
    spec = loads_spec(spec_json, "json")
    return "".join(r.to_jsonl() for r in runner.run(spec, seeds))


_RUNNERS: dict[int, EnvRunner] = {}


def _worker_runner(config: BatchConfig) -> EnvRunner:
    key = hash(repr(config))
    if key not in _RUNNERS:
        _RUNNERS.clear()
        _RUNNERS[key] = EnvRunner(config)
    return _RUNNERS[key]


def records_from_jsonl(text: str) -> list[EpisodeRecord]:
    """Records shipped back by a worker."""
    return parse_lines(text.splitlines(), source="<worker>")


def run_local(specs: Sequence[EnvironmentSpec], config: BatchConfig, workers: int = 1,
              on_record: OnRecord | None = None) -> list[EpisodeRecord]:
    """Run the batch in this process (workers=1) or in `workers` spawned processes; records in job order."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    seeds = config.seeds()
    if workers == 1:
        runner = EnvRunner(config)
        out: list[EpisodeRecord] = []
        try:
            for spec in specs:
                for rec in runner.run(spec, seeds):
                    out.append(rec)
                    if on_record:
                        on_record(rec)
        finally:
            runner.close()
        return out
    results: dict[int, list[EpisodeRecord]] = {}
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending: dict[Future[str], int] = {
            pool.submit(run_env_jsonl, spec.canonical_json(), config, seeds): i for i, spec in enumerate(specs)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                results[i] = records_from_jsonl(fut.result())
                for rec in results[i]:
                    if on_record:
                        on_record(rec)
    return [rec for i in range(len(specs)) for rec in results[i]]


# ----------------------------------------------------------------------------------------------
# Summary
# ----------------------------------------------------------------------------------------------


@dataclass
class CapabilityRow:
    """The batch's figures for one capability (or `all`)."""

    capability: str
    episodes: int = 0
    passed: int = 0
    reward_sum: float = 0.0
    violations: int = 0
    tool_errors: int = 0
    errors: int = 0
    score_sum: float = 0.0  # weighted predicate scores (partial credit), summed
    days: int = 0  # working days of multi-day episodes
    days_passed: int = 0  # of those, days whose every predicate passed

    @property
    def success_rate(self) -> float:
        """Passed episodes over episodes."""
        return self.passed / self.episodes if self.episodes else 0.0

    @property
    def mean_reward(self) -> float:
        """Mean episode reward."""
        return self.reward_sum / self.episodes if self.episodes else 0.0

    @property
    def mean_score(self) -> float:
        """Mean weighted predicate score (partial credit, 0-1) beside the strict success rate."""
        return self.score_sum / self.episodes if self.episodes else 0.0

    def to_json(self) -> dict[str, Any]:
        """The row as JSON."""
        return {"capability": self.capability, "episodes": self.episodes, "passed": self.passed,
                "success_rate": self.success_rate, "mean_score": self.mean_score, "mean_reward": self.mean_reward,
                "violations": self.violations, "tool_errors": self.tool_errors, "errors": self.errors,
                "days": self.days, "days_passed": self.days_passed}


def summarize(records: Iterable[EpisodeRecord]) -> list[CapabilityRow]:
    """Per capability (sorted) then `all`: episodes, passed, weighted scores, rewards, policy violations, failed
    calls, errors, and the working days of multi-day episodes (how many, how many passed).

    An episode counts once for each of its capabilities; `errors` counts episodes that stopped on
    an error (of the environment, the user simulator or the policy).
    """
    rows: dict[str, CapabilityRow] = {}
    total = CapabilityRow("all")
    for rec in records:
        if rec.final is None:
            continue
        f = rec.final
        failed_calls = sum(1 for e in rec.events if e.kind == "call" and not e.ok)
        stages = stage_verdicts(f.evaluation)
        for row in [rows.setdefault(c, CapabilityRow(c)) for c in rec.header.capabilities or ["(none)"]] + [total]:
            row.episodes += 1
            row.passed += rec.passed
            row.score_sum += float(f.evaluation.get("score", 0.0))
            row.days += len(stages)
            row.days_passed += sum(1 for st in stages if st.get("passed"))
            row.reward_sum += f.reward
            row.violations += len(f.policy_violations)
            row.tool_errors += failed_calls
            row.errors += rec.errored
    return [rows[k] for k in sorted(rows)] + [total]
