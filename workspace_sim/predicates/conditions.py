"""Value conditions used inside predicates: a literal means equality; an object combines operators."""

from __future__ import annotations

import math
from datetime import date, datetime, time, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workspace_sim.core.memos import remember
from workspace_sim.predicates.base import or_shorthand
from workspace_sim.text.patterns import compile_spec_regex
from workspace_sim.text.people import address_key


_TIMES: dict[str, datetime | None] = {}  # text -> parsed time: the same stored times are compared run after run


def _to_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if type(value) is str:
        try:
            return _TIMES[value]
        except KeyError:
            pass
        return remember(_TIMES, value, _parse_datetime(value))
    if isinstance(value, str):
        return _parse_datetime(value)
    return None


def _parse_datetime(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            f = float(value.replace(",", "").strip())
            return f if math.isfinite(f) else None
        except ValueError:
            return None
    return None


def _norm(value: Any) -> Any:
    if isinstance(value, (date, time)):  # dates and times of day compare as their ISO text (datetime is a date)
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


class Condition(BaseModel):
    """A test on one value; every operator given must hold (a bare literal means `equals`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=or_shorthand(
        {"not": {"type": "object"}, "description": "A literal (text, number, boolean, list or null): the value equals it."}))
    equals: Any = None
    not_equals: Any = None
    contains: str | None = Field(None, description="Substring of a text (or element of a list).")
    not_contains: str | None = None
    contains_any: list[str] | None = Field(None, min_length=1,
                                           description="The text contains at least one of these phrasings.")
    regex: str | None = Field(None, description=(
        "Regular expression searched in the text, RE2 syntax (no backreferences or lookaround; linear time)."))
    one_of: list[Any] | None = None
    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None
    after: datetime | None = None
    before: datetime | None = None
    not_before: datetime | None = Field(None, description="A time at or after this one (inclusive bound).")
    not_after: datetime | None = Field(None, description="A time at or before this one (inclusive bound).")
    near: datetime | None = Field(None, description="A time within `within_minutes` of this one (either side).")
    within_minutes: float | None = Field(None, ge=0, description="How far from `near` a time may be, in minutes.")
    includes: list[Any] | None = Field(None, description="A list value must include all of these.")
    excludes: list[Any] | None = None
    count: "Condition | None" = Field(None, description="Condition on the length of a list or text.")
    each: "Condition | None" = Field(None, description=(
        "Every element of a list meets this condition (e.g. {one_of: [...]}: every element is one of a set); "
        "an empty list meets it, so add count to require elements."))
    distinct: "Condition | None" = Field(None, description=(
        "Condition on how many distinct values there are: the distinct elements of a list, or, with regex, the "
        "distinct matches in the text (e.g. {regex: 'KB-\\d+', distinct: {gte: 4}})."))
    exists: bool | None = Field(None, description="Whether the value is present (not null).")
    ignore_case: bool = False
    tolerance: float = Field(1e-6, ge=0, description="Allowed numeric difference for equals.")

    @model_validator(mode="before")
    @classmethod
    def _literal(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return {"equals": data}
        if not data:
            raise ValueError("empty condition: give a literal or at least one operator")
        return data

    @model_validator(mode="after")
    def _check_regex(self) -> "Condition":
        if self.regex is not None:
            compile_spec_regex(self.regex)
        for name in ("after", "before", "not_before", "not_after", "near"):
            t = getattr(self, name)
            if t is not None and t.tzinfo is None:
                raise ValueError(f"{name} needs a time zone offset")
        if (self.near is None) != (self.within_minutes is None):
            raise ValueError("near and within_minutes go together: give both or neither")
        return self

    def describe(self) -> str:
        """The condition in words."""
        parts = []
        for name in ("equals", "not_equals", "contains", "not_contains", "contains_any", "regex", "one_of", "gt", "gte",
                     "lt", "lte", "after", "before", "not_before", "not_after", "includes", "excludes", "exists"):
            v = getattr(self, name)
            if v is not None and (name != "equals" or "equals" in self.model_fields_set):
                parts.append(f"{name.replace('_', ' ')} {_norm(v)!r}")
        if self.near is not None:
            parts.append(f"within {self.within_minutes:g} minutes of {self.near.isoformat()!r}")
        if self.count is not None:
            parts.append(f"count {self.count.describe()}")
        if self.each is not None:
            parts.append(f"every element {self.each.describe()}")
        if self.distinct is not None:
            parts.append(f"distinct {'matches' if self.regex is not None else 'elements'} {self.distinct.describe()}")
        return " and ".join(parts) or "anything"

    def check(self, value: Any) -> bool:
        """Whether `value` satisfies every operator."""
        value = _norm(value)
        fold = (lambda s: s.casefold()) if self.ignore_case else (lambda s: s)
        if self.exists is not None and (value is not None) != self.exists:
            return False
        if "equals" in self.model_fields_set and not self._eq(value, self.equals, fold):
            return False
        if self.not_equals is not None and self._eq(value, self.not_equals, fold):
            return False
        if self.contains is not None and not self._contains(value, self.contains, fold):
            return False
        if self.not_contains is not None and self._contains(value, self.not_contains, fold):
            return False
        if self.contains_any is not None and not any(self._contains(value, n, fold) for n in self.contains_any):
            return False
        if self.regex is not None:
            if not isinstance(value, str):
                return False
            if compile_spec_regex(self.regex, ignore_case=self.ignore_case).search(value) is None:
                return False
        if self.one_of is not None and not any(self._eq(value, o, fold) for o in self.one_of):
            return False
        for op, bound in (("gt", self.gt), ("gte", self.gte), ("lt", self.lt), ("lte", self.lte)):
            if bound is None:
                continue
            n = _num(value)
            if n is None or not {"gt": n > bound, "gte": n >= bound, "lt": n < bound, "lte": n <= bound}[op]:
                return False
        if any(b is not None for b in (self.after, self.before, self.not_before, self.not_after, self.near)):
            t = _to_datetime(value)
            if t is None or t.tzinfo is None:
                return False
            if self.after is not None and not t > self.after or self.before is not None and not t < self.before:
                return False
            if self.not_before is not None and t < self.not_before or self.not_after is not None and t > self.not_after:
                return False
            if self.near is not None and abs(t - self.near) > timedelta(minutes=self.within_minutes or 0):
                return False
        if self.includes is not None:
            if not isinstance(value, list) or not all(any(self._eq(v, i, fold) for v in value) for i in self.includes):
                return False
        if self.excludes is not None:
            if isinstance(value, list) and any(any(self._eq(v, i, fold) for v in value) for i in self.excludes):
                return False
        if self.count is not None:
            if not isinstance(value, (list, str)) or not self.count.check(len(value)):
                return False
        if self.each is not None:
            if not isinstance(value, list) or not all(self.each.check(v) for v in value):
                return False
        if self.distinct is not None and not self.distinct.check(self._distinct(value, fold)):
            return False
        return True

    def _distinct(self, value: Any, fold: Any) -> int:
        """How many distinct values: regex matches in a text, or elements of a list (-1 for anything else)."""
        if self.regex is not None and isinstance(value, str):
            rx = compile_spec_regex(self.regex, ignore_case=self.ignore_case)
            return len({fold(m.group(0)) for m in rx.finditer(value)})
        if isinstance(value, list):
            seen: list[Any] = []
            for v in value:
                if not any(self._eq(v, x, fold) for x in seen):
                    seen.append(v)
            return len(seen)
        return -1

    def _eq(self, a: Any, b: Any, fold: Any) -> bool:
        if isinstance(a, str) and isinstance(b, str):
            if fold(a.strip()) == fold(b.strip()):
                return True
            if "@" in b and "@" in a:  # addresses compare as addresses: 'IT <IT@X.NET>' is it@x.net
                key = address_key(b)
                if key is not None and address_key(a) == key:
                    return True
            ta, tb = _to_datetime(a), _to_datetime(b)
            return bool(ta and tb and ta.tzinfo and tb.tzinfo and ta == tb)
        na, nb = _num(a), _num(b)
        if na is not None and nb is not None:
            return abs(na - nb) <= self.tolerance
        return bool(a == b)

    def _contains(self, value: Any, needle: str, fold: Any) -> bool:
        if "@" in needle and address_key(needle) is not None:
            fold = str.casefold  # an address is the same address in any case
        if isinstance(value, str):
            return fold(needle) in fold(value)
        if isinstance(value, list):
            return any(isinstance(v, str) and fold(needle) in fold(v) for v in value)
        return False


def field_value(record: Any, path: str) -> Any:
    """A (dotted) field of a record; through a list, the list of each element's field."""
    value: Any = record
    for part in path.split("."):
        if isinstance(value, list):
            if part.isdigit():
                i = int(part)
                value = value[i] if i < len(value) else None
            else:
                value = [_get(v, part) for v in value]
        else:
            value = _get(value, part)
        if value is None:
            return None
    return value


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    if isinstance(obj, BaseModel):
        return getattr(obj, name, None) if name in type(obj).model_fields else None
    return None
