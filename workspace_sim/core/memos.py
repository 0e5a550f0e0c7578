"""Bounded memos of pure functions of text on the hot paths (e-mail checks, scopes, condition times, path hints).

Each memo is a plain dict read inline by its owner (a hit costs one lookup); `remember` stores a miss and
empties the dict whole once it holds `size` entries, so memory stays bounded without an LRU's bookkeeping.
The functions memoised are pure, so a hit returns exactly what a miss would have.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(cache: dict[K, V], key: K, value: V, size: int = 8192) -> V:
    """Store `value` under `key` in `cache` (emptied first when it already holds `size` entries); returns `value`."""
    if len(cache) >= size:
        cache.clear()
    cache[key] = value
    return value
