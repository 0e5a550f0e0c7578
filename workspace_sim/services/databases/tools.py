"""The tools of typed databases: list and describe databases, query rows with filters and sorts, create and
update rows (every value checked against the schema; a bad one is refused naming the property and why)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, NotFound
from workspace_sim.text.people import resolve_address
from workspace_sim.core.registry import tool
from .records import DATABASES, ROWS, Database, Property, Row, coerce, row_values

MAX_LIMIT = 200


def _db(ctx: ToolContext, ref: str) -> Database:
    d = ctx.get(DATABASES, ref)
    if d is None:
        d = next((x for x in ctx.values(DATABASES) if x.title.casefold() == ref.strip().casefold()), None)
    if d is None:
        known = ", ".join(f"{x.id} ({x.title})" for x in sorted(ctx.values(DATABASES), key=lambda x: x.id)) or "none"
        raise NotFound(f"no database {ref!r}; the databases are {known}")
    return d


def _checkers(ctx: ToolContext) -> tuple[Any, Any]:
    def person(v: Any, where: str) -> str:
        return resolve_address(ctx, v, where)

    def exists(database: str, rid: str) -> bool:
        r = ctx.get(ROWS, rid)
        return r is not None and r.database == database

    return person, exists


def _row(r: Row) -> dict[str, Any]:
    return {"id": r.id, "database": r.database, "values": r.values,
            "modified": r.modified.isoformat() if r.modified else None}


def _render_rows(d: dict) -> str:
    head = f"{d['database']}: {d['count']} row(s)" + (f", showing {len(d['rows'])}" if d["count"] > len(d["rows"]) else "")
    lines = [head]
    for r in d["rows"]:
        lines.append(f"- {r['id']}: " + "; ".join(f"{k}: {_show(v)}" for k, v in r["values"].items()))
    return "\n".join(lines)


def _show(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(map(str, v))
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


@tool(read_only=True)
def list_databases(ctx: ToolContext) -> dict:
    """List the databases: id, title, property names and how many rows each has."""
    counts: dict[str, int] = {}
    for r in ctx.values(ROWS):
        counts[r.database] = counts.get(r.database, 0) + 1
    return {"databases": [{"id": d.id, "title": d.title, "properties": [p.name for p in d.properties],
                           "rows": counts.get(d.id, 0)} for d in sorted(ctx.values(DATABASES), key=lambda x: x.id)]}


@tool(read_only=True)
def get_database(ctx: ToolContext, database: str) -> dict:
    """A database's schema: each property's name and type, a select's options, a relation's target database.

    Args:
        database: The database's id or title.
    """
    d = _db(ctx, database)
    return {"id": d.id, "title": d.title, "properties": [p.model_dump(exclude_defaults=True) for p in d.properties]}


class Filter(BaseModel):
    """One condition on a property."""

    model_config = ConfigDict(extra="forbid")
    property: str = Field(description="The property's name.")
    op: Literal["equals", "not_equals", "contains", "gt", "gte", "lt", "lte", "is_empty", "is_not_empty"] | None = Field(
        None, description="How to compare; equals when not given.")
    value: str | int | float | bool | None = Field(None, description="The value to compare with (none for is_empty / is_not_empty).")


class Sort(BaseModel):
    """One sort key."""

    model_config = ConfigDict(extra="forbid")
    property: str
    direction: Literal["ascending", "descending"] | None = Field(None, description="ascending when not given.")


def _test(db: Database, f: Filter, i: int, ctx: ToolContext) -> Any:
    p = db.prop(f.property)
    where = f"filters[{i}]"
    op = f.op or "equals"
    if p is None:
        raise InvalidArgument(f"{where}.property: database {db.id!r} has no property {f.property!r}")
    if op in ("is_empty", "is_not_empty"):
        want = op == "is_empty"
        return lambda vals: (vals.get(p.name) is None) == want
    person, exists = _checkers(ctx)
    if op in ("gt", "gte", "lt", "lte") and p.type not in ("number", "date"):
        raise InvalidArgument(f"{where}: {op} compares numbers and dates; {p.name!r} is {p.type}")
    try:
        if op == "contains" and p.type in ("title", "text"):
            needle = str(f.value).casefold()
            return lambda vals: needle in str(vals.get(p.name) or "").casefold()
        if op == "contains" and p.type in ("multi_select", "relation"):
            item = coerce(db, p, [f.value], where + ".value", person, lambda d, r: True)[0]
            return lambda vals: item in (vals.get(p.name) or [])
        if op == "contains":
            raise InvalidArgument(f"{where}: contains applies to text, multi_select and relation; {p.name!r} is {p.type}")
        probe = Property(name=p.name, type="text") if p.type == "relation" else p
        want = coerce(db, probe, f.value, where + ".value", person, lambda d, r: True)
    except ValueError as e:
        raise InvalidArgument(str(e)) from None
    ops = {"equals": lambda a: a == want, "not_equals": lambda a: a != want, "gt": lambda a: a is not None and a > want,
           "gte": lambda a: a is not None and a >= want, "lt": lambda a: a is not None and a < want,
           "lte": lambda a: a is not None and a <= want}
    check = ops[op]
    return lambda vals: check(vals.get(p.name))


@tool(read_only=True, render=_render_rows)
def query_database(ctx: ToolContext, database: str, filters: list[Filter] = [], sorts: list[Sort] = [],
                   limit: int = 50) -> dict:
    """Rows of a database that meet every filter, in the sort order (rows without the sort property last).

    Args:
        database: The database's id or title.
        filters: Conditions on properties, all of which must hold, e.g. {property: Amount, op: gt, value: 100}.
        sorts: Sort keys in order, e.g. {property: Date, direction: descending}; by creation otherwise.
        limit: At most this many rows (1-200).
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be from 1 to {MAX_LIMIT}, got {limit}")
    db = _db(ctx, database)
    tests = [_test(db, f, i, ctx) for i, f in enumerate(filters)]
    rows = sorted((r for r in ctx.values(ROWS) if r.database == db.id), key=lambda r: (r.created, r.id))
    rows = [r for r in rows if all(t(r.values) for t in tests)]
    for i, s in reversed(list(enumerate(sorts))):
        p = db.prop(s.property)
        if p is None:
            raise InvalidArgument(f"sorts[{i}].property: database {db.id!r} has no property {s.property!r}")
        present = [r for r in rows if r.values.get(p.name) is not None]
        absent = [r for r in rows if r.values.get(p.name) is None]
        present.sort(key=lambda r: _key(r.values[p.name]), reverse=s.direction == "descending")
        rows = present + absent
    return {"database": db.id, "count": len(rows), "rows": [_row(r) for r in rows[:limit]]}


class Value(BaseModel):
    """One property's value for a row."""

    model_config = ConfigDict(extra="forbid")
    property: str = Field(description="The property's name.")
    value: str | int | float | bool | list[str] | None = Field(None, description=(
        "The value: text, a number, true/false, an option, a list of options or row ids, a YYYY-MM-DD date, a "
        "person's name or address; null clears it."))


def _given(values: list[Value]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, v in enumerate(values):
        if v.property.strip().casefold() in (k.casefold() for k in out):
            raise InvalidArgument(f"values[{i}]: property {v.property!r} is given twice")
        out[v.property.strip()] = v.value
    return out


def _key(v: Any) -> Any:
    return (0, v) if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, str(v).casefold())


@tool(render=lambda d: f"created {d['id']} in {d['database']}")
def create_row(ctx: ToolContext, database: str, values: list[Value]) -> dict:
    """Add a row (page) to a database; every value is checked against the property's type, and the title is required.

    Args:
        database: The database's id or title.
        values: The row's values, e.g. [{property: Name, value: Lunch}, {property: Amount, value: 12.5}].
    """
    db = _db(ctx, database)
    person, exists = _checkers(ctx)
    try:
        vals = row_values(db, _given(values), {}, "values", person, exists)
    except ValueError as e:
        raise InvalidArgument(str(e)) from None
    r = Row(id=ctx.new_id("row"), database=db.id, values=vals, created=ctx.now, modified=ctx.now)
    ctx.put(ROWS, r)
    return _row(r)


@tool(render=lambda d: f"updated {d['id']}: {', '.join(d['changed']) or 'no change'}")
def update_row(ctx: ToolContext, row_id: str, values: list[Value]) -> dict:
    """Change some values of a row; the others stay. A null clears a value (not the title).

    Args:
        row_id: The row's id, as query_database shows it.
        values: The new values, e.g. [{property: Paid, value: true}].
    """
    r = ctx.get(ROWS, row_id)
    if r is None:
        raise NotFound(f"no row {row_id!r}; query_database shows row ids")
    db = _db(ctx, r.database)
    person, exists = _checkers(ctx)
    try:
        vals = row_values(db, _given(values), r.values, "values", person, exists)
    except ValueError as e:
        raise InvalidArgument(str(e)) from None
    changed = sorted(k for k in set(vals) | set(r.values) if vals.get(k) != r.values.get(k))
    if changed:
        ctx.put(ROWS, r.evolve(values=vals, modified=ctx.now))
    return {**_row(r.evolve(values=vals)), "changed": changed}
