"""What a tool function sees: reads of the current state, buffered writes, the clock and ids."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Protocol

from pydantic import ValidationError

from workspace_sim.core.errors import CallTimeout, InvalidArgument, NotFound, Unavailable, pydantic_error_message
from workspace_sim.core.limits import check_arguments
from workspace_sim.core.records import Record
from workspace_sim.core.state import EMPTY, State

if TYPE_CHECKING:
    from workspace_sim.core.registry import Tool


_log = logging.getLogger(__name__)
_NO_WRITES: dict[tuple[str, str], Any] = {}
_MAX_KEY = 512  # longer strings in a result (bodies, file contents) are never record keys


def _shows(record: Any, key: str, texts: list[str]) -> bool:
    """Whether `texts` (the strings of one returned object) hold some text field of `record` besides its key,
    whole or as a part of at least 8 characters (a snippet, the first lines of a file)."""
    for value in record.__dict__.values():
        if type(value) is str and value and value != key:
            for t in texts:
                if t == value or (len(t) >= 8 and t != key and t in value):
                    return True
    return False


CONTENT_PIECE = 200  # characters of a record's main text a result must hold to count as showing its content


def main_text(record: Any, key: str) -> str:
    """A record's main text: its longest text field other than its key (a file's content, a mail's body)."""
    texts = [v for v in record.__dict__.values() if type(v) is str and v and v != key]
    return max(texts, key=len) if texts else ""


def shows_content(record: Any, key: str, data: Any, delivered: str | None = None) -> bool:
    """Whether `data` (a call's result) holds, in one object with the record's key, its main text whole or a
    piece of at least `CONTENT_PIECE` characters (a detail read or the head of a file, not a search snippet or
    metadata); with `delivered` (the text the agent actually received, when the result came in pages), the
    key and that piece must also lie in it."""
    body = main_text(record, key)
    if not body:
        return False
    need = min(len(body), CONTENT_PIECE)
    stack = [data]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            vals = list(v.values())
            if key in vals:
                for t in vals:
                    if type(t) is str and t != key and len(t) >= need and (t == body or t in body):
                        if delivered is None or (key in delivered and t[:need] in delivered):
                            return True
            stack.extend(x for x in vals if type(x) in (dict, list))
        elif type(v) in (list, tuple):
            stack.extend(x for x in v if type(x) in (dict, list))
    return False


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


class ReadTrace:
    """What one call looked at: its state's tables, the keys it fetched, the tables it iterated, its writes.

    A record counts as read when the call looked it up (`get`/`require`, or iterated its table
    with `values`/`keys`), did not write it, and returned an object holding its key together
    with some of its content (another of its text fields, whole or in part). So a search that
    scans a whole table to filter marks only the records it returns; a bare list of ids, an
    address shown in a message, or writing, moving or deleting a record is not reading it. The
    walk over the result runs only when someone asks (`Event.read`), keeping calls fast.
    """

    __slots__ = ("tables", "looked_up", "scanned", "writes")

    def __init__(self, tables: Any, looked_up: Iterable[tuple[str, str]], scanned: Iterable[str],
                 writes: Mapping[tuple[str, str], Record | None]) -> None:
        self.tables, self.looked_up, self.scanned, self.writes = tables, looked_up, scanned, writes

    def resolve(self, data: Any) -> tuple[tuple[str, str], ...]:
        """The (table, key) pairs of the records shown in `data` (what the call returned), sorted."""
        tables, looked_up, scanned = self.tables, self.looked_up, self.scanned
        keyed: dict[str, list[str]] = {}
        for t, k in looked_up:
            if t not in scanned:
                keyed.setdefault(k, []).append(t)
        scanned_rows = [(t, tables.get(t, EMPTY)) for t in scanned]
        writes = self.writes
        found: set[tuple[str, str]] = set()
        stack = [data]
        while stack:
            v = stack.pop()
            tv = type(v)
            if tv is dict:
                texts = None
                for x in v.values():
                    tx = type(x)
                    if tx is str:
                        if len(x) > _MAX_KEY:
                            continue
                        hits = [(t, tables.get(t, EMPTY).get(x)) for t in keyed.get(x, ())]
                        for t, rows in scanned_rows:
                            rec = rows.get(x)
                            if rec is not None:
                                hits.append((t, rec))
                        for t, rec in hits:
                            if rec is not None and (t, x) not in writes:
                                if texts is None:
                                    texts = [y for y in v.values() if type(y) is str and y]
                                if _shows(rec, x, texts):
                                    found.add((t, x))
                    elif tx is dict or tx is list:
                        stack.append(x)
            elif tv is list or tv is tuple:
                stack.extend(x for x in v if type(x) is dict or type(x) is list)
        return tuple(sorted(found))


class Settings(Protocol):
    """What a tool call reads of the workspace's configuration (`WorkspaceConfig` is one): the core knows the
    fields it needs, not the class that holds them, so it imports nothing above itself."""

    user: str
    services: list[str]
    timezone: str
    seed: int
    sandbox: dict[str, Any]


class ToolContext:
    """A transaction over one state: writes are buffered and applied only if the call succeeds."""

    __slots__ = ("state", "config", "writes", "counters", "now", "invoked", "_resources", "_tools", "looked_up",
                 "scanned", "deadline", "budget")

    def __init__(
        self, state: State, config: Settings,
        resources: Resources | Callable[[], Resources] | None = None,
        tools: Mapping[str, "Tool"] | None = None,
        budget: float | None = None,
    ) -> None:
        self.state = state
        self.config = config
        self.writes: dict[tuple[str, str], Record | None] = {}
        self.counters: dict[str, int] = {}
        self.now: datetime = state.now
        # tools this call ran through `invoke`, with their arguments: policies and predicates that judge
        # tool names see them as calls too (sharing a note by mail is sending mail)
        self.invoked: list[tuple[str, dict[str, Any]]] = []
        self._resources = resources  # or a function making them on first use
        self._tools = tools
        # what the call looked at, for `read_trace` (see there): keys fetched, tables iterated
        self.looked_up: set[tuple[str, str]] = set()
        self.scanned: set[str] = set()
        self.budget = budget  # wall seconds the whole call may take; None: unbounded
        self.deadline = time.perf_counter() + budget if budget is not None else None

    def check_deadline(self) -> None:
        """Raise CallTimeout if the call has used up its wall-time budget; long loops call this often."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise CallTimeout(f"the call ran past its time budget of {self.budget:g} s "
                              "(limits.call_seconds); nothing was changed. Narrow it (a smaller folder, "
                              "a simpler pattern, fewer results) and try again")

    def waited(self, seconds: float) -> None:
        """Leave `seconds` the call spent waiting on an outside endpoint out of its budget: that wait is bounded by
        the endpoint's own timeout (as a sandbox's run is by the sandbox's), the budget bounds the simulator's work."""
        if self.deadline is not None and seconds > 0:
            self.deadline += seconds

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
        arguments are checked against `config.limits` and validated as if the agent had sent them,
        its writes join this call's and count against the call's time budget and the growth
        limits, and policies (including `forbidden_tools` on its name) judge the combined change. Its errors propagate unchanged, so the whole call fails.
        """
        t = self._tools.get(tool) if self._tools is not None else None
        if t is None:
            raise Unavailable(f"this workspace has no {tool} tool")
        self.check_deadline()
        # the same argument limits as an agent's call: the values are often the agent's own text passed on
        check_arguments(args, t.large_arguments, self.config.limits)
        try:
            validated = t.args_model.model_validate(args)
        except ValidationError as e:
            raise InvalidArgument(f"invalid arguments for {tool}: {pydantic_error_message(e)}") from None
        self.invoked.append((tool, validated.model_dump(mode="json")))
        return t.fn(self, **validated.__dict__)

    def get(self, table: str, key: str) -> Any:
        """The record stored under `key` (seeing this call's own writes), or None."""
        self.looked_up.add((table, key))
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
        self.scanned.add(table)
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

    def read_trace(self) -> "ReadTrace | None":
        """What this call looked at, to decide later (and only if asked) which records it showed the agent."""
        if not self.looked_up and not self.scanned:
            return None
        # tuples: a trace may live as long as the event log, and they are about half the size of sets
        return ReadTrace(self.state.tables, tuple(self.looked_up), tuple(self.scanned), self.writes or _NO_WRITES)

    def put(self, table: str, record: Record) -> Record:
        """Store a record under its own key (insert or replace)."""
        self.writes[(table, record.record_key())] = record
        return record

    def update(self, table: str, record: Record, changes: dict[str, Any], **stamp: Any) -> tuple[Any, list[str]]:
        """A partial update: the record with `changes` and `stamp` (e.g. updated=now) stored when any field in
        `changes` differs from `record`'s, else `record` as it was; and the sorted names of the fields that differ."""
        changed = sorted(k for k, v in changes.items() if getattr(record, k) != v)
        if changed:
            record = self.put(table, record.evolve(**changes, **stamp))
        return record, changed

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
