"""The lean harness client's HTTP/1.1: keep-alive connections to one server, each request written as httpx2 writes it.

A training loop's requests are small JSON POSTs on a keep-alive connection, and most of what they
cost through `httpx2.Client` is the client's own layers (request and response models, auth and
redirect handling, the transport and pool interfaces, the decoders): on loopback a request to a
REST mock took 0.72 ms through httpx2 and 0.39 ms through `http.client` in the same run. `Wire`
speaks HTTP/1.1 through `http.client` and writes every request head the way httpx2 does (its
default headers, then the caller's in order, then the length), so the bytes on the wire stay
the SDK client's (`tests/trainers/test_remote_client.py`). A connection idle in the pool is checked before
reuse: one the server closed meanwhile (uvicorn closes idle keep-alive connections after 5 s) is
replaced, not written to. Requests are never retried: a POST may have been applied. Proxies from
the environment are not used (a harness talks to its own servers).
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

MAX_IDLE = 8  # connections kept per server (a thread uses one at a time)
_PATH_SAFE = "/:@!$&'()*+,;=-._~%"  # what a path keeps as it is (a % is taken as an escape already made)
_QUERY_SAFE = _PATH_SAFE + "?"


class WireError(Exception):
    """The server could not be reached, or the connection failed before a whole answer came."""


class WireTimeout(WireError):
    """No answer (or no connection) within the timeout."""


class Reply:
    """An HTTP answer read whole: `status_code`, `reason_phrase`, `headers` (case-insensitive `get`), `content`."""

    __slots__ = ("status_code", "reason_phrase", "headers", "content")

    def __init__(self, status_code: int, reason_phrase: str, headers: Any, content: bytes) -> None:
        self.status_code, self.reason_phrase, self.headers, self.content = status_code, reason_phrase, headers, content

    @property
    def text(self) -> str:
        """The body as text (UTF-8; undecodable bytes replaced)."""
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON (ValueError when it is not)."""
        return json.loads(self.content)


def _httpx2_defaults() -> list[tuple[str, str]]:
    """The headers httpx2 sends on every request, in its order (read from httpx2 so the bytes stay its own)."""
    from httpx2._client import ACCEPT_ENCODING, USER_AGENT

    return [("Accept", "*/*"), ("Accept-Encoding", ACCEPT_ENCODING), ("Connection", "keep-alive"),
            ("User-Agent", USER_AGENT)]


_DEFAULTS: list[list[tuple[str, str]]] = []


def request_head(host: str, given: list[tuple[str, str]], length: int | None, json_body: bool) -> list[tuple[str, str]]:
    """The header lines of a request as httpx2 writes them: Host, its defaults less those the caller gives, the
    caller's in order, then Content-Length (and Content-Type for a JSON body)."""
    if not _DEFAULTS:
        _DEFAULTS.append(_httpx2_defaults())
    names = {name.lower() for name, _ in given}
    head = [("Host", host)] + [h for h in _DEFAULTS[0] if h[0].lower() not in names] + given
    if length is not None and "content-length" not in names:
        head.append(("Content-Length", str(length)))
    if json_body and "content-type" not in names:
        head.append(("Content-Type", "application/json"))
    return head


def _query_value(v: Any) -> str:
    return "true" if v is True else "false" if v is False else "" if v is None else str(v)


class Wire:
    """Keep-alive HTTP/1.1 connections to the server at `base` (`http://` or `https://`, with an optional path
    prefix), shared by threads (each request takes an idle connection or opens one)."""

    def __init__(self, base: str, timeout: float = 60.0) -> None:
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"server address must be http://HOST[:PORT] or https://..., got {base!r}")
        self.base, self.timeout = base.rstrip("/"), timeout
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port or (443 if self._https else 80)
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname  # lowercased, as httpx2 sends it
        default_port = parts.port is None or self._port == (443 if self._https else 80)
        self._host_header = host if default_port else f"{host}:{self._port}"
        self._prefix = quote(parts.path.rstrip("/"), safe=_PATH_SAFE)
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._generation = 0  # moved on by `close`: a connection taken before it is not pooled after it
        self.opened = 0  # connections made so far (one per thread in a training loop; the tests read it)

    def _take(self) -> tuple[http.client.HTTPConnection, int]:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if conn.sock is not None and not _dropped(conn.sock):
                    return conn, self._generation
                conn.close()
            self.opened += 1
            generation = self._generation
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=self.timeout), generation

    def _give_back(self, conn: http.client.HTTPConnection, generation: int) -> None:
        with self._lock:
            if conn.sock is not None and generation == self._generation and len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def request(self, method: str, path: str, headers: list[tuple[str, str]], content: bytes | None = None,
                params: dict[str, Any] | None = None, json_body: bool = False) -> Reply:
        """Send one request (path on the server, `params` as its query) and read its answer whole; WireTimeout or
        WireError when it cannot. `json_body` marks `content` as JSON (Content-Type, as httpx2's `json=` does)."""
        path, mark, query = path.partition("?")
        target = self._prefix + quote(path.partition("#")[0], safe=_PATH_SAFE)
        if params:
            query = (query + "&" if query else "") + urlencode(
                [(k, _query_value(x)) for k, v in params.items() for x in (v if isinstance(v, (list, tuple)) else [v])])
        if query:
            target += "?" + quote(query, safe=_QUERY_SAFE)
        head = request_head(self._host_header, headers, len(content) if content is not None else None, json_body)
        if content is None and method in ("POST", "PUT", "PATCH"):
            head.insert(1, ("Content-Length", "0"))  # where httpx2 puts a body-less request's length
        conn, generation = self._take()
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for name, value in head:
                conn.putheader(name, value)
        except (ValueError, http.client.HTTPException) as e:  # a header or a path http.client refuses (a line
            conn.close()  # break, a control character): nothing was sent
            raise WireError(f"request not sent: {e}") from None
        try:
            conn.endheaders(content)
            answer = conn.getresponse()
            body = answer.read()
            reply = Reply(answer.status, answer.reason, answer.headers, _decoded(body, answer.headers))
        except (TimeoutError, socket.timeout):
            conn.close()
            raise WireTimeout(f"no answer from {self.base} within {self.timeout:g}s") from None
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise WireError(f"{type(e).__name__}: {e}") from None
        if answer.will_close:
            conn.close()
        else:
            self._give_back(conn, generation)
        return reply

    def close(self) -> None:
        """Close every idle connection (idempotent; a connection in use closes when its request is done)."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._generation += 1
        for conn in idle:
            conn.close()


def _dropped(sock: socket.socket) -> bool:
    """Whether an idle keep-alive connection was closed by the server (readable with nothing asked: EOF). poll,
    not select: select cannot watch a descriptor numbered 1024 or more (a trainer with many files open)."""
    try:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _decoded(body: bytes, headers: Any) -> bytes:
    """The body without its content coding (the codings httpx2 offers; coworkenv servers send none)."""
    coding = (headers.get("content-encoding") or "").strip().lower()
    if not coding or coding == "identity":
        return body
    from httpx2._decoders import SUPPORTED_DECODERS

    for name in reversed([c.strip() for c in coding.split(",") if c.strip()]):
        if name not in SUPPORTED_DECODERS:
            raise WireError(f"the answer is encoded as {name!r}, which this client does not decode")
        decoder = SUPPORTED_DECODERS[name]()
        try:
            body = b"".join(decoder.decode(body)) + b"".join(decoder.flush())
        except Exception as e:  # httpx2's DecodingError: a body that does not decode as its coding says
            raise WireError(f"the answer's {name} body does not decode: {e}") from None
    return body
