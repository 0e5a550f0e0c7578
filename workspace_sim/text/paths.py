"""Virtual path handling: every path an agent gives is resolved inside the workspace root or refused."""

from __future__ import annotations

import posixpath
import re
import unicodedata

from workspace_sim.core.errors import InvalidArgument

MAX_PATH = 1024
_ENCODED = re.compile(r"%(2e|2f|5c|00)", re.I)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def resolve(path: object, what: str = "path") -> str:
    """Normalise an agent-supplied path to an absolute virtual path like '/docs/a.txt'.

    Relative paths are taken from the root. Refused with a clear error: non-strings, empty paths, paths
    longer than MAX_PATH (1,024 characters, as given or once made absolute),
    NUL and control characters, lone surrogates, backslashes, percent-encoded separators or dots,
    look-alike (full-width) separators, and any '..' that would climb above the root.
    """
    if not isinstance(path, str):
        raise InvalidArgument(f"{what} must be a string, got {type(path).__name__}")
    if not path:
        raise InvalidArgument(f"{what} is empty")
    if len(path) > MAX_PATH:
        raise InvalidArgument(f"{what} is longer than {MAX_PATH} characters")
    if "\x00" in path:
        raise InvalidArgument(f"{what} contains a NUL byte")
    if _CONTROL.search(path):
        raise InvalidArgument(f"{what} contains control characters")
    if not path.isascii():
        _check_unicode(path, what)
    if "\\" in path:
        raise InvalidArgument(f"{what} contains a backslash; use '/' as the separator")
    if _ENCODED.search(path):
        raise InvalidArgument(f"{what} contains a percent-encoded separator or dot; give the plain path")
    if path.startswith("~"):
        raise InvalidArgument(f"{what} refers to a home folder; paths are relative to the workspace root '/'")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise InvalidArgument(f"{what} {path!r} escapes the workspace root")
            parts.pop()
            continue
        parts.append(part)
    out = "/" + "/".join(parts)
    if len(out) > MAX_PATH:  # a relative path gains its leading '/'
        raise InvalidArgument(f"{what} is longer than {MAX_PATH} characters once made absolute")
    return out


def check_moved(source: str, destination: str, longest: int) -> None:
    """Refuse moving `source` (whose longest path inside, itself included, has `longest` characters) to
    `destination` when a path would end up past MAX_PATH, naming the longest one it would make."""
    after = len(destination) + longest - len(source)
    if after > MAX_PATH:
        raise InvalidArgument(f"moving {source} to {destination} would make paths of up to {after:,} characters; "
                              f"paths are at most {MAX_PATH} characters: choose a shorter destination")


def _check_unicode(path: str, what: str) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{what} is not valid UTF-8 (lone surrogate)") from None
    folded = unicodedata.normalize("NFKC", path)
    if folded != unicodedata.normalize("NFC", path) and (folded.count("/") != path.count("/") or ".." in folded):
        raise InvalidArgument(f"{what} uses look-alike Unicode separators or dots; give the plain path")


def parent(path: str) -> str:
    """The folder holding `path` ('/' for top-level entries)."""
    return posixpath.dirname(path) or "/"


def is_under(path: str, folder: str) -> bool:
    """Whether `path` is `folder` itself or lies inside it."""
    return folder == "/" or path == folder or path.startswith(folder.rstrip("/") + "/")
