"""What the predicates tolerate, field by field, and whether a mutant is in fact a right solution.

A predicate that accepts a range of values for a record field (a start time between two bounds, a
priority that is one of several, a body containing any of several phrasings) states a tolerance.
`field_rules` reads those tolerances off parsed predicates as `FieldRule`s: which table and
top-level record field, which records (all of the table, or named keys), and a test of a value.
`equivalent` says whether a mutant's end state differs from a right solution's only in fields
whose new values such a rule accepts; such a mutant is a right solution and is not required to fail.
Predicate kinds this module does not know contribute no rule (their fields are never tolerated).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable

from workspace_sim.predicates import AllOf, AnyOf, EventExists, FileContent, MailSent, RecordExists, TicketState
from workspace_sim.predicates.conditions import Condition
from workspace_sim.core.records import Record
from workspace_sim.core.state import State


@dataclass(frozen=True)
class FieldRule:
    """A tolerance on one top-level field of the records of a table (all records, or only `keys`)."""

    table: str
    field: str
    keys: frozenset[str] | None
    accepts: Callable[[Any, Any], bool]  # (a right solution's value, another value) -> is the other also right
    what: str

    def governs(self, table: str, key: str, field: str) -> bool:
        """Whether this rule speaks for `field` of record `key` in `table`."""
        return self.table == table and self.field == field and (self.keys is None or key in self.keys)


def _cond(c: Condition) -> Callable[[Any, Any], bool]:
    return lambda _right, value: c.check(value)


def _rules(pred: Any) -> Iterable[FieldRule]:
    if isinstance(pred, (AllOf, AnyOf)):
        for child in pred.predicates:
            yield from _rules(child)
    elif isinstance(pred, RecordExists):
        for name, c in pred.where.items():
            if "." not in name:
                yield FieldRule(pred.table, name, None, _cond(c), f"{pred.table}.{name} {c.describe()}")
    elif isinstance(pred, TicketState):
        keys = frozenset({pred.key})
        if pred.status is not None:
            yield FieldRule("tickets.tickets", "status", keys, _cond(pred.status), f"status {pred.status.describe()}")
        for name, c in pred.fields.items():
            if "." not in name:
                yield FieldRule("tickets.tickets", name, keys, _cond(c), f"{name} {c.describe()}")
        if pred.new_comment is not None:
            yield FieldRule("tickets.tickets", "comments", keys, _comments(pred.new_comment),
                            f"new comment {pred.new_comment.describe()}")
    elif isinstance(pred, EventExists):
        for name, c in (("title", pred.title), ("location", pred.location)):
            if c is not None:
                yield FieldRule("calendar.events", name, None, _cond(c), f"{name} {c.describe()}")
        if pred.start is not None or pred.starts_after is not None:
            yield FieldRule("calendar.events", "start", None, _bounded(pred.start, pred.starts_after, None),
                            "start within the predicate's range")
        if pred.end is not None or pred.ends_before is not None:
            yield FieldRule("calendar.events", "end", None, _bounded(pred.end, None, pred.ends_before),
                            "end within the predicate's range")
    elif isinstance(pred, MailSent):
        for name, c in (("subject", pred.subject), ("body", pred.body)):
            if c is not None:
                yield FieldRule("mail.messages", name, None, _cond(c), f"mail {name} {c.describe()}")
    elif isinstance(pred, FileContent):
        if pred.exists and pred.content is not None:
            yield FieldRule("files.files", "content", frozenset({pred.path}), _cond(pred.content),
                            f"{pred.path} content {pred.content.describe()}")


def _bounded(c: Condition | None, not_before: datetime | None, not_after: datetime | None
             ) -> Callable[[Any, Any], bool]:
    def accepts(_right: Any, value: Any) -> bool:
        if not isinstance(value, datetime):
            return False
        if not_before is not None and value < not_before or not_after is not None and value > not_after:
            return False
        return c is None or c.check(value)
    return accepts


def _comments(c: Condition) -> Callable[[Any, Any], bool]:
    """Comment lists that differ only in the bodies of comments, each new body meeting `c`."""
    def accepts(right: Any, value: Any) -> bool:
        if not isinstance(right, list) or not isinstance(value, list) or len(right) != len(value):
            return False
        for a, b in zip(right, value):
            if a == b:
                continue
            if a.model_copy(update={"body": b.body}) != b or not c.check(b.body):
                return False
        return True
    return accepts


def field_rules(predicates: Iterable[Any]) -> list[FieldRule]:
    """Every field tolerance stated by the (parsed) predicates."""
    return [r for p in predicates for r in _rules(p)]


def _record_fields(rec: Record) -> dict[str, Any]:
    return dict(rec.__dict__)


def state_delta(right: State, other: State) -> list[tuple[str, str, str, Any, Any]] | None:
    """(table, key, field, right value, other value) for every field that differs between two states'
    records, or None when they differ in which records exist."""
    out: list[tuple[str, str, str, Any, Any]] = []
    for tname in sorted(set(right.tables) | set(other.tables)):
        a, b = right.table(tname), other.table(tname)
        if a is b:
            continue
        if set(a.keys()) != set(b.keys()):
            return None
        for key in sorted(a.keys()):
            ra, rb = a[key], b[key]
            if ra is rb or ra == rb:
                continue
            fa, fb = _record_fields(ra), _record_fields(rb)
            for name in sorted(set(fa) | set(fb)):
                if fa.get(name) != fb.get(name):
                    out.append((tname, key, name, fa.get(name), fb.get(name)))
    return out


def equivalent(rights: Iterable[State], other: State, rules: list[FieldRule]) -> str | None:
    """Why `other` is a right solution too, or None: its records equal those of one of the `rights`
    end states except for fields whose values a tolerance accepts."""
    for right in rights:
        delta = state_delta(right, other)
        if delta is None:
            continue
        if not delta:
            return "the same end state as a right solution"
        tolerated = []
        for table, key, name, a, b in delta:
            rule = next((r for r in rules if r.governs(table, key, name) and r.accepts(a, b)), None)
            if rule is None:
                break
            tolerated.append(rule.what)
        else:
            return "inside the tolerance " + "; ".join(dict.fromkeys(tolerated))
    return None
