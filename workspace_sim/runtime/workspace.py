"""The workspace: services composed over one immutable state, with calls, snapshots, forks and diffs."""

from __future__ import annotations

import difflib
import json
import logging
import math
import time
import weakref
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from workspace_sim.runtime.config import WorkspaceConfig
from workspace_sim.core.context import Resources, ToolContext
from workspace_sim.core.diff import Diff, diff_from_writes, diff_states
from workspace_sim.core.errors import CallTimeout, InvalidArgument, LimitExceeded, SpecError, ToolError, UnknownTool, pydantic_error_message
from workspace_sim.core.events import ErrorInfo, Event, ToolResult
from workspace_sim.rules.faults import fault_for_call
from workspace_sim.core.limits import check_arguments, check_growth, record_chars, total_chars
from workspace_sim.rules.policies import PendingCall, first_violation
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service, Tool
from workspace_sim.services import all_services, services_named
from workspace_sim.core.state import LogNode, State, build_state

_log = logging.getLogger(__name__)


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _to_jsonable(value: Any) -> Any:
    t = type(value)
    if t in _PLAIN:
        return value
    if t is dict:  # the common shapes first, their plain values without a call each
        return {k: v if type(v) in _PLAIN else _to_jsonable(v) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _PLAIN else _to_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_jsonable(v) for k, v in value.items()}
    return value


def load_tables(services: Iterable[Service], data: Mapping[str, Any]) -> dict[str, dict[str, Record]]:
    """Validate initial data `{service: {table: [record, ...]}}` into records; errors name the path."""
    by_name = {s.name: s for s in services}
    tables: dict[str, dict[str, Record]] = {s.table_name(t): {} for s in by_name.values() for t in s.tables}
    if not isinstance(data, Mapping):
        raise SpecError("data", f"must be an object of services, got {type(data).__name__}")
    for sname, sdata in data.items():
        if sname not in by_name:
            raise SpecError(f"data.{sname}", f"unknown or disabled service; enabled: {', '.join(sorted(by_name))}")
        service = by_name[sname]
        if not isinstance(sdata, Mapping):
            raise SpecError(f"data.{sname}", "must be an object of tables")
        for tname, rows in sdata.items():
            if tname not in service.tables:
                raise SpecError(f"data.{sname}.{tname}", f"unknown table; {sname} has {', '.join(service.tables)}")
            model = service.tables[tname]
            items = rows.values() if isinstance(rows, Mapping) else rows
            if not isinstance(items, Iterable) or isinstance(items, (str, bytes)):
                raise SpecError(f"data.{sname}.{tname}", "must be a list of records")
            target = tables[service.table_name(tname)]
            for i, row in enumerate(items):
                where = f"data.{sname}.{tname}[{i}]"
                try:
                    rec = row if isinstance(row, model) else model.model_validate(row)
                except ValidationError as e:
                    raise SpecError(where, pydantic_error_message(e)) from None
                if rec.record_key() in target:
                    raise SpecError(where, f"duplicate key {rec.record_key()!r}")
                target[rec.record_key()] = rec
    return tables


class Workspace:
    """A simulated workspace. `call` never raises; every call is logged with the diff it caused.

    `defer_reads` (False unless set; forks inherit it): a writing call's read set (`Event.read`) is worked out
    when first asked, like a read-only call's, instead of at once. The answer is the same; the event then keeps
    the tables from before the call alive, so it suits short-lived runs that rarely ask (validation's replays),
    not long sessions.
    """

    def __init__(self, config: WorkspaceConfig, state: State) -> None:
        services = services_named(config.services)
        unknown = [s for s in config.services if s not in services]
        if unknown:
            raise SpecError("services", f"unknown service(s) {unknown}; available: {', '.join(sorted(all_services()))}")
        self.config = config
        self.services: dict[str, Service] = {n: services[n] for n in config.services}
        # services whose tools cannot be offered here (e.g. no Docker engine), with the reason
        self.unavailable: dict[str, str] = {}
        for name, service in self.services.items():
            ok, reason = service.available(config)
            if not ok:
                self.unavailable[name] = reason
                _log.warning("service %s offers no tools: %s", name, reason)
        self.tools: dict[str, Tool] = {
            n: t for s in self.services.values() if s.name not in self.unavailable for n, t in s.tools.items()
        }
        self._state = state
        self.initial = state
        self._tick = timedelta(seconds=config.tick_seconds)
        self.defer_reads = False
        self._own_resources()

    def _total_chars(self, state: State) -> int:
        """The text size of a state's records: remembered per tables object (see `_SIZES`), so a call after a
        restore to any earlier state or a fork costs nothing, and counted in full only for tables never seen."""
        total = _known_chars(state.tables)
        if total is None:
            total = total_chars(state.tables)
            _remember_chars(state.tables, total)
        return total

    def _own_resources(self) -> None:
        self._resources: Resources | None = None  # made on first use: forks stay cheap

    def _get_resources(self) -> Resources:
        r = self._resources
        if r is None:
            r = self._resources = Resources()
            # released when the workspace is garbage-collected or the interpreter exits, if not before
            weakref.finalize(self, r.close)
        return r

    @property
    def resources(self) -> Resources:
        """Live objects of this workspace outside its state (e.g. a sandbox container)."""
        return self._get_resources()

    @property
    def holds_resources(self) -> bool:
        """Whether live resources were made (on first use), so `close` has something to release."""
        return self._resources is not None

    def close(self) -> None:
        """Release the live resources of this workspace (e.g. remove its sandbox container).

        The state stays readable; a later call that needs a resource creates it again.
        """
        if self._resources is not None:
            self._resources.close()

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def create(cls, config: WorkspaceConfig | None = None, data: Mapping[str, Any] | None = None) -> "Workspace":
        """A workspace with the given settings and initial data `{service: {table: [records]}}`."""
        config = config or WorkspaceConfig()
        services = services_named(config.services)
        enabled = [services[n] for n in config.services if n in services]
        tables = load_tables(enabled, data or {})
        for service in enabled:
            if service.prepare is not None:
                service.prepare(tables, config)
        return cls(config, build_state(tables, config.now))

    # --- state handles -------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """The current (immutable) state."""
        return self._state

    def snapshot(self) -> State:
        """An immutable handle on the current state (records, clock, counters, event log)."""
        return self._state

    def restore(self, snapshot: State) -> None:
        """Return the workspace exactly to a snapshot."""
        if not isinstance(snapshot, State):
            raise TypeError(f"restore() needs a snapshot State, got {type(snapshot).__name__}")
        self._state = snapshot

    def fork(self) -> "Workspace":
        """An independent workspace starting from this state (unchanged data is shared)."""
        other = Workspace.__new__(Workspace)
        other.config, other.services, other.tools = self.config, self.services, self.tools
        other.unavailable = self.unavailable
        other._state = self._state
        other.initial = self.initial
        other._tick = self._tick
        other.defer_reads = self.defer_reads
        other._own_resources()  # a fork never shares live resources (containers) with its origin
        return other

    def diff(self, a: State | None = None, b: State | None = None) -> Diff:
        """The semantic diff from `a` (default: the initial state) to `b` (default: now)."""
        return diff_states(a if a is not None else self.initial, b if b is not None else self._state)

    @property
    def content_hash(self) -> str:
        """A stable hash of the records: equal states have equal hashes."""
        return self._state.content_hash

    def events(self) -> list[Event]:
        """The event log, oldest first."""
        return self._state.events()

    def table(self, name: str) -> Mapping[str, Any]:
        """The current records of a table, e.g. 'mail.messages'."""
        return self._state.table(name)

    # --- acting --------------------------------------------------------------------------------

    def _append(self, state: State, event: Event, counters: Mapping[str, int] | None = None) -> State:
        now = state.now + self._tick
        cnt = state.counters
        if counters:
            m = cnt.mutate()
            for k, v in counters.items():
                m[k] = v
            cnt = m.finish()
        return State(state.tables, state.hashing, now, cnt, LogNode(event, state.log), state.log_len + 1)

    def call(self, tool: str, args: Any = None) -> ToolResult:
        """Run one tool call; returns data or a clear error, never raises, and logs the event.

        The call runs under `config.limits`: arguments past their size limits and changes past the
        workspace's growth limits are refused, and a call past its wall-time budget is answered
        `timeout`; each leaves the state unchanged. Past `limits.max_events` calls are refused
        without being logged, so the log cannot grow without bound.
        """
        t0 = time.perf_counter()
        state = self._state
        limits = self.config.limits
        t = self.tools.get(tool) if isinstance(tool, str) else None
        if state.log_len >= limits.max_events:
            return self._refused(tool, t, LimitExceeded(
                f"the workspace has logged {state.log_len:,} events, its limit (limits.max_events); "
                "no further calls are accepted"))
        counters: dict[str, int] = {}
        data: Any = None
        error: ErrorInfo | None = None
        policy_name: str | None = None
        diff = Diff()
        reads: Any = None
        new_tables_state = state
        new_size: int | None = None
        before_run: dict[str, int] = {}
        ctx: ToolContext | None = None
        try:
            if t is None:
                raise UnknownTool(self._unknown_tool_message(tool))
            if args is None:
                args = {}
            if type(args) is not dict and not isinstance(args, Mapping):
                raise InvalidArgument(f"arguments must be a JSON object, got {type(args).__name__}")
            check_arguments(args, t.large_arguments, limits)
            try:
                validated = t.args_model.model_validate(args)
            except ValidationError as e:
                raise InvalidArgument(f"invalid arguments for {tool}: {pydantic_error_message(e)}") from None
            if self.config.faults:
                fault = fault_for_call(self.config.faults, tool, _CounterView(state.counters, counters))
                if fault is not None:
                    raise fault
            blocking = self.services[t.service].blocking  # sandboxes are bounded by their own timeouts
            before_run = dict(counters)
            ctx = ToolContext(state, self.config, self._get_resources, self.tools,
                              None if blocking else limits.call_seconds)
            data = _to_jsonable(t.fn(ctx, **validated.__dict__))
            reads = ctx.read_trace()
            if reads is not None and ctx.writes and not self.defer_reads:
                reads = reads.resolve(data)  # resolve now: a trace would keep the pre-call tables alive
            counters.update(ctx.counters)
            if ctx.writes:
                diff = diff_from_writes(state, ctx.writes.items())
                if diff:
                    new_size = check_growth(diff, state.tables, self._total_chars(state), limits)
            # every call, not only those that write: `forbidden_tools` and `confirmation_required` are about
            # calling a tool, so a read-only call (or one that acts through others) must not slip past them
            if self.config.policies:
                pending = PendingCall(tool, validated.model_dump(mode="json"), diff, state,
                                      self.config.user, self.config.timezone, self.config,
                                      tuple(name for name, _ in ctx.invoked))
                hit = first_violation(self.config.policies, pending)
                if hit is not None:
                    policy_name = hit[0].type
                    raise ToolError_policy(hit[0].type, hit[1])
            if diff:
                new_tables_state = state.with_records({(c.table, c.key): c.after for c in diff})
            if not blocking:
                ctx.check_deadline()  # a call that overran without reaching a check is refused as well
        except ToolError as e:
            error = ErrorInfo(e.code, e.message)
            data, diff, new_tables_state, new_size, reads = None, Diff(), state, None, None
            if isinstance(e, CallTimeout):
                counters = before_run  # nothing of a timed-out call is kept, not even the ids it drew
        except RecursionError:
            error = ErrorInfo("invalid_argument", f"{tool}: the input is nested too deeply to process")
            data, diff, new_tables_state, new_size, reads = None, Diff(), state, None, None
        except Exception as e:  # a bug in a tool must not escape or corrupt state
            error = ErrorInfo("internal_error", f"{tool} failed unexpectedly: {type(e).__name__}: {e}")
            data, diff, new_tables_state, new_size, reads = None, Diff(), state, None, None
        safe_args = dict(args) if isinstance(args, Mapping) else (None if args is None else repr(args)[:200])
        if error is not None and error.code in ("invalid_argument", "limit_exceeded") and safe_args is not None:
            safe_args = _shrunk(safe_args, limits.max_argument_chars)  # a refused 10 MB argument is not logged whole
        event = Event(
            index=state.log_len, kind="call", sim_time=state.now, tool=tool if isinstance(tool, str) else repr(tool),
            args=safe_args, ok=error is None, data=data, error=error, diff=diff, policy=policy_name, reads=reads,
            via=tuple(ctx.invoked) if ctx is not None and ctx.invoked else (),
        )
        self._state = self._append(new_tables_state, event, counters)
        if new_size is not None:
            _remember_chars(self._state.tables, new_size)
        event.wall_ms = (time.perf_counter() - t0) * 1000
        return ToolResult(event.tool or "", error is None, data, error, event, t.render if t else None)

    def _refused(self, tool: Any, t: Tool | None, exc: ToolError) -> ToolResult:
        """An answer for a call refused before it could be logged (the log is full)."""
        state = self._state
        error = ErrorInfo(exc.code, exc.message)
        event = Event(index=state.log_len, kind="call", sim_time=state.now,
                      tool=tool if isinstance(tool, str) else repr(tool), args=None, ok=False, error=error)
        return ToolResult(event.tool or "", False, None, error, event, t.render if t else None)

    def _unknown_tool_message(self, tool: Any) -> str:
        if not isinstance(tool, str):
            return f"tool name must be a string, got {type(tool).__name__}"
        close = difflib.get_close_matches(tool, list(self.tools), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; available: {', '.join(sorted(self.tools))}"
        return f"unknown tool {tool!r}{hint}"

    def add_message(self, role: str, content: str) -> Event:
        """Log a conversation turn (user or assistant); confirmation policies read these."""
        state = self._state
        event = Event(index=state.log_len, kind="message", sim_time=state.now, role=role, content=content)
        self._state = State(state.tables, state.hashing, state.now, state.counters,
                            LogNode(event, state.log), state.log_len + 1)
        return event

    def apply_world_change(self, changes: list[Mapping[str, Any]], note: str = "", agent: bool = False,
                           recorded: bool = False) -> Event:
        """Apply changes from outside the agent (new mail, a moved meeting), logged as a 'world' event.

        Each change is `{"op": "put", "table": T, "record": {...}}`, `{"op": "patch", "table": T,
        "key": K, "fields": {...}}` or `{"op": "delete", "table": T, "key": K}`. The collateral-damage guards
        (`unchanged`, `only_changed`) do not count a world event's changes as the agent's; `agent=True` marks
        changes that stand in for the agent's own (validation breaking a maintained predicate directly, code run on
        a fake file system): the event's `args` say `"agent": true` and the guards count them.

        A service may check and shape its records' writes (`Service.world_write`): a database row's patch merges
        the given `values` into the row's and checks each against the schema, so other columns (an agent's
        edits among them) stay. `recorded=True` (replays redoing a recorded diff) skips that: the fields are
        set exactly as recorded.
        """
        state = self._state
        models = {s.table_name(t): (m, s) for s in self.services.values() for t, m in s.tables.items()}
        writes: dict[tuple[str, str], Record | None] = {}

        def get(table: str, key: str) -> Record | None:
            return writes[(table, key)] if (table, key) in writes else state.table(table).get(key)

        for i, ch in enumerate(changes):
            where = f"changes[{i}]"
            table = ch.get("table")
            if table not in models:
                raise SpecError(f"{where}.table", f"unknown table {table!r}")
            model, service = models[table]
            hook = None if recorded else service.world_write
            op = ch.get("op")
            try:
                if op == "put":
                    rec = model.model_validate(ch.get("record"))
                    if hook is not None:
                        rec = hook(table, get(table, rec.record_key()), "put", rec, get, state.now)
                    writes[(table, rec.record_key())] = rec
                elif op in ("patch", "delete"):
                    key = ch.get("key")
                    old = get(table, key) if isinstance(key, str) else None
                    if old is None:
                        raise SpecError(f"{where}.key", f"no record {key!r} in {table}")
                    fields = ch.get("fields", {})
                    if op == "delete":
                        writes[(table, key)] = None
                    elif hook is not None:
                        writes[(table, key)] = hook(table, old, "patch", fields, get, state.now)
                    else:
                        writes[(table, key)] = old.evolve(**fields)
                else:
                    raise SpecError(f"{where}.op", f"must be put, patch or delete, got {op!r}")
            except SpecError:
                raise
            except ValidationError as e:
                raise SpecError(where, pydantic_error_message(e)) from None
            except (ValueError, TypeError) as e:  # a service's check of the write (world_write)
                raise SpecError(where, str(e)) from None
        diff = diff_from_writes(state, writes.items())
        event = Event(index=state.log_len, kind="world", sim_time=state.now, tool=None,
                      args={"note": note, "agent": True} if agent else {"note": note}, ok=True, diff=diff)
        new = state.with_records({(c.table, c.key): c.after for c in diff}) if diff else state
        known = _known_chars(state.tables) if diff else None
        if known is not None:  # carried over incrementally: O(changed records)
            _remember_chars(new.tables, known + sum((record_chars(c.after) if c.after is not None else 0)
                                                    - (record_chars(c.before) if c.before is not None else 0)
                                                    for c in diff))
        self._state = State(new.tables, new.hashing, new.now, new.counters, LogNode(event, state.log), state.log_len + 1)
        return event

    def close_stage(self, stage: str) -> Event:
        """Mark the end of a stage (a working day) in the log, keeping the state as it stands for the
        predicates of that stage: they are judged on it, not on the final state."""
        state = self._state
        event = Event(index=state.log_len, kind="stage", sim_time=state.now, args={"stage": stage}, checkpoint=state)
        self._state = State(state.tables, state.hashing, state.now, state.counters,
                            LogNode(event, state.log), state.log_len + 1)
        return event

    def advance_clock(self, seconds: float) -> None:
        """Move simulated time forward (between turns or days)."""
        s = self._state
        self._state = State(s.tables, s.hashing, s.now + timedelta(seconds=seconds), s.counters, s.log, s.log_len)

    # --- persistence ---------------------------------------------------------------------------

    def export_data(self, state: State | None = None) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """The records of a state as `{service: {table: [record, ...]}}` (JSON-ready, sorted)."""
        s = state if state is not None else self._state
        out: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for service in self.services.values():
            for tname in service.tables:
                rows = s.table(service.table_name(tname))
                out.setdefault(service.name, {})[tname] = [rows[k].model_dump(mode="json") for k in sorted(rows.keys())]
        return out

    def to_json(self) -> str:
        """The whole workspace (config, current time and records) as canonical JSON."""
        doc = {
            "config": self.config.model_dump(mode="json"),
            "now": self._state.now.isoformat(),
            "counters": dict(sorted(self._state.counters.items())),
            "data": self.export_data(),
        }
        return json.dumps(doc, ensure_ascii=False)  # key order inside records is part of their digest

    @classmethod
    def from_json(cls, text: str) -> "Workspace":
        """Rebuild a workspace written by `to_json` (the event log starts empty)."""
        from datetime import datetime

        import immutables

        doc = json.loads(text)
        config = WorkspaceConfig.model_validate(doc["config"])
        ws = cls.create(config, doc["data"])
        s = ws._state
        ws._state = State(s.tables, s.hashing, datetime.fromisoformat(doc["now"]), immutables.Map(doc["counters"]))
        ws.initial = ws._state
        return ws


# The text size of every tables object a workspace has committed or counted, keyed by id() and dropped when
# the tables are (a weak reference's callback), so sizes follow states through snapshots, restores and forks.
# The size is a pure function of the tables (immutable), so one process-wide table is right for every workspace.
_SIZES: dict[int, tuple[weakref.ref, int]] = {}


def _known_chars(tables: Any) -> int | None:
    hit = _SIZES.get(id(tables))
    if hit is not None and hit[0]() is tables:
        return hit[1]
    return None


def _remember_chars(tables: Any, total: int) -> None:
    key = id(tables)

    def forget(ref: weakref.ref, key: int = key) -> None:
        hit = _SIZES.get(key)
        if hit is not None and hit[0] is ref:
            del _SIZES[key]

    _SIZES[key] = (weakref.ref(tables, forget), total)


def _shrunk(args: Any, limit: int, depth: int = 0) -> Any:
    """Refused arguments as logged: strings cut to `limit` characters, containers to `limit` items
    and 20 levels, each cut marked."""
    if isinstance(args, str):
        return args if len(args) <= limit else f"{args[:limit]}... [{len(args) - limit:,} more characters not logged]"
    if isinstance(args, (Mapping, list, tuple)) and depth >= 20:
        return "[nested too deeply; not logged]"
    if isinstance(args, Mapping):
        return {str(k)[:100]: _shrunk(v, limit, depth + 1) for k, v in list(args.items())[:limit]}
    if isinstance(args, (list, tuple)):
        return [_shrunk(v, limit, depth + 1) for v in args[:limit]]
    if isinstance(args, float) and not math.isfinite(args):  # logged as text: the log holds only JSON
        return "NaN" if args != args else ("Infinity" if args > 0 else "-Infinity")
    return args


def ToolError_policy(policy_type: str, reason: str) -> ToolError:
    """The error of a call blocked by a policy."""
    from workspace_sim.core.errors import PolicyViolation

    return PolicyViolation(f"blocked by policy '{policy_type}': {reason}. Nothing was changed.", policy=policy_type)


class _CounterView(dict):
    """Counters as seen by fault injection: pending updates over the state's persistent map."""

    def __init__(self, base: Mapping[str, int], pending: dict[str, int]) -> None:
        super().__init__()
        self._base, self._pending = base, pending

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._pending:
            return self._pending[key]
        return self._base.get(key, default)

    def __setitem__(self, key: str, value: int) -> None:
        self._pending[key] = value
