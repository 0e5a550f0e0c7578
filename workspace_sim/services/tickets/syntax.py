"""The tickets search query language: `name:value` filters, words and "quoted phrases", and priority comparisons."""

from __future__ import annotations

import re
from typing import Any


from workspace_sim.core.errors import InvalidArgument
from .records import PRIORITIES, UNSET, priority_rank

FILTERS = ("project", "status", "assignee", "reporter", "priority", "label", "department", "category", "account",
           "customer", "is")


_COMPARE = re.compile(r"^(>=|<=|>|<)?\s*([a-z]+)$")

_TOKEN = re.compile(r'\s*(?:([A-Za-z]+):(?:"([^"]*)"|(\S*))|"([^"]*)"|(\S+))')


def parse_query(query: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Split a search query into (filter, value) pairs and lower-cased free-text terms.

    Filters are `name:value` or `name:"quoted value"` with the names in FILTERS; `is:` takes open,
    done, unassigned or overdue; `priority:` takes a level, `unset`, or a comparison such as `>=high`.
    Everything else is a word or "quoted phrase" that must appear.
    """
    if query.count('"') % 2:
        raise InvalidArgument(f"query {query!r} has an unbalanced quote; close every \" you open")
    filters: list[tuple[str, str]] = []
    words: list[str] = []
    for m in _TOKEN.finditer(query):
        name, quoted, bare, phrase, word = m.groups()
        if name is not None:
            if name.lower() not in FILTERS:
                raise InvalidArgument(f"unknown filter {name}: in query; use {', '.join(f + ':' for f in FILTERS)} "
                                      "or put text containing ':' in quotes")
            value = quoted if quoted is not None else bare
            if not value or not value.strip():
                raise InvalidArgument(f"filter {name}: has no value (write e.g. {name}:value)")
            filters.append((name.lower(), value))
        elif (phrase or word or "").strip():
            words.append(" ".join((phrase or word or "").split()).lower())
    return filters, words


def priority_test(value: str) -> Any:
    """A test on a ticket's priority from `high`, `unset`/`none` or a comparison such as `>=high`."""
    v = "".join(value.split()).lower()
    if v in (UNSET, "none"):
        return lambda p: p is None
    m = _COMPARE.match(v)
    if m is None or m.group(2) not in PRIORITIES:
        raise InvalidArgument(f"priority {value!r} is not one of {', '.join(PRIORITIES)} or unset; compare with "
                              f">=, >, <=, < (e.g. priority:>=high), lowest < ... < critical")
    op, rank = m.group(1), PRIORITIES.index(m.group(2))
    if op is None:
        return lambda p: p == m.group(2)
    cmp = {">=": rank.__le__, ">": rank.__lt__, "<=": rank.__ge__, "<": rank.__gt__}[op]
    return lambda p: p is not None and cmp(priority_rank(p))
