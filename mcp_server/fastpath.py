"""The sessionless fast path: 2026-07-28 `tools/call` and `tools/list` answered without the SDK's per-request stack.

A 2026-07-28 (modern) MCP request is one self-contained POST. The SDK's entry for it
(`handle_modern_request`) builds, per request, a Starlette request, the JSON-RPC envelope model, a
connection, a dispatch context, a runner, the middleware chain and a `Context`, and tears them down
again; for a read that the workspace answers in tens of microseconds that machinery is most of the
server's time. This module answers the two requests an agent sends over and over, a tool call and the
tool listing, directly from the episode, with the same bytes the SDK would send:

- it runs the SDK's own transport checks (content type, DNS-rebinding protection, accept header,
  duplicated routing headers, the per-request envelope ladder `classify_inbound_request`) and serializes
  with the SDK's per-version result surface, the `resultType` rule and the `serverInfo` stamp;
- it takes only requests it understands completely: a `tools/call` with a name, an argument object
  and nothing but the envelope in `_meta` (no progress token, no `Mcp-Param-*` headers), or a
  `tools/list` without a cursor. Anything else goes to the SDK, which answers it as before; a body
  that is not acceptable JSON (a lone surrogate, invalid UTF-8, NaN, nesting) never reaches either:
  the hub refuses it first with the request's id (`jsoncheck.refuse_bad_json`);
- the tool listing is the SDK's own response, captured the first time a tool set is listed and
  replayed with the new request id after that (one listing per environment instead of one per
  episode);
- a tool call still runs on a worker thread under the episode's lock (`server.call_episode`);
- a harness may ask, with the header `Coworkenv-Step-Since: N`, for its step's sync in the same answer:
  the result's `_meta["coworkenv/step"]` then holds what `POST /admin/episodes/{id}/step` answers (the
  events from index N, count, clock, content hash, the evaluation; with `Coworkenv-Step-Evaluation: compact`
  the compact evaluation, `Episode.evaluate`). Nobody else ever sees that key.

`tests/mcp_server/test_mcp_fastpath.py` sends the same requests down both paths and compares the bytes.
`COWORKENV_MCP_FAST_PATH=0` turns it off (the SDK then answers everything).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.inbound import InboundModernRoute, classify_inbound_request, find_duplicated_routing_header
from mcp_types import TextContent
from mcp_types import methods as sdk_methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .jsoncheck import JsonProblem, parse_client_json
from .server import strict_schemas_requested
from .settings import FAST_PATH_ENV, fast_path_enabled  # noqa: F401 (their home before mcp_server.settings)

log = logging.getLogger("coworkenv.mcp.fastpath")

MAX_FAST_BODY = 1 << 20  # a larger body goes to the SDK unread past this point
ENVELOPE_KEYS = frozenset({"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo",
                           "io.modelcontextprotocol/clientCapabilities"})
_PROTOCOL_HEADER = b"mcp-protocol-version"
_PARAM_HEADER_PREFIX = b"mcp-param-"
_JSON_HEADERS = [(b"content-type", b"application/json")]
_MAX_LISTINGS = 64
_MAX_HEADER_SETS = 256
_UNPARSED: Any = object()  # `_eligible` without the parsed body


def modern_version(scope: Scope) -> str | None:
    """The request's `MCP-Protocol-Version` header when it names a modern (sessionless) revision, else None."""
    for key, value in scope.get("headers", ()):
        if key == _PROTOCOL_HEADER:
            version = value.decode("latin-1")
            return version if version in MODERN_PROTOCOL_VERSIONS else None
    return None


class ClientGone(Exception):
    """The client hung up before its request body ended (ASGI `http.disconnect`): there is no one to answer."""

    def __init__(self, read: int) -> None:
        super().__init__(f"the client hung up after {read:,} bytes of its request body")
        self.read = read


def log_hang_up(where: str, e: ClientGone) -> None:
    """The one line a hang-up mid-body writes (info level, no traceback; the SDK's own read logged 10-30 lines)."""
    log.info("client hung up after %d bytes of a POST to %s; nothing answered", e.read, ascii(where)[:100])


async def read_prefix(receive: Receive, limit: int = MAX_FAST_BODY) -> tuple[bytes, bool]:
    """The request body, read until it ends or passes `limit` bytes; the flag says whether more is unread.
    Raises ClientGone when the client hangs up before the body ends."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: nothing to hand on, no one to answer
            raise ClientGone(size)
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body"):
            return b"".join(chunks), False
        if size > limit:
            return b"".join(chunks), True


def replay(body: bytes, more: bool, receive: Receive) -> Receive:
    """A `receive` that yields the bytes already read, then whatever the original `receive` still holds."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": more}]

    async def replayed() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replayed


class EpisodeFace(Protocol):
    """What the fast path needs of an episode: its server's title, tools, call and `serverInfo` stamp. An
    `EpisodeServer` has them, and so has the hub's `LiveEpisode` without building one."""

    title: str | None

    @property
    def tools(self) -> list[Any]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any: ...

    def info_stamp(self) -> dict[str, Any]: ...


class FastPath:
    """Answers eligible modern requests of any episode served by one hub (see the module docstring)."""

    def __init__(self, security: TransportSecuritySettings, json_response: bool) -> None:
        self.security = TransportSecurityMiddleware(security)
        self.json_response = json_response
        self._listings: dict[tuple[Any, ...], bytes] = {}  # serialized listing results
        self._header_verdicts: dict[tuple[Any, ...], dict[str, str] | None] = {}  # see `_headers`
        self.answered = 0  # requests answered here (the tests read it)

    async def handle(self, server: EpisodeFace, scope: Scope, receive: Receive, send: Send, sdk: ASGIApp,
                     read: tuple[bytes, Any] | None = None) -> None:
        """Answer the request on the fast path when it qualifies, else hand it (body included) to `sdk`, the
        episode's SDK session manager. `read`: the whole body and its `parse_client_json` value when the caller
        has them already (the hub checks every body first), so neither is read or parsed again."""
        if scope.get("method") != "POST":  # GET streams and DELETEs are the SDK's, unread
            await sdk(scope, receive, send)
            return
        if read is not None:
            body, more = read[0], False
        else:
            try:
                body, more = await read_prefix(receive)
            except ClientGone as e:
                log_hang_up(str(scope.get("path", "")), e)
                return
        request = None if more or len(body) > MAX_FAST_BODY \
            else await self._eligible(scope, body, *(read[1:] if read is not None else ()))
        if request is not None:
            rid, method, params, version = request
            if method == "tools/call":
                self.answered += 1
                await self._call(server, rid, params, version, send, *_step_since(scope))
                return
            cached = self._listings.get(self._listing_key(server, version))
            if cached is not None:
                self.answered += 1
                await _send_json(send, _response(rid, cached))
                return
            await sdk(scope, replay(body, more, receive), self._capture(server, version, send))
            return
        await sdk(scope, replay(body, more, receive), send)

    async def _eligible(self, scope: Scope, body: bytes,
                        decoded: Any = _UNPARSED) -> tuple[Any, str, dict[str, Any], str] | None:
        """(id, method, params, protocol version) of a request the fast path answers exactly as the SDK would;
        None for anything else (the SDK then answers, errors included). `decoded`: the body's parsed value when
        the caller has it (`_UNPARSED`: parse it here)."""
        if not self.json_response:
            return None
        headers = await self._headers(scope)
        if headers is None:
            return None
        if decoded is _UNPARSED:
            try:
                decoded = parse_client_json(body)
            except JsonProblem:
                return None
        if not isinstance(decoded, dict) or set(decoded) != {"jsonrpc", "id", "method", "params"} \
                or decoded["jsonrpc"] != "2.0":
            return None
        rid, method, params = decoded["id"], decoded["method"], decoded["params"]
        if isinstance(rid, bool) or not isinstance(rid, (int, str)) or not isinstance(params, dict):
            return None
        meta = params.get("_meta")
        if not isinstance(meta, dict) or not set(meta) <= ENVELOPE_KEYS:
            return None
        if method == "tools/call":
            if not set(params) <= {"name", "arguments", "_meta"} or not isinstance(params.get("name"), str) \
                    or not isinstance(params.get("arguments", {}), dict):
                return None
        elif method != "tools/list" or set(params) != {"_meta"}:
            return None
        verdict = classify_inbound_request(decoded, headers=dict(headers))
        if not isinstance(verdict, InboundModernRoute):
            return None
        return rid, method, params, verdict.protocol_version

    async def _headers(self, scope: Scope) -> dict[str, str] | None:
        """The request's headers as `dict(Request.headers)` gives them when the transport checks that depend on the
        headers alone pass (no `Mcp-Param-*`, content type, DNS-rebinding protection, an accept header naming
        JSON, no duplicated routing header), else None. A harness sends the same headers over and over (the body's
        length and its step headers aside, which change per request), so the verdict is kept per header set; the
        dict then holds neither (no check reads them: `_step_since` reads the step headers from the scope)."""
        raw_headers = scope.get("headers", ())
        key = tuple((bytes(k), bytes(v)) for k, v in raw_headers if not _per_request(k))  # lists allowed in ASGI
        if key in self._header_verdicts:
            return self._header_verdicts[key]
        verdict: dict[str, str] | None = None
        if not any(k.startswith(_PARAM_HEADER_PREFIX) for k, _ in raw_headers):
            request = Request(scope)
            if await self.security.validate_request(request, is_post=True) is None \
                    and check_accept_headers(request)[0] \
                    and find_duplicated_routing_header((k.decode("latin-1"), v) for k, v in raw_headers) is None:
                verdict = {k: v for k, v in request.headers.items() if not _per_request(k.encode("latin-1"))}
        if len(self._header_verdicts) >= _MAX_HEADER_SETS:
            self._header_verdicts.pop(next(iter(self._header_verdicts)))
        self._header_verdicts[key] = verdict
        return verdict

    async def _call(self, server: EpisodeFace, rid: Any, params: dict[str, Any], version: str, send: Send,
                    step_since: int | None = None, compact: bool = False) -> None:
        result = await server.call_tool(params["name"], params.get("arguments") or {})
        dumped = plain_result(result)
        if dumped is None:
            dumped = sdk_methods.serialize_server_result(
                "tools/call", version, result.model_dump(by_alias=True, mode="json", exclude_none=True))
        if dumped.get("resultType") is None:
            dumped["resultType"] = "complete"
        if dumped.get("_meta") is None:
            dumped["_meta"] = {"io.modelcontextprotocol/serverInfo": server.info_stamp()}
        step = getattr(server, "step_sync", None)
        if step_since is not None and step is not None:  # asked for by a harness (`Coworkenv-Step-Since`)
            synced = await step(step_since, compact)
            if synced is not None:
                dumped["_meta"][STEP_META] = synced
        await _send_json(send, _response(rid, dumped))

    def _listing_key(self, server: EpisodeFace, version: str) -> tuple[Any, ...]:
        return (version, strict_schemas_requested(), server.title, tuple(t.name for t in server.tools))

    def _capture(self, server: EpisodeFace, version: str, send: Send) -> Send:
        """A `send` that passes the SDK's listing response through and keeps its result for the next listing."""
        key = self._listing_key(server, version)
        start: list[Message] = []

        async def capturing(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.append(message)
            elif message["type"] == "http.response.body" and not message.get("more_body") and start \
                    and start[0]["status"] == 200:
                try:
                    answer = json.loads(message.get("body", b""))
                except ValueError:
                    answer = None
                if isinstance(answer, dict) and isinstance(answer.get("result"), dict):
                    if len(self._listings) >= _MAX_LISTINGS:
                        self._listings.pop(next(iter(self._listings)))
                    self._listings[key] = json.dumps(answer["result"], separators=(",", ":")).encode()
            await send(message)

        return capturing


PLAIN_NODES = 64  # values walked at most to prove a result's structured content plain JSON (else: the SDK's dump)
_PLAIN_LEAVES = (str, int, float, bool, type(None))


def plain_result(result: Any) -> dict[str, Any] | None:
    """The SDK's serialized result (`model_dump` then `serialize_server_result` for 2026-07-28, the one modern
    revision) of a tool result of the common shape, built directly (those two cost a read call ~12 us): one
    text content without annotations or `_meta`, a `bool` `isError`, no `_meta`, `resultType` "complete", and
    structured content that is None or plain JSON of at most `PLAIN_NODES` values (dicts with `str` keys,
    lists, `str`, `int`, finite `float`, `bool`, None: exactly what pydantic's JSON mode gives back unchanged).
    None for anything else, which the caller dumps the SDK's way. `tests/mcp_server/test_call_path.py` compares the two
    over generated results."""
    content = result.content
    if len(content) != 1 or type(result.is_error) is not bool or result.meta is not None \
            or result.result_type != "complete":
        return None
    text = content[0]
    if type(text) is not TextContent or text.annotations is not None or text.meta is not None \
            or type(text.text) is not str:
        return None
    structured = result.structured_content
    out: dict[str, Any] = {"content": [{"text": text.text, "type": "text"}], "isError": result.is_error,
                           "resultType": "complete"}
    if structured is None:
        return out
    if type(structured) is not dict or not _plain_json(structured):
        return None
    out["structuredContent"] = structured
    return out


def _plain_json(value: Any) -> bool:
    """Whether `value` is plain JSON of at most `PLAIN_NODES` values (see `plain_result`)."""
    stack, seen = [value], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > PLAIN_NODES:
            return False
        t = type(v)
        if t is dict:
            for k in v:
                if type(k) is not str:
                    return False
            stack.extend(v.values())
        elif t is list:
            stack.extend(v)
        elif t is float:
            if v != v or v in (_INF, -_INF):
                return False
        elif t not in _PLAIN_LEAVES:
            return False
    return True


_INF = float("inf")
STEP_HEADER = b"coworkenv-step-since"
STEP_COMPACT_HEADER = b"coworkenv-step-evaluation"
STEP_META = "coworkenv/step"


def _per_request(name: bytes) -> bool:
    """Whether a header (lower-case name) changes from one request of a harness to the next: the body's length
    and the step headers."""
    return name == b"content-length" or name.startswith(b"coworkenv-step-")


def _step_since(scope: Scope) -> tuple[int | None, bool]:
    """N of a `Coworkenv-Step-Since: N` header (a harness asking for the step's sync with the call), else None;
    and whether `Coworkenv-Step-Evaluation: compact` asks for the compact evaluation (`Episode.evaluate`)."""
    since, compact = None, False
    for key, value in scope.get("headers", ()):
        if key == STEP_HEADER:
            since = int(value) if value.isdigit() and len(value) <= 18 else None
        elif key == STEP_COMPACT_HEADER:
            compact = value.strip().lower() == b"compact"
    return since, compact


def _response(rid: Any, result: dict[str, Any] | bytes) -> bytes:
    """The JSON-RPC response exactly as the SDK's modern entry writes it (`JSONRPCResponse` dumped, then
    `json.dumps` with compact separators: the envelope's keys in this order, a dict result unchanged)."""
    encoded = result if isinstance(result, bytes) else json.dumps(result, separators=(",", ":")).encode()
    return b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":' + encoded + b"}"


async def _send_json(send: Send, body: bytes) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(body)).encode()), *_JSON_HEADERS]})
    await send({"type": "http.response.body", "body": body})
