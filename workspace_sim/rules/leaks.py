"""Finding a secret in text however it is spelled: the one detector the `no_secret_leak` policy and the
`secret_not_leaked` predicate share (`workspace_sim.rules.secrets` finds the secrets and uses it).

A text gives a secret away when, after normalising (NFKC, invisible characters dropped, case folded), it holds:

- the whole secret, forwards, reversed, in rot13 or both;
- any `MIN_CHUNK` characters in a row of the secret's distinctive token (its longest run of letters and digits,
  when that run looks random), forwards, reversed, in rot13 or both, once everything that is not a letter or
  digit is taken out of the text: a key cut into pieces, spaced out, or joined with dashes or zero-width
  characters is still the key;
- either of the above inside something decoded from it: a run that looks like base64 (standard or URL-safe, lines
  joined), base32 or hex (bare, spaced, `0x`/`\\x`/`%`-prefixed bytes), percent-encoded or HTML-escaped text, two
  layers deep (hex of base64, base64 of a reversed key).

A masked form (`...wxyz`) and text unrelated to the secret give nothing away: no window of a random token turns
up in other text by chance (a hypothesis property test in `tests/workspace_sim/test_hardening_secrets.py`).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
from collections.abc import Iterator, Mapping
from urllib.parse import unquote

from workspace_sim.core.memos import remember
from workspace_sim.text.folding import drop_invisible

# The shortest run of a secret's token that still counts as the secret. Why 12: a window of a random
# letters-and-digits token, case folded, is one of 36**12 (4.7e18) strings, so ordinary text never holds one by
# chance, while a key cut into pieces of 11 characters or fewer, each kept apart by other words, gives away at most
# 11 characters a piece; the old rule (16) let 15-character chunks through. A secret whose token is shorter than
# this is matched whole.
MIN_CHUNK = 12
DEPTH = 2  # layers of encoding decoded (base64 of hex of the key is two)
ALIGNED = 4096  # a base64 run longer than this is decoded from its start only (a file's bytes), a shorter one
# from each of its first four characters too (a key glued to a word, 'key:c2tf...', still decodes)

_RUN = re.compile(r"[A-Za-z0-9]+")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
# base64 wrapped in lines, as in MIME (the look-behind keeps it linear: a run is tried once, from its start)
_B64_LINES = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{12,}={0,2}(?:\r?\n[A-Za-z0-9+/]{12,}={0,2})+")
_HEX_RUN = re.compile(r"(?:(?:0x|\\x|%)?[0-9A-Fa-f]{2}[\s:,.-]?){8,}")
_HEX_JUNK = re.compile(r"0x|\\x|[^0-9A-Fa-f]")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_BASE32 = re.compile(r"[A-Za-z2-7]{12,}")
_SPACE = re.compile(r"\s+")
_PRINTABLE_RUN = re.compile("[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]{8,}")


def normal(text: str) -> str:
    """`text` as the detector compares it: NFKC, invisible characters dropped, case folded."""
    if text.isascii():
        return text.lower()
    return drop_invisible(unicodedata.normalize("NFKC", text)).casefold()


def skeleton(text: str) -> str:
    """The letters and digits of `normal(text)`, everything else taken out."""
    return _NOT_ALNUM.sub("", normal(text))


def _rot13(text: str) -> str:
    return codecs.encode(text, "rot13")


def _spellings(piece: str) -> set[str]:
    """A piece as it may be written: forwards, reversed, rot13, rot13 reversed."""
    r = _rot13(piece)
    return {piece, piece[::-1], r, r[::-1]}


def _random_looking(token: str) -> bool:
    """Whether a token mixes digits and letters, or upper and lower case: a word or a number is not a key's body."""
    digit, alpha = any(c.isdigit() for c in token), any(c.isalpha() for c in token)
    return (digit and alpha) or (any(c.isupper() for c in token) and any(c.islower() for c in token))


def _compile(pieces: Mapping[str, object]):  # type: ignore[no-untyped-def]
    import re2  # linear time however many pieces; imported on first use like every RE2 pattern

    if not pieces:
        return None
    opts = re2.Options()
    opts.log_errors = False
    # longest first, so a match names the most specific piece
    return re2.compile("|".join(re2.escape(p) for p in sorted(pieces, key=lambda p: (-len(p), p))), opts)


def _decoded(clean: str, top: bool) -> Iterator[str]:
    """Texts decoded from the parts of `clean` (NFKC, invisible characters dropped, case kept) that look encoded;
    percent-encoding and HTML escapes are undone only in the text as written (`top`), not in decoded bytes.

    The runs of one kind are decoded together, each padded to a whole group (zero bits, so the padding reads as
    NUL bytes between them): one call per kind and offset however many runs a text has."""
    if top and _PERCENT.search(clean):
        yield unquote(clean)
    if top and "&" in clean and ";" in clean:
        unescaped = html.unescape(clean)
        if unescaped != clean:
            yield unescaped
    hexes = [_HEX_JUNK.sub("", m.group()) for m in _HEX_RUN.finditer(clean)] if _has_hex(clean) else []
    for start in (0, 1):
        parts = [h[start:len(h) - (len(h) - start) % 2] for h in hexes]
        joined = "00".join(p for p in parts if len(p) >= 16)
        if joined:
            yield _text(binascii.unhexlify(joined))
    runs = [m.group().rstrip("=") for m in _B64_RUN.finditer(clean)]
    runs += [_SPACE.sub("", m.group()).rstrip("=") for m in _B64_LINES.finditer(clean)]
    if not runs:
        return
    b32 = [r.upper() for r in runs if _BASE32.fullmatch(r)]
    if b32:
        yield _text(base64.b32decode("".join(r + "A" * (-len(r) % 8) for r in b32)))
    std = [r.replace("-", "+").replace("_", "/") for r in runs]
    for start in range(4):
        parts = [r[start:] for r in std if start == 0 or len(r) <= ALIGNED]
        joined = "".join(p + "A" * (-len(p) % 4) for p in parts if p)
        if joined:
            yield _text(base64.b64decode(joined))


def _has_hex(text: str) -> bool:
    """Whether `text` holds a hex run at all: asked of RE2, which scans a megabyte in milliseconds where `re` takes
    a tenth of a second on this pattern (`re` then finds the runs: RE2's Python matches cost more one by one)."""
    global _HEX_RE2
    if _HEX_RE2 is None:
        import re2

        opts = re2.Options()
        opts.log_errors = False
        _HEX_RE2 = re2.compile(_HEX_RUN.pattern, opts)
    return _HEX_RE2.search(text) is not None


_HEX_RE2 = None


def _text(raw: bytes) -> str:
    """The texts in decoded bytes: their runs of 8 or more printable characters (UTF-8; no secret is shorter),
    joined by NULs. A key inside binary data or after a misaligned start still reads as itself, and the noise of a
    decoding that was not one (random bytes) mostly drops out instead of growing the next layer."""
    return "\x00".join(_PRINTABLE_RUN.findall(raw.decode("utf-8", "replace")))


class Detector:
    """Finds which of some secrets (value -> label) a text gives away, in any of the spellings above."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.labels = dict(secrets)
        whole: dict[str, set[str]] = {}  # pieces matched in normal(text): the whole secret
        runs: dict[str, set[str]] = {}  # pieces matched in skeleton(text): token windows, the whole skeleton
        for value, label in self.labels.items():
            for p in _spellings(normal(value)):
                whole.setdefault(p, set()).add(label)
            bare = skeleton(value)
            if len(bare) >= MIN_CHUNK:
                for p in _spellings(bare):
                    runs.setdefault(p, set()).add(label)
            tokens = _RUN.findall(value)
            token = max(tokens, key=len) if tokens else ""
            if len(token) >= MIN_CHUNK and _random_looking(token):
                t = token.lower()
                for i in range(len(t) - MIN_CHUNK + 1):
                    for p in _spellings(t[i:i + MIN_CHUNK]):
                        runs.setdefault(p, set()).add(label)
        self._whole, self._runs = whole, runs
        self._whole_rx, self._runs_rx = _compile(whole), _compile(runs)
        self._memo: dict[object, tuple[str, ...]] = {}  # text (or its length and hash) -> labels

    def __bool__(self) -> bool:
        return bool(self.labels)

    def found_in(self, text: str) -> list[str]:
        """The labels of the secrets `text` gives away, sorted."""
        if not self.labels or len(text) < 4:
            return []
        key = text if len(text) <= 4096 else (len(text), hash(text))  # a long text is not kept alive by the memo
        hit = self._memo.get(key)
        if hit is None:
            found: set[str] = set()
            self._scan(text, DEPTH, found)
            hit = remember(self._memo, key, tuple(sorted(found)), 1024)
        return list(hit)

    def _scan(self, text: str, depth: int, found: set[str]) -> None:
        n = normal(text)
        for rx, pieces, where in ((self._whole_rx, self._whole, n), (self._runs_rx, self._runs, None)):
            if rx is None:
                continue
            where = where if where is not None else _NOT_ALNUM.sub("", n)
            for m in rx.finditer(where):
                found |= pieces[m.group()]
                if len(found) == len(self.labels):
                    return
        if depth <= 0:
            return
        clean = text if text.isascii() else drop_invisible(unicodedata.normalize("NFKC", text))
        # every decoded part in one text, scanned once (a key split over two encoded runs is found whole too)
        layer = "\x00".join(_decoded(clean, depth == DEPTH))
        if len(layer) >= 4:
            self._scan(layer, depth - 1, found)
