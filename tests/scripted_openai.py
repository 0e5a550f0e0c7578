"""A real OpenAI-compatible HTTP server for tests, answering chat completions from a script.

`ScriptedOpenAI` listens on 127.0.0.1 (a free port) in a background thread and speaks enough of
the OpenAI API for real clients: `POST /v1/chat/completions`, `POST /v1/audio/transcriptions` (a
multipart form: its fields and the uploaded file are recorded) and `GET /v1/models`. Each completion
or transcription request takes the next entry of the script: an assistant `Message`, a
`Transcription` (answered as the request's response_format asks: verbose_json with segments, json
or text), `ToolCalls` (arguments are a
raw string, so they may be malformed on purpose), a raw JSON `Body`, an `HTTPError` (with optional
Retry-After), an `InvalidBody` (bytes that are not the JSON the client expects) or a `Disconnect`
(the connection drops part-way through the body). An entry may also be a function of the
`RecordedRequest`, returning one of those. Every request is recorded, so tests can assert what the
client sent. Reused by the LLM generator, the episode runner's `openai` policy and the LLM user
simulator tests.

    with ScriptedOpenAI([HTTPError(500), Message('{"ok": true}')]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
        ...
        assert server.requests[-1].messages[-1]["content"] == ...
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Iterator, Union

import pytest

__all__ = [
    "Body", "Disconnect", "HTTPError", "InvalidBody", "Message", "RecordedRequest", "ScriptedOpenAI",
    "ToolCall", "ToolCalls", "Transcription", "scripted_openai",
]


@dataclass(frozen=True)
class Message:
    """An assistant message: text content, or a refusal, with a finish reason."""

    content: str | None = None
    refusal: str | None = None
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None


@dataclass(frozen=True)
class ToolCall:
    """One function call; `arguments` is sent verbatim, so it may be invalid JSON on purpose."""

    name: str
    arguments: str = "{}"
    id: str | None = None


@dataclass(frozen=True)
class ToolCalls:
    """An assistant turn that calls tools (optionally with some text)."""

    calls: tuple[ToolCall, ...]
    content: str | None = None
    finish_reason: str = "tool_calls"
    usage: dict[str, int] | None = None

    def __init__(self, calls: Iterable[ToolCall], content: str | None = None, finish_reason: str = "tool_calls",
                 usage: dict[str, int] | None = None) -> None:
        object.__setattr__(self, "calls", tuple(calls))
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "finish_reason", finish_reason)
        object.__setattr__(self, "usage", usage)


@dataclass(frozen=True)
class Transcription:
    """A speech-to-text answer: the text and, for verbose_json, its segments as (start, end, text)."""

    text: str
    segments: tuple[tuple[float, float, str], ...] = ()
    language: str = "english"
    duration: float = 0.0


@dataclass(frozen=True)
class Body:
    """A JSON body sent as is, with a status code (for shapes the other entries do not cover)."""

    json: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HTTPError:
    """An error status in OpenAI's error format; Retry-After headers are optional."""

    status: int
    message: str = ""
    retry_after: float | None = None
    retry_after_ms: int | None = None
    error_type: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class InvalidBody:
    """A body that is not the JSON the client expects (truncated JSON, HTML, nothing)."""

    data: bytes = b'{"id": "chatcmpl-x", "choices": [{"index": 0, "mess'
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True)
class Disconnect:
    """Announce a full body but send only `sent` bytes of it, then drop the connection."""

    sent: bytes = b'{"id": "chatcmpl-x", "object": "chat.c'
    announced: int = 4096


Reply = Union[Message, ToolCalls, Transcription, Body, HTTPError, InvalidBody, Disconnect]
Entry = Union[Reply, Callable[["RecordedRequest"], Reply]]


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any = None
    form: dict[str, str] = field(default_factory=dict)  # a multipart request's text fields
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # its files: field -> (file name, bytes)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of a completion request (empty for others)."""
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The requested response_format, if any."""
        return self.body.get("response_format") if isinstance(self.body, dict) else None

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools offered to the model (empty if none)."""
        return list(self.body.get("tools") or []) if isinstance(self.body, dict) else []

    @property
    def tool_choice(self) -> Any:
        """The tool_choice sent, if any."""
        return self.body.get("tool_choice") if isinstance(self.body, dict) else None

    def text(self) -> str:
        """Every message's text content joined by newlines (list contents are flattened)."""
        out = []
        for m in self.messages:
            c = m.get("content")
            if isinstance(c, str):
                out.append(c)
            elif isinstance(c, list):
                out.extend(p.get("text", "") for p in c if isinstance(p, dict))
        return "\n".join(out)


def _transcription(h: Any, server: ScriptedOpenAI, req: RecordedRequest) -> None:
    """Answer a speech-to-text request (`h` the request's handler) from the script, in its response_format."""
    if "file" not in req.files or not req.form.get("model"):
        h._send_error(400, "a transcription request is a multipart form with 'file' and 'model'",
                      "invalid_request_error")
        return
    fmt = req.form.get("response_format", "json")
    if fmt in server.reject_response_formats:
        h._send_error(400, f"response_format {fmt!r} is not supported by this server", "invalid_request_error",
                      param="response_format")
        return
    try:
        reply = server._next(req)
    except Exception as exc:  # a scripted function failed: tell the test, do not hang
        h._send_error(500, f"scripted responder raised {type(exc).__name__}: {exc}", "server_error")
        return
    if not isinstance(reply, Transcription):
        h._answer(reply, {})
    elif fmt == "text":
        h._send(200, reply.text.encode(), "text/plain")
    elif fmt == "verbose_json":
        segments = [{"id": i, "seek": 0, "start": a, "end": b, "text": t, "tokens": [], "temperature": 0.0,
                     "avg_logprob": 0.0, "compression_ratio": 1.0, "no_speech_prob": 0.0}
                    for i, (a, b, t) in enumerate(reply.segments)]
        h._send_json(200, {"task": "transcribe", "language": reply.language, "duration": reply.duration,
                           "text": reply.text, "segments": segments})
    else:
        h._send_json(200, {"text": reply.text})


def _multipart(content_type: str, raw: bytes) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """The text fields and the files of a multipart/form-data body."""
    from email.parser import BytesParser
    from email.policy import HTTP

    msg = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    form: dict[str, str] = {}
    files: dict[str, tuple[str, bytes]] = {}
    for part in msg.iter_parts() if msg.is_multipart() else ():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True) or b""
        if not isinstance(name, str):
            continue
        filename = part.get_filename()
        if filename is not None:
            files[name] = (filename, data)
        else:
            form[name] = data.decode("utf-8", "replace")
    return form, files


def _tokens(text: str) -> int:
    """A crude, deterministic token count (about four characters per token)."""
    return max(1, (len(text) + 3) // 4) if text else 0


class ScriptedOpenAI:
    """The scripted server; a context manager that starts and stops it."""

    def __init__(
        self,
        script: Iterable[Entry] = (),
        *,
        models: Iterable[str] = ("scripted-model",),
        reject_response_formats: Iterable[str] = (),
        default: Entry | None = None,
        api_key: str | None = None,
    ) -> None:
        """Prepare a server answering from `script`.

        `reject_response_formats` names response_format types (e.g. "json_schema") the server
        answers with a 400 without consuming a script entry, as servers lacking that feature do.
        `default` answers once the script is used up (otherwise a 400 saying so). If `api_key`
        is set, requests without `Authorization: Bearer <api_key>` get a 401.
        """
        self._script: deque[Entry] = deque(script)
        self.models = list(models)
        self.reject_response_formats = set(reject_response_formats)
        self.default = default
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> "ScriptedOpenAI":
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="scripted-openai", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "ScriptedOpenAI":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        """The port the server listens (or, once closed, listened) on."""
        if self._port is None:
            raise RuntimeError("ScriptedOpenAI is not started")
        return self._port

    @property
    def base_url(self) -> str:
        """The base URL to give an OpenAI client (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # script ------------------------------------------------------------------------------------
    def push(self, *entries: Entry) -> None:
        """Append entries to the script."""
        with self._lock:
            self._script.extend(entries)

    @property
    def remaining(self) -> int:
        """How many script entries are not used yet."""
        with self._lock:
            return len(self._script)

    @property
    def completion_requests(self) -> list[RecordedRequest]:
        """The recorded chat-completion requests, in order."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def transcription_requests(self) -> list[RecordedRequest]:
        """The recorded speech-to-text requests, in order."""
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/").endswith("/audio/transcriptions")]

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def _next(self, req: RecordedRequest) -> Reply:
        with self._lock:
            entry = self._script.popleft() if self._script else self.default
            n = len(self.requests)
        if entry is None:
            return HTTPError(400, f"scripted server: script exhausted (request {n} has no scripted answer)")
        return entry(req) if callable(entry) else entry


def _make_handler(server: ScriptedOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = 1 << 16  # headers and body leave in one segment (no Nagle/delayed-ACK stall)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
            return

        def do_GET(self) -> None:  # noqa: N802
            req = self._read()
            if not self._authorised():
                return
            if req.path.rstrip("/").endswith("/models"):
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in server.models]
                self._send_json(200, {"object": "list", "data": data})
            else:
                self._send_error(404, f"no route GET {req.path}", "invalid_request_error")

        def do_POST(self) -> None:  # noqa: N802
            req = self._read()
            if not self._authorised():
                return
            if req.path.rstrip("/").endswith("/audio/transcriptions"):
                self._transcribe(req)
                return
            if not req.path.rstrip("/").endswith("/chat/completions"):
                self._send_error(404, f"no route POST {req.path}", "invalid_request_error")
                return
            body = req.body
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body.get("model"):
                self._send_error(400, "request body must be a JSON object with 'model' and a 'messages' list",
                                 "invalid_request_error")
                return
            fmt = body.get("response_format")
            if isinstance(fmt, dict) and fmt.get("type") in server.reject_response_formats:
                self._send_error(400, f"response_format type {fmt.get('type')!r} is not supported by this server",
                                 "invalid_request_error", param="response_format")
                return
            try:
                reply = server._next(req)
            except Exception as exc:  # a scripted function failed: tell the test, do not hang
                self._send_error(500, f"scripted responder raised {type(exc).__name__}: {exc}", "server_error")
                return
            self._answer(reply, body)

        def _transcribe(self, req: RecordedRequest) -> None:
            _transcription(self, server, req)

        # helpers ---------------------------------------------------------------------------
        def _read(self) -> RecordedRequest:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            req = RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw, parsed)
            if req.headers.get("content-type", "").startswith("multipart/form-data"):
                req.form, req.files = _multipart(req.headers["content-type"], raw)
            server._record(req)
            return req

        def _authorised(self) -> bool:
            if server.api_key is None or self.headers.get("Authorization") == f"Bearer {server.api_key}":
                return True
            self._send_error(401, "invalid API key", "invalid_request_error", code="invalid_api_key")
            return False

        def _send(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None,
                  length: int | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data) if length is None else length))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

        def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(obj).encode(), "application/json", headers)

        def _send_error(self, status: int, message: str, kind: str, code: str | None = None,
                        param: str | None = None, headers: dict[str, str] | None = None) -> None:
            err = {"message": message, "type": kind, "param": param, "code": code}
            self._send_json(status, {"error": err}, headers)

        def _answer(self, reply: Reply, request: dict[str, Any]) -> None:
            if isinstance(reply, HTTPError):
                headers = {}
                if reply.retry_after is not None:
                    headers["Retry-After"] = f"{reply.retry_after:g}"
                if reply.retry_after_ms is not None:
                    headers["retry-after-ms"] = str(reply.retry_after_ms)
                kind = reply.error_type or ("rate_limit_error" if reply.status == 429 else
                                            "server_error" if reply.status >= 500 else "invalid_request_error")
                self._send_error(reply.status, reply.message or f"scripted HTTP {reply.status}", kind,
                                 code=reply.code, headers=headers)
            elif isinstance(reply, Body):
                self._send_json(reply.status, reply.json, reply.headers)
            elif isinstance(reply, InvalidBody):
                self._send(reply.status, reply.data, reply.content_type)
            elif isinstance(reply, Disconnect):
                self._send(200, reply.sent, "application/json", length=max(reply.announced, len(reply.sent) + 1))
                self.close_connection = True
            elif isinstance(reply, (Message, ToolCalls)):
                self._send_json(200, _completion(reply, request, len(server.requests)))
            else:
                self._send_error(500, f"scripted server: unknown reply {reply!r}", "server_error")

    return Handler


def _completion(reply: Message | ToolCalls, request: dict[str, Any], n: int) -> dict[str, Any]:
    """The chat.completion object for a scripted message or tool-call turn."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    out_text = reply.content or ""
    if isinstance(reply, Message):
        message["refusal"] = reply.refusal
        out_text += reply.refusal or ""
    else:
        message["tool_calls"] = [
            {"id": c.id or f"call_{n}_{i}", "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for i, c in enumerate(reply.calls)
        ]
        out_text += "".join(c.name + c.arguments for c in reply.calls)
    prompt = _tokens(json.dumps(request.get("messages", [])))
    completion = _tokens(out_text)
    usage = reply.usage or {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return {
        "id": f"chatcmpl-scripted-{n}",
        "object": "chat.completion",
        "created": 1_700_000_000 + n,
        "model": str(request.get("model")),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}],
        "usage": usage,
    }


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """A started ScriptedOpenAI with an empty script; push entries with `.push(...)`."""
    with ScriptedOpenAI() as server:
        yield server
