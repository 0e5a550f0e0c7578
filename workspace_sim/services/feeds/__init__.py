"""Feeds: news and blog sources, their articles, mailing lists, and the digests and newsletters published from them.

Modelled on a feed reader with a newsletter tool (Feedly, Inoreader, a team's weekly digest as people run it). A
feed is a source (a news wire, a vendor blog, an internal newsletter) with a category; an article has a title, its
feed, a category, a published time, a summary, its content and tags. Articles are searched by words, feed, tag,
category and a time range, newest first. Publishing a digest or newsletter records what was published to whom
(people, or a mailing list expanded to its members) and mails it through `send_email` when the workspace has mail.
Article text is written by others: renderings fence it as data, not instructions.
"""

from __future__ import annotations

from .records import ARTICLES, FEEDS, LISTS, PUBLICATIONS, SERVICE, Article, Feed, MailingList, Publication
from .tools import list_feeds, search_news, read_news_article, list_mailing_lists, list_publications, publish_digest

SERVICE.add_tools(
    list_feeds, search_news, read_news_article, list_mailing_lists, list_publications, publish_digest,
)

__all__ = ["SERVICE", "FEEDS", "ARTICLES", "LISTS", "PUBLICATIONS", "Feed", "Article", "MailingList", "Publication"]
