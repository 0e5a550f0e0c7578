"""Folding text for matching, the one rule every search and name lookup shares."""

from __future__ import annotations

import re
import unicodedata


def fold(text: str) -> str:
    """Text folded for matching: accents removed and case folded ('José' matches 'jose')."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


# Characters that show as nothing: format characters (zero-width space and joiners, the word joiner, the byte
# order mark, soft hyphen, bidirectional marks and overrides, tag characters), variation selectors, the combining
# grapheme joiner and the Hangul fillers. Text compared for meaning drops them ('s\u200bk' is 'sk').
INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]")


def drop_invisible(text: str) -> str:
    """`text` without the characters that show as nothing (`INVISIBLE`)."""
    return text if text.isascii() else INVISIBLE.sub("", text)
