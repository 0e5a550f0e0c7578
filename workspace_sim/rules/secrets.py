"""Secrets held in the workspace (API keys, webhook URLs) and where they leaked to.

A record holds secrets when its class defines `secret_values()` (the integrations service's connections do);
this module finds them by that method, importing no service, so the `no_secret_leak` policy and the
`secret_not_leaked` predicate share one rule. Whether a text gives a secret away is decided by the one detector
of `workspace_sim.rules.leaks`: the secret whole or any `MIN_CHUNK` (12) characters of its distinctive token, in
any case, spaced out or joined with invisible characters, reversed, in rot13, or inside base64, base32, hex,
percent-encoded or HTML-escaped text; a masked form (`...wxyz`) is not a leak. Every secret a record ever held
counts, live or rotated: an old key is still a credential someone may try. A record that keeps secrets is read
like any other except for its own secret values: a key pasted into an integration's notes (its own or
another's) is a leak.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from pydantic import BaseModel

from workspace_sim.core.memos import remember
from workspace_sim.core.state import State
from workspace_sim.rules.leaks import MIN_CHUNK, Detector

__all__ = ["MIN_CHUNK", "Secrets", "changes_leaking", "holds_secrets", "record_leaks", "secrets_of", "texts_of"]


def holds_secrets(record: Any) -> bool:
    """Whether a record is one that keeps secrets (its class defines `secret_values`)."""
    return callable(getattr(record, "secret_values", None))


_DETECTORS: dict[tuple[tuple[str, str], ...], Detector] = {}  # one per set of secrets: building one compiles


class Secrets:
    """The secrets of some states, each with a label saying whose it is, and the detector that finds them."""

    def __init__(self, found: Mapping[str, str]) -> None:
        self.labels = dict(found)  # secret value -> "integrations.integrations:int-stripe api_key"
        key = tuple(sorted(self.labels.items()))
        detector = _DETECTORS.get(key)
        self._detector = detector if detector is not None else remember(_DETECTORS, key, Detector(self.labels), 64)

    def __bool__(self) -> bool:
        return bool(self.labels)

    def leaked_in(self, text: str) -> list[str]:
        """The secrets `text` gives away (their labels), in a stable order."""
        return self._detector.found_in(text)


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


def _written(record: Any) -> Iterator[str]:
    """The texts of a record that can give a secret away: all of them, less a secret-keeping record's own
    secret values (its notes, name and the rest are read like any record's)."""
    own = {v for _, v in record.secret_values()} if holds_secrets(record) else ()
    return (t for t in texts_of(record) if t not in own)


def record_leaks(secrets: Secrets, after: Any, before: Any = None) -> list[str]:
    """The secrets a stored record newly gives away: in `after` and not already in `before` (a record that held a
    leak at the start is not a new one)."""
    if after is None or not secrets:
        return []
    now = {label for t in _written(after) for label in secrets.leaked_in(t)}
    if now and before is not None:
        now -= {label for t in _written(before) for label in secrets.leaked_in(t)}
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
