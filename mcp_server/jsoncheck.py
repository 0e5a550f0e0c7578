"""Checks on JSON that came from a client: parse it whole, and refuse what later layers cannot handle.

`json.loads` accepts documents that break the server further in: strings holding a lone UTF-16
surrogate (`"\\ud800"`) cannot be written to a UTF-8 record, `NaN` and `Infinity` are not JSON and
would be written into records as non-standard JSON, and deep nesting exhausts the recursion limit
of every walker after the parser. `parse_client_json` turns each such document into one
`JsonProblem` naming what is wrong and where, so transports answer it instead of failing. It is
the one decoding path of every transport (stdio, both HTTP entries, the admin API) and of the
direct runner's tool arguments (`decode_arguments`). `safe_dumps` is the other side: record
writers use it so that a value that still cannot be encoded is written escaped, never lost.
"""

from __future__ import annotations

import json
import re
from typing import Any

from workspace_sim.text.jsontext import encodable, safe_dumps

__all__ = ["MAX_DEPTH", "JsonProblem", "decode_arguments", "envelope_problem", "parse_client_json", "refuse_bad_json",
           "refuse_bad_request", "request_id", "safe_dumps"]

MAX_DEPTH = 64
"""Deepest nesting of objects and arrays accepted from a client (tool arguments need a handful)."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class JsonProblem(ValueError):
    """Client JSON that is refused; `parse` is True when the text is not JSON at all (JSON-RPC -32700)."""

    def __init__(self, message: str, parse: bool = True, value: Any = None) -> None:
        super().__init__(message)
        self.message, self.parse, self.value = message, parse, value


def parse_client_json(raw: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """Parse client JSON; raise JsonProblem for invalid UTF-8 or JSON, a lone surrogate, or nesting past `max_depth`.

    The error's `value` is the parsed document when parsing itself succeeded (so a JSON-RPC
    transport can still answer with the request's id).
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        try:  # the envelope may still be readable: keep it, so the refusal can carry the request's id
            envelope = json.loads(data.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            envelope = None
        raise JsonProblem(f"not UTF-8 text ({e.reason} at byte {e.start})", parse=envelope is None,
                          value=envelope) from None
    try:
        value = json.loads(text, parse_constant=_Constant)
    except json.JSONDecodeError as e:
        raise JsonProblem(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise JsonProblem(f"nested deeper than {max_depth} levels") from None
    except ValueError as e:  # e.g. an integer longer than Python converts
        raise JsonProblem(f"not acceptable JSON: {e}") from None
    brackets = data.count(b"[") + data.count(b"{")
    surrogates = _SURROGATE_ESCAPE.search(data) is not None
    if brackets > max_depth or surrogates or b"NaN" in data or b"Infinity" in data:
        problem = _walk(value, max_depth, surrogates)
        if problem is not None:
            raise JsonProblem(problem, parse=False, value=value)
    return value


class _Constant:
    """What the parser makes of NaN, Infinity and -Infinity, so the walk can name where they are."""

    def __init__(self, name: str) -> None:
        self.name = name


def decode_arguments(text: str) -> Any:
    """Tool arguments a policy sent as JSON text, through the same checks as a transport's body
    (empty text is `{}`); raises JsonProblem naming what is wrong."""
    return parse_client_json(text) if text.strip() else {}


def request_id(msg: Any) -> str | int | None:
    """The JSON-RPC id of a parsed message when it is one a reply may echo (a string that is valid Unicode,
    or an integer other than a bool); None otherwise."""
    rid = msg.get("id") if isinstance(msg, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return None
    if isinstance(rid, str) and not encodable(rid):
        return None
    return rid


def _walk(value: Any, max_depth: int, surrogates: bool) -> str | None:
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 0, ())]
    while stack:
        v, depth, where = stack.pop()
        if isinstance(v, _Constant):
            return f"{v.name} at {_path(where)} is not a JSON number (JSON has no NaN or Infinity)"
        if isinstance(v, str):
            if surrogates and not encodable(v):
                return f"a string at {_path(where)} holds a lone UTF-16 surrogate (strings must be valid Unicode)"
        elif isinstance(v, (dict, list)):
            if depth >= max_depth:
                return f"nested deeper than {max_depth} levels at {_path(where)}"
            items = v.items() if isinstance(v, dict) else enumerate(v)
            for k, x in items:
                if surrogates and isinstance(k, str) and not encodable(k):
                    return f"a key at {_path(where)} holds a lone UTF-16 surrogate (strings must be valid Unicode)"
                stack.append((x, depth + 1, (*where, k)))
    return None


def _path(where: tuple[Any, ...]) -> str:
    out = "$"
    for k in where[:12]:
        out += f"[{k}]" if isinstance(k, int) else f".{k[:40]}"
    return out + (".…" if len(where) > 12 else "")


PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def envelope_problem(msg: Any) -> tuple[int, str] | None:
    """What is wrong with a parsed JSON-RPC request's envelope, as (JSON-RPC code, message), or None.

    A request (an object with a `method`) whose `jsonrpc` is not "2.0" is -32600; one whose `params` is not an
    object (a list: parameters by position, which MCP does not take; a string, a number) is -32602. Both are
    answered here with the request's id: the SDK would answer -32600 with a null id for either. Anything else
    (a response, a batch, a request without `method`) is left to the SDK.
    """
    if not isinstance(msg, dict) or "method" not in msg:
        return None
    version = msg.get("jsonrpc")
    if version != "2.0":
        shown = "it is missing" if "jsonrpc" not in msg else f"got {json.dumps(version, ensure_ascii=True)[:40]}"
        return INVALID_REQUEST, f'invalid request: "jsonrpc" must be "2.0" ({shown})'
    if not isinstance(msg["method"], str):
        return INVALID_REQUEST, f"invalid request: method must be a string, got {json.dumps(msg['method'])[:40]}"
    params = msg.get("params")
    if params is not None and not isinstance(params, dict):
        kind = "a list (parameters by position)" if isinstance(params, list) else f"a {_JSON_KIND.get(type(params), 'value')}"
        return INVALID_PARAMS, f"invalid params: params must be an object of named parameters, got {kind}"
    return None


_JSON_KIND = {str: "string", int: "number", float: "number", bool: "boolean"}


async def _answer_400(rid: str | int | None, code: int, message: str, send: Any) -> None:
    answer = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    data = json.dumps(answer, separators=(",", ":")).encode()
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-length", str(len(data)).encode()), (b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})


async def refuse_bad_request(msg: Any, send: Any) -> bool:
    """Answer an HTTP JSON-RPC request whose envelope `envelope_problem` refuses (HTTP 400, the JSON-RPC error
    with the request's id) and return True; False when the envelope passes."""
    problem = envelope_problem(msg)
    if problem is None:
        return False
    await _answer_400(request_id(msg), *problem, send)
    return True


async def refuse_bad_json(body: bytes, send: Any) -> bool:
    """Answer an HTTP JSON-RPC request whose body `parse_client_json` refuses (HTTP 400, the JSON-RPC
    error with the request's id where it can be read) and return True; False when the body passes.

    Every HTTP POST to an episode goes through this before the fast path or the SDK sees it, so the
    SDK's own `json.loads` never meets a lone surrogate, NaN or a document nested too deep.
    """
    try:
        parse_client_json(body)
    except JsonProblem as e:
        rid = request_id(e.value)
        code = PARSE_ERROR if rid is None and e.parse else INVALID_REQUEST
        await _answer_400(rid, code, f"request refused: {e.message}", send)
        return True
    return False
