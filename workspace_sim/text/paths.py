"""Virtual path handling: every path an agent gives is resolved inside the workspace root or refused.

A name may not be made (written, created, moved to) with a character that does not show as itself in a listing:
a control character (C0, DEL, C1 such as U+0085), a line or paragraph separator (U+2028, U+2029), a format
character (zero-width characters, bidirectional marks, overrides and isolates U+202A-U+202E, U+2066-U+2069), nor
as the NFC twin of a name already there ('cafe' + U+0301 beside 'caf' + U+00E9). Names a loaded world already
holds are kept, and every listing shows them escaped (`shown`: '\\u2028'); a path given with those escapes is read
back as the name (`resolve`), so what a listing shows can be passed back as it is.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata

from workspace_sim.core.errors import InvalidArgument

MAX_PATH = 1024
_ENCODED = re.compile(r"%(2e|2f|5c|00)", re.I)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
UNSHOWN = frozenset({"Cc", "Cf", "Zl", "Zp"})  # categories a name may not be made with: controls, format, separators
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def resolve(path: object, what: str = "path", escapes: bool = True) -> str:
    """Normalise an agent-supplied path to an absolute virtual path like '/docs/a.txt'.

    Relative paths are taken from the root. Refused with a clear error: non-strings, empty paths, paths
    longer than MAX_PATH (1,024 characters, as given or once made absolute),
    NUL and control characters, lone surrogates, backslashes, percent-encoded separators or dots,
    look-alike (full-width) separators, and any '..' that would climb above the root. With `escapes` (an
    agent's path), the escapes a listing shows (`shown`: '\\u2028') are read back as the characters they stand for;
    a sandbox's own file names are read as they are (`escapes=False`).
    """
    if not isinstance(path, str):
        raise InvalidArgument(f"{what} must be a string, got {type(path).__name__}")
    if not path:
        raise InvalidArgument(f"{what} is empty")
    if escapes and "\\" in path:
        path = _ESCAPE.sub(_unescape, path)
    if len(path) > MAX_PATH:
        raise InvalidArgument(f"{what} is longer than {MAX_PATH} characters")
    if "\x00" in path:
        raise InvalidArgument(f"{what} contains a NUL byte")
    bad = _CONTROL.search(path)
    if bad:
        raise InvalidArgument(f"{what} contains control characters (U+{ord(bad.group()):04X} at position "
                              f"{bad.start() + 1})")
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


def _unescape(m: "re.Match[str]") -> str:
    """The character an escape a listing shows stands for; any other escape is left (and refused as a backslash)."""
    c = chr(int(m.group(1) or m.group(2), 16))
    return c if _escaped(c) else m.group(0)


def _escaped(c: str) -> bool:
    """Whether a listing shows `c` escaped: a character of `UNSHOWN`, a lone surrogate, or a combining mark (the
    latter only in a name that is not NFC: `shown` decides)."""
    return c <= "\x1f" or "\x7f" <= c <= "\x9f" or (not c.isascii() and (
        unicodedata.category(c) in UNSHOWN or unicodedata.category(c) == "Cs" or unicodedata.combining(c) > 0))


def shown(path: str) -> str:
    """A path or name as listings show it: each character that would not show as itself (`UNSHOWN`) written as
    `\\uXXXX` (`\\UXXXXXXXX` past U+FFFF), and in a name that is not NFC its combining marks too, so NFC twins
    look different; `resolve` reads the escapes back. Plain names come back unchanged."""
    if path.isascii() and not _CONTROL.search(path):
        return path
    decomposed = not unicodedata.is_normalized("NFC", path)
    out = []
    for c in path:
        cat = unicodedata.category(c)
        if cat in UNSHOWN or cat == "Cs" or (decomposed and unicodedata.combining(c)):
            out.append(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    return "".join(out)


def name_problem(name: str) -> str | None:
    """Why a new file or folder name would not show as itself in a listing (the character, as U+XXXX with its
    Unicode name, and its position, counted from 1), or None when it is fine."""
    if name.isascii() and not _CONTROL.search(name):
        return None
    for i, c in enumerate(name, 1):
        if unicodedata.category(c) in UNSHOWN:
            label = unicodedata.name(c, "") or {"\x85": "NEXT LINE"}.get(c, "a control character")
            return f"contains U+{ord(c):04X} ({label}) at position {i}"
    return None


def check_new_name(path: str, what: str = "path") -> None:
    """Refuse making `path` (its last name) when `name_problem` finds a character that would not show as itself."""
    name = path.rsplit("/", 1)[-1]
    problem = name_problem(name)
    if problem:
        raise InvalidArgument(
            f"{what}: the name '{shown(name)}' {problem}; file and folder names may not hold control characters, "
            "line or paragraph separators, zero-width characters or bidirectional controls (a listing would not "
            "show them as they are): choose a name without it")


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
