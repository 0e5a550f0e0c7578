"""Checks on JSON that came from a client: parse it whole, and refuse what later layers cannot handle.

`json.loads` accepts documents that break the server further in: strings holding a lone UTF-16
surrogate (`"\\ud800"`) cannot be written to a UTF-8 record, and deep nesting exhausts the
recursion limit of every walker after the parser. `parse_client_json` turns each such document
into one `JsonProblem` naming what is wrong and where, so transports answer it instead of failing.
"""

from __future__ import annotations

import json
import re
from typing import Any

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
        raise JsonProblem(f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise JsonProblem(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise JsonProblem(f"nested deeper than {max_depth} levels") from None
    except ValueError as e:  # e.g. an integer longer than Python converts
        raise JsonProblem(f"not acceptable JSON: {e}") from None
    brackets = data.count(b"[") + data.count(b"{")
    surrogates = _SURROGATE_ESCAPE.search(data) is not None
    if brackets > max_depth or surrogates:
        problem = _walk(value, max_depth, surrogates)
        if problem is not None:
            raise JsonProblem(problem, parse=False, value=value)
    return value


def request_id(msg: Any) -> str | int | None:
    """The JSON-RPC id of a parsed message when it is one a reply may echo (a string that is valid Unicode,
    or an integer other than a bool); None otherwise."""
    rid = msg.get("id") if isinstance(msg, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return None
    if isinstance(rid, str) and not _encodable(rid):
        return None
    return rid


def _walk(value: Any, max_depth: int, surrogates: bool) -> str | None:
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 0, ())]
    while stack:
        v, depth, where = stack.pop()
        if isinstance(v, str):
            if surrogates and not _encodable(v):
                return f"a string at {_path(where)} holds a lone UTF-16 surrogate (strings must be valid Unicode)"
        elif isinstance(v, (dict, list)):
            if depth >= max_depth:
                return f"nested deeper than {max_depth} levels at {_path(where)}"
            items = v.items() if isinstance(v, dict) else enumerate(v)
            for k, x in items:
                if surrogates and isinstance(k, str) and not _encodable(k):
                    return f"a key at {_path(where)} holds a lone UTF-16 surrogate (strings must be valid Unicode)"
                stack.append((x, depth + 1, (*where, k)))
    return None


def _encodable(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _path(where: tuple[Any, ...]) -> str:
    out = "$"
    for k in where[:12]:
        out += f"[{k}]" if isinstance(k, int) else f".{k[:40]}"
    return out + (".…" if len(where) > 12 else "")
