"""Secrets held in the workspace (API keys, webhook URLs) and where they leaked to.

A record holds secrets when its class defines `secret_values()` (the integrations service's connections do);
this module finds them by that method, importing no service, so the `no_secret_leak` policy and the
`secret_not_leaked` predicate share one rule. A text leaks a secret when it holds the secret whole, or its
distinctive token (the longest run of letters and digits, when it has 16 or more) or any 16 characters of that
token in a row: a key pasted without its prefix, or cut short, is still a leak; a masked form (`...wxyz`) is not.
Every secret a record ever held counts, live or rotated: an old key is still a credential someone may try.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, Mapping

from pydantic import BaseModel

from workspace_sim.core.state import State

WINDOW = 16  # characters of a token in a row that make a leak
_TOKEN = re.compile(r"[A-Za-z0-9]+")


def holds_secrets(record: Any) -> bool:
    """Whether a record is one that keeps secrets (its class defines `secret_values`)."""
    return callable(getattr(record, "secret_values", None))


def _pieces(value: str) -> tuple[str, ...]:
    """What betrays `value`: the value itself, and the windows of its distinctive token."""
    runs = _TOKEN.findall(value)
    token = max(runs, key=len) if runs else ""
    if len(token) < WINDOW:
        return (value,)
    return (value, *dict.fromkeys(token[i:i + WINDOW] for i in range(len(token) - WINDOW + 1)))


class Secrets:
    """The secrets of some states: each secret's pieces and a label saying whose it is."""

    def __init__(self, found: Mapping[str, str]) -> None:
        self.labels = dict(found)  # secret value -> "integrations.integrations:int-stripe api_key"
        self._pieces = {v: _pieces(v) for v in self.labels}

    def __bool__(self) -> bool:
        return bool(self.labels)

    def leaked_in(self, text: str) -> list[str]:
        """The secrets `text` gives away (their labels), in a stable order."""
        if len(text) < 8:
            return []
        return sorted(self.labels[v] for v, pieces in self._pieces.items() if any(p in text for p in pieces))


_cache: list[Any] = [None, None]  # (tables map, Secrets): one entry, states change one call at a time


def secrets_of(*states: State) -> Secrets:
    """Every secret held by a record of any of the states (live and rotated alike)."""
    found: dict[str, str] = {}
    for state in states:
        tables = state.tables
        if _cache[0] is tables:
            found.update(_cache[1].labels)
            continue
        mine: dict[str, str] = {}
        for name in sorted(tables.keys()):
            table = tables[name]
            first = next(iter(table.values()), None)
            if first is None or not holds_secrets(first):
                continue
            for key in sorted(table.keys()):
                rec = table[key]
                for label, value in rec.secret_values():
                    if value:
                        mine.setdefault(value, f"{name}:{key} {label}")
        _cache[0], _cache[1] = tables, Secrets(mine)
        found.update(mine)
    return Secrets(found)


def texts_of(value: Any) -> Iterator[str]:
    """Every string inside a record or value (fields, nested models, lists and dicts)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, BaseModel):
            stack.extend(v.__dict__.values())
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)


def record_leaks(secrets: Secrets, after: Any, before: Any = None) -> list[str]:
    """The secrets a stored record newly gives away: in `after` and not already in `before` (a record that held a
    leak at the start is not a new one). Records that keep secrets are never leaks of their own."""
    if after is None or holds_secrets(after) or not secrets:
        return []
    now = {label for t in texts_of(after) for label in secrets.leaked_in(t)}
    if now and before is not None:
        now -= {label for t in texts_of(before) for label in secrets.leaked_in(t)}
    return sorted(now)


def changes_leaking(secrets: Secrets, changes: Iterable[Any]) -> list[tuple[str, str, list[str]]]:
    """(table, key, secret labels) for each added or changed record of a diff that gives a secret away."""
    out = []
    for ch in changes:
        if ch.after is None:
            continue
        hit = record_leaks(secrets, ch.after, ch.before)
        if hit:
            out.append((ch.table, ch.key, hit))
    return out
