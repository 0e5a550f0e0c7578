"""Folding text for matching, the one rule every search and name lookup shares."""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """Text folded for matching: accents removed and case folded ('José' matches 'jose')."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
