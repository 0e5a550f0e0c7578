"""Knowledge base: spaces of articles with owners, review dates, versions and history.

Modelled on Confluence, Notion and Zendesk Guide. An article has a stable id (e.g. kb-0001abcd, or
whatever the initial data gives) that every result shows, so answers can cite it and predicates can
check the citation. Each content change saves the previous title, body and tags in `history` and
adds one to `version`; `expected_version` makes an edit fail with a Conflict when someone changed
the article since it was read. Status runs draft -> published -> archived (publish restores).
"""

from __future__ import annotations

from .records import (
    SERVICE, TICKETS, SPACES, ARTICLES, Status, MAX_TITLE, MAX_BODY, MAX_TAGS, MAX_RELATED, MAX_HISTORY, MAX_QUERY,
    MAX_TAG, TICKET_REF, WORD, article_tag, related_ref, unique_values, Space, ArticleVersion, Article,
)
from .tools import (
    article_json, list_spaces, search_articles, get_article, create_article,
    update_article, publish_article, archive_article, mark_article_reviewed
)

SERVICE.add_tools(
    list_spaces, search_articles, get_article, create_article, update_article, publish_article, archive_article,
    mark_article_reviewed,
)

__all__ = [
    "SERVICE", "TICKETS", "SPACES", "ARTICLES", "article_json", "list_spaces", "search_articles", "get_article",
    "create_article", "update_article", "publish_article", "archive_article", "mark_article_reviewed", "Status",
    "MAX_TITLE", "MAX_BODY", "MAX_TAGS", "MAX_RELATED", "MAX_HISTORY", "MAX_QUERY", "MAX_TAG", "TICKET_REF", "WORD",
    "article_tag", "related_ref", "unique_values", "Space", "ArticleVersion", "Article",
]
