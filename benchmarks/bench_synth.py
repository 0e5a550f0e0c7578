"""Synthesis throughput: validated environments per second on one core (procedural generator).

Each environment is generated and validated by execution (reference run, do-nothing run, every
mutant, the no-answers run). The baseline is validation without mutants in the same process, so
the ratio shows what the discrimination check costs on this machine.

`synth_mix_valid_envs_per_s` times the balanced mix as it is now (multi-day stories drawn in nine
capabilities) against the same-run rate of the single-day templates alone (each capability's draw limited
to its templates outside synth.procedural.templates.scenarios: the mix before issue 20).
"""

from __future__ import annotations

import time

from synth.pipeline import plan, procedural_attempt
from synth.procedural import generate
from synth.procedural.world import pools
from synth.validate import validate_spec


def run(quick: bool) -> list[dict]:
    """Time a balanced mix of every capability; returns the figures for `coworkenv bench`."""
    pools()  # the Faker pools and service modules load once per process; not per-environment costs
    for cap, seed in plan(None, 12, seed=0):
        procedural_attempt(cap, seed)
    jobs = plan(None, 48 if quick else 240, seed=1000)
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
    return [
        {"key": "synth_valid_envs_per_s", "value": round(rate, 1), "unit": "envs/s",
         "baseline_key": "synth_envs_per_s_without_mutants", "baseline": round(baseline, 1),
         "note": f"{valid}/{len(jobs)} valid; balanced mix of all capabilities; target >= 100/s on one core"},
        {"key": "synth_mix_valid_envs_per_s", "value": round(rate, 1), "unit": "envs/s",
         "baseline_key": "synth_single_day_valid_envs_per_s", "baseline": round(single, 1),
         "note": f"the mix with multi-day stories against the single-day templates alone, same run: ratio "
                 f"{rate / single:.2f} (>= 0.45 of a quiet machine's 114/s single-day rate reaches the >= 50/s target)"},
        {"key": "synth_generate_ms", "value": round(1000 * gen_only / len(jobs), 3), "unit": "ms/env",
         "baseline_key": None, "baseline": None, "note": "procedural generation alone (includes the live reference run)"},
    ]


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
