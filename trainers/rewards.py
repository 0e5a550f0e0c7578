"""Rewards from episode records, as pure functions: outcome, partial credit, shaping and penalties.

The formulas are written out in docs/rewards.md. Every function here takes plain numbers or an
`EpisodeRecord` and returns numbers; nothing is trained or mutated.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.record import EpisodeRecord


class RewardConfig(BaseModel):
    """How an episode's reward is made (see docs/rewards.md for the formulas)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    terminal: Literal["outcome", "partial"] = Field(
        "outcome", description="outcome: 1 when every predicate passes, else 0; partial: weighted fraction.")
    shaping: bool = Field(False, description="Add potential-based per-turn shaping gamma*phi(s') - phi(s).")
    shaping_coef: float = Field(1.0, ge=0.0, description="Scale of the shaping term.")
    gamma: float = Field(1.0, ge=0.0, le=1.0, description="Discount of the shaping potential.")
    violation_penalty: float = Field(0.5, ge=0.0, description="Subtracted once per policy violation.")
    fault_penalty: float = Field(0.25, ge=0.0, description="Subtracted once per unhandled injected fault.")
    per_stage: bool = Field(False, description="In a multi-day scenario, pay each stage's terminal reward (outcome "
                                               "or partial of that stage's predicates, per `terminal`) divided by "
                                               "the number of stages, in the turn that closed the stage.")


def outcome_reward(evaluation: Mapping[str, Any]) -> float:
    """1.0 when the evaluation passed (every predicate holds), else 0.0."""
    return 1.0 if evaluation.get("passed") is True else 0.0


def partial_credit(results: Sequence[Mapping[str, Any]]) -> float:
    """The weighted fraction of passing predicates, sum(w_i * pass_i) / sum(w_i); 0.0 for none.

    Raises ValueError naming the result when a weight is missing, negative or not a number.
    """
    total = passed = 0.0
    for i, r in enumerate(results):
        w = r.get("weight", 1.0)
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
            raise ValueError(f"results[{i}].weight must be a non-negative number, got {w!r}")
        total += w
        passed += w if r.get("passed") is True else 0.0
    return passed / total if total > 0 else 0.0


def terminal_reward(evaluation: Mapping[str, Any], kind: str = "outcome") -> float:
    """The end-of-episode reward: `outcome_reward` or the partial credit of the evaluation's results."""
    if kind == "outcome":
        return outcome_reward(evaluation)
    if kind == "partial":
        results = evaluation.get("results")
        if isinstance(results, list) and results:
            return partial_credit(results)
        return float(evaluation.get("score", 0.0))
    raise ValueError(f"terminal reward kind must be 'outcome' or 'partial', got {kind!r}")


def stage_rewards(record: EpisodeRecord, n: int, kind: str = "outcome") -> list[float] | None:
    """Per-turn terminal rewards of a multi-day episode: each stage's reward (1/0 for its strict pass, or its
    weighted score, by `kind`) over the number of stages, paid in the turn whose events closed it; the last
    stage, and any stage never closed, at the last turn. None when the record has no stage verdicts (a
    single-day environment, or no final line)."""
    if record.final is None or kind not in ("outcome", "partial"):
        return None
    stages = record.final.evaluation.get("stages")
    if not isinstance(stages, list) or not stages:
        return None
    closed_in = {e.args.get("stage"): e.turn for e in record.events if e.kind == "stage" and isinstance(e.args, dict)}
    size = max(n, 1)
    out = [0.0] * size
    for st in stages:
        value = (1.0 if st.get("passed") is True else 0.0) if kind == "outcome" else float(st.get("score", 0.0))
        t = closed_in.get(st.get("id"), size - 1)
        out[min(t, size - 1)] += value / len(stages)
    return out


def shaping_rewards(potentials: Sequence[float], gamma: float = 1.0) -> list[float]:
    """Potential-based shaping F_t = gamma * phi_{t+1} - phi_t for t = 0..T-1.

    `potentials` is phi_0 (the initial state's predicate score) followed by the score after each
    turn, so T turns give T+1 potentials and T shaping terms. Ng et al. (1999): adding F leaves the
    optimal policy unchanged; with gamma = 1 the terms sum to phi_T - phi_0.
    """
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    return [gamma * potentials[t + 1] - potentials[t] for t in range(len(potentials) - 1)]


def penalty(violations: int, unhandled_faults: int, config: RewardConfig) -> float:
    """The total penalty: violation_penalty * violations + fault_penalty * unhandled faults."""
    if violations < 0 or unhandled_faults < 0:
        raise ValueError("counts of violations and faults cannot be negative")
    return config.violation_penalty * violations + config.fault_penalty * unhandled_faults


def turn_potentials(record: EpisodeRecord) -> list[float]:
    """phi_0 .. phi_T: the initial predicate score, then the score after each turn (last step of a turn wins).

    Turns without a step line keep the previous potential, so a turn that changed nothing scores 0.
    """
    last: dict[int, float] = {}
    for s in record.steps:
        last[s.turn] = s.score
    n = num_turns(record)
    out = [record.header.initial_score]
    for t in range(n):
        out.append(last.get(t, out[-1]))
    return out


def num_turns(record: EpisodeRecord) -> int:
    """Number of assistant turns: one past the highest turn of any step, event or token line."""
    turns = [s.turn for s in record.steps] + [e.turn for e in record.events]
    if record.final is not None:
        turns += [t.turn for t in record.final.tokens]
    return max(turns) + 1 if turns else 0


def _counts_by_turn(record: EpisodeRecord, n: int) -> tuple[list[int], list[int]]:
    turn_of = {e.index: e.turn for e in record.events}
    violations, faults = [0] * max(n, 1), [0] * max(n, 1)
    if record.final is None:
        return violations, faults
    last = max(n, 1) - 1
    for v in record.final.policy_violations:
        violations[min(turn_of.get(v.event_index, last), last)] += 1
    for f in record.final.fault_errors:
        if not f.handled:
            faults[min(turn_of.get(f.event_index, last), last)] += 1
    return violations, faults


def turn_rewards(record: EpisodeRecord, config: RewardConfig = RewardConfig()) -> list[float]:
    """Per-turn rewards r_0..r_{T-1}: shaping (if on), penalties in the turn they happened, terminal at the end.

    An episode with no turns gets one reward (the terminal one). An unfinished episode scores its
    terminal reward as 0. With `per_stage`, a multi-day episode's terminal reward is paid stage by stage
    (`stage_rewards`).
    """
    n = num_turns(record)
    size = max(n, 1)
    rewards = [0.0] * size
    if config.shaping and n > 0:
        for t, f in enumerate(shaping_rewards(turn_potentials(record), config.gamma)):
            rewards[t] += config.shaping_coef * f
    violations, faults = _counts_by_turn(record, n)
    for t in range(size):
        rewards[t] -= penalty(violations[t], faults[t], config)
    staged = stage_rewards(record, n, config.terminal) if config.per_stage else None
    if staged is not None:
        rewards = [r + s for r, s in zip(rewards, staged)]
    elif record.final is not None:
        rewards[-1] += terminal_reward(record.final.evaluation, config.terminal)
    return rewards


def episode_reward(record: EpisodeRecord, config: RewardConfig = RewardConfig()) -> float:
    """The episode's scalar reward: terminal reward minus penalties (shaping, when on, adds phi_T - phi_0 terms).

    Equals the undiscounted sum of `turn_rewards`.
    """
    return sum(turn_rewards(record, config))
