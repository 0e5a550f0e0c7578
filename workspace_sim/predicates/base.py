"""What every predicate shares: the evaluation inputs, the result, and the common fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.core.diff import Diff, diff_states, without_world
from workspace_sim.core.events import Event
from workspace_sim.core.state import State
from workspace_sim.predicates.judge import KEY_FACTS, MAX_JUDGE_REQUESTS, Judge, Rule, Verdict, not_judged


@dataclass
class JudgeBudget:
    """Model judge requests left to one evaluation (shared by every context of it, every stage's too)."""

    limit: int = MAX_JUDGE_REQUESTS
    used: int = 0


@dataclass
class EvalContext:
    """The evidence a predicate judges: start and final state, their diff, the log, the answer."""

    initial: State
    final: State
    events: list[Event]
    answer: str | None
    user: str
    judge: Judge = KEY_FACTS  # who decides `judged` predicates (the deterministic key facts by default)
    budget: JudgeBudget = field(default_factory=JudgeBudget)
    memo: dict[Any, Any] = field(default_factory=dict)  # what several predicates read once (the record's actions)

    def ask_judge(self, rules: list[Rule], text: str) -> Verdict:
        """The judge's verdict on `text`, counted against the evaluation's cap of model requests (a deterministic
        judge costs nothing); past the cap the verdict is "not judged"."""
        j = self.judge
        if getattr(j, "deterministic", False):
            return j.judge(rules, text)
        cost = j.requests(text) if hasattr(j, "requests") else 1
        if self.budget.used + cost > self.budget.limit:
            return not_judged(rules, j.name, f"the evaluation's cap of {self.budget.limit} judge requests was reached")
        self.budget.used += cost
        return j.judge(rules, text)

    @cached_property
    def diff(self) -> Diff:
        return diff_states(self.initial, self.final)

    @cached_property
    def agent_diff(self) -> Diff:
        """The diff less the world's own changes (the `world` events logged after the start, but for those marked
        `agent`: new mail on day two, a corrected file): what the agent changed. A record the world added or changed counts only where
        the agent then made it differ from the world's version (`core.diff.without_world`). The collateral-damage
        guards (`unchanged`, `only_changed`) judge this, so the world's changes are never blamed on the agent and
        an agent's tampering with them is still seen."""
        start = self.initial.log_len
        world = [e.diff for e in self.events if e.kind == "world" and e.index >= start and e.diff
                 and not (isinstance(e.args, dict) and e.args.get("agent"))]
        return without_world(self.diff, self.initial, self.final, world) if world else self.diff

    def added(self, table: str) -> list[Any]:
        """Records of `table` present in the final state but not the initial one."""
        return [c.after for c in self.diff if c.table == table and c.kind == "added"]


@dataclass
class PredicateResult:
    """The outcome of one predicate: pass or fail, and why (expected against observed)."""

    kind: str
    description: str
    weight: float
    passed: bool
    expected: str
    observed: str
    children: list["PredicateResult"] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)  # extra keys of the JSON result (e.g. the judge used)

    @property
    def reason(self) -> str:
        return f"expected {self.expected}; observed {self.observed}"

    def to_json(self) -> dict[str, Any]:
        out = {"kind": self.kind, "description": self.description, "weight": self.weight, "passed": self.passed,
               "expected": self.expected, "observed": self.observed}
        out.update(self.details)
        if self.children:
            out["children"] = [c.to_json() for c in self.children]
        return out


class PredicateBase(BaseModel):
    """Fields every predicate has: a plain-English description and a weight."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    description: str = Field("", description="The requirement in plain English.")
    weight: float = Field(1.0, ge=0, description=(
        "Weight in the partial-credit score. 0 makes the check informational: judged and reported, but counted in "
        "no score, not in strict success, and not as a day's progress that credits its guards."))
    maintain: bool = Field(False, description="Must stay true: it holds at the start and the task must not break it "
                                              "(a guard, credited only once a success predicate passes).")
    stage: str | None = Field(None, description="Id of the stage (working day) whose end this predicate checks: it "
                                                "is judged on the state when the agent closed that day, not on "
                                                "the final state. Absent: checked at the end of the episode.")

    def evaluate(self, ctx: EvalContext) -> PredicateResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def result(self, passed: bool, expected: str, observed: str, children: list[PredicateResult] | None = None,
               details: dict[str, Any] | None = None) -> PredicateResult:
        """Build this predicate's result."""
        kind = self.kind  # type: ignore[attr-defined]
        return PredicateResult(kind, self.description or expected, self.weight, passed, expected, observed,
                               children or [], details or {})


def or_shorthand(shorthand: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """A `json_schema_extra` hook for a model or field that also reads a shorthand (a before-validator expands
    it): the generated schema becomes `anyOf: [the full form, shorthand]`, so the JSON Schema accepts what
    validation accepts."""

    def widen(schema: dict[str, Any]) -> None:
        full = {k: v for k, v in schema.items() if k not in ("title", "description", "default")}
        for k in full:
            del schema[k]
        schema["anyOf"] = [full, shorthand]

    return widen


def short(value: Any, limit: int = 120) -> str:
    """A compact repr for reasons."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
