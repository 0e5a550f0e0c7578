"""`records_read`: the agent looked at enough of the evidence (at least N, or all, of a set of records).

What counts as read is decided by `ReadTrace.resolve` (context.py): the call looked the record up
or iterated its table, did not write it, and returned its key together with some of its content.
Every successful call's read set is on its event (`Event.read`, worked out on first use), so the
predicate only unions them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from workspace_sim.core.context import shows_content
from workspace_sim.predicates.base import EvalContext, PredicateBase, PredicateResult
from workspace_sim.predicates.conditions import Condition
from workspace_sim.predicates.records import describe_where, matching


def _listing(keys: list[str], limit: int = 8) -> str:
    shown = ", ".join(keys[:limit])
    return shown + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


class RecordsRead(PredicateBase):
    """At least `at_least` (default: all) of a set of records were read by any tool during the episode.

    The set is `keys` of `table`, or the records of `table` matching `where` in the initial state
    (the evidence that was there to read).
    """

    kind: Literal["records_read"] = "records_read"
    table: str = Field(description="Table such as 'tickets.tickets' or 'mail.messages'.")
    keys: list[str] | None = Field(None, min_length=1, description="The records' keys.")
    where: dict[str, Condition] | None = Field(
        None, description="Conditions selecting the records in the initial state ({} selects the whole table).")
    at_least: int | None = Field(None, ge=1, description="How many must have been read (default: all of them).")
    shown: Literal["any", "content"] = Field("any", description=(
        "'any': a record counts when a result showed its key with some of its content (a search hit, a snippet); "
        "'content': only when its content reached the agent: a result holding its main text (whole, or at least "
        "200 characters of it, as a detail read or the head of a file), and, for a result that came in pages, "
        "in a page the agent fetched. Search hits, metadata (get_file_info) and unfetched pages do not count."))

    @field_validator("table")
    @classmethod
    def _table(cls, v: str) -> str:
        service, dot, name = v.partition(".")
        if not dot or not service or not name or any(c.isspace() for c in v):
            raise ValueError(f"table must be 'service.table' (e.g. 'tickets.tickets'), got {v!r}")
        return v

    @field_validator("keys")
    @classmethod
    def _keys(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and len(set(v)) != len(v):
            dup = sorted({k for k in v if v.count(k) > 1})
            raise ValueError(f"duplicate keys {dup}")
        return v

    @model_validator(mode="after")
    def _selector(self) -> "RecordsRead":
        if (self.keys is None) == (self.where is None):
            raise ValueError("give exactly one of keys (a list of record keys) or where (conditions; {} for all)")
        if self.keys is not None and self.at_least is not None and self.at_least > len(self.keys):
            raise ValueError(f"at_least {self.at_least} exceeds the {len(self.keys)} keys listed")
        return self

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        if self.keys is not None:
            wanted = list(self.keys)
            what = f"{self.table} records {_listing(wanted)}"
        else:
            wanted = [r.record_key() for r in matching(ctx.initial.table(self.table).values(), self.where or {})]
            what = describe_where(self.table, self.where or {}) + "s at the start"
        need = self.at_least if self.at_least is not None else len(wanted)
        expected = f"{'all' if self.at_least is None else f'at least {need} of the'} {what} read by some tool"
        if not wanted:
            return self.result(False, expected, "no record matches the selector, so there is nothing to have read")
        read = self._read(ctx)
        got = [k for k in wanted if k in read]
        missed = [k for k in wanted if k not in read]
        observed = f"read {len(got)} of {len(wanted)}" + (f" ({_listing(got)})" if got else "")
        if missed:
            observed += f"; not read: {_listing(missed)}"
        if self.shown == "content":
            expected = expected.replace(" read by some tool", " whose content some tool returned to the agent")
        return self.result(len(got) >= need, expected, observed)

    def _read(self, ctx: EvalContext) -> set[str]:
        out: set[str] = set()
        for ev in ctx.events:
            if ev.kind != "call" or not ev.ok:
                continue
            keys = [k for t, k in getattr(ev, "read", ()) if t == self.table and k not in out]
            if self.shown == "any":
                out.update(keys)
                continue
            delivered = _delivered(ev)
            for k in keys:  # the record as it was at the start or is at the end (its content may have changed)
                recs = [r for r in (ctx.initial.table(self.table).get(k), ctx.final.table(self.table).get(k)) if r]
                if any(shows_content(r, k, ev.data, delivered) for r in recs):
                    out.add(k)
        return out


def _delivered(ev: Any) -> str | None:
    """The text the agent received of a paged result (the pages it fetched), or None when it got it whole."""
    pages = getattr(ev, "delivered", None)
    return None if pages is None else "".join(pages)
