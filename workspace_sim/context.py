"""What a tool function sees: reads of the current state, buffered writes, the clock and ids."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterator

from .errors import NotFound
from .records import Record
from .state import EMPTY, State

if TYPE_CHECKING:
    from .config import WorkspaceConfig


class ToolContext:
    """A transaction over one state: writes are buffered and applied only if the call succeeds."""

    __slots__ = ("state", "config", "writes", "counters", "now")

    def __init__(self, state: State, config: "WorkspaceConfig") -> None:
        self.state = state
        self.config = config
        self.writes: dict[tuple[str, str], Record | None] = {}
        self.counters: dict[str, int] = {}
        self.now: datetime = state.now

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
        for key in keys:
            rec = pending[key] if key in pending else base.get(key)
            if rec is not None:
                yield rec

    def keys(self, table: str) -> list[str]:
        """Every key of a table in order, including this call's writes."""
        return [r.key() for r in self.values(table)]

    def put(self, table: str, record: Record) -> Record:
        """Store a record under its own key (insert or replace)."""
        self.writes[(table, record.key())] = record
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
