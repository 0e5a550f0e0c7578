"""A lean MCP client for training harnesses: the sessionless 2026-07-28 protocol spoken directly over one connection.

A training loop runs thousands of short episodes against a `coworkenv serve --http` server. The
SDK's `mcp.Client` is general (sessions, streams, capabilities, result models and their
validation) and costs a few milliseconds per call and tens of milliseconds per fresh client. In
the 2026-07-28 revision every request stands alone, so a harness needs much less: this module
sends each request as one JSON-RPC POST on a keep-alive connection shared by every episode of a
server (`ServerConnection`, which the admin API uses too), with the very bytes the SDK's client
sends (headers, envelope `_meta`, compact JSON; `tests/trainers/test_remote_client.py` captures both
clients' requests against a real server and compares them), and reads the answer as JSON (or as
an event stream, should a server send one). The tool listing is fetched once per environment
and server and kept (`EpisodeClient.list_tools`). It imports neither the SDK nor anyio, and speaks HTTP
through `wire.Wire` (`http.client` writing httpx2's bytes: half the client's cost per request).

    conn = ServerConnection("http://127.0.0.1:8765", token=TOKEN)
    ep = conn.create()
    for _ in range(episodes):
        client = EpisodeClient(conn, ep["mcp_path"], env_key=ep["env_hash"])
        result = client.call_tool("read_text_file", {"path": "/reports/q1.csv"})   # the JSON-RPC result
        ep = conn.end(ep["episode_id"], next={})["next"]  # the evaluation, and the next episode made with it
    conn.end(ep["episode_id"])
"""

from __future__ import annotations

import json
from typing import Any

from .wire import Reply, Wire, WireError, WireTimeout

PROTOCOL_VERSION = "2026-07-28"
#: what the SDK's `mcp.Client` says about itself by default; sent as is so the bytes on the wire are the SDK's
CLIENT_INFO = {"name": "mcp", "version": "0.1.0"}
_ACCEPT = "application/json, text/event-stream"


STEP_HEADER = "coworkenv-step-since"  # asks for the step's sync with a call's answer (see `call_tool`)
STEP_COMPACT_HEADER = "coworkenv-step-evaluation"  # "compact": that sync's evaluation in its compact form
STEP_META = "coworkenv/step"


class HarnessError(RuntimeError):
    """A request failed: the server could not be reached, answered an HTTP error or a JSON-RPC error, or sent
    something that is not an answer. `status` is the HTTP status when there was one, `code` the error code."""

    def __init__(self, message: str, status: int | None = None, code: Any = None) -> None:
        super().__init__(message)
        self.status, self.code = status, code


class ServerConnection:
    """Keep-alive HTTP connections to one coworkenv server (`wire.Wire`), shared by its admin requests and every
    episode's MCP requests, with the tool listings fetched through it (per environment key)."""

    def __init__(self, base: str, token: str | None = None, timeout: float = 60.0) -> None:
        self.base = base.rstrip("/")
        self.timeout = timeout
        self.wire = Wire(self.base, timeout)
        self._auth = [("Authorization", f"Bearer {token}")] if token else []
        self.listings: dict[str, list[dict[str, Any]]] = {}  # environment key -> its tools, as listed

    def admin(self, method: str, path: str, body: dict[str, Any] | None = None,
              params: dict[str, Any] | None = None) -> Reply:
        """Send one admin request with the bearer token and return the raw answer (the caller reads it); WireError
        (WireTimeout) when the server cannot be reached (in time)."""
        content = None if body is None else \
            json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        return self.wire.request(method, path, self._auth, content, params, json_body=body is not None)

    def admin_json(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one admin request and return its JSON object; an HTTP error or an answer that is not a JSON object
        raises HarnessError with the status and the server's error code and message."""
        what = f"{method} {self.base}{path}"
        try:
            r = self.admin(method, path, body)
        except WireTimeout:
            raise HarnessError(f"{what}: no answer within {self.timeout:g}s") from None
        except WireError as e:
            raise HarnessError(f"{what}: cannot reach the server: {e}") from None
        doc = _decode(r.content)
        if r.status_code >= 400:
            err = doc.get("error") if isinstance(doc, dict) and isinstance(doc.get("error"), dict) else {}
            raise HarnessError(f"{what}: HTTP {r.status_code} ({err.get('code', 'http_error')}): "
                               f"{err.get('message') or r.text[:200]}", r.status_code, err.get("code"))
        if not isinstance(doc, dict):
            raise HarnessError(f"{what}: HTTP {r.status_code} without a JSON object: {r.text[:200]!r}", r.status_code)
        return doc

    def create(self, **options: Any) -> dict[str, Any]:
        """Create an episode (`POST /admin/episodes` with the given options: spec, spec_document, episode_id,
        mcp_only, reveal_score) and return what the server says of it (episode_id, mcp_path, env_hash, start...)."""
        return self.admin_json("POST", "/admin/episodes", options)

    def end(self, episode_id: str, final_answer: str | None = None, reason: str | None = None,
            next: dict[str, Any] | None = None) -> dict[str, Any]:
        """End an episode and return its evaluation. With `next` (a create's options; `{}` for another episode
        of the same environment) the server creates the next episode in the same request, and the evaluation
        carries it under "next" (what `create` returns): an episode loop is then its calls plus one request."""
        body: dict[str, Any] = {}
        if final_answer is not None:
            body["final_answer"] = final_answer
        if reason is not None:
            body["reason"] = reason
        if next is not None:
            body["next"] = next
        return self.admin_json("POST", f"/admin/episodes/{episode_id}/end", body)

    def rpc(self, path: str, method: str, params: dict[str, Any], request_id: int, tool: str | None = None,
            version: str = PROTOCOL_VERSION, extra_headers: dict[str, str] | None = None) -> dict[str, Any]:
        """Send one sessionless JSON-RPC request to the MCP endpoint at `path` and return its `result`; an HTTP
        error, a JSON-RPC error or an answer that is not one raises HarnessError saying which."""
        envelope = {"io.modelcontextprotocol/protocolVersion": version,
                    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                    "io.modelcontextprotocol/clientCapabilities": {}}
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": envelope}}
        headers = [("accept", _ACCEPT), ("content-type", "application/json"), ("mcp-protocol-version", version),
                   ("mcp-method", method)]
        if tool is not None:
            headers.append(("mcp-name", tool))
        if extra_headers:
            headers += extra_headers.items()
        content = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        what = f"{method} at {self.base}{path}"
        try:
            r = self.wire.request("POST", path, headers, content)
        except WireTimeout:
            raise HarnessError(f"{what}: no answer within {self.timeout:g}s") from None
        except WireError as e:
            raise HarnessError(f"{what}: cannot reach the server: {e}") from None
        answer = _answer(r, request_id)
        if answer is None:
            raise HarnessError(f"{what}: HTTP {r.status_code} without a JSON-RPC answer: {r.text[:200]!r}",
                               r.status_code)
        error = answer.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else error
            code = error.get("code") if isinstance(error, dict) else None
            raise HarnessError(f"{what}: {message} (JSON-RPC error {code}, HTTP {r.status_code})", r.status_code, code)
        result = answer.get("result")
        if r.status_code >= 400 or not isinstance(result, dict):
            raise HarnessError(f"{what}: HTTP {r.status_code} with a malformed answer: {r.text[:200]!r}",
                               r.status_code)
        return result

    def close(self) -> None:
        """Close the connections (idempotent)."""
        self.wire.close()


def _answer(r: Reply, request_id: int) -> dict[str, Any] | None:
    """The JSON-RPC message answering `request_id` in a JSON or event-stream response body, or None."""
    kind = r.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "text/event-stream":
        data: list[str] = []
        for line in r.text.splitlines() + [""]:
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif not line and data:
                message = _decode("\n".join(data))
                data = []
                if isinstance(message, dict) and message.get("id") == request_id:
                    return message
        return None
    message = _decode(r.content)  # bytes: json detects UTF-8 (and -16/-32) itself, no text decoding first
    return message if isinstance(message, dict) and message.get("jsonrpc") == "2.0" \
        and ("result" in message or "error" in message) else None


def _decode(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


class EpisodeClient:
    """The MCP side of one episode: tool calls and the (cached) tool listing over a shared `ServerConnection`.

    `env_key` names the episode's environment on that server (its hash, and whether it is MCP-only):
    episodes of the same environment share one listing, fetched by the first of them.
    """

    def __init__(self, connection: ServerConnection, path: str, env_key: str | None = None) -> None:
        self.connection, self.path = connection, path
        self.env_key = env_key if env_key is not None else path
        self._next_id = 0

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def list_tools(self) -> list[dict[str, Any]]:
        """The episode's tools as the server lists them (name, description, inputSchema, annotations, ...)."""
        tools = self.connection.listings.get(self.env_key)
        if tools is None:
            result = self.connection.rpc(self.path, "tools/list", {}, self._id())
            tools = result.get("tools")
            if not isinstance(tools, list) or not all(isinstance(t, dict) and isinstance(t.get("name"), str)
                                                      for t in tools):
                raise HarnessError(f"tools/list at {self.connection.base}{self.path}: the answer holds no tool list")
            if result.get("nextCursor") is None:  # a paged listing is not kept (coworkenv never pages)
                self.connection.listings[self.env_key] = tools
        return tools

    def call_tool(self, name: str, arguments: dict[str, Any], step_since: int | None = None,
                  compact: bool = False) -> dict[str, Any]:
        """The JSON-RPC result of calling tool `name` (`content`, `isError`, `structuredContent`, ...); a tool's
        own failure is a result with `isError` true, a failed request raises HarnessError. With `step_since`,
        the request asks (header `Coworkenv-Step-Since: N`) for the step's sync in the same answer: a coworkenv
        server that answers the call on its fast path adds `_meta["coworkenv/step"]` (the events from index N,
        count, clock, content hash and the evaluation, as `POST .../step` answers); otherwise it is absent. With
        `compact` too (header `Coworkenv-Step-Evaluation: compact`) the evaluation is the compact one: `passed`,
        `score`, each result's `passed` and `weight`, `stages`, `"compact": true` (a fraction of the bytes)."""
        extra = None
        if step_since is not None:
            extra = {STEP_HEADER: str(step_since), STEP_COMPACT_HEADER: "compact"} if compact \
                else {STEP_HEADER: str(step_since)}
        return self.connection.rpc(self.path, "tools/call", {"name": name, "arguments": arguments}, self._id(),
                                   tool=name, extra_headers=extra)


def result_text(result: dict[str, Any]) -> str:
    """The text content of a tool result, its text parts joined (what an agent reads)."""
    content = result.get("content")
    if not isinstance(content, list):
        return ""
    return "".join(c["text"] for c in content if isinstance(c, dict) and c.get("type") == "text"
                   and isinstance(c.get("text"), str))
