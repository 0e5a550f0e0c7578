"""Mutants that break a maintained predicate: after a right solution, change a record field the
predicate must keep as it is ("leave the priority as it is"), and the predicates must notice.

For each record field a `maintain: true` predicate reads (synth.tolerance rules), a value the
predicate rejects is drawn (another value of the field seen in the start state, a number off by
one, a time an hour later, filler text), and set by an enabled tool that takes the record's key and
that field, as a careless agent would (e.g. `update_ticket(key, priority)`). When no tool can set
it, a direct change to the record stands in, so the check still proves the predicate reads the field.
A maintained `record_absent` ("nothing shared with the client") is broken by changing a record of its table so
that it matches (a direct change). A maintained predicate of a stage that closes before the end is broken just
before that stage's end_stage.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Iterator, Mapping

from workspace_sim.predicates import RecordAbsent
from workspace_sim.predicates.conditions import Condition, field_value
from workspace_sim.core.registry import Tool
from workspace_sim.core.state import State

from .mutants import FILLER, Mutant, ValueIndex
from .spec import GUARD_KINDS, CallStep, EnvironmentSpec
from .tolerance import FieldRule, field_rules

MAX_TARGETS = 2  # records broken per rule (a sample, as collateral mutants are)


def maintained(spec: EnvironmentSpec) -> list[int]:
    """Indices of the predicates marked maintain that are not guard kinds already (those are checked
    by the collateral mutants)."""
    return [i for i, p in enumerate(spec.predicates) if p.get("maintain") is True and p.get("kind") not in GUARD_KINDS]


def _wrong_values(rule: FieldRule, value: Any, index: ValueIndex) -> Iterator[Any]:
    """Values of the field that the rule rejects, most plausible first."""
    cands: list[Any] = []
    if isinstance(value, bool):
        cands = [not value]
    elif isinstance(value, (int, float)):
        cands = [value + 1, value - 1, value * 2 + 7]
    elif isinstance(value, datetime):
        cands = [value + timedelta(hours=1), value + timedelta(days=1), value - timedelta(days=1)]
    elif isinstance(value, str) or value is None:
        cands = [v for v in index.vocab.get(rule.field, []) if v != value] + [FILLER]
    elif isinstance(value, list) and value:
        cands = [value[:-1]]
    for c in cands:
        if not rule.accepts(value, c):
            yield c


def _setter(tools: Mapping[str, Tool], key_field: str, field: str) -> str | None:
    """An enabled state-changing tool that takes exactly the record key and the field (the rest optional)."""
    for name in sorted(tools):
        t = tools[name]
        props = t.input_schema.get("properties", {})
        required = set(t.input_schema.get("required", []))
        if not t.hints.read_only and key_field in props and field in props and required <= {key_field, field}:
            return name
    return None


def _json(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def break_mutants(spec: EnvironmentSpec, parsed: list[Any], final: State, tools: Mapping[str, Tool],
                  index: ValueIndex, end: int, answer: str | None, only: Iterable[int] | None = None,
                  when: str = "after the solution") -> dict[int, list[Mutant]]:
    """For each maintained predicate (by index; those in `only` when given), candidate mutants that break it
    at step `end` of the solution (after it, or before the end_stage that closes the predicate's stage),
    `final` being the state there (`when` says so in the descriptions); an empty list means it reads no record field this module knows how to change."""
    out: dict[int, list[Mutant]] = {}
    chosen = set(only) if only is not None else None
    for i in maintained(spec):
        if chosen is not None and i not in chosen:
            continue
        cands: list[Mutant] = []
        for rule in field_rules([parsed[i]]):
            table = final.table(rule.table)
            keys = sorted(rule.keys) if rule.keys is not None else [
                k for k in sorted(table.keys()) if rule.accepts(getattr(table[k], rule.field, None),
                                                                getattr(table[k], rule.field, None))]
            for key in [k for k in keys if k in table][:MAX_TARGETS]:
                rec = table[key]
                value = getattr(rec, rule.field, None)
                tool = _setter(tools, rec.key_field, rule.field)
                for wrong in _wrong_values(rule, value, index):
                    what = f"{rule.table}:{key} {rule.field} changed from {_json(value)!r} to {_json(wrong)!r}"
                    if tool is not None:
                        step = CallStep(tool=tool, args={rec.key_field: key, rule.field: _json(wrong)})
                        cands.append(Mutant("break_maintained", end, (step,), answer, f"predicates[{i}]",
                                            f"a collateral {tool} {when}: {what}"))
                    cands.append(Mutant("break_maintained", end, (), answer, f"predicates[{i}]",
                                        f"the guarded record changed {when}: {what}",
                                        patch=({"op": "patch", "table": rule.table, "key": key,
                                                "fields": {rule.field: _json(wrong)}},)))
        if isinstance(parsed[i], RecordAbsent):
            cands += _absent_breakers(parsed[i], final, end, answer, f"predicates[{i}]", when)
        out[i] = cands
    return out


def _satisfying(current: Any, c: Condition) -> Any:
    """A value meeting `c` made from `current` (its equals or first one_of, `current` with the includes added, or
    with the text contains asks for appended), or None when this cannot say."""
    if "equals" in c.model_fields_set:
        value = c.equals
    elif c.one_of:
        value = c.one_of[0]
    elif c.includes is not None:
        value = [*(current if isinstance(current, list) else []), *c.includes]
    elif c.contains is not None or c.contains_any:
        value = f"{current if isinstance(current, str) else ''} {c.contains or c.contains_any[0]}".strip()  # type: ignore[index]
    else:
        return None
    return value if c.check(value) else None


def _absent_breakers(pred: RecordAbsent, final: State, end: int, answer: str | None, path: str, when: str
                     ) -> list[Mutant]:
    """Mutants that break a maintained record_absent ("nothing shared with the client"): a record of its table that
    does not match is changed so that it does (a field, or a field of a list's elements, e.g. collaborators.email
    gaining the client), by a direct change to the record."""
    out: list[Mutant] = []
    table = final.table(pred.table)
    for key in sorted(table.keys()):
        rec = table[key]
        if all(c.check(field_value(rec, f)) for f, c in pred.where.items()):
            continue
        fields: dict[str, Any] = {}
        for name, c in pred.where.items():
            head, _, sub = name.partition(".")
            if c.check(field_value(rec, name)):
                continue
            current = getattr(rec, head, None)
            if not sub:
                value = _satisfying(_json(current), c)
                if value is None:
                    break
                fields[head] = value
            elif isinstance(current, list) and "." not in sub:
                wanted = _satisfying([field_value(x, sub) for x in current], c)
                if not isinstance(wanted, list):
                    break
                dumped = [x.model_dump(mode="json") if hasattr(x, "model_dump") else x for x in current]
                fields[head] = dumped + [{sub: v} for v in wanted[len(current):]]
            else:
                break
        else:
            what = ", ".join(f"{f}={_json(v)!r}"[:80] for f, v in fields.items())
            out.append(Mutant("break_maintained", end, (), answer, path,
                              f"{pred.table}:{key} changed {when} so that it matches: {what}",
                              patch=({"op": "patch", "table": pred.table, "key": key, "fields": fields},)))
            if len(out) == MAX_TARGETS:
                break
    return out
