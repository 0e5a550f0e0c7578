"""Batch synthesis: generate, validate, keep only valid environments, and count per capability.

`plan` spreads a count over capabilities (a balanced round robin when none are named) and gives
each environment its own seed; `synthesize` runs a producer over the plan, in this process or in
worker processes (`workers`, synth.parallel) with the same result either way. The procedural producer
generates and validates; a discarded environment is one that failed to generate or to validate.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator, Sequence

from .capabilities import CAPABILITIES, capability
from .feedback import ValidationReport
from .generate.mix import generate_mixed
from .parallel import SynthJobError, WorkerPool, resolve_workers
from .procedural import TemplateError, generate
from .spec import EnvironmentSpec
from .validate import validate_spec


@dataclass
class CapabilityStats:
    """Per-capability counts for the summary table."""

    generated: int = 0
    valid: int = 0
    repaired: int = 0
    discarded: int = 0


@dataclass
class Attempt:
    """One environment attempt: the spec when valid, the validation report, and how it went."""

    capability: str
    seed: int
    spec: EnvironmentSpec | None
    report: ValidationReport | None = None
    repaired: bool = False
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.spec is not None


@dataclass
class SynthResult:
    """Valid specs in plan order, stats per capability, and every discarded attempt (with why)."""

    specs: list[EnvironmentSpec] = field(default_factory=list)
    stats: dict[str, CapabilityStats] = field(default_factory=dict)
    discarded: list[Attempt] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"stats": {k: asdict(v) for k, v in self.stats.items()},
                "valid": [s.id for s in self.specs],
                "discarded": [{"capability": a.capability, "seed": a.seed, "error": a.error,
                               "feedback": a.report.to_json()["feedback"] if a.report else []} for a in self.discarded]}


Producer = Callable[[str, int], Attempt]


def plan(capabilities: Sequence[str] | None, count: int, seed: int) -> list[tuple[str, int]]:
    """(capability, environment seed) pairs: round robin over the capabilities (all when None)."""
    if count < 1:
        raise ValueError(f"count must be at least 1 (got {count})")
    caps = [capability(c).id for c in capabilities] if capabilities else list(CAPABILITIES)
    return [(caps[i % len(caps)], seed + i // len(caps)) for i in range(count)]


def procedural_attempt(cap: str, seed: int) -> Attempt:
    """Generate one environment procedurally and validate it by execution."""
    try:
        spec = generate(cap, seed)
    except TemplateError as e:
        return Attempt(cap, seed, None, error=str(e))
    report = validate_spec(spec)
    if not report.ok:
        return Attempt(cap, seed, None, report, error=f"invalid: {report.feedback[0].line()}")
    return Attempt(cap, seed, spec, report)


def mixed_attempt(cap: str, seed: int) -> Attempt:
    """The balanced mix's environment (a composition or a template's, synth.generate.mix), validated by execution."""
    try:
        spec = generate_mixed(cap, seed)
    except TemplateError as e:
        return Attempt(cap, seed, None, error=str(e))
    report = validate_spec(spec)
    if not report.ok:
        return Attempt(cap, seed, None, report, error=f"invalid: {report.feedback[0].line()}")
    return Attempt(cap, seed, spec, report)


PROCEDURAL_PRODUCERS = (procedural_attempt, mixed_attempt)


GC_THRESHOLD = (10_000, 10, 10)
"""The garbage collector's thresholds while synthesising (CPython's default: 700, 10, 10). Generating and validating
an environment makes some hundred thousand short-lived objects (records, states, events) and few cycles, so the
default collected the young ones every 700 allocations and walked the whole heap (every module, pool and schema
loaded) every 70 collections: 7% of the CPU of a serial run of the mix. Objects are freed as before (reference
counting); only cycles wait longer."""


def tune_gc() -> tuple[int, int, int]:
    """Set this process's garbage collector for synthesis: what is loaded now is frozen out of its rounds
    (gc.freeze) and collections run at GC_THRESHOLD. Returns the thresholds it had (`restore_gc` puts them back)."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
    return before


def restore_gc(before: tuple[int, int, int]) -> None:
    """Undo `tune_gc`: the thresholds it returned, and the frozen objects collectable again."""
    gc.set_threshold(*before)
    gc.unfreeze()


@contextmanager
def synthesis_gc() -> Iterator[None]:
    """`tune_gc` for the duration of a block (a serial run in a process that does other things)."""
    before = tune_gc()
    try:
        yield
    finally:
        restore_gc(before)


def warm_procedural() -> None:
    """Load what every procedural environment needs (the Faker pools, the service modules) once per process, and
    tune its garbage collector for synthesis (`tune_gc`): a worker process does nothing else."""
    from .procedural.world import pools

    pools()
    tune_gc()


def synthesize(capabilities: Sequence[str] | None, count: int, seed: int = 0, producer: Producer = procedural_attempt,
               on_attempt: Callable[[Attempt], None] | None = None, workers: int = 1,
               pool: WorkerPool | None = None) -> SynthResult:
    """Run `producer` over the plan; returns the valid specs and the per-capability statistics.

    `workers` > 1 runs the jobs in that many spawned processes (0: one per core); `pool` reuses a started
    `WorkerPool` (its producer must be `producer`). Either way the result, the order `on_attempt` sees the
    attempts in and the specs are those of the serial run, byte for byte. A producer that raises (or a worker
    that dies) ends the run with SynthJobError naming the capability and seed."""
    jobs = plan(capabilities, count, seed)
    workers = resolve_workers(workers)
    if pool is not None and pool.producer is not producer:
        raise ValueError(f"the pool runs {pool.producer.__qualname__}, not {producer.__qualname__}")
    result = SynthResult(stats={c: CapabilityStats() for c in dict.fromkeys(c for c, _ in jobs)})

    def fold(attempts: Iterator[Attempt]) -> SynthResult:
        for (cap, _), attempt in zip(jobs, attempts):
            st = result.stats[cap]
            st.generated += 1
            if attempt.valid:
                st.valid += 1
                st.repaired += attempt.repaired
                result.specs.append(attempt.spec)  # type: ignore[arg-type]
            else:
                st.discarded += 1
                result.discarded.append(attempt)
            if on_attempt is not None:
                on_attempt(attempt)
        return result

    if pool is not None:
        return fold(pool.map(jobs))
    if workers == 1 or len(jobs) == 1:
        # the procedural producer's collector settings as in a worker (warm_procedural), put back after
        with synthesis_gc() if producer in PROCEDURAL_PRODUCERS else nullcontext():
            return fold(_serial(jobs, producer))
    warm = warm_procedural if producer in PROCEDURAL_PRODUCERS else None
    with WorkerPool(min(workers, len(jobs)), producer, warm=warm) as own:
        return fold(own.map(jobs))


def _serial(jobs: Sequence[tuple[str, int]], producer: Producer) -> Iterator[Attempt]:
    """Each job's attempt in this process; a producer's exception becomes SynthJobError naming the job."""
    for cap, env_seed in jobs:
        try:
            attempt = producer(cap, env_seed)
        except Exception as e:
            raise SynthJobError(cap, env_seed, f"{type(e).__name__}: {e}") from e
        yield attempt


# --- the distribution of a set of environments (what `coworkenv stats` prints) -------------------------------

MIX_TARGETS: dict[str, float] = {
    "median_calls": 12, "share_two_turns": 0.30, "share_world_change": 0.25, "share_multi_day": 0.20,
    "share_evidence_only": 0.20,
}
"""Targets for the balanced mix (issues 20 and 23): median reference calls, and the shares of environments with
two or more user turns, with a world change, spanning two or more days, and with a fact that only an evidence
file holds (synth.evidence)."""

LONG_HORIZON_TARGETS: dict[str, float] = {"median_calls": 40, "median_stages": 3, "max_calls": 100}
"""Targets for the long_horizon capability: median reference calls over a median of stages, and the largest."""


@dataclass(frozen=True)
class Profile:
    """One environment's size: reference calls (retries of injected faults not counted), user turns (the
    request, each reply to a message, each day's opening), stages (days), world changes, silent ones, services,
    and how many facts only an evidence file holds (synth.evidence)."""

    id: str
    capability: str
    calls: int
    user_turns: int
    stages: int
    world_changes: int
    silent_changes: int
    services: int
    evidence_only: int = 0


def profile(spec: EnvironmentSpec) -> Profile:
    """How big and how interactive one environment is (see Profile)."""
    steps = spec.reference.steps
    calls = sum(1 for s in steps if s.kind == "call" and not s.expect_error)  # type: ignore[union-attr]
    turns = 1 + sum(1 for s in steps if s.kind in ("ask", "say", "end_stage"))
    from .evidence import evidence_only_facts

    return Profile(spec.id, spec.capabilities[0], calls, turns, max(len(spec.stages), 1), len(spec.events),
                   sum(1 for e in spec.events if e.announce is None), len(spec.services), len(evidence_only_facts(spec)))


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return float(s[n // 2]) if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def summarize(profiles: Sequence[Profile]) -> dict[str, Any]:
    """The distribution of a group of environments: count; calls median/mean/max; user turns, stages,
    world changes, silent changes and services (median/mean/max); and the shares that meet each target."""
    if not profiles:
        raise ValueError("no environments to summarize")
    out: dict[str, Any] = {"count": len(profiles)}
    for name in ("calls", "user_turns", "stages", "world_changes", "silent_changes", "services"):
        xs = [getattr(p, name) for p in profiles]
        out[name] = {"median": _median(xs), "mean": round(sum(xs) / len(xs), 2), "max": max(xs)}
    n = len(profiles)
    out["share"] = {
        "calls_at_least_12": round(sum(p.calls >= MIX_TARGETS["median_calls"] for p in profiles) / n, 4),
        "two_turns": round(sum(p.user_turns >= 2 for p in profiles) / n, 4),
        "world_change": round(sum(p.world_changes > 0 for p in profiles) / n, 4),
        "silent_change": round(sum(p.silent_changes > 0 for p in profiles) / n, 4),
        "multi_day": round(sum(p.stages >= 2 for p in profiles) / n, 4),
        "evidence_only": round(sum(p.evidence_only > 0 for p in profiles) / n, 4),
    }
    return out


def distribution(profiles: Sequence[Profile]) -> dict[str, Any]:
    """Per-capability and overall summaries, and each target with the measured figure and whether it is met
    (the long_horizon targets only when that capability is present). ValueError for no environments."""
    if not profiles:
        raise ValueError("no environments to summarize")
    groups: dict[str, list[Profile]] = {}
    for p in profiles:
        groups.setdefault(p.capability, []).append(p)
    order = [c for c in CAPABILITIES if c in groups] + sorted(c for c in groups if c not in CAPABILITIES)
    per = {c: summarize(groups[c]) for c in order}
    overall = summarize(profiles)
    targets = [
        _target("median reference calls", overall["calls"]["median"], MIX_TARGETS["median_calls"]),
        _target("share with >= 2 user turns", overall["share"]["two_turns"], MIX_TARGETS["share_two_turns"]),
        _target("share with a world change", overall["share"]["world_change"], MIX_TARGETS["share_world_change"]),
        _target("share spanning >= 2 days", overall["share"]["multi_day"], MIX_TARGETS["share_multi_day"]),
        _target("share with an evidence-only fact", overall["share"]["evidence_only"],
                MIX_TARGETS["share_evidence_only"]),
    ]
    if "long_horizon" in per:
        lh = per["long_horizon"]
        targets += [
            _target("long_horizon median calls", lh["calls"]["median"], LONG_HORIZON_TARGETS["median_calls"]),
            _target("long_horizon median days", lh["stages"]["median"], LONG_HORIZON_TARGETS["median_stages"]),
            _target("long_horizon max calls", lh["calls"]["max"], LONG_HORIZON_TARGETS["max_calls"]),
        ]
    return {"capabilities": per, "overall": overall, "targets": targets}


def _target(name: str, measured: float, target: float) -> dict[str, Any]:
    return {"target": name, "measured": measured, "at_least": target, "met": measured >= target}
