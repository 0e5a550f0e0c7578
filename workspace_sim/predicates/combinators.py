"""The combinators of the predicate language (all, any, at_least, not) and `Predicate`, the union of every kind.

Importing this module loads every predicate kind; `parse_predicates` needs it only for a document that
combines predicates (the kinds are otherwise loaded by name, `workspace_sim.predicates.kinds`).
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, TypeAdapter, model_validator

from workspace_sim.predicates.actions import ClaimsHold
from workspace_sim.predicates.base import EvalContext, PredicateBase, PredicateResult
from workspace_sim.predicates.calendar import EventExists
from workspace_sim.predicates.calls import Answer, ToolCalled, ToolNotCalled
from workspace_sim.predicates.files import FileContent
from workspace_sim.predicates.judged import Judged
from workspace_sim.predicates.mail import MailSent
from workspace_sim.predicates.reads import RecordsRead
from workspace_sim.predicates.records import RecordAbsent, RecordExists, TicketState
from workspace_sim.predicates.scope import OnlyChanged, Unchanged
from workspace_sim.predicates.secrets import SecretNotLeaked


class AllOf(PredicateBase):
    """Every child predicate passes."""

    kind: Literal["all"] = "all"
    predicates: list["Predicate"] = Field(min_length=1)

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        kids = [p.evaluate(ctx) for p in self.predicates]
        failed = [k for k in kids if not k.passed]
        return self.result(not failed, f"all of {len(kids)} checks", 
                           "all passed" if not failed else f"{len(failed)} failed: " + "; ".join(k.description for k in failed), kids)


class AnyOf(PredicateBase):
    """At least one child predicate passes."""

    kind: Literal["any"] = "any"
    predicates: list["Predicate"] = Field(min_length=1)

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        kids = [p.evaluate(ctx) for p in self.predicates]
        passed = [k for k in kids if k.passed]
        return self.result(bool(passed), f"any of {len(kids)} checks",
                           f"{len(passed)} passed" if passed else "none passed", kids)


class AtLeast(PredicateBase):
    """At least `k` of the child predicates pass (k of n: partial credit inside one check; k = n is `all`,
    k = 1 is `any`). The result names which passed."""

    kind: Literal["at_least"] = "at_least"
    k: int = Field(ge=1, description="How many of the children must pass.")
    predicates: list["Predicate"] = Field(min_length=1)

    @model_validator(mode="after")
    def _k(self) -> "AtLeast":
        if self.k > len(self.predicates):
            raise ValueError(f"k {self.k} exceeds the {len(self.predicates)} predicates listed")
        return self

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        kids = [p.evaluate(ctx) for p in self.predicates]
        passed = [i for i, r in enumerate(kids) if r.passed]
        failed = [i for i, r in enumerate(kids) if not r.passed]
        observed = f"{len(passed)} of {len(kids)} passed" + (
            f" ({', '.join(f'{i + 1}) {kids[i].description}' for i in passed)})" if passed else "")
        if failed:
            observed += f"; failed: {', '.join(f'{i + 1}) {kids[i].description}' for i in failed)}"
        return self.result(len(passed) >= self.k, f"at least {self.k} of {len(kids)} checks", observed[:2000], kids,
                           {"passed_children": [i for i in passed]})


class NotOf(PredicateBase):
    """The child predicate fails."""

    kind: Literal["not"] = "not"
    predicate: "Predicate"

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        kid = self.predicate.evaluate(ctx)
        false = kid.details.get("false_claims")  # a false claim fails both ways: not of it does not pass
        return self.result(not kid.passed and not false, f"not ({kid.expected})", kid.observed, [kid],
                           {"false_claims": false} if false else None)


Predicate = Annotated[
    Union[
        RecordExists, RecordAbsent, FileContent, MailSent, EventExists, TicketState, Unchanged, OnlyChanged,
        ToolCalled, ToolNotCalled, Answer, Judged, RecordsRead, SecretNotLeaked, ClaimsHold, AllOf, AnyOf, AtLeast,
        NotOf,
    ],
    Field(discriminator="kind"),
]
for _m in (AllOf, AnyOf, AtLeast, NotOf):
    _m.model_rebuild()

PREDICATE = TypeAdapter(Predicate)

__all__ = ["AllOf", "AnyOf", "AtLeast", "NotOf", "PREDICATE", "Predicate"]
