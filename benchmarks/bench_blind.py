"""Blind baselines over the balanced mix: how many generated environments each blind policy passes.

The mix is `coworkenv synth --count 140 --seed 23`'s (`synth.pipeline.mixed_attempt`: compositions, kind-directed
compositions and templates, every capability balanced); each valid environment is played once by spray, first_pick
(greedy), blind_writer and answer_only (trainers.episodes.policies.blind), by the stale and forgetful agents, by a
replay of a sibling environment's reference (the next valid environment of the same capability: its calls and its
answer, in this environment's world) and, as the same-run baseline, by the teacher (which should pass all). A pass by
a blind policy is a defect of the environment's predicates; the target (issue 32) is at most 1% for each.
Run as a script: `python benchmarks/bench_blind.py [COUNT] [SEED]`.
"""

from __future__ import annotations

import sys

from synth import run_reference
from synth.baselines import forgetful_steps, stale_steps
from synth.pipeline import mixed_attempt, plan
from synth.spec import EnvironmentSpec
from trainers.episodes.policies import make_policy
from trainers.episodes.policies.blind import BLIND_POLICIES
from trainers.episodes.runner import run_episode

POLICIES = ("teacher", *BLIND_POLICIES, "stale", "forgetful")


def sibling_passes(spec: EnvironmentSpec, sibling: EnvironmentSpec) -> bool:
    """Whether `sibling`'s reference (calls, messages and answer) passes `spec` when played in `spec`'s world."""
    try:
        run = run_reference(spec, solution=sibling.reference)
    except Exception:  # a sibling's step that cannot even be played here (a placeholder it never bound) fails
        return False
    return spec.evaluate(run.workspace, run.final_answer).passed


def applies(policy: str, spec: EnvironmentSpec) -> bool:
    """Whether `policy` differs from the teacher on `spec`: the stale agent only where the world changes (it
    replays stale arguments), the forgetful one only where standing rules or later days exist to forget."""
    if policy == "stale":
        return stale_steps(spec.reference) is not None
    if policy == "forgetful":
        return forgetful_steps(spec.reference) is not None
    return True


def passes(count: int = 140, seed: int = 23) -> dict[str, list[str]]:
    """The ids of the valid environments of the mix each policy (blind ones, sibling replay, the teacher) passes."""
    specs = [a.spec for cap, s in plan(None, count, seed=seed) if (a := mixed_attempt(cap, s)).valid and a.spec]
    out: dict[str, list[str]] = {}
    for name in POLICIES:
        out[name] = [spec.id for spec in specs if applies(name, spec) and run_episode(spec, make_policy(name)).passed]
    by_cap: dict[str, list[EnvironmentSpec]] = {}
    for spec in specs:
        by_cap.setdefault(spec.capabilities[0], []).append(spec)
    out["sibling_replay"] = [group[i].id for group in by_cap.values() if len(group) > 1 for i in range(len(group))
                             if sibling_passes(group[i], group[(i + 1) % len(group)])]
    out["_total"] = [spec.id for spec in specs]
    for name in ("stale", "forgetful"):
        out[f"_{name}_applies"] = [spec.id for spec in specs if applies(name, spec)]
    return out


def run(quick: bool) -> list[dict]:
    """Passes per blind policy on the mix (quick: 28 environments), against the teacher's in the same run."""
    got = passes(28 if quick else 140, 23)
    total, teacher = len(got["_total"]), len(got["teacher"])
    return [{"key": f"blind_{name}_passes", "value": len(got[name]), "unit": "envs",
             "baseline_key": "teacher_passes", "baseline": teacher,
             "note": f"of {len(got.get(f'_{name}_applies', got['_total']))} of the {total} valid envs of the mix it "
                     f"applies to; target 0; passing: {', '.join(got[name][:5]) or 'none'}"}
            for name in (*POLICIES[1:], "sibling_replay")]


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 140
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 23
    got = passes(count, seed)
    print(f"{len(got['_total'])} valid environments; teacher passes {len(got['teacher'])}")
    for name in (*POLICIES[1:], "sibling_replay"):
        over = len(got.get(f"_{name}_applies", got["_total"]))
        print(f"{name:14s} {len(got[name]):3d}/{over} ({len(got[name]) / max(over, 1):.1%})  {' '.join(got[name])}")
