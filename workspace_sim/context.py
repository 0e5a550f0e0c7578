"""What a tool function sees: reads of the current state, buffered writes, the clock and ids."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .errors import CallTimeout, NotFound
from .records import Record
from .state import EMPTY, State

if TYPE_CHECKING:
    from .config import WorkspaceConfig


_log = logging.getLogger(__name__)


class Resources:
    """Live objects a workspace holds outside its state (e.g. a sandbox container), closed together.

    Items are created on first use by `get(name, factory)` and are not part of snapshots: a fork
    gets its own `Resources`, `restore` keeps them, and `close()` calls each item's `close()`
    (newest first, errors logged, never raised). Using an item again after `close()` creates a
    new one.
    """

    def __init__(self) -> None:
        self._items: dict[str, Any] = {}
        self._lock = threading.Lock()

    def get(self, name: str, factory: Callable[[], Any]) -> Any:
        """The item called `name`, made by `factory()` the first time it is asked for."""
        with self._lock:
            item = self._items.get(name)
            if item is None:
                item = self._items[name] = factory()
            return item

    def peek(self, name: str) -> Any:
        """The item called `name` if it exists, else None (creates nothing)."""
        return self._items.get(name)

    def close(self) -> None:
        """Release every item; safe to call more than once."""
        with self._lock:
            items, self._items = list(self._items.items()), {}
        for name, item in reversed(items):
            try:
                item.close()
            except Exception:  # one failing release must not keep the others alive
                _log.exception("closing workspace resource %s failed", name)


class ToolContext:
    """A transaction over one state: writes are buffered and applied only if the call succeeds."""

    __slots__ = ("state", "config", "writes", "counters", "now", "_resources", "deadline", "budget")

    def __init__(
        self, state: State, config: "WorkspaceConfig",
        resources: Resources | Callable[[], Resources] | None = None,
        budget: float | None = None,
    ) -> None:
        self.state = state
        self.config = config
        self.writes: dict[tuple[str, str], Record | None] = {}
        self.counters: dict[str, int] = {}
        self.now: datetime = state.now
        self._resources = resources  # or a function making them on first use
        self.budget = budget  # wall seconds the whole call may take; None: unbounded
        self.deadline = time.perf_counter() + budget if budget is not None else None

    def check_deadline(self) -> None:
        """Raise CallTimeout if the call has used up its wall-time budget; long loops call this often."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise CallTimeout(f"the call ran past its time budget of {self.budget:g} s "
                              "(limits.call_seconds); nothing was changed. Narrow it (a smaller folder, "
                              "a simpler pattern, fewer results) and try again")

    @property
    def resources(self) -> Resources | None:
        """The workspace's live objects (e.g. a sandbox container); None outside a Workspace."""
        r = self._resources
        if r is not None and not isinstance(r, Resources):
            r = self._resources = r()
        return r

    @property
    def user(self) -> str:
        """The email address of the person the agent acts for."""
        return self.config.user

    def has_service(self, name: str) -> bool:
        """Whether the workspace includes a service."""
        return name in self.config.services

    def get(self, table: str, key: str) -> Any:
        """The record stored under `key` (seeing this call's own writes), or None."""
        if (table, key) in self.writes:
            return self.writes[(table, key)]
        return self.state.tables.get(table, EMPTY).get(key)

    def require(self, table: str, key: str, what: str) -> Any:
        """The record under `key`, or a NotFound error naming `what` was missing."""
        rec = self.get(table, key)
        if rec is None:
            raise NotFound(f"{what} {key!r} not found")
        return rec

    def values(self, table: str) -> Iterator[Any]:
        """Every record of a table in key order, including this call's writes."""
        base = self.state.tables.get(table, EMPTY)
        pending = {k: r for (t, k), r in self.writes.items() if t == table}
        keys = sorted(set(base.keys()) | pending.keys()) if pending else sorted(base.keys())
        for i, key in enumerate(keys):
            if i & 255 == 255:
                self.check_deadline()
            rec = pending[key] if key in pending else base.get(key)
            if rec is not None:
                yield rec

    def keys(self, table: str) -> list[str]:
        """Every key of a table in order, including this call's writes."""
        return [r.record_key() for r in self.values(table)]

    def put(self, table: str, record: Record) -> Record:
        """Store a record under its own key (insert or replace)."""
        self.writes[(table, record.record_key())] = record
        return record

    def delete(self, table: str, key: str) -> None:
        """Remove the record under `key` (it must exist)."""
        self.writes[(table, key)] = None

    def new_id(self, prefix: str) -> str:
        """A fresh id, deterministic for the workspace seed and the number of ids issued before."""
        name = f"id:{prefix}"
        n = self.counters.get(name, self.state.counters.get(name, 0)) + 1
        self.counters[name] = n
        h = hashlib.blake2b(f"{self.config.seed}:{prefix}:{n}".encode(), digest_size=4).hexdigest()
        return f"{prefix}-{n:04d}{h[:4]}"
