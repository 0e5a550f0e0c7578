"""GRPO with environment rollouts and selectable credit assignment, on a local transformers model.

Each step plays `group_size` rollouts in each of a few environments (any `RolloutFn`), scores them
from predicates (`trainers.rewards`), turns rewards into per-turn advantages with the chosen
credit assignment (`trainers.credit`: GRPO, Dr.GRPO or RLOO; episode, MT-GRPO turn or GiGPO step
level) and applies the clipped policy-gradient update to every token the policy produced in a
turn, weighted by that turn's advantage. Loss is the token mean over the batch.

A vision-language folder (`tiny_vl.is_vision_model`) trains the same way with its processor: each segment's
log-probabilities, old and new, are computed with the prompt's pixel values, image grids and token types
(`Segment.vision`), so the gradient reaches what the image tokens condition. Its vision tower (patch embedding
and blocks) stays frozen; the language model, its head and the merger that projects image features into it train.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..credit import CreditConfig, compute_advantages
from .episode import TrainingEnvironment
from .rollout import Rollout, RolloutFn, RolloutSettings, Segment, generate_rollout


class GRPOSettings(BaseModel):
    """Settings of a GRPO run."""

    model_config = ConfigDict(extra="forbid")
    steps: int = Field(1, ge=1)
    group_size: int = Field(4, ge=2, description="Rollouts per environment per step (G).")
    envs_per_step: int = Field(2, ge=1)
    learning_rate: float = Field(1e-4, gt=0)
    clip_eps: float = Field(0.2, gt=0)
    inner_epochs: int = Field(1, ge=1, description="Updates per batch of rollouts (ratios clip after the first).")
    max_grad_norm: float = Field(1.0, gt=0)
    credit: CreditConfig = CreditConfig()
    rollout: RolloutSettings = RolloutSettings()
    seed: int = 0


def token_logprobs(model: Any, seg: Segment) -> Any:
    """Per-token log-probabilities of a segment's completion under the model (differentiable)."""
    import torch

    ids = torch.tensor([seg.prompt_ids + seg.completion_ids])
    logits = model(input_ids=ids, **seg.model_kwargs()).logits[0, len(seg.prompt_ids) - 1:-1].float()
    return torch.log_softmax(logits, -1).gather(-1, torch.tensor(seg.completion_ids).unsqueeze(-1)).squeeze(-1)


@dataclass
class StepStats:
    """What one GRPO step saw and did."""

    step: int
    mean_reward: float
    pass_rate: float
    loss: float
    tokens: int
    nonzero_advantages: int
    rewards: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


def grpo_step(model: Any, tokenizer: Any, optimizer: Any, envs: Sequence[TrainingEnvironment],
              rollout_fn: RolloutFn, settings: GRPOSettings, step: int = 0) -> tuple[StepStats, list[Rollout]]:
    """Play the groups, compute advantages and apply one (or `inner_epochs`) policy updates."""
    import torch

    model.eval()
    rollouts: list[Rollout] = []
    for env in envs:
        for g in range(settings.group_size):
            rs = settings.rollout.model_copy(update={"seed": settings.seed * 1_000_003 + step * 1009 + g})
            rollouts.append(rollout_fn(model, tokenizer, env, rs, f"step{step}-{env.id}-{g}"))
    credits = compute_advantages([r.record for r in rollouts], settings.rollout.rewards, settings.credit)
    work: list[tuple[Segment, float]] = []
    for r in rollouts:
        adv = credits[r.record.episode_id].turn_advantages
        for seg in r.segments:
            if seg.completion_ids:
                work.append((seg, adv[min(seg.turn, len(adv) - 1)]))
    if settings.inner_epochs > 1:  # with one epoch the policy before the update is the one being updated: the
        with torch.no_grad():       # old log-probabilities are the new ones, detached (one forward pass saved)
            for seg, a in work:
                if a != 0.0:
                    seg.old_logprobs = token_logprobs(model, seg).tolist()
    n_tokens = sum(len(seg.completion_ids) for seg, _ in work) or 1
    model.train()
    total = 0.0
    for _ in range(settings.inner_epochs):
        optimizer.zero_grad()
        total = 0.0
        for seg, a in work:
            if a == 0.0:
                continue
            logp = token_logprobs(model, seg)
            if seg.old_logprobs is None:
                seg.old_logprobs = logp.detach().tolist()
            ratio = torch.exp(logp - torch.tensor(seg.old_logprobs))
            surr = torch.minimum(ratio * a, torch.clamp(ratio, 1 - settings.clip_eps, 1 + settings.clip_eps) * a)
            loss = -surr.sum() / n_tokens
            loss.backward()
            total += loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings.max_grad_norm)
        optimizer.step()
    rewards = [r.reward for r in rollouts]
    stats = StepStats(step, sum(rewards) / len(rewards), sum(r.record.passed for r in rollouts) / len(rollouts),
                      total, n_tokens, sum(1 for _, a in work if a != 0.0), rewards)
    return stats, rollouts


def train_grpo(model_path: str | Path, envs: Sequence[TrainingEnvironment], output_dir: str | Path,
               settings: GRPOSettings = GRPOSettings(), rollout_fn: RolloutFn = generate_rollout,
               records_path: str | Path | None = None,
               on_step: Callable[[StepStats], None] | None = None) -> list[StepStats]:
    """Run `settings.steps` GRPO steps over the environments, save the model, optionally write the rollouts.

    `on_step(stats)` is called after every step (the command's progress display).
    A vision-language folder loads with its processor (`tiny_vl.load_vl`), which the rollouts get as `tokenizer`
    and the output folder gets saved beside the model; its vision tower is frozen (`freeze_vision_tower`).
    """
    import torch

    from workspace_sim.record import write_records
    from ..models.tiny import load
    from ..models.tiny_vl import is_vision_model, load_vl
    from .vision_inputs import freeze_vision_tower

    if not envs:
        raise ValueError("no environments to train on")
    torch.manual_seed(settings.seed)
    if is_vision_model(model_path):
        model, tokenizer = load_vl(model_path)
        params = freeze_vision_tower(model)
    else:
        model, tokenizer = load(model_path)
        params = model.parameters()
    optimizer = torch.optim.AdamW(params, lr=settings.learning_rate, weight_decay=0.0)
    rng = random.Random(settings.seed)
    history: list[StepStats] = []
    all_records = []
    for step in range(settings.steps):
        batch = rng.sample(list(envs), min(settings.envs_per_step, len(envs)))
        stats, rollouts = grpo_step(model, tokenizer, optimizer, batch, rollout_fn, settings, step)
        history.append(stats)
        all_records += [r.record for r in rollouts]
        if on_step is not None:
            on_step(stats)
    out = Path(output_dir)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "grpo_history.json").write_text(json.dumps([h.to_json() for h in history], indent=1))
    if records_path is not None:
        write_records(all_records, records_path)
    return history
