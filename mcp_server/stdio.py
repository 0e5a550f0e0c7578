"""The stdio transport with an answer for every line: the SDK's `stdio_server`, fed by a checking reader.

The SDK's reader drops a line it cannot parse (the client then waits forever). Here each line
from stdin is checked first (`jsoncheck`, then the JSON-RPC envelope, then the SDK's own message
model); a bad line is logged on stderr and, when it is a request, answered with the fitting
JSON-RPC error: -32700 for text that is not JSON (id null, as JSON-RPC 2.0 says), -32600 for a
message that is not a valid request, -32602 for params that are not an object. Only lines that
pass reach the SDK. stdin is taken over as the SDK does it: fd 0 then reads the null device, so
nothing a tool starts can consume protocol bytes.

Every request that reached the SDK is answered before the server stops. The SDK's loop cancels
its in-flight handlers when stdin ends, so a client that sends a call and closes stdin at once
(`printf ... | coworkenv serve SPEC`) would see the call run (it runs on a worker thread that
cannot be cancelled, and is recorded) and never get its answer. Here the end of stdin is held
back until every request passed on has been answered (or cancelled by the client, or
`DRAIN_TIMEOUT` has passed), so the SDK sees EOF only after the answers are written.

When the first request was answered before the SDK was loaded (`mcp_server.first_answer`), the
SDK still reads that line; its answer, the same bytes, is not written a second time.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import Any, AsyncIterator, BinaryIO, Callable

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from .first_answer import claim_stdin
from .jsoncheck import JsonProblem, parse_client_json, request_id

log = logging.getLogger("coworkenv.mcp.stdio")

MAX_LINE = 16 << 20
"""Longest message line accepted (bytes); a longer one is answered -32700 and skipped."""

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602

DRAIN_TIMEOUT = 300.0
"""Longest wait (seconds) after stdin ends for the answers to requests still running; then the server stops."""


class BadLine(Exception):
    """A line refused before the SDK sees it: the JSON-RPC error to answer and the request id, if any."""

    def __init__(self, code: int, message: str, request_id: Any = None, answer: bool = True) -> None:
        super().__init__(message)
        self.code, self.message, self.request_id, self.answer = code, message, request_id, answer


def checked_message(line: bytes) -> tuple[str, dict[str, Any]]:
    """The line as text and as the parsed message when the SDK will accept it; otherwise raise BadLine."""
    try:
        msg = parse_client_json(line)
    except JsonProblem as e:
        rid = request_id(e.value)
        notification = isinstance(e.value, dict) and "method" in e.value and "id" not in e.value
        raise BadLine(PARSE_ERROR if rid is None else INVALID_REQUEST, e.message, rid,
                      answer=not notification) from None
    if isinstance(msg, list):
        raise BadLine(INVALID_REQUEST, "batches are not supported (MCP removed JSON-RPC batching); "
                                       "send one message per line")
    if not isinstance(msg, dict):
        raise BadLine(INVALID_REQUEST, f"a message must be a JSON object, got {type(msg).__name__}")
    rid = request_id(msg)
    if "method" in msg and "id" not in msg:  # a notification is never answered, only logged
        try:
            _check_envelope(msg, None)
        except BadLine as e:
            raise BadLine(e.code, e.message, None, answer=False) from None
        return line.decode("utf-8"), msg
    _check_envelope(msg, rid)
    return line.decode("utf-8"), msg


def _check_envelope(msg: dict[str, Any], rid: str | int | None) -> None:
    if msg.get("jsonrpc") != "2.0":
        raise BadLine(INVALID_REQUEST, f"jsonrpc must be \"2.0\", got {msg.get('jsonrpc')!r:.40}", rid)
    if "id" in msg and rid is None and msg["id"] is not None:
        raise BadLine(INVALID_REQUEST, f"id must be a string or an integer, got {type(msg['id']).__name__}")
    if "method" in msg:
        if not isinstance(msg["method"], str):
            raise BadLine(INVALID_REQUEST, f"method must be a string, got {type(msg['method']).__name__}", rid)
        if "params" in msg and msg["params"] is not None and not isinstance(msg["params"], dict):
            raise BadLine(INVALID_PARAMS, f"params of {msg['method'][:60]!r} must be an object, "
                                          f"got {type(msg['params']).__name__}", rid)
    elif not ("result" in msg or "error" in msg):
        raise BadLine(INVALID_REQUEST, "a message needs a method (request or notification) or a result or "
                                       "error (response)", rid)
    try:
        types.jsonrpc_message_adapter.validate_python(msg, by_name=False)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or "(message)"
        raise BadLine(INVALID_REQUEST, f"not a valid JSON-RPC message: {where}: {first['msg']}", rid) from None


class InFlight:
    """The ids of the client's requests passed to the SDK and not answered yet (a count per id)."""

    def __init__(self) -> None:
        self._open: dict[str | int, int] = {}
        self._idle = anyio.Event()
        self._idle.set()

    def sent(self, msg: dict[str, Any]) -> None:
        """Note a message passed to the SDK: a request opens its id; a cancellation closes the one it names."""
        rid = request_id(msg)
        if "method" in msg and rid is not None:
            self._open[rid] = self._open.get(rid, 0) + 1
            self._idle = anyio.Event() if self._idle.is_set() else self._idle
        elif msg.get("method") == "notifications/cancelled" and isinstance(msg.get("params"), dict):
            self.answered(msg["params"].get("requestId"))  # a cancelled request gets no answer

    def answered(self, rid: Any) -> None:
        """Note an answer (result or error) to request `rid`."""
        if isinstance(rid, bool) or not isinstance(rid, (str, int)) or rid not in self._open:
            return
        self._open[rid] -= 1
        if not self._open[rid]:
            del self._open[rid]
        if not self._open:
            self._idle.set()

    @property
    def waiting(self) -> list[str | int]:
        """The ids still unanswered."""
        return list(self._open)

    async def drained(self, timeout: float) -> bool:
        """Wait until every request is answered; False when `timeout` seconds passed first."""
        with anyio.move_on_after(timeout):
            await self._idle.wait()
            return True
        return not self._open


class AnswerWatch:
    """The SDK's write stream, noting each answer it carries in an `InFlight`. `answered` is (id, line) of a
    first request already answered before the SDK was loaded: the SDK's own answer to it is held back."""

    def __init__(self, inner: Any, inflight: InFlight, answered: tuple[Any, bytes] | None = None) -> None:
        self._inner, self._inflight, self._answered = inner, inflight, answered

    async def send(self, item: SessionMessage) -> None:
        """Send `item` (unless it answers the request answered early); an answer closes its request."""
        message = getattr(item.message, "root", item.message)
        is_answer = isinstance(message, (types.JSONRPCResponse, types.JSONRPCError))
        if is_answer and self._answered is not None and message.id == self._answered[0]:
            early, self._answered = self._answered[1], None
            sdk = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            if sdk != early:  # a bug in mcp_server.first_answer: say so, the client already has its answer
                log.error("the early answer to request %r differs from the SDK's: %r != %r", message.id,
                          early[:300], sdk[:300])
        else:
            await self._inner.send(item)
        if is_answer:
            self._inflight.answered(message.id)

    def close(self) -> None:
        """Close the stream."""
        self._inner.close()

    async def aclose(self) -> None:
        """Close the stream."""
        await self._inner.aclose()

    async def __aenter__(self) -> "AnswerWatch":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class CheckedLines:
    """An async iterator over stdin's good lines; bad lines are logged and answered through `reply`.

    At the end of stdin it waits for `inflight` to drain before it stops (see the module)."""

    def __init__(self, source: BinaryIO, drain_timeout: float = DRAIN_TIMEOUT) -> None:
        self._source = source
        self._lineno = 0
        self.reply: Any = None  # the SDK's write stream, attached once the transport is up
        self._ready = anyio.Event()
        self.inflight = InFlight()
        self._drain_timeout = drain_timeout

    def attach(self, write_stream: Any) -> None:
        """Start answering bad lines on `write_stream`."""
        self.reply = write_stream
        self._ready.set()

    def __aiter__(self) -> "CheckedLines":
        return self

    async def __anext__(self) -> str:
        await self._ready.wait()
        while True:
            line = await anyio.to_thread.run_sync(self._source.readline, MAX_LINE + 1)
            if not line:
                await self._drain()
                raise StopAsyncIteration
            self._lineno += 1
            try:
                if len(line) > MAX_LINE:
                    while line and not line.endswith(b"\n"):  # skip the rest of the long line
                        line = await anyio.to_thread.run_sync(self._source.readline, MAX_LINE)
                    raise BadLine(PARSE_ERROR, f"message over {MAX_LINE} bytes")
                if not line.strip():
                    continue
                text, msg = checked_message(line)
                self.inflight.sent(msg)
                return text
            except BadLine as e:
                await self._answer(e)

    async def _drain(self) -> None:
        if self.inflight.waiting:
            log.info("stdin ended; answering %d request(s) still running", len(self.inflight.waiting))
        if not await self.inflight.drained(self._drain_timeout):
            log.warning("stdin ended; stopping without answering request(s) %s after %.0f s",
                        ", ".join(repr(r)[:40] for r in self.inflight.waiting[:5]), self._drain_timeout)

    async def _answer(self, bad: BadLine) -> None:
        log.warning("stdin line %d refused (JSON-RPC %d): %s", self._lineno, bad.code, bad.message)
        if not bad.answer:
            return
        err = types.JSONRPCError(jsonrpc="2.0", id=bad.request_id,
                                 error=types.ErrorData(code=bad.code, message=bad.message))
        await self.reply.send(SessionMessage(err))


@contextlib.asynccontextmanager
async def checked_stdio_server(stdin: BinaryIO | None = None,
                               answered: tuple[Any, bytes] | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """Like the SDK's `stdio_server()`, but every line is checked and bad ones are answered (see the module);
    `answered` is (id, line) of a first request already answered (`mcp_server.first_answer`)."""
    restore: Callable[[], None] | None = None
    if stdin is None:
        stdin, restore = claim_stdin()
    lines = CheckedLines(stdin)
    try:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.attach(write_stream)
            yield read_stream, AnswerWatch(write_stream, lines.inflight, answered)
    finally:
        if restore is not None:
            restore()
        sys.stderr.flush()
