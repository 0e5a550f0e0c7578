"""Blind baselines over the balanced mix: how many generated environments each blind policy passes.

The mix is `coworkenv synth --count 140 --seed 23`'s plan (every capability balanced); each environment is played once
by spray, first_pick, blind_writer and answer_only (trainers.episodes.policies.blind) and, as the same-run baseline,
by the teacher (which should pass all). A pass by a blind policy is a defect of the environment's predicates; the
target is 0 for every blind policy. Run as a script: `python benchmarks/bench_blind.py [COUNT] [SEED]`.
"""

from __future__ import annotations

import sys

from synth.pipeline import plan, procedural_attempt
from trainers.episodes.policies import make_policy
from trainers.episodes.policies.blind import BLIND_POLICIES
from trainers.episodes.runner import run_episode


def passes(count: int = 140, seed: int = 23) -> dict[str, list[str]]:
    """The ids of the valid environments of the mix each policy (blind ones and the teacher) passes."""
    specs = [a.spec for cap, s in plan(None, count, seed=seed) if (a := procedural_attempt(cap, s)).valid and a.spec]
    out: dict[str, list[str]] = {}
    for name in ("teacher", *BLIND_POLICIES):
        out[name] = [spec.id for spec in specs if run_episode(spec, make_policy(name)).passed]
    out["_total"] = [spec.id for spec in specs]
    return out


def run(quick: bool) -> list[dict]:
    """Passes per blind policy on the mix (quick: 28 environments), against the teacher's in the same run."""
    got = passes(28 if quick else 140, 23)
    total, teacher = len(got["_total"]), len(got["teacher"])
    return [{"key": f"blind_{name}_passes", "value": len(got[name]), "unit": "envs",
             "baseline_key": "teacher_passes", "baseline": teacher,
             "note": f"of {total} valid envs of the mix; target 0; passing: {', '.join(got[name][:5]) or 'none'}"}
            for name in BLIND_POLICIES]


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 140
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 23
    got = passes(count, seed)
    print(f"{len(got['_total'])} valid environments; teacher passes {len(got['teacher'])}")
    for name in BLIND_POLICIES:
        print(f"{name:13s} {len(got[name]):3d}/{len(got['_total'])}  {' '.join(got[name])}")
