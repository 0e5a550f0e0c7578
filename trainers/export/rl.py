"""RL data from episode records: rollout groups per environment with rewards and per-turn advantages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ..credit import CreditConfig, compute_advantages
from ..record import EpisodeRecord, read_records
from ..rewards import RewardConfig


def rl_groups(records: Sequence[EpisodeRecord], rewards: RewardConfig = RewardConfig(),
              credit: CreditConfig = CreditConfig()) -> list[dict[str, Any]]:
    """One dict per group (environment): its rollouts with messages, tokens, rewards and advantages.

    Unfinished episodes are left out. Groups and rollouts come in a stable order (group name, then
    episode id), so the same records give the same bytes.
    """
    done = [r for r in records if r.complete]
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
    return [{"group": g, "size": len(rs), "mean_reward": sum(r["reward"] for r in rs) / len(rs), "rollouts": rs}
            for g, rs in groups.items()]


def export_rl(records: str | Path | Sequence[EpisodeRecord], out_file: str | Path,
              rewards: RewardConfig = RewardConfig(), credit: CreditConfig = CreditConfig()) -> dict[str, Any]:
    """Write one JSON line per group to `out_file`; returns a summary with the settings used."""
    recs = read_records(records) if isinstance(records, (str, Path)) else list(records)
    groups = rl_groups(recs, rewards, credit)
    out = Path(out_file)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for g in groups:
            f.write(json.dumps({**g, "rewards": rewards.model_dump(), "credit": credit.model_dump()},
                               ensure_ascii=False) + "\n")
    return {"file": str(out), "groups": len(groups), "rollouts": sum(g["size"] for g in groups),
            "skipped_unfinished": len(recs) - sum(g["size"] for g in groups),
            "rewards": rewards.model_dump(), "credit": credit.model_dump()}
