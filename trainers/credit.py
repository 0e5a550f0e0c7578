"""Credit assignment: group-normalised advantages per episode, per turn, and per identical state.

Pure functions over rewards (formulas in docs/rewards.md):

- `group_advantages`: one advantage per rollout from its group's rewards: GRPO (mean/std),
  Dr.GRPO (mean only) or RLOO (leave-one-out mean).
- `turn_level_advantages`: MT-GRPO style, each turn's return normalised among the group's rollouts
  that reached that turn, plus lambda times the episode advantage.
- `step_group_advantages`: GiGPO style, steps taken from the same state (the workspace's content
  hash) in different rollouts form a step group; each step's return is normalised within it, and
  omega times that is added to the episode advantage.
- `compute_advantages`: all of the above over `EpisodeRecord`s, grouped by environment.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.record import EpisodeRecord
from .rewards import RewardConfig, num_turns, turn_rewards

Method = Literal["grpo", "drgrpo", "rloo"]
Level = Literal["episode", "turn", "gigpo"]


class CreditConfig(BaseModel):
    """Which credit assignment to use (docs/rewards.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    method: Method = Field("grpo", description="Group baseline: grpo (mean/std), drgrpo (mean), rloo (leave-one-out).")
    level: Level = Field("episode", description="episode: one advantage for all turns; turn: MT-GRPO; gigpo.")
    gamma: float = Field(1.0, ge=0.0, le=1.0, description="Discount of turn returns (turn and gigpo levels).")
    lam: float = Field(1.0, ge=0.0, description="Weight of the episode advantage added to turn advantages.")
    omega: float = Field(1.0, ge=0.0, description="Weight of GiGPO step advantages added to the episode one.")
    eps: float = Field(1e-6, gt=0.0, description="Added to the std in GRPO normalisation.")


def group_advantages(rewards: Sequence[float], method: Method = "grpo", eps: float = 1e-6) -> list[float]:
    """Advantages of one group's rewards.

    grpo: (r_i - mean) / (std + eps), std the sample standard deviation (n - 1), as TRL computes it;
    drgrpo: r_i - mean (no std, Liu et al. 2025); rloo: r_i - mean of the others. A group of one
    gets advantage 0 under every method (there is nothing to compare with).
    """
    n = len(rewards)
    if n == 0:
        return []
    if any(not math.isfinite(r) for r in rewards):
        raise ValueError(f"rewards must be finite numbers, got {list(rewards)}")
    if n == 1:
        return [0.0]
    mean = sum(rewards) / n
    if method == "grpo":
        std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (n - 1))
        return [(r - mean) / (std + eps) for r in rewards]
    if method == "drgrpo":
        return [r - mean for r in rewards]
    if method == "rloo":
        total = sum(rewards)
        return [r - (total - r) / (n - 1) for r in rewards]
    raise ValueError(f"method must be grpo, drgrpo or rloo, got {method!r}")


def returns_to_go(rewards: Sequence[float], gamma: float = 1.0) -> list[float]:
    """G_t = sum over k >= t of gamma^(k-t) * r_k, for each turn t."""
    out = [0.0] * len(rewards)
    acc = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = rewards[t] + gamma * acc
        out[t] = acc
    return out


def turn_level_advantages(
    turn_rewards_per_rollout: Sequence[Sequence[float]], method: Method = "grpo", gamma: float = 1.0,
    lam: float = 1.0, eps: float = 1e-6,
) -> list[list[float]]:
    """MT-GRPO style advantages A_{i,t} = norm_t(G_{i,t}) + lam * norm(R_i) for one group.

    G_{i,t} is rollout i's return from turn t; norm_t normalises it among the rollouts that reached
    turn t (with `method`); R_i is the rollout's undiscounted total reward, normalised over the group.
    """
    returns = [returns_to_go(r, gamma) for r in turn_rewards_per_rollout]
    episode = group_advantages([sum(r) for r in turn_rewards_per_rollout], method, eps)
    out = [[lam * episode[i]] * len(g) for i, g in enumerate(returns)]
    longest = max((len(g) for g in returns), default=0)
    for t in range(longest):
        members = [i for i, g in enumerate(returns) if len(g) > t]
        for i, a in zip(members, group_advantages([returns[i][t] for i in members], method, eps)):
            out[i][t] += a
    return out


def step_group_advantages(
    turn_rewards_per_rollout: Sequence[Sequence[float]], states_before: Sequence[Sequence[str]],
    method: Method = "grpo", gamma: float = 1.0, omega: float = 1.0, eps: float = 1e-6,
) -> list[list[float]]:
    """GiGPO style advantages A_{i,t} = A^E_i + omega * A^S_{i,t} for one group.

    A^E is the episode advantage of the total reward; A^S normalises the return G_{i,t} among all
    steps (of any rollout of the group, at any turn) taken from the same state, identified by
    `states_before[i][t]`, the workspace hash before turn t. A state met once gets A^S = 0.
    """
    if len(states_before) != len(turn_rewards_per_rollout):
        raise ValueError("need one list of state hashes per rollout")
    for i, (r, s) in enumerate(zip(turn_rewards_per_rollout, states_before)):
        if len(r) != len(s):
            raise ValueError(f"rollout {i}: {len(r)} turn rewards but {len(s)} state hashes")
    returns = [returns_to_go(r, gamma) for r in turn_rewards_per_rollout]
    episode = group_advantages([sum(r) for r in turn_rewards_per_rollout], method, eps)
    groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for i, hashes in enumerate(states_before):
        for t, h in enumerate(hashes):
            groups[h].append((i, t))
    out = [[episode[i]] * len(g) for i, g in enumerate(returns)]
    for members in groups.values():
        for (i, t), a in zip(members, group_advantages([returns[i][t] for i, t in members], method, eps)):
            out[i][t] += omega * a
    return out


def states_before_turns(record: EpisodeRecord) -> list[str]:
    """The workspace hash before each turn: the initial hash, then the hash after each previous turn."""
    after: dict[int, str] = {}
    for s in record.steps:
        after[s.turn] = s.state_hash
    out = [record.header.initial_state_hash]
    for t in range(1, max(num_turns(record), 1)):
        out.append(after.get(t - 1, out[-1]))
    return out


@dataclass
class RolloutCredit:
    """The reward and advantages of one rollout."""

    episode_id: str
    group: str
    reward: float
    turn_rewards: list[float]
    advantage: float
    turn_advantages: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {"episode_id": self.episode_id, "group": self.group, "reward": self.reward,
                "turn_rewards": self.turn_rewards, "advantage": self.advantage,
                "turn_advantages": self.turn_advantages}


def compute_advantages(
    records: Sequence[EpisodeRecord], rewards: RewardConfig = RewardConfig(), credit: CreditConfig = CreditConfig(),
) -> dict[str, RolloutCredit]:
    """Rewards and advantages of every record, grouped by `record.group` (the environment by default)."""
    by_group: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for rec in records:
        by_group[rec.group].append(rec)
    out: dict[str, RolloutCredit] = {}
    for group, recs in sorted(by_group.items()):
        per_turn = [turn_rewards(r, rewards) for r in recs]
        totals = [sum(r) for r in per_turn]
        episode = group_advantages(totals, credit.method, credit.eps)
        if credit.level == "episode":
            turn_adv = [[episode[i]] * len(r) for i, r in enumerate(per_turn)]
        elif credit.level == "turn":
            turn_adv = turn_level_advantages(per_turn, credit.method, credit.gamma, credit.lam, credit.eps)
        else:
            states = [states_before_turns(r) for r in recs]
            turn_adv = step_group_advantages(per_turn, states, credit.method, credit.gamma, credit.omega, credit.eps)
        for i, rec in enumerate(recs):
            out[rec.episode_id] = RolloutCredit(rec.episode_id, group, totals[i], per_turn[i], episode[i], turn_adv[i])
    return out
