"""What a tool function sees: reads of the current state, buffered writes, the clock and ids."""

from __future__ import annotations

import hashlib
import logging
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from pydantic import ValidationError

from .errors import InvalidArgument, NotFound, Unavailable, pydantic_error_message
from .records import Record
from .state import EMPTY, State

if TYPE_CHECKING:
    from .config import WorkspaceConfig
    from .registry import Tool


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

    __slots__ = ("state", "config", "writes", "counters", "now", "invoked", "_resources", "_tools")

    def __init__(
        self, state: State, config: "WorkspaceConfig",
        resources: Resources | Callable[[], Resources] | None = None,
        tools: Mapping[str, "Tool"] | None = None,
    ) -> None:
        self.state = state
        self.config = config
        self.writes: dict[tuple[str, str], Record | None] = {}
        self.counters: dict[str, int] = {}
        self.now: datetime = state.now
        self.invoked: list[str] = []  # tools this call ran through `invoke`, for policies that judge tool names
        self._resources = resources  # or a function making them on first use
        self._tools = tools

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

    def has_tool(self, name: str) -> bool:
        """Whether the workspace offers the tool `name` (so `invoke` can use it)."""
        return self._tools is not None and name in self._tools

    def invoke(self, tool: str, **args: Any) -> Any:
        """Run another service's tool inside this call's transaction and return its data.

        This is how one service acts through another without importing it (a note shared by mail
        calls `send_email`; a CRM report saved as a file calls `write_file`): the other tool's
        arguments are validated as if the agent had sent them, its writes join this call's, and
        policies judge the combined change. Its errors propagate unchanged, so the whole call fails.
        """
        t = self._tools.get(tool) if self._tools is not None else None
        if t is None:
            raise Unavailable(f"this workspace has no {tool} tool")
        try:
            validated = t.args_model.model_validate(args)
        except ValidationError as e:
            raise InvalidArgument(f"invalid arguments for {tool}: {pydantic_error_message(e)}") from None
        self.invoked.append(tool)
        return t.fn(self, **validated.__dict__)

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
