"""Ranking for the offline web: BM25 over folded word tokens, deterministic to the last tie."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Sequence

from workspace_sim.text.folding import fold

K1, B, TITLE_WEIGHT = 1.2, 0.75, 3
_WORD = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    """The folded words of `text` (letters and digits; accents and case folded)."""
    return _WORD.findall(fold(text))


def bm25_rank(query: Sequence[str], docs: Iterable[tuple[str, list[str]]]) -> list[tuple[str, float]]:
    """(key, score) of the documents holding at least one query term, best first, ties broken by key; `docs` are
    (key, tokens). Scores are Okapi BM25 (k1 1.2, b 0.75) with the non-negative idf of Lucene."""
    rows = [(key, Counter(toks), len(toks)) for key, toks in docs]
    n = len(rows)
    if not n or not query:
        return []
    avg = sum(r[2] for r in rows) / n or 1.0
    terms = list(dict.fromkeys(query))
    df = {t: sum(1 for _, tf, _ in rows if t in tf) for t in terms}
    out = []
    for key, tf, length in rows:
        score = 0.0
        for t in terms:
            f = tf.get(t, 0)
            if f:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avg))
        if score > 0:
            out.append((key, score))
    out.sort(key=lambda x: (-round(x[1], 9), x[0]))
    return out
