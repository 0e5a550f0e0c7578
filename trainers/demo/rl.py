"""RL after SFT: GRPO from the SFT'd student under each credit assignment, judged on the same held-out set.

For every credit assignment in `RL_CREDITS` (outcome reward; partial reward; MT-GRPO turn level;
GiGPO step groups) and every seed, GRPO starts from the same SFT'd student, trains on rollouts in
the training environments (`trainers.training.grpo`), and the result is evaluated greedily on the
held-out environments. The table gives, per credit assignment, the mean and the spread (sample
standard deviation) over seeds of held-out success and mean predicate score, next to the SFT
student's own figures, so a difference is read against the seed-to-seed noise. Rewards are paid per
stage (`RewardConfig.per_stage`): in a multi-day environment each day's reward lands in the turn that
closed it, so the turn-level assignments have something to assign; single-day environments are
unchanged. benchmarks/bench_credit_stages.py runs the same comparison on multi-day environments alone.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from synth.spec import EnvironmentSpec

from ..credit import CreditConfig
from ..rewards import RewardConfig
from .settings import RL_CREDITS, DemoSettings


@dataclass
class RLRun:
    """One GRPO run: its credit assignment, seed, training rewards and held-out figures."""

    credit: str
    seed: int
    train_mean_reward: float
    heldout_success: float
    heldout_predicate_score: float
    heldout_accepted_calls: int
    heldout_tool_calls: int


@dataclass
class RLRow:
    """One credit assignment's figures over seeds (mean and sample standard deviation; 0 for one seed)."""

    credit: str
    seeds: int
    success_mean: float
    success_sd: float
    score_mean: float
    score_sd: float
    train_reward_mean: float


@dataclass
class RLComparison:
    """The comparison table and every run behind it."""

    rows: list[RLRow] = field(default_factory=list)
    runs: list[RLRun] = field(default_factory=list)
    heldout: int = 0
    sft_success: float = 0.0
    sft_score: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {"heldout": self.heldout, "sft_success": self.sft_success, "sft_score": self.sft_score,
                "rows": [asdict(r) for r in self.rows], "runs": [asdict(r) for r in self.runs]}


def _sd(xs: Sequence[float]) -> float:
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


def summarize_runs(runs: Sequence[RLRun]) -> list[RLRow]:
    """One row per credit assignment, in the order first seen."""
    rows = []
    for credit in dict.fromkeys(r.credit for r in runs):
        mine = [r for r in runs if r.credit == credit]
        succ = [r.heldout_success for r in mine]
        score = [r.heldout_predicate_score for r in mine]
        rows.append(RLRow(credit, len(mine), statistics.fmean(succ), _sd(succ), statistics.fmean(score), _sd(score),
                          statistics.fmean(r.train_mean_reward for r in mine)))
    return rows


Evaluate = Callable[[Path, str], Any]  # (model folder, records name) -> StudentScore


def compare_credit(student: Path, train_specs: Sequence[EnvironmentSpec], out: Path, settings: DemoSettings,
                   evaluate: Evaluate, sft_score: Any,
                   on_run: Callable[[int, str], None] | None = None) -> RLComparison:
    """Run GRPO from `student` for every credit assignment and seed; evaluate each on the held-out set.

    `evaluate(model_dir, name)` plays the held-out environments greedily and returns a StudentScore
    (the demo's own evaluation, so every figure is comparable with the before/after ones).
    """
    from ..training.grpo import GRPOSettings, train_grpo
    from ..training.rollout import SPEC_PROMPT, RolloutSettings, generate_rollout

    result = RLComparison(heldout=0, sft_success=sft_score.success_rate, sft_score=sft_score.mean_predicate_score)
    done = 0
    for label, terminal, level in RL_CREDITS:
        for seed in range(settings.seed, settings.seed + settings.rl_seeds):
            grpo = GRPOSettings(
                steps=settings.rl_steps, group_size=settings.rl_group, envs_per_step=settings.rl_envs_per_step,
                learning_rate=settings.rl_learning_rate, seed=seed,
                credit=CreditConfig(level=level),  # type: ignore[arg-type]
                rollout=RolloutSettings(max_turns=settings.max_turns, max_new_tokens=settings.max_new_tokens, seed=seed,
                                        rewards=RewardConfig(terminal=terminal,  # type: ignore[arg-type]
                                                             per_stage=True),
                                        temperature=settings.rl_temperature, system_prompt=SPEC_PROMPT),
            )
            slug = label.split()[0].lower().replace("-", "")
            folder = out / "model" / "rl" / f"{slug}-seed{seed}"
            history = train_grpo(student, list(train_specs), folder, grpo, generate_rollout)
            score = evaluate(folder, f"rl-{slug}-seed{seed}")
            result.runs.append(RLRun(label, seed, statistics.fmean(h.mean_reward for h in history),
                                     score.success_rate, score.mean_predicate_score, score.accepted_calls,
                                     score.tool_calls))
            done += 1
            if on_run:
                on_run(done, label)
    result.rows = summarize_runs(result.runs)
    return result
