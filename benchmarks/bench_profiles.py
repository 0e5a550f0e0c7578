"""Coverage of the benchmarks' kinds of work by profile mixes (issue 32).

For each benchmark task list (the kinds a shipped profile lists with their weights: `claw-eval`, `clawmark`; see
benchmarks/derive_profiles.py for how they were derived), the share of its tasks for which an N-environment mix
of the matching profile holds an environment of the same kind, relaxed (`kinds.matches`: the environment's
services a subset of the task's, its evidence a superset, days within one, the same turn structure) and exact;
and the same for the balanced mix (`coworkenv synth`) against both. Every environment is validated by execution
before it counts, as `coworkenv synth` writes only valid ones. A clip (keyframes and a soundtrack) stands in for
video, which the simulator cannot play; the figures without counting clips as video are printed too. Targets:
>= 90% for each benchmark with its own profile, >= 70% for the balanced mix against both.

Run: `python benchmarks/bench_profiles.py [N] [--workers W] [--json]` (N defaults to 600).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from typing import Any

from synth.generate.profiles.kinds import TaskKind, coverage, kind_of
from synth.generate.profiles.profile import load_profile
from synth.profile_mix import synthesize_profile

BENCHMARKS = ("claw-eval", "clawmark")
TARGETS = {"own": 0.90, "balanced": 0.70}


def task_list(name: str) -> list[TaskKind]:
    """A benchmark's tasks as kinds: each of its profile's kinds as many times as its weight."""
    return [k for k, w in load_profile(name).kinds for _ in range(round(w))]


def _mix(name: str, n: int, workers: int) -> tuple[list[TaskKind], dict[str, Any]]:
    t0 = time.perf_counter()
    result = synthesize_profile(load_profile(name), n, 0, workers=workers)
    took = time.perf_counter() - t0
    kinds = [kind_of(s) for s in result.specs]
    return kinds, {"valid": len(kinds), "discarded": len(result.discarded), "env_per_s": round(n / took, 2)}


def _no_video(kinds: list[TaskKind]) -> list[TaskKind]:
    return [replace(k, evidence=k.evidence - {"video"}) for k in kinds]


def measure(n: int, workers: int = 1) -> dict[str, Any]:
    """The coverage figures for mixes of `n` environments (see the module docstring)."""
    tasks = {b: task_list(b) for b in BENCHMARKS}
    mixes = {name: _mix(name, n, workers) for name in (*BENCHMARKS, "balanced")}
    rows = []
    for bench in BENCHMARKS:
        for mix in (bench, "balanced"):
            kinds, info = mixes[mix]
            target = TARGETS["own" if mix == bench else "balanced"]
            relaxed = coverage(tasks[bench], kinds)
            rows.append({"benchmark": bench, "tasks": len(tasks[bench]), "mix": mix, **info,
                         "relaxed": round(relaxed, 4), "exact": round(coverage(tasks[bench], kinds, relaxed=False), 4),
                         "relaxed_clips_not_video": round(coverage(tasks[bench], _no_video(kinds)), 4),
                         "target": target, "met": relaxed >= target})
    return {"n": n, "rows": rows}


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    n = int(args[0]) if args else 600
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 1
    if "--workers" in argv:
        args = [a for a in args if a != str(workers)]
    out = measure(n, workers)
    if "--json" in argv:
        print(json.dumps(out, indent=2))
        return 0
    print(f"coverage of benchmark kinds by {n}-environment mixes (relaxed / exact / relaxed, clips not video)")
    for r in out["rows"]:
        print(f"{r['benchmark']:<10} {r['tasks']:>4} tasks  {r['mix']:<10} {r['valid']:>4} valid "
              f"{r['discarded']:>3} discarded  {r['relaxed']:>6.1%} {r['exact']:>6.1%} {r['relaxed_clips_not_video']:>6.1%}"
              f"  target {r['target']:.0%} {'met' if r['met'] else 'NOT met'}  ({r['env_per_s']} env/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
