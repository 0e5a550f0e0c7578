"""Mixes by profile: build each target a profile draws (`synth.generate.profiles.sampler.targets`) with the
kind-directed compositions (`synth.generate.kinded`), validate it by execution as `coworkenv synth` does, and
collect a `pipeline.SynthResult`, serially or over worker processes with the same bytes. A `balanced` profile
draws the balanced mix of compositions and templates itself.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .generate.kinded import compose_kind
from .generate.profiles.kinds import TaskKind
from .generate.profiles.profile import Profile
from .generate.profiles.sampler import targets
from .parallel import WorkerPool, resolve_workers
from .pipeline import Attempt, CapabilityStats, SynthResult, mixed_attempt, synthesis_gc, synthesize, warm_procedural
from .procedural import TemplateError
from .validate import validate_spec


def profile_attempt(target: str, seed: int) -> Attempt:
    """Build one target (its JSON, as `targets` gives it) and validate it by execution: a pipeline.Attempt."""
    t = json.loads(target)
    try:
        spec = compose_kind(TaskKind.from_json(t["kind"]), seed, t["profession"], t["locale"])
    except TemplateError as e:
        return Attempt("profile", seed, None, error=str(e))
    report = validate_spec(spec)
    cap = spec.capabilities[0]
    if not report.ok:
        return Attempt(cap, seed, None, report, error=f"invalid: {report.feedback[0].line()}")
    return Attempt(cap, seed, spec, report)


def synthesize_profile(profile: Profile, count: int, seed: int = 0, on_attempt: Callable[[Any], None] | None = None,
                       workers: int = 1) -> SynthResult:
    """Generate and validate a mix of `count` environments following `profile`: a pipeline.SynthResult (stats by
    the capability each environment carries). Any `workers` gives the same specs in the same order."""
    if profile.generator == "balanced":
        return synthesize(None, count, seed, producer=mixed_attempt, on_attempt=on_attempt, workers=workers)
    jobs = [(json.dumps(t, sort_keys=True), t["seed"]) for t in targets(profile, count, seed)]
    result = SynthResult()

    def fold(attempts: Any) -> Any:
        for attempt in attempts:
            st = result.stats.setdefault(attempt.capability, CapabilityStats())
            st.generated += 1
            if attempt.valid:
                st.valid += 1
                result.specs.append(attempt.spec)
            else:
                st.discarded += 1
                result.discarded.append(attempt)
            if on_attempt is not None:
                on_attempt(attempt)
        return result

    workers = resolve_workers(workers)
    if workers == 1 or len(jobs) == 1:
        with synthesis_gc():
            return fold(profile_attempt(t, s) for t, s in jobs)
    with WorkerPool(min(workers, len(jobs)), profile_attempt, warm=warm_procedural) as pool:
        return fold(pool.map(jobs))
