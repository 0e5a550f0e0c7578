"""Event log entries and tool results."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable


from workspace_sim.core.diff import Diff


@dataclass(slots=True)
class ErrorInfo:
    """Why a call failed: a stable code and a message for the model."""

    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(slots=True)
class Event:
    """One entry of the event log: a tool call, a message in the conversation, a world change, or the close of a
    stage (a working day of a multi-day scenario)."""

    index: int
    kind: str  # "call" | "message" | "world" | "stage"
    sim_time: datetime
    tool: str | None = None
    args: Any = None
    ok: bool = True
    data: Any = None
    error: ErrorInfo | None = None
    diff: Diff = Diff()
    wall_ms: float = 0.0
    role: str | None = None
    content: str | None = None
    policy: str | None = None  # name of the policy a blocked call violated
    # (table, key) of the records the call showed the agent, or the ReadTrace (context.py) that works them
    # out from `data` on first use: calls stay fast when nobody asks
    reads: Any = None
    # other tools the call ran through `ToolContext.invoke`, as (tool, arguments): sharing a note by mail
    # runs send_email, and tool_called / tool_not_called count it as a call of send_email
    via: tuple[tuple[str, Any], ...] = ()
    # a "stage" event's state when the stage closed (records, clock and log up to its last event): the
    # predicates of that stage are judged on it (workspace_sim.predicates.evaluate_states)
    checkpoint: Any = None
    # the pages of this call's text the agent received, when its result was too long and came in pages (set by
    # the MCP layer's pager); None: the whole result was returned. records_read's `shown: content` uses it
    delivered: Any = None

    @property
    def read(self) -> tuple[tuple[str, str], ...]:
        """The records this call showed the agent, as sorted (table, key) pairs (empty for a failed call)."""
        r = self.reads
        if r is None:
            return ()
        if type(r) is not tuple:
            r = self.reads = r.resolve(self.data) if self.ok else ()
        return r

    def read_json(self) -> dict[str, list[str]]:
        """The records read, as {table: [keys]} (sorted)."""
        out: dict[str, list[str]] = {}
        for table, key in self.read:
            out.setdefault(table, []).append(key)
        return out

    def to_json(self, include_wall: bool = False) -> dict[str, Any]:
        """A JSON-ready event; wall time is left out unless asked, so logs replay byte for byte."""
        out: dict[str, Any] = {"index": self.index, "kind": self.kind, "sim_time": self.sim_time.isoformat()}
        if self.kind == "message":
            out["role"] = self.role
            out["content"] = self.content
        elif self.kind == "stage":
            out["args"] = self.args
        else:
            if self.tool is not None:
                out["tool"] = self.tool
                out["args"] = self.args
            out["ok"] = self.ok
            if self.ok:
                out["result"] = self.data
            else:
                out["error"] = self.error.to_json() if self.error else None
            if self.policy:
                out["policy"] = self.policy
            if self.read:
                out["read"] = self.read_json()
            if self.via:
                out["via"] = [{"tool": t, "args": a} for t, a in self.via]
            out["diff"] = self.diff.to_json()
        if include_wall:
            out["wall_ms"] = round(self.wall_ms, 4)
        return out


def render_default(data: Any) -> str:
    """A readable text rendering of structured tool output."""
    if isinstance(data, str):
        return data
    if data is None:
        return "ok"
    import yaml  # on first use: a server's first answer renders no tool output (yaml is ~30 ms of a cold start)

    # libyaml's emitter writes the same text as the pure-Python one, about four times faster
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100).rstrip()


class ToolResult:
    """The outcome of `Workspace.call`: structured data and text, or an error with a clear message."""

    __slots__ = ("tool", "ok", "data", "error", "event", "_text", "_render")

    def __init__(
        self, tool: str, ok: bool, data: Any, error: ErrorInfo | None, event: Event,
        render: Callable[[Any], str] | None = None,
    ) -> None:
        self.tool = tool
        self.ok = ok
        self.data = data
        self.error = error
        self.event = event
        self._text: str | None = None
        self._render = render

    @property
    def text(self) -> str:
        """The text rendering (computed on first use)."""
        if self._text is None:
            if not self.ok:
                assert self.error is not None
                self._text = f"Error ({self.error.code}): {self.error.message}"
            else:
                self._text = (self._render or render_default)(self.data)
        return self._text

    @property
    def diff(self) -> Diff:
        """The changes this call made."""
        return self.event.diff

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready result."""
        if self.ok:
            return {"ok": True, "data": self.data, "text": self.text}
        assert self.error is not None
        return {"ok": False, "error": self.error.to_json(), "text": self.text}

    def __repr__(self) -> str:
        return f"ToolResult({self.tool}, ok={self.ok}, {self.text[:80]!r})"
