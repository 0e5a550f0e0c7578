"""Web (offline): a deterministic web for each world, a search engine over its pages and a fetch tool.

The pages (vendor docs, regulations, news, forum answers, price lists) come from the spec's initial data; nothing
here opens a socket: a URL outside the world's web is an invalid argument. Search ranks pages by BM25 over their
title (counted three times) and text, ties broken by URL, and shows title, URL, snippet, site, kind, authority and
dates. Pages may disagree or be out of date: each has a published and an updated date and an authority (official,
reputable, community, unverified), so an agent can prefer the newer, more authoritative one. Page text is written
by others, and may carry planted instructions: renderings fence it as data, not instructions.

The folder: `records.py` holds the pages, the start-data check and `SERVICE` with its table handle; `tools.py` the
search and fetch tools; `search.py` the BM25 ranking they use (not a tool module).
"""

from __future__ import annotations

from .records import PAGES, SERVICE, AUTHORITY_RANK, Page
from .search import bm25_rank, tokens
from .tools import web_search, fetch_page

SERVICE.add_tools(
    web_search, fetch_page,
)

__all__ = ["SERVICE", "PAGES", "Page", "AUTHORITY_RANK", "bm25_rank", "tokens"]
