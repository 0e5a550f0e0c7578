"""The records of typed databases: a database's property schema, and its rows (pages) with values by property.

A value is checked against its property's type by `coerce` (used by the tools and by initial data alike):
title and text are text, number a number (a numeric string is read as one), select one of the options and
multi_select a list of them (matched in any case, stored as the option is spelled), date an ISO date, person an
address, checkbox true/false, relation a list of row ids of the related database. Stored values are plain JSON,
so the generic record predicates reach them as `values.<Property>`.

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`), the check of a
world event's row writes (`_world_write`: a patch merges the given values) and its table handles (`DATABASES`,
`ROWS`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service

PropertyType = Literal["title", "text", "number", "select", "multi_select", "date", "person", "checkbox", "relation"]
MAX_TEXT, MAX_PROPERTIES, MAX_OPTIONS = 2_000, 100, 200


class Property(BaseModel):
    """One property of a database's schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1, max_length=100, description="The property's name, unique in its database.")
    type: PropertyType = Field(
        description=("The kind of value it holds: title, text, number, select, multi_select, date, person, checkbox "
                     "or relation."))
    options: list[str] = Field(default_factory=list, max_length=MAX_OPTIONS,
                               description="The choices of a select or multi_select property.")
    relation: str | None = Field(None, description="The database a relation property points into.")

    @model_validator(mode="after")
    def _shape(self) -> "Property":
        if self.type in ("select", "multi_select") and not self.options:
            raise ValueError(f"property {self.name!r} ({self.type}) needs options")
        if self.type not in ("select", "multi_select") and self.options:
            raise ValueError(f"property {self.name!r} ({self.type}) cannot have options")
        if (self.type == "relation") != (self.relation is not None):
            raise ValueError(f"property {self.name!r}: a relation property, and only one, names its database")
        return self


class Database(Record):
    """A database: an id, a title and a property schema with exactly one title property."""

    key_field = "id"
    id: str = Field(min_length=1, max_length=80, description="The database's id.")
    title: str = Field(min_length=1, max_length=200, description="The database's title.")
    properties: list[Property] = Field(min_length=1, max_length=MAX_PROPERTIES,
        description="The schema: its properties, exactly one of them of type title.")
    created: datetime | None = Field(None, description="When the database was created.")

    @model_validator(mode="after")
    def _schema(self) -> "Database":
        names = [p.name.casefold() for p in self.properties]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"database {self.id!r} has more than one property named {dup[0]!r}")
        if sum(p.type == "title" for p in self.properties) != 1:
            raise ValueError(f"database {self.id!r} needs exactly one property of type title")
        return self

    def prop(self, name: str) -> Property | None:
        """The property of this name (any case), or None."""
        return next((p for p in self.properties if p.name.casefold() == name.strip().casefold()), None)

    @property
    def title_property(self) -> Property:
        """The property that names each row."""
        return next(p for p in self.properties if p.type == "title")


class Row(Record):
    """A row (page) of a database: its values by property name, checked against the schema when written."""

    key_field = "id"
    id: str = Field(description="The row's id.")
    database: str = Field(description="The id of the database the row belongs to.")
    values: dict[str, Any] = Field(default_factory=dict,
        description="The row's values by property name, each checked against that property's type.")
    created: datetime | None = Field(None, description="When the row was created.")
    modified: datetime | None = Field(None, description="When the row last changed.")


def coerce(db: Database, prop: Property, value: Any, where: str, person: Callable[[Any, str], str],
           row_exists: Callable[[str, str], bool]) -> Any:
    """The stored form of `value` for `prop`, or ValueError naming `where` and what is wrong.

    `person(value, where)` gives a person's address; `row_exists(database, row_id)` tells a relation's target
    exists. None clears the value (except the title, which every row needs).
    """
    t = prop.type
    if value is None:
        if t == "title":
            raise ValueError(f"{where}: the title cannot be empty")
        return None
    if t in ("title", "text"):
        if not isinstance(value, str):
            raise ValueError(f"{where} is {t}; give text, not {type(value).__name__}")
        text = value.strip()
        if t == "title" and not text:
            raise ValueError(f"{where}: the title cannot be empty")
        if len(text) > MAX_TEXT:
            raise ValueError(f"{where} is {len(text):,} characters; at most {MAX_TEXT:,}")
        return text
    if t == "number":
        if isinstance(value, str):
            try:
                value = float(value.replace(",", "").strip())
            except ValueError:
                raise ValueError(f"{where} is a number; {value!r} is not one") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{where} is a number; got {value!r}")
        return int(value) if float(value).is_integer() and abs(value) < 2**53 else float(value)
    if t == "checkbox":
        if not isinstance(value, bool):
            raise ValueError(f"{where} is a checkbox; give true or false, not {value!r}")
        return value
    if t == "date":
        text = value.isoformat() if isinstance(value, date) else value
        try:
            return date.fromisoformat(str(text)[:10]).isoformat() if isinstance(text, str) and len(text) == 10 \
                else datetime.fromisoformat(str(text)).date().isoformat()
        except ValueError:
            raise ValueError(f"{where} is a date; give YYYY-MM-DD, not {value!r}") from None
    if t == "select":
        return _option(prop, value, where)
    if t == "multi_select":
        items = value if isinstance(value, list) else None
        if items is None:
            raise ValueError(f"{where} is multi_select; give a list of options")
        out: list[str] = []
        for i, v in enumerate(items):
            o = _option(prop, v, f"{where}[{i}]")
            if o not in out:
                out.append(o)
        return out
    if t == "person":
        return person(value, where)
    # relation
    ids = value if isinstance(value, list) else [value]
    for i, rid in enumerate(ids):
        if not isinstance(rid, str) or not row_exists(prop.relation or "", rid):
            raise ValueError(f"{where}[{i}]: no row {rid!r} in database {prop.relation!r}")
    return list(dict.fromkeys(ids))


def _option(prop: Property, value: Any, where: str) -> str:
    if isinstance(value, str):
        for o in prop.options:
            if o.casefold() == value.strip().casefold():
                return o
    raise ValueError(f"{where}: {value!r} is not an option of {prop.name!r}; the options are "
                     + ", ".join(repr(o) for o in prop.options))


def static_person(value: Any, where: str) -> str:
    """A person in initial data: an address (names are resolved only by the tools, which see the directory)."""
    try:
        return normalize_email(value, where)
    except ValueError as e:
        raise ValueError(str(e)) from None


def row_values(db: Database, given: dict[str, Any], old: dict[str, Any], where: str, person: Any,
               exists: Any) -> dict[str, Any]:
    """`old` with `given` applied, each value checked and stored in its canonical form; the title required."""
    out = dict(old)
    for name, v in given.items():
        p = db.prop(name)
        if p is None:
            close = difflib.get_close_matches(name, [q.name for q in db.properties], n=1, cutoff=0.5)
            raise ValueError(f"{where}: database {db.id!r} has no property {name!r}"
                             + (f"; did you mean {close[0]!r}?" if close else "; its properties are "
                                + ", ".join(repr(q.name) for q in db.properties)))
        stored = coerce(db, p, v, f"{where}.{p.name}", person, exists)
        if stored is None or stored == []:
            out.pop(p.name, None)
        else:
            out[p.name] = stored
    if db.title_property.name not in out:
        raise ValueError(f"{where}: a row needs its title property {db.title_property.name!r}")
    return dict(sorted(out.items(), key=lambda kv: [q.name for q in db.properties].index(kv[0])))


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Check every initial row against its database's schema and give rows times."""
    dbs, rows = tables.get(DATABASES), tables.get(ROWS)
    if dbs is None or rows is None:
        return
    for key, d in list(dbs.items()):
        assert isinstance(d, Database)
        for p in d.properties:
            if p.relation is not None and p.relation not in dbs:
                raise SpecError(f"data.databases.databases[{key}].properties.{p.name}",
                                f"relation to database {p.relation!r}, which does not exist")
        if d.created is None:
            dbs[key] = d.evolve(created=config.now)
    for key, r in list(rows.items()):
        assert isinstance(r, Row)
        db = dbs.get(r.database)
        if db is None:
            raise SpecError(f"data.databases.rows[{key}].database", f"database {r.database!r} does not exist")
        try:
            values = row_values(db, r.values, {}, f"data.databases.rows[{key}].values", static_person,
                                 lambda d, i: i in rows and rows[i].database == d)  # type: ignore[attr-defined]
        except ValueError as e:
            raise SpecError(f"data.databases.rows[{key}]", str(e)) from None
        rows[key] = r.evolve(values=values, created=r.created or config.now, modified=r.modified or r.created or config.now)


def _world_write(table: str, old: Record | None, op: str, given: Any, get: Any, now: Any) -> Record:
    """A world event's write of a record: a row's values are checked against its database's schema, and a patch
    of `values` merges the given properties into the row's (null clears one, as update_row does), so the
    others, an agent's edits among them, stay."""
    if table != ROWS:
        return given if op == "put" else old.evolve(**given)  # type: ignore[union-attr]
    if op == "put":
        row, given_values, base = given, given.values, {}
    else:
        assert isinstance(old, Row)
        if not isinstance(given, Mapping):
            raise ValueError(f"fields must be an object of the row's fields, got {type(given).__name__}")
        fields = dict(given)
        given_values = fields.pop("values", {})
        if not isinstance(given_values, Mapping):
            raise ValueError("fields.values must be an object of property: value (the properties to change)")
        row = old.evolve(**fields) if fields else old
        base = old.values if row.database == old.database else {}  # moved to another database: its schema anew
    db = get(DATABASES, row.database)
    if not isinstance(db, Database):
        raise ValueError(f"row {row.id!r}: database {row.database!r} does not exist")

    def exists(database: str, rid: str) -> bool:
        r = get(ROWS, rid)
        return r is not None and r.database == database

    values = row_values(db, dict(given_values), base, "fields.values" if op == "patch" else "record.values",
                        static_person, exists)
    stamp = row.modified if op == "put" and row.modified is not None else now
    return row.evolve(values=values, created=row.created or now, modified=stamp)


SERVICE = Service("databases", {"databases": Database, "rows": Row}, title="Databases", prepare=_prepare,
                  world_write=_world_write)
DATABASES, ROWS = SERVICE.table("databases"), SERVICE.table("rows")
