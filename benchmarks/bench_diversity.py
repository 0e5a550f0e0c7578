"""Diversity and speed of the balanced mix: templates only (before) vs compositions + templates (after).

Prints, for N environments of each producer in this process: the largest share of one masked opening
(first 12 words; names, numbers, dates, paths, quotes masked), the top-10 openings' share, the share of
distinct masked sentences used 10+ times, distinct reference tool sequences, workplace kinds, the share in
Chinese, the share whose reference carries a fact across services, and env/s (generate + validate).
Run: PYTHONPATH=. python benchmarks/bench_diversity.py [N]
"""

from __future__ import annotations

import sys
import time

import synth.pipeline as pipeline
from synth.diversity import figures  # the figures live in the library (coworkenv stats reports them too)
from synth.pipeline import plan, procedural_attempt, synthesis_gc


def run(producer, n: int, seed: int = 0) -> tuple[list, float]:  # type: ignore[no-untyped-def,type-arg]
    jobs = plan(None, n, seed)
    t = time.perf_counter()
    with synthesis_gc():
        specs = [a.spec for a in (producer(c, s) for c, s in jobs) if a.spec is not None]
    return specs, n / (time.perf_counter() - t)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    runs = [("before (templates)", procedural_attempt)]
    if hasattr(pipeline, "mixed_attempt"):  # absent in a checkout from before the compositions
        runs.append(("after (mix)", pipeline.mixed_attempt))
    for _, producer in runs:  # warm both (imports, pools, each capability's first environment) before timing
        run(producer, 34, seed=10_000)
    for name, producer in runs:
        specs, rate = run(producer, n)
        f = {k: v for k, v in figures(specs).items() if k != "languages"}
        print(name, f"valid {len(specs)}/{n}", f"{rate:.2f} env/s",
              " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in f.items()))
        mix = pipeline.summarize([pipeline.profile(sp) for sp in specs])
        print("   calls median", mix["calls"]["median"], "shares", mix["share"])


if __name__ == "__main__":
    main()
