"""Free-text search terms shared by services: words and "quoted phrases" that must all appear.

A query is split into bare words and double-quoted phrases; each is folded (accents removed, case
folded) with inner white space collapsed, and a record matches when every term is a substring of its
texts folded the same way. Services with a richer query language (tickets' `name:value` filters,
mail's search syntax) keep their own parsers.
"""

from __future__ import annotations

import re

from workspace_sim.core.errors import InvalidArgument
from workspace_sim.text.folding import fold

_TERM = re.compile(r'"([^"]*)"|(\S+)')


def query_terms(query: str, limit: int) -> list[str]:
    """The folded words and "quoted phrases" of `query`, empty ones dropped; InvalidArgument when the query is
    longer than `limit` characters or leaves a quote open."""
    if len(query) > limit:
        raise InvalidArgument(f"query is longer than {limit} characters; use a few words")
    if query.count('"') % 2:
        raise InvalidArgument(f"query {query!r} has an unbalanced quote; close every \" you open")
    terms = (" ".join(fold(m.group(1) if m.group(1) is not None else m.group(2)).split())
             for m in _TERM.finditer(query))
    return [t for t in terms if t]


def matches_all(terms: list[str], *texts: str) -> bool:
    """Whether every term of `query_terms` appears in `texts`, joined by spaces and folded the same way."""
    hay = " ".join(fold(" ".join(texts)).split())
    return all(t in hay for t in terms)
