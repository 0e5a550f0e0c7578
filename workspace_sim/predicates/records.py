"""Predicates on stored records of any table: exists / absent with field conditions."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from workspace_sim.predicates.base import EvalContext, PredicateBase, PredicateResult
from workspace_sim.predicates.conditions import Condition, field_value


def matching(records: Any, where: dict[str, Condition]) -> list[Any]:
    """The records for which every field condition holds."""
    return [r for r in records if all(c.check(field_value(r, f)) for f, c in where.items())]


def describe_where(table: str, where: dict[str, Condition]) -> str:
    conds = ", ".join(f"{f} {c.describe()}" for f, c in where.items())
    return f"{table} record" + (f" with {conds}" if conds else "")


def _nearest(records: list[Any], where: dict[str, Condition]) -> str:
    """The record that meets the most conditions, and which it misses (for a useful reason)."""
    best, best_missing = None, None
    for r in records:
        missing = [f for f, c in where.items() if not c.check(field_value(r, f))]
        if best_missing is None or len(missing) < len(best_missing):
            best, best_missing = r, missing
    if best is None:
        return "the table is empty"
    shown = ", ".join(f"{f}={field_value(best, f)!r}"[:80] for f in best_missing or [])
    return f"no match; closest is {best.record_key()} with {shown}"


class RecordExists(PredicateBase):
    """A record matching `where` exists in the final state (optionally a number of them)."""

    kind: Literal["record_exists"] = "record_exists"
    table: str = Field(description="Table such as 'tickets.tickets' or 'contacts.people'.")
    where: dict[str, Condition] = Field(default_factory=dict)
    count: Condition | None = Field(None, description="How many records must match (default at least one).")
    new_only: bool = Field(False, description="Only count records that did not exist at the start.")

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        pool = ctx.added(self.table) if self.new_only else list(ctx.final.table(self.table).values())
        hits = matching(pool, self.where)
        expected = ("a new " if self.new_only else "a ") + describe_where(self.table, self.where)
        if self.count is not None:
            expected += f", count {self.count.describe()}"
            ok = self.count.check(len(hits))
        else:
            ok = bool(hits)
        observed = f"{len(hits)} matching ({', '.join(h.record_key() for h in hits[:5])})" if hits else _nearest(pool, self.where)
        return self.result(ok, expected, observed)


class RecordAbsent(PredicateBase):
    """No record matching `where` exists in the final state."""

    kind: Literal["record_absent"] = "record_absent"
    table: str
    where: dict[str, Condition] = Field(default_factory=dict)
    new_only: bool = Field(False, description=(
        "Only records that did not match at the start count (created, or changed to match, during the episode): "
        "a guard such as 'nothing shared with the client' that holds at the start though older records match."))

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        hits = matching(ctx.final.table(self.table).values(), self.where)
        if self.new_only:
            before = {r.record_key() for r in matching(ctx.initial.table(self.table).values(), self.where)}
            hits = [h for h in hits if h.record_key() not in before]
        expected = "no " + ("new or newly matching " if self.new_only else "") + describe_where(self.table, self.where)
        return self.result(not hits, expected,
                           f"{len(hits)} matching ({', '.join(h.record_key() for h in hits[:5])})" if hits else "none")


class TicketState(PredicateBase):
    """A ticket's status, fields and (new) comments in the final state."""

    kind: Literal["ticket"] = "ticket"
    key: str
    status: Condition | None = None
    fields: dict[str, Condition] = Field(default_factory=dict)
    new_comment: Condition | None = Field(None, description="Some comment added during the episode matches.")

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        t = ctx.final.table("tickets.tickets").get(self.key)
        parts = [f"status {self.status.describe()}"] if self.status else []
        parts += [f"{f} {c.describe()}" for f, c in self.fields.items()]
        if self.new_comment:
            parts.append(f"a new comment that {self.new_comment.describe()}")
        expected = f"ticket {self.key} with " + ", ".join(parts or ["any state"])
        if t is None:
            return self.result(False, expected, f"ticket {self.key} does not exist")
        bad = []
        if self.status is not None and not self.status.check(t.status):
            bad.append(f"status={t.status!r}")
        for f, c in self.fields.items():
            v = field_value(t, f)
            if not c.check(v):
                bad.append(f"{f}={v!r}"[:100])
        if self.new_comment is not None:
            before = ctx.initial.table("tickets.tickets").get(self.key)
            old_ids = {c.id for c in before.comments} if before is not None else set()
            new = [c.body for c in t.comments if c.id not in old_ids]
            if not any(self.new_comment.check(b) for b in new):
                bad.append(f"new comments={new!r}"[:160])
        return self.result(not bad, expected, ", ".join(bad) if bad else "as expected")
