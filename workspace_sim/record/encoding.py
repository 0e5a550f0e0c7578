"""The text of a record line: compact JSON on one line, whatever the value holds.

Characters that `str.splitlines()` treats as line ends are escaped, so any line splitter is safe; a
lone surrogate is written escaped and NaN/Infinity as strings (`safe_dumps`), and a value JSON does
not know is written as its `str()`, so a line never fails to encode. Strings of 4,096 characters
or more go once per file into `blob` lines (`workspace_sim.core.blobs`).
"""

from __future__ import annotations

from typing import Any, Iterator

from workspace_sim.core.blobs import BLOB_MIN_CHARS, BlobStore
from workspace_sim.text.jsontext import safe_dumps

_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def dump_line(obj: Any) -> str:
    """One line's JSON text, without the newline (see the module docstring for what is escaped)."""
    text = safe_dumps(obj, separators=(",", ":"), default=str)
    if "\x85" in text or "\u2028" in text or "\u2029" in text:  # three scans beat a translate of every line
        text = text.translate(_LINE_BREAKS)
    return text


def plain(text: str) -> bool:
    """Whether a dumped line can be written as it is: it holds no key that looks like a reference (which the
    store escapes) and no string long enough to become a blob. Without an escaped quote in the text, every
    string is one piece between two quotes, so a short piece bounds every string; with one, the slow path
    decides (a false "no" only costs time)."""
    if '"$blob"' in text or '"$esc"' in text:
        return False
    if len(text) < BLOB_MIN_CHARS:
        return True
    return '\\"' not in text and max(map(len, text.split('"'))) < BLOB_MIN_CHARS


def line_texts(obj: dict[str, Any], blobs: BlobStore) -> Iterator[str]:
    """The file text of one line, newline included, preceded by the blob lines it needs that `blobs` has not
    written yet (one store per file)."""
    text = dump_line(obj)
    if plain(text):
        yield text + "\n"
        return
    ref, new = blobs.externalize(obj)
    for b in new:
        yield dump_line(b) + "\n"
    yield dump_line(ref) + "\n"
