"""A small bounded memo for pure functions of a media file's bytes (what a workbook or PDF read gives, what a
workbook write makes).

Validation replays the same tool calls on the same files many times (the reference, the do-nothing run, every
mutant, the baselines), and a file predicate reads the same workbook cell once per run: decoding an xlsx with
openpyxl costs ~10 ms, so each distinct (bytes, arguments) is decoded once per process. Only successes are kept
(a refused file raises again, with its message, every time), files larger than `max_bytes` are never kept, and
the oldest entry goes when the memo is full, so memory stays bounded. The functions memoised are pure, so a hit
returns exactly what a miss would have: verdicts and bytes do not depend on the memo.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, TypeVar

T = TypeVar("T")


class Memo:
    """An LRU of at most `size` results of a pure function, keyed by a digest of the bytes and the arguments."""

    def __init__(self, size: int = 256, max_bytes: int = 4 * 2**20) -> None:
        self.size, self.max_bytes = size, max_bytes
        self._items: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, raw: bytes, args: Hashable, make: Callable[[], T]) -> T:
        """The memoised value for (`raw`, `args`), made by `make()` on a miss (exceptions pass through, uncached)."""
        if len(raw) > self.max_bytes:
            return make()
        key = (hashlib.blake2b(raw, digest_size=16).digest(), len(raw), args)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
        value = make()
        with self._lock:
            self.misses += 1
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget every entry (tests use it to time the decode itself)."""
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0
