"""Large strings of JSON record lines stored once, by content hash, and read back transparently.

A 1 MB file written by an agent appears in a record several times: in the call's arguments, in the
diff (the new record), in the transcript. A writer passes each line through a `BlobStore`: every
string of at least `BLOB_MIN_CHARS` characters becomes `{"$blob": "<sha256>"}`, and the first time
a hash is seen the store returns a `{"type": "blob", "sha256": ..., "text": ...}` line to write
before the line that refers to it. Readers collect blob lines per file and `resolve` references.
An object that happens to look like a reference (`{"$blob": x}` or `{"$esc": x}` from an agent's
arguments) is written wrapped as `{"$esc": {...}}`, so no input can forge one.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

BLOB_MIN_CHARS = 4096
_REF, _ESC = "$blob", "$esc"


def sha256_text(text: str) -> str:
    """The hex sha256 of a string's UTF-8 bytes (lone surrogates kept, as JSON can hold them)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class BlobStore:
    """Replaces large strings by references; remembers which blobs a file already holds."""

    def __init__(self, min_chars: int = BLOB_MIN_CHARS) -> None:
        self.written: set[str] = set()
        self.min_chars = min_chars

    def externalize(self, obj: Any) -> tuple[Any, list[dict[str, str]]]:
        """`obj` with large strings replaced by references, and the blob lines to write before it."""
        new: list[dict[str, str]] = []
        return self._walk(obj, new), new

    def _walk(self, v: Any, new: list[dict[str, str]]) -> Any:
        if isinstance(v, str):
            if len(v) < self.min_chars:
                return v
            h = sha256_text(v)
            if h not in self.written:
                self.written.add(h)
                new.append({"type": "blob", "sha256": h, "text": v})
            return {_REF: h}
        if isinstance(v, dict):
            out = {k: self._walk(x, new) for k, x in v.items()}
            if len(v) == 1 and (_REF in v or _ESC in v):
                return {_ESC: out}
            return out
        if isinstance(v, (list, tuple)):
            return [self._walk(x, new) for x in v]
        return v


class BlobError(ValueError):
    """A blob line or reference that cannot be read back."""


def blob_entry(obj: Mapping[str, Any]) -> tuple[str, str]:
    """The (hash, text) of a blob line, checked: the text must hash to the name it is stored under."""
    h, text = obj.get("sha256"), obj.get("text")
    if not isinstance(h, str) or not isinstance(text, str):
        raise BlobError("a blob line needs a string sha256 and a string text")
    if sha256_text(text) != h:
        raise BlobError(f"blob {h[:16]}... does not match its text (sha256 {sha256_text(text)[:16]}...)")
    return h, text


def resolve(obj: Any, blobs: Mapping[str, str]) -> Any:
    """`obj` with every reference replaced by its blob's text and every escaped object unwrapped."""
    if isinstance(obj, dict):
        if len(obj) == 1:
            if _REF in obj:
                h = obj[_REF]
                if not isinstance(h, str) or h not in blobs:
                    raise BlobError(f"reference to blob {str(h)[:16]}... that no earlier line of the file holds")
                return blobs[h]
            if _ESC in obj and isinstance(obj[_ESC], dict):
                return {k: resolve(x, blobs) for k, x in obj[_ESC].items()}
        return {k: resolve(x, blobs) for k, x in obj.items()}
    if isinstance(obj, list):
        return [resolve(x, blobs) for x in obj]
    return obj


class BlobReader:
    """The reading side of a record file: remembers its blob lines and puts their text back.

    `take(obj, raw)` returns None for a blob line (kept for the lines after it) and otherwise the
    object with every blob reference resolved; `raw` is the line's text, so lines without a
    reference (the common case) are not walked. A bad blob or reference raises BlobError.
    """

    def __init__(self) -> None:
        self.blobs: dict[str, str] = {}

    def take(self, obj: Any, raw: str) -> Any:
        """The line's object with its references resolved, or None when the line was a blob."""
        if isinstance(obj, dict) and obj.get("type") == "blob":
            h, text = blob_entry(obj)
            self.blobs[h] = text
            return None
        return resolve(obj, self.blobs) if '"$' in raw else obj
