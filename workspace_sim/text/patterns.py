"""Regular expressions and globs from agents and spec authors, matched in linear time with RE2.

A backtracking engine (Python's `re`, the `regex` package, `fnmatch`) can take seconds or hours on
a small hostile pattern such as `(a|aa)+$`, and no timeout bounds a whole call. RE2 matches in
time linear in the text and refuses patterns whose program would be too big, so every pattern a
tool or predicate accepts is compiled here. The syntax is Python's `re` syntax minus what needs
backtracking: no backreferences (`\\1`, `(?P=name)`), no lookahead or lookbehind (`(?=`, `(?!`,
`(?<=`, `(?<!`), no atomic groups or possessive quantifiers, no conditionals, repetition counts
at most 1000; `\\d`, `\\w`, `\\s` and `\\b` are ASCII-only and `\\Z` is written `\\z`. Such patterns
are answered with an `invalid_argument` naming the argument and what RE2 does not support.
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from typing import TYPE_CHECKING, Callable

from workspace_sim.core.errors import InvalidArgument

if TYPE_CHECKING:
    import re2  # imported where a pattern is compiled: a server's first answer compiles none

MAX_PATTERN_CHARS = 1000  # a regular expression or glob from a tool argument
RE2_MAX_MEM = 8 << 20  # bytes RE2 may use for one compiled program (its default); bigger is refused
_UNSUPPORTED = ("backreferences, lookahead/lookbehind, atomic groups, possessive quantifiers, conditionals "
                "and repetition counts over 1000")
_CACHE_SIZE = 256


class _Cache:
    """A small bounded LRU of compiled patterns (agent patterns vary; an unbounded cache would grow)."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[tuple, object] = OrderedDict()
        self._size = size
        self._lock = Lock()

    def get(self, key: tuple, make: Callable[[], object]) -> object:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            if len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


_COMPILED = _Cache(_CACHE_SIZE)


def _options(ignore_case: bool, literal: bool = False) -> "re2.Options":
    import re2

    opts = re2.Options()
    opts.log_errors = False  # RE2 would print every refused pattern on stderr
    opts.max_mem = RE2_MAX_MEM
    opts.case_sensitive = not ignore_case
    opts.literal = literal
    return opts


def _check_size(pattern: object, argument: str, limit: int) -> str:
    if not isinstance(pattern, str):
        raise InvalidArgument(f"{argument} must be a string, got {type(pattern).__name__}")
    if len(pattern) > limit:
        raise InvalidArgument(f"{argument} is {len(pattern):,} characters long; the limit is {limit:,}")
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{argument} is not valid UTF-8 (lone surrogate)") from None
    return pattern


def _explain(error: Exception) -> str:
    msg = error.args[0] if error.args else str(error)
    if isinstance(msg, bytes):
        msg = msg.decode("utf-8", "replace")
    return str(msg)


def compile_regex(pattern: str, argument: str = "pattern", ignore_case: bool = False, literal: bool = False,
                  limit: int = MAX_PATTERN_CHARS) -> "re2._Regexp":
    """Compile an untrusted regular expression (or, with `literal`, plain text) with RE2.

    Refused with `InvalidArgument` naming `argument`: a non-string, a pattern over `limit`
    characters, invalid syntax, syntax RE2 does not support (see the module docstring), or a
    program bigger than RE2's memory budget. Compiled patterns are cached (bounded).
    """
    _check_size(pattern, argument, limit)

    def make() -> object:
        import re2

        try:
            return re2.compile(pattern, _options(ignore_case, literal))
        except re2.error as e:
            why = _explain(e)
            hint = f"; RE2 syntax is used: no {_UNSUPPORTED}" if not literal else ""
            raise InvalidArgument(f"{argument} is not a supported regular expression: {why}{hint}") from None

    return _COMPILED.get(("rx", pattern, ignore_case, literal), make)  # type: ignore[return-value]


def glob_to_regex(pattern: str, paths: bool = False) -> str:
    """The RE2 regular expression (anchored, whole text) equivalent to a glob.

    `*` matches any run of characters and `?` any one character; `[abc]`, `[a-z]` and `[!abc]` are
    character classes as in `fnmatch`. With `paths`, `*` and `?` stay inside one path segment and
    `**` crosses segments (`a/**/b` also matches `a/b`).
    """
    import re2

    out: list[str] = []
    i, n = 0, len(pattern)
    any_run, any_one = ("[^/]*", "[^/]") if paths else (".*", ".")
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            if paths and j - i >= 2:
                if j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")
                    j += 1
                else:
                    out.append(".*")
            elif not out or out[-1] != any_run:  # runs of '*' are one '*'
                out.append(any_run)
            i = j
        elif c == "?":
            out.append(any_one)
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: a literal '['
                out.append(r"\[")
                i += 1
                continue
            body = pattern[i + 1:j]
            negate = body.startswith("!")
            if negate:
                body = body[1:]
            cls = "".join(("\\" + ch) if ch in "\\^[]&~" else ch for ch in body)
            out.append(f"[{'^' if negate else ''}{cls}]")
            i = j + 1
        else:
            out.append(re2.escape(c))
            i += 1
    return "(?s)" + "".join(out)


def compile_glob(pattern: str, argument: str = "pattern", paths: bool = False,
                 limit: int = MAX_PATTERN_CHARS) -> Callable[[str], bool]:
    """A whole-text matcher for an untrusted glob (see `glob_to_regex`), compiled with RE2.

    Refused with `InvalidArgument` naming `argument` when the glob is not a string, is over
    `limit` characters, or has an invalid character class (e.g. a reversed range `[z-a]`).
    """
    _check_size(pattern, argument, limit)

    def make() -> object:
        import re2

        try:
            return re2.compile(glob_to_regex(pattern, paths), _options(False)).fullmatch
        except re2.error as e:
            raise InvalidArgument(f"{argument} is not a valid glob pattern: {_explain(e)}") from None

    fullmatch = _COMPILED.get(("glob", pattern, paths), make)
    return lambda text: fullmatch(text) is not None  # type: ignore[operator]


def compile_spec_regex(pattern: str, where: str = "regex", ignore_case: bool = False) -> "re2._Regexp":
    """Compile a regular expression written by a spec author (predicates); errors raise ValueError.

    The same RE2 engine and syntax as agent patterns, so a predicate cannot be made slow by the
    text the agent writes; the length limit is the larger spec one (10,000 characters).
    """
    try:
        return compile_regex(pattern, where, ignore_case=ignore_case, limit=10_000)
    except InvalidArgument as e:
        raise ValueError(e.message) from None
