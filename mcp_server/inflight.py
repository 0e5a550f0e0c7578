"""Request ids in flight per handshake-era session: a duplicate is refused before the SDK sees it.

The SDK's streamable-HTTP transport keys each pending answer by its JSON-RPC id within a session, so
a second request with the id of one still in flight replaced the first one's answer stream: with 7
concurrent calls of id 5, five were never answered, two got another call's result, and the stranded
requests kept the server from stopping. JSON-RPC requires ids to be unique among a client's pending
requests; `InFlight` holds that: a request whose id (compared as text, as the SDK keys it) is in
flight in its session is answered at once with HTTP 400 and JSON-RPC `-32600` naming the id.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, AsyncIterator

from starlette.types import Scope, Send

from .jsoncheck import JsonProblem, parse_client_json

INVALID_REQUEST = -32600


def session_request(scope: Scope, body: bytes) -> tuple[str, Any] | None:
    """(session id, request id) of a POST body that is one JSON-RPC request in a handshake-era session, else None."""
    session = next((v for k, v in scope.get("headers") or [] if k == b"mcp-session-id"), None)
    if session is None:
        return None
    try:
        msg = parse_client_json(body)
    except JsonProblem:
        return None
    if not isinstance(msg, dict) or "method" not in msg or "id" not in msg:
        return None  # a notification or a response: nothing is answered under its id
    rid = msg["id"]
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return None  # the SDK refuses it itself
    return session.decode("latin-1"), rid


class InFlight:
    """The (session, id) pairs being answered in one episode."""

    def __init__(self) -> None:
        self._pending: set[tuple[str, str]] = set()

    def __len__(self) -> int:
        return len(self._pending)

    @contextlib.asynccontextmanager
    async def hold(self, key: tuple[str, Any] | None, send: Send) -> AsyncIterator[bool]:
        """Yield True while `key` is held for the request being answered; yield False after answering the
        request with the duplicate-id error when its id is already in flight in its session."""
        if key is None:
            yield True
            return
        pair = (key[0], str(key[1]))
        if pair in self._pending:
            await _refuse(key[1], send)
            yield False
            return
        self._pending.add(pair)
        try:
            yield True
        finally:
            self._pending.discard(pair)


async def _refuse(rid: Any, send: Send) -> None:
    answer = {"jsonrpc": "2.0", "id": rid, "error": {"code": INVALID_REQUEST, "message": (
        f"request refused: id {json.dumps(rid)} is already in flight in this session; JSON-RPC ids must be "
        "unique among a client's pending requests (send this one again with another id)")}}
    data = json.dumps(answer, separators=(",", ":")).encode()
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-length", str(len(data)).encode()), (b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})
