"""Workspace limits as data: what one call may send, take and grow, checked in `Workspace.call`.

Every limit is a field of `WorkspaceLimits` (`WorkspaceConfig.limits`, so an environment spec can
set its own). Arguments are checked before a tool runs (size of each string, number of values,
nesting depth, no NaN or Infinity, no lone surrogate in any string or key); the pending changes are
checked before they are committed (size of each record, total size, records per table), so every
service is covered without knowing any of them. A refused call is answered with `limit_exceeded` or
`invalid_argument` naming the limit, and changes nothing. docs/security.md lists each limit with its default.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any, Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.core.errors import InvalidArgument, LimitExceeded
from workspace_sim.core.records import Record


class WorkspaceLimits(BaseModel):
    """Bounds on one workspace and on each call made in it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    call_seconds: float = Field(5.0, gt=0, le=3600, description=(
        "Wall-time budget of one tool call, in seconds; a call past it is answered `timeout` and changes "
        "nothing. Execution tools (run_python, run_command) are bounded by their sandbox's own timeouts instead."))
    max_argument_chars: int = Field(10_000, ge=100, description=(
        "Longest string anywhere in a call's arguments, except in text arguments (contents, bodies, "
        "descriptions, comments, code), which may be as long as a record (max_record_chars)."))
    max_argument_values: int = Field(10_000, ge=10, description="Most values (strings, numbers, list items, "
                                     "object entries) in one call's arguments.")
    max_argument_depth: int = Field(20, ge=2, le=100, description="Deepest nesting of lists and objects in arguments.")
    max_record_chars: int = Field(1_000_000, ge=1_000, description=(
        "Largest record a call may write, in characters of its text fields (a file's content, a mail's body)."))
    max_total_chars: int = Field(50_000_000, ge=10_000, description=(
        "Most characters of text all the records of the workspace may hold together."))
    max_records_per_table: int = Field(20_000, ge=10, description="Most records one table may hold (e.g. files).")
    max_events: int = Field(100_000, ge=10, description=(
        "Most events the log may hold; past it calls are refused and not logged."))


def check_arguments(args: Mapping[str, Any], large: frozenset[str], limits: WorkspaceLimits) -> None:
    """Refuse arguments that are too big or too deep, naming where; `large` names the text arguments."""
    max_chars, max_values, max_depth = limits.max_argument_chars, limits.max_argument_values, limits.max_argument_depth
    values = 0
    # fast path: the common call is a flat object of short scalars
    for name, v in args.items():
        values += 1
        if values > max_values:
            raise InvalidArgument(f"arguments hold more than {max_values:,} values (limits.max_argument_values)")
        _check_name(name)
        if type(v) is str:
            if len(v) > max_chars:
                _string_too_long(name, v, large, limits)
            if not v.isascii():
                check_text(name, v)
        elif isinstance(v, (list, tuple, dict)):
            break
        elif isinstance(v, float) and not math.isfinite(v):
            _not_a_number(name, v)
    else:
        return
    values = 0
    for name in args:  # the fast path stopped at the first container: the names after it are unchecked
        _check_name(name)
    stack: list[tuple[str, str, Any, int]] = [(k, k, v, 1) for k, v in args.items()]
    while stack:
        where, top, v, depth = stack.pop()
        values += 1
        if values > max_values:
            raise InvalidArgument(f"arguments hold more than {max_values:,} values (limits.max_argument_values)")
        if isinstance(v, str):
            if len(v) > max_chars:
                _string_too_long(where, v, large, limits, top)
            if not v.isascii():
                check_text(where, v)
        elif isinstance(v, float) and not math.isfinite(v):
            _not_a_number(where, v)
        elif isinstance(v, (list, tuple, dict)):
            if depth >= max_depth:
                raise InvalidArgument(f"argument {where} nests deeper than {max_depth} levels (limits.max_argument_depth)")
            items = v.items() if isinstance(v, dict) else enumerate(v)
            for k, x in items:
                if isinstance(k, str) and len(k) > max_chars:
                    raise InvalidArgument(f"argument {where} has a key of {len(k):,} characters; the limit is "
                                          f"{max_chars:,} (limits.max_argument_chars)")
                if isinstance(k, str) and not k.isascii():
                    check_text(f"{where} (a key)", k)
                sub = f"{where}.{k}" if isinstance(v, dict) else f"{where}[{k}]"
                stack.append((sub, top, x, depth + 1))


def _not_a_number(where: str, v: float) -> None:
    # NaN and Infinity are not JSON: a call carrying one (from a Python policy, a spec's reference, the
    # library API) would put non-standard JSON into the event log, records and datasets
    shown = "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    raise InvalidArgument(f"argument {where} is {shown}, which is not a JSON number; give a finite number")


def _check_name(name: Any) -> None:
    if type(name) is not str or len(name) > 100:
        shown = ascii(name)[:40]
        raise InvalidArgument(f"argument names must be strings of at most 100 characters, got {shown}")
    if not name.isascii():
        check_text(f"name {ascii(name)}", name)


def check_text(where: str, v: str) -> None:
    """Refuse a string holding a lone UTF-16 surrogate (U+D800..U+DFFF alone: Python strings can hold one,
    UTF-8 and JSON records cannot), naming the argument, the code point and its position (counted from 1)."""
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidArgument(
            f"argument {where} contains characters that are not valid Unicode: a lone surrogate "
            f"U+{ord(v[e.start]):04X} at position {e.start + 1} (lone surrogates cannot be stored as UTF-8 text); "
            "send the text without it, or the whole character it was half of") from None


def _string_too_long(where: str, v: str, large: frozenset[str], limits: WorkspaceLimits, top: str | None = None) -> None:
    if (top or where) in large:
        if len(v) <= limits.max_record_chars:
            return
        raise InvalidArgument(f"argument {where} is {len(v):,} characters long; the limit is "
                              f"{limits.max_record_chars:,} (limits.max_record_chars)")
    raise InvalidArgument(f"argument {where} is {len(v):,} characters long; the limit is "
                          f"{limits.max_argument_chars:,} (limits.max_argument_chars)")


def record_chars(record: Any) -> int:
    """The size of a record: the characters of all its text, nested values included (remembered on a stored
    record, which is immutable: a record's size is counted when it is written and again when it is replaced)."""
    private = getattr(record, "__pydantic_private__", None)
    if type(private) is dict:
        hit = private.get("_chars")
        if hit is not None:
            return hit
        private["_chars"] = total = _record_chars(record)
        return total
    return _record_chars(record)


def _record_chars(record: Any) -> int:
    total = 0
    for v in record.__dict__.values():  # the common case: flat fields of strings and scalars
        if type(v) is str:
            total += len(v)
        elif v is not None and not isinstance(v, _SCALARS):
            total += _nested_chars(v)
    return total


_SCALARS = (int, float, bool, datetime, date)


def _nested_chars(value: Any) -> int:
    total = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            total += len(v)
        elif isinstance(v, BaseModel):
            stack.extend(v.__dict__.values())
        elif isinstance(v, (list, tuple, set, frozenset)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
    return total


def total_chars(tables: Mapping[str, Mapping[str, Record]]) -> int:
    """The size of every record of a state's tables together."""
    return sum(record_chars(r) for t in tables.values() for r in t.values())


def check_growth(changes: Iterable[Any], tables: Mapping[str, Mapping[str, Record]], total: int,
                 limits: WorkspaceLimits) -> int:
    """Refuse pending record changes that would pass a limit; returns the new total size.

    `changes` are RecordChange-like (table, key, before, after). A limit already passed by the
    initial data only refuses calls that grow further.
    """
    delta = 0
    counts: dict[str, int] = {}
    for c in changes:
        after = record_chars(c.after) if c.after is not None else 0
        before = record_chars(c.before) if c.before is not None else 0
        if after > limits.max_record_chars and after > before:
            raise LimitExceeded(f"{c.table} record {c.key!r} would hold {after:,} characters; the limit is "
                                f"{limits.max_record_chars:,} (limits.max_record_chars). Nothing was changed.")
        delta += after - before
        counts[c.table] = counts.get(c.table, 0) + (c.before is None) - (c.after is None)
    for table, grown in counts.items():
        n = len(tables.get(table, {})) + grown
        if grown > 0 and n > limits.max_records_per_table:
            raise LimitExceeded(f"{table} would hold {n:,} records; the limit is {limits.max_records_per_table:,} "
                                "(limits.max_records_per_table). Nothing was changed.")
    if delta > 0 and total + delta > limits.max_total_chars:
        raise LimitExceeded(f"the workspace would hold {total + delta:,} characters of text; the limit is "
                            f"{limits.max_total_chars:,} (limits.max_total_chars). Nothing was changed.")
    return total + delta
