"""A stdio server's first answer, written before the `mcp` SDK is loaded.

Loading the SDK (`import mcp` loads its whole client and server, and `mcp_types` its pydantic
models of every protocol revision) is most of `coworkenv serve`'s cold start, and a client's first
request (`initialize` of the handshake revisions, `server/discover` of 2026-07-28) waits for it.
The answer to that request depends only on the episode (its title, user, MCP-only options) and on
the version asked for, so `run_stdio` reads the first line itself and, when it is a request this
module understands completely, writes the answer the SDK would write, byte for byte; only then is
the SDK loaded. The SDK still receives the line (so its session state is exactly as before) and
its answer to it, the same bytes, is not written again (`mcp_server.stdio.AnswerWatch`).

Anything else (an unknown or unusual shape, fields the SDK's models would refuse or transform,
a version it would not accept) is left to the SDK, which answers it as before. The constants
here mirror the SDK's (`tests/mcp_server/test_serve_lazy.py` checks them against it and compares the
answers of both paths). `COWORKENV_STDIO_FIRST_ANSWER=0` leaves every answer to the SDK.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import TYPE_CHECKING, Any, BinaryIO, Callable

from .identity import SERVER_NAME, instructions, server_title, server_version
from .jsoncheck import JsonProblem, parse_client_json

if TYPE_CHECKING:
    from .episode import Episode

FIRST_ANSWER_ENV = "COWORKENV_STDIO_FIRST_ANSWER"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # mcp_types.version's
LATEST_HANDSHAKE = "2025-11-25"
MODERN_VERSIONS = ("2026-07-28",)
CAPABILITIES = {"prompts": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False},
                "tools": {"listChanged": False}}  # what an EpisodeServer declares, MCP-only or not
_ENVELOPE = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo",
             "io.modelcontextprotocol/clientCapabilities")
_MAX_ID = 1 << 53


def first_answer_enabled() -> bool:
    """Whether a stdio server answers its first request before loading the SDK (`COWORKENV_STDIO_FIRST_ANSWER`,
    on unless 0/false/no)."""
    return os.environ.get(FIRST_ANSWER_ENV, "1").strip().lower() not in ("0", "false", "no")


def first_answer(line: bytes, episode: Episode) -> tuple[Any, bytes] | None:
    """(request id, the answer line) for a first stdio line this module answers exactly as the SDK would;
    None for anything else (the SDK answers it)."""
    try:
        msg = parse_client_json(line)
    except JsonProblem:
        return None
    if not isinstance(msg, dict) or set(msg) != {"jsonrpc", "id", "method", "params"} or msg["jsonrpc"] != "2.0":
        return None
    rid, params = msg["id"], msg["params"]
    if isinstance(rid, bool) or not (isinstance(rid, str) or (isinstance(rid, int) and abs(rid) < _MAX_ID)) \
            or not isinstance(params, dict):
        return None
    if msg["method"] == "initialize":
        result = _initialize(params, episode)
    elif msg["method"] == "server/discover":
        result = _discover(params, episode)
    else:
        return None
    if result is None:
        return None
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}, ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in the title or user: the SDK says what it does with that
        return None
    return rid, body + b"\n"


def _initialize(params: dict[str, Any], episode: Episode) -> dict[str, Any] | None:
    if set(params) != {"protocolVersion", "capabilities", "clientInfo"} or not isinstance(params["protocolVersion"], str) \
            or not _plain_client(params["clientInfo"], params["capabilities"]):
        return None
    version = params["protocolVersion"]
    return {"capabilities": CAPABILITIES, "instructions": instructions(episode),
            "protocolVersion": version if version in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE,
            "serverInfo": _server_info(episode)}


def _discover(params: dict[str, Any], episode: Episode) -> dict[str, Any] | None:
    meta = params.get("_meta")
    if set(params) != {"_meta"} or not isinstance(meta, dict) or set(meta) != set(_ENVELOPE) \
            or meta[_ENVELOPE[0]] not in MODERN_VERSIONS or not _plain_client(meta[_ENVELOPE[1]], meta[_ENVELOPE[2]]):
        return None
    return {"cacheScope": "private", "capabilities": CAPABILITIES, "instructions": instructions(episode),
            "resultType": "complete", "supportedVersions": list(MODERN_VERSIONS), "ttlMs": 0,
            "_meta": {"io.modelcontextprotocol/serverInfo": _server_info(episode)}}


def _server_info(episode: Episode) -> dict[str, str]:
    return {"name": SERVER_NAME, "title": server_title(episode), "version": server_version()}


def _plain_client(info: Any, capabilities: Any) -> bool:
    """Whether client info and capabilities have the plain shape whose validation cannot fail or change them:
    name and version (and title) strings; roots with an optional listChanged flag, empty sampling and
    elicitation objects."""
    if not isinstance(info, dict) or not {"name", "version"} <= set(info) <= {"name", "version", "title"} \
            or not all(isinstance(v, str) for v in info.values()):
        return False
    if not isinstance(capabilities, dict) or not set(capabilities) <= {"roots", "sampling", "elicitation"}:
        return False
    roots = capabilities.get("roots", {})
    if not isinstance(roots, dict) or not set(roots) <= {"listChanged"} \
            or not isinstance(roots.get("listChanged", False), bool):
        return False
    return capabilities.get("sampling", {}) == {} and capabilities.get("elicitation", {}) == {}


def claim_stdin() -> tuple[BinaryIO, Callable[[], None]]:
    """Take stdin over as the SDK's `stdio_server` does: a private stream on a copy of fd 0, and fd 0 then reads
    the null device (nothing a tool starts can consume protocol bytes); the callable puts fd 0 back."""
    private = os.dup(0)
    os.set_inheritable(private, False)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    stream = os.fdopen(private, "rb", buffering=1 << 16, closefd=False)

    def restore() -> None:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)

    return stream, restore


class PreRead:
    """A binary stream whose first line was already read (to answer it early): `readline` yields that line
    first, completed from the stream when it was cut short, then the stream's own lines."""

    def __init__(self, first: bytes, source: BinaryIO) -> None:
        self._first: bytes | None = first
        self._source = source

    def readline(self, limit: int = -1) -> bytes:
        """The next line (at most `limit` bytes when `limit` >= 0), as `io.BufferedReader.readline`."""
        first, self._first = self._first, None
        if not first:
            return self._source.readline(limit)
        if limit >= 0 and len(first) >= limit:  # longer than asked for: hand out the rest on the next call
            self._first = first[limit:] or None
            return first[:limit]
        if first.endswith(b"\n"):
            return first
        return first + self._source.readline(-1 if limit < 0 else limit - len(first))


def write_answer(answer: bytes) -> None:
    """Write an answer line to stdout (fd 1) before the SDK's transport owns it."""
    view = memoryview(answer)
    while view:
        view = view[os.write(1, view):]
