"""JSON text that always encodes: what record writers use so that no value loses a record.

`json.dumps` fails on a string holding a lone UTF-16 surrogate once the text is encoded to UTF-8,
and writes NaN and Infinity as non-standard JSON that strict readers refuse. `safe_dumps` writes
such a string with the surrogate escaped as text and the non-finite numbers as strings, so every
line is standard UTF-8 JSON and nothing is dropped.
"""

from __future__ import annotations

import json
from typing import Any

def safe_dumps(obj: Any, **kw: Any) -> str:
    """`json.dumps(obj, ensure_ascii=False, **kw)` that never fails on text or numbers: a string with a
    lone surrogate is written with it escaped as the text `\\udXXX`, NaN and Infinity as the strings
    "NaN", "Infinity" and "-Infinity" (standard JSON either way)."""
    kw.setdefault("ensure_ascii", False)
    try:
        text = json.dumps(obj, allow_nan=False, **kw)
        text.encode("utf-8")
        return text
    except (ValueError, UnicodeEncodeError):
        return json.dumps(_sanitized(obj), allow_nan=False, **kw)


def _sanitized(v: Any) -> Any:
    if isinstance(v, str):
        return v if encodable(v) else v.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if isinstance(v, dict):
        return {_sanitized(k) if isinstance(k, str) else k: _sanitized(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_sanitized(x) for x in v]
    return v


def encodable(s: str) -> bool:
    """Whether `s` is valid Unicode (no lone UTF-16 surrogate), i.e. encodes as UTF-8."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
