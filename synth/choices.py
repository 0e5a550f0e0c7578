"""Choices the predicates allow: whether a mutant that passes is a right solution by another allowed choice.

Predicates can leave the agent a choice: `any` (one of several checks), `at_least` with k below the number of
checks (k of n), and conditions that accept one of several values or records (`one_of`, `includes`,
`contains_any`, `each`, e.g. "complete one of each duplicate pair", "invite at least 3 of the 4 attendees"). A
mutant of the reference that still passes every predicate by taking another branch of such a choice (the other
record of the pair, another attendee) is a right solution, not a survivor: the author need not list every
combination as an alternative solution.

`choice_equivalent(predicates, right, other, rules)` says why `other` (a mutant's evaluation context) is right
where `right` (a right solution's) is: every record on which the two end states differ must be explained, either
by a choice node whose taken branches differ between the two runs (the records its checks look at, in either
run) or by a field tolerance (synth.tolerance). Predicates are judged here on the final states (a staged
predicate too): the test only excuses a mutant that already passed every predicate strictly.
"""

from __future__ import annotations

from typing import Any, Iterable

from workspace_sim.predicates import (AllOf, AnyOf, AtLeast, EvalContext, EventExists, FileContent, MailSent, NotOf,
                                      RecordAbsent, RecordExists, TicketState)
from workspace_sim.predicates.conditions import Condition
from workspace_sim.predicates.records import matching

from .tolerance import FieldRule

Record = tuple[str, str]  # (table, key)
_CHOOSING = ("one_of", "includes", "contains_any", "each")


def _chooses(c: Condition | None) -> bool:
    """Whether a condition accepts several values by construction (a set to pick from, a list with extras)."""
    return c is not None and (any(getattr(c, op) is not None for op in _CHOOSING) or _chooses(c.count))


def _changed(ctx: EvalContext, table: str) -> set[Record]:
    """The records of `table` the run added, removed or changed."""
    return {(c.table, c.key) for c in ctx.diff if c.table == table}


def _leaf(pred: Any, ctx: EvalContext) -> tuple[Any, set[Record], bool]:
    """(which choice the run took, the records the check looks at, whether the check is a choice itself)."""
    if isinstance(pred, (RecordExists, RecordAbsent)):
        pool = ctx.added(pred.table) if getattr(pred, "new_only", False) and isinstance(pred, RecordExists) \
            else list(ctx.final.table(pred.table).values())
        hits = frozenset(r.record_key() for r in matching(pool, pred.where))
        choice = any(_chooses(c) for c in pred.where.values()) or _chooses(getattr(pred, "count", None))
        return hits, {(pred.table, k) for k in hits}, choice
    if isinstance(pred, TicketState):
        t = ctx.final.table("tickets.tickets").get(pred.key)
        conds = {"status": pred.status, **pred.fields}
        took = tuple((f, repr(getattr(t, f, None))) for f, c in conds.items() if _chooses(c)) if t is not None else ()
        return took, {("tickets.tickets", pred.key)}, bool(took)
    if isinstance(pred, FileContent):
        reach = {("files.files", pred.path)} if pred.path else _changed(ctx, "files.files")
        return None, reach, False
    if isinstance(pred, (MailSent, EventExists)):
        table = "mail.messages" if isinstance(pred, MailSent) else "calendar.events"
        reach = _changed(ctx, table)
        conds = [pred.subject, pred.body] if isinstance(pred, MailSent) else [pred.title, pred.location, pred.start]
        choice = any(_chooses(c) for c in conds) or _chooses(pred.count if isinstance(pred, MailSent) else None)
        return frozenset(k for _, k in reach) if choice else None, reach, choice
    return None, set(), False


def _trace(pred: Any, ctx: EvalContext) -> tuple[bool, Any, set[Record]]:
    """(passed, the choices taken beneath, the records looked at) of one predicate node on one run."""
    if isinstance(pred, (AllOf, AnyOf, AtLeast)):
        kids = [_trace(p, ctx) for p in pred.predicates]
        passed = frozenset(i for i, k in enumerate(kids) if k[0])
        reach = set().union(*(k[2] for k in kids))
        need = len(kids) if isinstance(pred, AllOf) else 1 if isinstance(pred, AnyOf) else pred.k
        return len(passed) >= need, (passed, tuple(k[1] for k in kids)), reach
    if isinstance(pred, NotOf):
        passed, took, reach = _trace(pred.predicate, ctx)
        return not passed, took, reach
    took, reach, _ = _leaf(pred, ctx)
    return pred.evaluate(ctx).passed, took, reach


def _explained(pred: Any, right: EvalContext, other: EvalContext) -> set[Record]:
    """The records a choice of `pred` accounts for: where a choice node took other branches in the two runs, the
    records its checks look at in either run; beneath nodes that chose alike, their children's choices."""
    if isinstance(pred, (AllOf, AnyOf, AtLeast)):
        k = len(pred.predicates) if isinstance(pred, AllOf) else 1 if isinstance(pred, AnyOf) else pred.k
        if k < len(pred.predicates):
            a, b = _trace(pred, right), _trace(pred, other)
            if a[0] and b[0] and a[1][0] != b[1][0]:  # both pass, by other branches
                return a[2] | b[2]
        return set().union(*(_explained(p, right, other) for p in pred.predicates))
    if isinstance(pred, NotOf):
        return set()
    ta, ra, choice = _leaf(pred, right)
    tb, rb, _ = _leaf(pred, other)
    return ra | rb if choice and ta != tb else set()


def _delta(right: EvalContext, other: EvalContext) -> list[tuple[str, str, str | None, Any, Any]]:
    """(table, key, field or None for a record only one state has, right value, other value) per difference."""
    out: list[tuple[str, str, str | None, Any, Any]] = []
    a_state, b_state = right.final, other.final
    for tname in sorted(set(a_state.tables) | set(b_state.tables)):
        a, b = a_state.table(tname), b_state.table(tname)
        if a is b:
            continue
        for key in sorted(set(a.keys()) | set(b.keys())):
            ra, rb = a.get(key), b.get(key)
            if ra is rb or ra == rb:
                continue
            if ra is None or rb is None:
                out.append((tname, key, None, ra, rb))
                continue
            fa, fb = dict(ra.__dict__), dict(rb.__dict__)
            out += [(tname, key, n, fa.get(n), fb.get(n)) for n in sorted(set(fa) | set(fb)) if fa.get(n) != fb.get(n)]
    return out


def choice_equivalent(predicates: Iterable[Any], rights: Iterable[EvalContext], other: EvalContext,
                      rules: list[FieldRule]) -> str | None:
    """Why the run in `other` is a right solution by another allowed choice, or None: against one of the `rights`
    (right solutions' evaluation contexts), every differing record is explained by a choice the predicates allow
    (see the module docstring) or a field tolerance, and at least one by a choice."""
    preds = list(predicates)
    for right in rights:
        explained: set[Record] = set()
        for p in preds:
            explained |= _explained(p, right, other)
        if not explained:
            continue
        delta = _delta(right, other)
        if all((t, k) in explained or n is not None and any(r.governs(t, k, n) and r.accepts(a, b) for r in rules)
               for t, k, n, a, b in delta):
            records = sorted({f"{t}:{k}" for t, k, *_ in delta if (t, k) in explained})
            return "another choice the predicates allow (" + ", ".join(records[:4]) + (
                ", ..." if len(records) > 4 else "") + ")"
    return None
