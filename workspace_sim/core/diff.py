"""Semantic diffs between states: per table, records added, removed and changed field by field."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping

from pydantic import BaseModel

from workspace_sim.core.records import Record
from workspace_sim.core.state import EMPTY, State

# An added or removed text longer than this gets no unified_diff in to_json (it would repeat the text).
WHOLE_TEXT_DIFF_CHARS = 4096


def _jsonable(value: Any) -> Any:
    if isinstance(value, Record):
        return value.model_dump(mode="json")
    if isinstance(value, BaseModel):  # a nested model inside a record's field (e.g. a ticket's comments)
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


_LAZY: Any = object()  # `fields` of a change made by record_change: worked out from before and after when first read


class RecordChange:
    """One record added, removed or changed in one table; `fields` maps each changed field to (old, new)."""

    __slots__ = ("table", "key", "kind", "before", "after", "_fields")

    table: str
    key: str
    kind: str  # "added" | "removed" | "changed"
    before: Record | None
    after: Record | None

    def __init__(self, table: str, key: str, kind: str, before: Record | None, after: Record | None,
                 fields: dict[str, tuple[Any, Any]] | None = None) -> None:
        self.table, self.key, self.kind, self.before, self.after = table, key, kind, before, after
        self._fields = {} if fields is None else fields

    @property
    def fields(self) -> dict[str, tuple[Any, Any]]:
        """The changed fields, sorted, as (old, new); most diffs are never asked (calls diff every write), so
        record_change leaves them to the first reader."""
        f = self._fields
        if f is _LAZY:
            f = self._fields = _changed_fields(self.before, self.after)
        return f

    def __eq__(self, other: object) -> bool:
        if type(other) is not RecordChange:
            return NotImplemented
        return (self.table, self.key, self.kind, self.before, self.after, self.fields) == (
            other.table, other.key, other.kind, other.before, other.after, other.fields)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as the dataclass it was)

    def __getstate__(self) -> tuple[Any, ...]:
        return self.table, self.key, self.kind, self.before, self.after, self.fields

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.table, self.key, self.kind, self.before, self.after, self._fields = state

    def __repr__(self) -> str:
        return (f"RecordChange(table={self.table!r}, key={self.key!r}, kind={self.kind!r}, before={self.before!r}, "
                f"after={self.after!r}, fields={self.fields!r})")

    @property
    def service(self) -> str:
        """The service owning the table ('mail' for 'mail.messages')."""
        return self.table.split(".", 1)[0]

    def text_diff(self) -> str | None:
        """A unified diff of the record's text (files), or None when it has none."""
        a = self.before.diff_text() if self.before is not None else None
        b = self.after.diff_text() if self.after is not None else None
        if a is None and b is None or a == b:
            return None
        name = self.key
        return "".join(
            difflib.unified_diff(
                (a or "").splitlines(keepends=True),
                (b or "").splitlines(keepends=True),
                fromfile=f"a{name}" if a is not None else "/dev/null",
                tofile=f"b{name}" if b is not None else "/dev/null",
            )
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready description of the change."""
        out: dict[str, Any] = {"table": self.table, "key": self.key, "kind": self.kind}
        if self.kind == "added":
            out["after"] = _jsonable(self.after)
        elif self.kind == "removed":
            out["before"] = _jsonable(self.before)
        else:
            out["fields"] = {k: {"old": _jsonable(o), "new": _jsonable(n)} for k, (o, n) in self.fields.items()}
        text = self.after if self.kind == "added" else self.before if self.kind == "removed" else None
        whole = text.diff_text() if text is not None else None
        if whole is not None and len(whole) > WHOLE_TEXT_DIFF_CHARS:
            return out  # the diff of an added or removed text is the text itself, already in after/before
        td = self.text_diff()
        if td:
            out["unified_diff"] = td
        return out


@dataclass(frozen=True, slots=True)
class Diff:
    """An ordered collection of record changes (empty exactly when the two states are equal)."""

    changes: tuple[RecordChange, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def __iter__(self) -> Iterator[RecordChange]:
        return iter(self.changes)

    def tables(self) -> set[str]:
        """Names of the tables with at least one change."""
        return {c.table for c in self.changes}

    def services(self) -> set[str]:
        """Names of the services with at least one change."""
        return {c.service for c in self.changes}

    def in_table(self, table: str) -> list[RecordChange]:
        """The changes of one table."""
        return [c for c in self.changes if c.table == table]

    def to_json(self) -> list[dict[str, Any]]:
        """A JSON-ready list of the changes."""
        return [c.to_json() for c in self.changes]

    def summary(self) -> dict[str, dict[str, int]]:
        """Counts per table and kind, e.g. {'mail.messages': {'added': 2}}."""
        out: dict[str, dict[str, int]] = {}
        for c in self.changes:
            out.setdefault(c.table, {}).setdefault(c.kind, 0)
            out[c.table][c.kind] += 1
        return out


def record_change(table: str, key: str, before: Record | None, after: Record | None) -> RecordChange | None:
    """The change between two versions of one record, or None when they are equal."""
    if before is after:
        return None
    if before is None:
        return RecordChange(table, key, "added", None, after)
    if after is None:
        return RecordChange(table, key, "removed", before, None)
    if before.__dict__ == after.__dict__ and type(before) is type(after):
        return None
    return RecordChange(table, key, "changed", before, after, _LAZY)


def _changed_fields(before: Record, after: Record) -> dict[str, tuple[Any, Any]]:
    """The fields that differ between two versions of a record, sorted by name, as (old, new)."""
    a, b = before.__dict__, after.__dict__
    fields = {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
    return dict(sorted(fields.items()))


def diff_states(a: State, b: State) -> Diff:
    """The semantic diff from state `a` to state `b`; shared tables are skipped by identity."""
    changes: list[RecordChange] = []
    if a.tables is b.tables:
        return Diff()
    for tname in sorted(set(a.tables.keys()) | set(b.tables.keys())):
        ta = a.tables.get(tname, EMPTY)
        tb = b.tables.get(tname, EMPTY)
        if ta is tb:
            continue
        # only the keys whose record is not the very same object can differ (tables share unchanged records),
        # so sort those alone rather than every key of a large table
        found: list[tuple[str, RecordChange]] = []
        for key, rb in tb.items():
            ra = ta.get(key)
            if ra is not rb:
                ch = record_change(tname, key, ra, rb)
                if ch is not None:
                    found.append((key, ch))
        for key, ra in ta.items():
            if key not in tb:
                found.append((key, RecordChange(tname, key, "removed", ra, None)))
        found.sort(key=_first)
        changes.extend(ch for _, ch in found)
    return Diff(tuple(changes))


def _first(pair: tuple[str, Any]) -> str:
    return pair[0]


def diff_from_writes(before: State, writes: Iterable[tuple[tuple[str, str], Record | None]]) -> Diff:
    """The diff a set of pending writes would cause on `before` (only touched keys are compared)."""
    changes = []
    for (tname, key), rec in sorted(writes, key=lambda kv: kv[0]):
        ch = record_change(tname, key, before.table(tname).get(key), rec)
        if ch is not None:
            changes.append(ch)
    return Diff(tuple(changes))


def changes_from_diff(diff: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The `Workspace.apply_world_change` operations that redo a recorded diff (its `to_json()` form):
    added records put whole, changed ones patched by field, removed ones deleted; replays use it to
    re-apply a recorded world event."""
    out: list[dict[str, Any]] = []
    for ch in diff:
        kind = ch.get("kind")
        if kind == "removed":
            out.append({"op": "delete", "table": ch["table"], "key": ch["key"]})
        elif kind == "changed":
            fields = {name: v["new"] for name, v in (ch.get("fields") or {}).items()}
            out.append({"op": "patch", "table": ch["table"], "key": ch["key"], "fields": fields})
        else:
            out.append({"op": "put", "table": ch["table"], "record": ch["after"]})
    return out


def without_world(diff: Diff, initial: State, final: State, world: Iterable[Diff]) -> Diff:
    """`diff` (from `initial` to `final`) less the world's own changes: `world` holds the diffs of the changes from
    outside the agent (world events), in the order they applied. `final` is compared with `initial` as the world
    alone would have left it, so a record the world added, changed or removed counts only where it differs from
    the world's version (the agent edited or deleted it); a record the world never touched counts as in `diff`.

    A world change of a record is replayed field by field (a dict-valued field, e.g. a database row's values, key
    by key), so an agent's edit of another field or key of that record before or after it still counts.
    """
    alone: dict[tuple[str, str], Record | None] = {}
    for d in world:
        for c in d:
            k = (c.table, c.key)
            current = alone[k] if k in alone else initial.table(c.table).get(c.key)
            if c.kind == "added":
                alone[k] = c.after
            elif c.kind == "removed":
                alone[k] = None
            elif current is not None:  # a record of the agent's own the world then changed: nothing to replay
                alone[k] = _replayed(current, c)
    if not alone:
        return diff
    changes = [c for c in diff if (c.table, c.key) not in alone]
    for (table, key), rec in alone.items():
        ch = record_change(table, key, rec, final.table(table).get(key))
        if ch is not None:
            changes.append(ch)
    changes.sort(key=lambda c: (c.table, c.key))
    return Diff(tuple(changes))


def _replayed(record: Record, change: RecordChange) -> Record:
    """`record` with the fields `change` changed set as `change` set them (a dict's keys one by one)."""
    update: dict[str, Any] = {}
    for name, (old, new) in change.fields.items():
        mine = record.__dict__.get(name)
        if isinstance(old, dict) and isinstance(new, dict) and isinstance(mine, dict):
            merged = dict(mine)
            for k in old.keys() | new.keys():
                if old.get(k, _LAZY) != new.get(k, _LAZY):
                    if k in new:
                        merged[k] = new[k]
                    else:
                        merged.pop(k, None)
            update[name] = merged
        else:
            update[name] = new
    return record.model_copy(update=update)
