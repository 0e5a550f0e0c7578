"""Synthesis throughput: validated environments per second on one core and on every core (procedural generator).

Each environment is generated and validated by execution (reference run, do-nothing run, every
mutant, the no-answers run). The baseline is validation without mutants in the same process, so
the ratio shows what the discrimination check costs on this machine.

`synth_mix_valid_envs_per_s` times the balanced mix as it is now (multi-day stories drawn in nine
capabilities) against the same-run rate of the single-day templates alone (each capability's draw limited
to its templates outside synth.procedural.templates.scenarios: the mix before issue 20).

`synth_mix_parallel_valid_envs_per_s` times the same plan through `synthesize(..., pool=...)` on every core
(synth.parallel) against the same-run serial mix rate. The pool is started and each worker warmed with the
serial run's warm-up before the clock starts (the start is reported in the note): it is paid once per run, not
per environment. The note also gives how far a plain CPU-bound loop scales over the same number of processes at
that moment: on a shared machine the other tenants' load, not the pool, bounds the speed-up.
"""

from __future__ import annotations

import multiprocessing
import time

from synth.capabilities import CAPABILITIES
from synth.parallel import WorkerPool, default_workers
from synth.pipeline import plan, procedural_attempt, synthesis_gc, synthesize, warm_procedural
from synth.procedural import generate
from synth.procedural.world import pools
from synth.validate import validate_spec

PLAN_SEED = 1000


def run(quick: bool) -> list[dict]:
    """Time a balanced mix of every capability; returns the figures for `coworkenv bench`."""
    with synthesis_gc():  # the serial runs collect garbage as `coworkenv synth` and its workers do; put back after
        return _run(quick)


def _run(quick: bool) -> list[dict]:
    pools()  # the Faker pools and service modules load once per process; not per-environment costs
    warmup = plan(None, len(CAPABILITIES), seed=0)  # one of each: a capability's first environment pays its imports
    for cap, seed in warmup:
        procedural_attempt(cap, seed)
    jobs = plan(None, 48 if quick else 240, seed=PLAN_SEED)
    t0 = time.perf_counter()
    valid = sum(procedural_attempt(cap, seed).valid for cap, seed in jobs)
    full = time.perf_counter() - t0
    specs = [generate(cap, seed) for cap, seed in jobs]
    t0 = time.perf_counter()
    for spec in specs:
        validate_spec(spec, mutants=False)
    light_validate = time.perf_counter() - t0
    t0 = time.perf_counter()
    for cap, seed in jobs:
        generate(cap, seed)
    gen_only = time.perf_counter() - t0
    rate = valid / full
    single = _single_day_rate(jobs)
    baseline = len(jobs) / (gen_only + light_validate)
    par_rate, par_valid, workers, start = _parallel_rate(len(jobs), warmup)
    scaling = machine_scaling(workers)
    return [
        {"key": "synth_valid_envs_per_s", "value": round(rate, 1), "unit": "envs/s",
         "baseline_key": "synth_envs_per_s_without_mutants", "baseline": round(baseline, 1),
         "note": f"{valid}/{len(jobs)} valid; balanced mix of all capabilities; target >= 100/s on one core"},
        {"key": "synth_mix_valid_envs_per_s", "value": round(rate, 1), "unit": "envs/s",
         "baseline_key": "synth_single_day_valid_envs_per_s", "baseline": round(single, 1),
         "note": f"the mix with multi-day stories against the single-day templates alone, same run: ratio "
                 f"{rate / single:.2f} (>= 0.45 of a quiet machine's 114/s single-day rate reaches the >= 50/s target)"},
        {"key": "synth_mix_parallel_valid_envs_per_s", "value": round(par_rate, 1), "unit": "envs/s",
         "baseline_key": "synth_mix_valid_envs_per_s", "baseline": round(rate, 1),
         "note": f"{workers} worker processes (every core), {par_valid}/{len(jobs)} valid, the same plan: "
                 f"{par_rate / rate:.2f}x the serial mix (a CPU-bound loop scaled {scaling:.2f}x over {workers} "
                 f"processes then); single-day templates alone {single:.1f}/s serially; "
                 f"pool start and warm-up {start:.1f} s, not timed; target >= 50/s"},
        {"key": "synth_generate_ms", "value": round(1000 * gen_only / len(jobs), 3), "unit": "ms/env",
         "baseline_key": None, "baseline": None, "note": "procedural generation alone (includes the live reference run)"},
    ]


def _parallel_rate(count: int, warmup: list[tuple[str, int]]) -> tuple[float, int, int, float]:
    """For the first `count` jobs of the timed plan on every core: (validated environments per second, valid,
    workers, seconds to start and warm the pool)."""
    workers = default_workers()
    t0 = time.perf_counter()
    with WorkerPool(workers, procedural_attempt, warm=warm_procedural, warmup=warmup) as pool:
        pool.ready()
        start = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = synthesize(None, count, seed=PLAN_SEED, pool=pool)
        elapsed = time.perf_counter() - t0
    return len(result.specs) / elapsed, len(result.specs), workers, start


def _spin(barrier, results) -> None:  # type: ignore[no-untyped-def]
    barrier.wait()
    results.put(_loop())


def _loop() -> float:
    """Seconds a fixed pure-Python loop takes here and now."""
    t0 = time.perf_counter()
    d: dict[int, int] = {}
    for i in range(1_500_000):
        d[i % 1000] = d.get(i % 1000, 0) + i
    return time.perf_counter() - t0


def machine_scaling(workers: int) -> float:
    """How many times the work of one process `workers` processes get through at once (`workers` on an idle
    machine with that many cores, less when other tenants hold some): the ceiling for any parallel speed-up now."""
    if workers < 2:
        return 1.0
    before = _loop()
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(workers), ctx.SimpleQueue()
    procs = [ctx.Process(target=_spin, args=(barrier, results)) for _ in range(workers)]
    for p in procs:
        p.start()
    times = [results.get() for _ in procs]
    for p in procs:
        p.join()
    one = (before + _loop()) / 2  # one process alone, either side of the run, as the load drifts
    return workers * one / max(times)


def _single_day_rate(jobs: list[tuple[str, int]]) -> float:
    """Validated environments per second when every capability draws only its single-day templates."""
    import random

    from synth.procedural import templates_for

    t0 = time.perf_counter()
    valid = 0
    for cap, seed in jobs:
        options = [t.name for t in templates_for(cap) if not t.fn.__module__.endswith(".scenarios")]
        spec = generate(cap, seed, template=random.Random(f"pick:{cap}:{seed}").choice(options))
        valid += validate_spec(spec).ok
    return valid / (time.perf_counter() - t0)


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
