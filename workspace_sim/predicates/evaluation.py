"""Judging parsed predicates: `evaluate` on a workspace, `evaluate_states` on explicit states, and the
`Evaluation` they return (per predicate, per stage of a multi-day scenario, the weighted score)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workspace_sim.core.state import State
from workspace_sim.predicates.base import EvalContext, JudgeBudget, PredicateResult
from workspace_sim.predicates.judge import KEY_FACTS, Judge


@dataclass
class StageScore:
    """The verdict on one stage (working day): its predicates, strict pass and weighted score, and whether the
    episode reached it at all."""

    id: str
    predicates: list[int]
    passed: bool
    score: float
    reached: bool
    strict: bool | None = None  # every predicate of the stage passed (None: same as passed, no threshold)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "passed": self.passed, "strict": self.passed if self.strict is None else self.strict,
                "score": round(self.score, 6), "reached": self.reached, "predicates": self.predicates}


def weighted_score(results: list[PredicateResult]) -> float:
    """Weighted fraction of `results` passed (1.0 when there are none, or only informational ones of weight 0)."""
    total = sum(r.weight for r in results)
    return 1.0 if total == 0 else sum(r.weight for r in results if r.passed) / total


@dataclass
class Evaluation:
    """The verdict on an episode: each predicate's result, the weighted score and the counts, and per stage
    (for multi-day scenarios) the same verdicts over that stage's predicates."""

    results: list[PredicateResult]
    policy_violations: int = 0
    tool_errors: int = 0
    faults: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    stage_ids: list[str] = field(default_factory=list)  # the scenario's stages in order (empty: one day)
    stage_of: list[str | None] = field(default_factory=list)  # per result: its stage (None: the end)
    reached: set[str] = field(default_factory=set)
    threshold: float | None = None  # the spec's pass_threshold: passed means the weighted score reaches it

    @property
    def strict(self) -> bool:
        """True when every predicate passes (strict success); an informational one (weight 0) is not counted."""
        return all(r.passed for r in self.results if r.weight > 0)

    @property
    def passed(self) -> bool:
        """The episode's verdict: strict success, or, with a `threshold`, a weighted score reaching it."""
        return self.strict if self.threshold is None else reaches(self.score, self.threshold)

    @property
    def not_judged(self) -> list[int]:
        """Indices of the results a judge could not decide (a model that refused, the request cap): the
        evaluation is flagged, never quietly decided by a weaker check."""
        return [i for i, r in enumerate(self.results) if _has_not_judged(r)]

    @property
    def score(self) -> float:
        """Weighted fraction of predicates passed (1.0 when there are none)."""
        return weighted_score(self.results)

    def vector(self) -> list[bool]:
        """Pass/fail per predicate, in order."""
        return [r.passed for r in self.results]

    def stage_members(self) -> dict[str, list[int]]:
        """Predicate indices per stage; predicates checked at the end belong to the last stage."""
        out: dict[str, list[int]] = {s: [] for s in self.stage_ids}
        if not self.stage_ids:
            return out
        for i, s in enumerate(self.stage_of or [None] * len(self.results)):
            out[s if s is not None else self.stage_ids[-1]].append(i)
        return out

    def stages(self) -> list[StageScore]:
        """Each stage's verdict, in order (empty for a single-day environment)."""
        out = []
        for sid, members in self.stage_members().items():
            rs = [self.results[i] for i in members]
            strict, score = all(r.passed for r in rs if r.weight > 0), weighted_score(rs)
            ok = strict if self.threshold is None else reaches(score, self.threshold)
            out.append(StageScore(sid, members, ok, score, sid in self.reached, strict))
        return out

    def to_json(self) -> dict[str, Any]:
        out = {
            "passed": self.passed, "strict": self.strict, "score": round(self.score, 6), "threshold": self.threshold,
            "policy_violations": self.policy_violations,
            "tool_errors": self.tool_errors, "faults": self.faults,
            "results": [r.to_json() for r in self.results],
        }
        if self.stage_ids:
            out["stages"] = [s.to_json() for s in self.stages()]
        if self.not_judged:
            out["not_judged"] = self.not_judged
        return out


def reaches(score: float, threshold: float) -> bool:
    """Whether a weighted score reaches a pass threshold (with a rounding allowance of 1e-9)."""
    return score >= threshold - 1e-9


def _has_not_judged(r: PredicateResult) -> bool:
    return bool(r.details.get("not_judged")) or any(_has_not_judged(c) for c in r.children)


def stage_checkpoints(events: list[Any]) -> dict[str, Any]:
    """The closed stages of a log: stage id -> its `stage` event (whose checkpoint is the state it closed on)."""
    return {e.args["stage"]: e for e in events if e.kind == "stage"}


def last_assistant_message(state: State) -> str | None:
    """The agent's last message in a state's log (a closed day's report, the answer its predicates read)."""
    node = state.log
    while node is not None:
        if node.event.kind == "message" and node.event.role == "assistant":
            return node.event.content
        node = node.prev
    return None


def evaluate_states(
    predicates: list[Any], initial: State, final: State, user: str, final_answer: str | None = None,
    events: list[Any] | None = None, judge: Judge | None = None, stages: Sequence[str] = (),
    threshold: float | None = None, judge_requests: int | None = None,
) -> Evaluation:
    """Judge predicates on explicit states and events; `judge` decides `judged` predicates (default: key facts).

    `stages` names a scenario's stages in order. A predicate of a closed stage is judged on the state that
    stage closed on (its `stage` event's checkpoint), its answer being the agent's last message then (the
    day's report); one of the open stage (the first not closed) on the final state; one of a stage the
    episode never reached fails, saying so. `threshold` (0-1]: passed means the weighted score reaches it
    (strict success is reported beside it). `judge_requests` caps the model judge requests of this evaluation
    (default `MAX_JUDGE_REQUESTS`); past the cap, results say "not judged".
    """
    if threshold is not None and not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    budget = JudgeBudget() if judge_requests is None else JudgeBudget(judge_requests)
    evs = events if events is not None else final.events()
    judge = judge if judge is not None else KEY_FACTS
    ctx = EvalContext(initial, final, evs, final_answer, user, judge, budget)
    closed = stage_checkpoints(evs) if stages else {}
    open_stage = next((s for s in stages if s not in closed), None)
    contexts: dict[str, EvalContext] = {}
    results = []
    for p in predicates:
        sid = p.stage
        if sid is None or sid == open_stage or not stages:
            results.append(p.evaluate(ctx))
        elif sid in closed:
            if sid not in contexts:
                cp = closed[sid].checkpoint
                contexts[sid] = EvalContext(initial, cp, cp.events(), last_assistant_message(cp), user, judge, budget)
            results.append(p.evaluate(contexts[sid]))
        else:
            r = p.result(False, p.description or p.kind, f"stage {sid!r} was never reached")
            results.append(r)
    calls = [e for e in evs if e.kind == "call"]
    reached = set(closed) | ({open_stage} if open_stage is not None else set())
    return Evaluation(
        results,
        policy_violations=sum(1 for e in calls if e.policy),
        tool_errors=sum(1 for e in calls if not e.ok and e.error and e.error.code not in ("fault", "policy_violation")),
        faults=sum(1 for e in calls if not e.ok and e.error and e.error.code == "fault"),
        stage_ids=list(stages), stage_of=[p.stage for p in predicates] if stages else [], reached=reached,
        threshold=threshold,
    )


def evaluate(predicates: list[Any], workspace: Any, final_answer: str | None = None, judge: Judge | None = None,
             stages: Sequence[str] = (), threshold: float | None = None,
             judge_requests: int | None = None) -> Evaluation:
    """Judge predicates on a workspace: its initial state against its current one (`judge`, `stages`,
    `threshold`, `judge_requests`: see evaluate_states)."""
    return evaluate_states(predicates, workspace.initial, workspace.state, workspace.config.user, final_answer,
                           judge=judge, stages=stages, threshold=threshold, judge_requests=judge_requests)
