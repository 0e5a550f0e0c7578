"""RL data from episode records: rollout groups per environment with rewards and per-turn advantages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence
from workspace_sim.record import EpisodeRecord, read_records

from ..credit import CreditConfig, compute_advantages
from ..rewards import RewardConfig


def rl_groups(records: Sequence[EpisodeRecord], rewards: RewardConfig = RewardConfig(),
              credit: CreditConfig = CreditConfig(), keep_errors: bool = False,
              min_group_size: int = 2) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Groups (one per environment) of rollouts with messages, tokens, rewards and advantages, and
    the count of episodes left out by reason.

    Unfinished episodes are always left out; episodes that stopped on an error (an endpoint that
    failed, not the policy's choice) unless `keep_errors`; and groups with fewer than
    `min_group_size` rollouts, whose group-relative advantages are all zero and teach nothing.
    Groups and rollouts come in a stable order (group name, then episode id), so the same records
    give the same bytes.
    """
    skipped = {"unfinished": 0, "stopped on an error": 0, "in groups below the minimum size": 0}
    done = []
    for r in records:
        if not r.complete:
            skipped["unfinished"] += 1
        elif r.errored and not keep_errors:
            skipped["stopped on an error"] += 1
        else:
            done.append(r)
    sizes: dict[str, int] = {}
    for r in done:
        sizes[r.group] = sizes.get(r.group, 0) + 1
    small = {g for g, n in sizes.items() if n < min_group_size}
    skipped["in groups below the minimum size"] = sum(sizes[g] for g in small)
    done = [r for r in done if r.group not in small]
    credits = compute_advantages(done, rewards, credit)
    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in sorted(done, key=lambda r: (r.group, r.episode_id)):
        c = credits[rec.episode_id]
        assert rec.final is not None
        groups.setdefault(rec.group, []).append({
            "episode_id": rec.episode_id, "env_id": rec.env_id, "policy": rec.header.policy.name,
            "passed": rec.passed, "reward": c.reward, "advantage": c.advantage, "turn_rewards": c.turn_rewards,
            "turn_advantages": c.turn_advantages, "messages": rec.messages,
            "tokens": [t.model_dump(mode="json") for t in rec.final.tokens],
        })
    return ([{"group": g, "size": len(rs), "mean_reward": sum(r["reward"] for r in rs) / len(rs), "rollouts": rs}
             for g, rs in groups.items()], {k: v for k, v in skipped.items() if v})


def export_rl(records: str | Path | Sequence[EpisodeRecord], out_file: str | Path,
              rewards: RewardConfig = RewardConfig(), credit: CreditConfig = CreditConfig(),
              keep_errors: bool = False, min_group_size: int = 2) -> dict[str, Any]:
    """Write one JSON line per group to `out_file`; returns a summary with the settings used and
    what was skipped and why (see `rl_groups`)."""
    recs = read_records(records) if isinstance(records, (str, Path)) else list(records)
    groups, skipped = rl_groups(recs, rewards, credit, keep_errors, min_group_size)
    out = Path(out_file)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for g in groups:
            f.write(json.dumps({**g, "rewards": rewards.model_dump(), "credit": credit.model_dump()},
                               ensure_ascii=False) + "\n")
    return {"file": str(out), "groups": len(groups), "rollouts": sum(g["size"] for g in groups),
            "zero_advantage_groups": sum(all_zero_advantages(g) for g in groups),
            "skipped": skipped, "rewards": rewards.model_dump(), "credit": credit.model_dump()}


def all_zero_advantages(group: dict[str, Any], eps: float = 1e-9) -> bool:
    """Whether every rollout of a group has zero advantage, episode and per turn alike (every rollout
    earned the same reward): such a group is exported but gives a policy gradient of zero."""
    return all(abs(r["advantage"]) <= eps and all(abs(a) <= eps for a in r["turn_advantages"] or [])
               for r in group["rollouts"])
