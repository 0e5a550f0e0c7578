"""The records of feeds: sources, articles, mailing lists, and what was published to whom.

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`FEEDS`, `ARTICLES`, `LISTS`, `PUBLICATIONS`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, field_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.validation import record_id, short_name, tag_list

FeedKind = Literal["news", "blog", "newsletter", "wire", "internal"]
PublicationKind = Literal["digest", "newsletter"]
MAX_NAME, MAX_TITLE, MAX_SUMMARY, MAX_CONTENT, MAX_TAGS, MAX_MEMBERS = 120, 300, 2_000, 100_000, 30, 500


class Feed(Record):
    """A source of articles: a name, what kind it is, its category and address."""

    id: str = Field(description="The feed's id.")
    name: str = Field(description="The feed's name.")
    kind: FeedKind = Field("news", description="What kind of source it is: news, blog, newsletter, wire or internal.")
    category: str = Field("", description="The feed's topic, e.g. security or markets.")
    url: str = Field("", description="The feed's address.")
    description: str = Field("", max_length=MAX_SUMMARY, description="What the feed covers.")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "feed id", "feed-techwire")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return short_name(v, "feed name", MAX_NAME)


class Article(Record):
    """One article of a feed: title, category, published time, summary, content, tags and author."""

    id: str = Field(description="The article's id.")
    feed: str = Field(description="The id of the feed it came from.")
    title: str = Field(description="The article's headline.")
    category: str = Field("", description="The article's topic.")
    published: datetime | None = Field(None, description="When the article was published.")
    author: str = Field("", description="Who wrote it.")
    summary: str = Field("", max_length=MAX_SUMMARY, description="A short summary of the article.")
    content: str = Field("", max_length=MAX_CONTENT, description="The article's full text.")
    tags: list[str] = Field(default_factory=list, description="Tags, unique ignoring case.")
    url: str = Field("", description="The article's address.")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "article id", "art-0001")

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        return short_name(v, "article title", MAX_TITLE)

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: list[str]) -> list[str]:
        return tag_list(v, "tags", limit=MAX_TAGS, each="tag")


class MailingList(Record):
    """A named list of people a digest can be published to (e.g. Engineering weekly)."""

    id: str = Field(description="The list's id.")
    name: str = Field(description="The list's name, e.g. Engineering weekly.")
    description: str = Field("", max_length=MAX_SUMMARY, description="Who the list is for.")
    members: list[str] = Field(default_factory=list, max_length=MAX_MEMBERS,
        description="The members' e-mail addresses.")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "mailing list id", "list-eng")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return short_name(v, "mailing list name", MAX_NAME)

    @field_validator("members", mode="before")
    @classmethod
    def _members(cls, v: object) -> object:
        if isinstance(v, list):
            return list(dict.fromkeys(normalize_email(x, "mailing list member") for x in v))
        return v


class Publication(Record):
    """A digest or newsletter as published: its text, the articles it carries, the lists and people it went to, the
    addresses it reached and the mail that carried it."""

    id: str = Field(description="The publication's id.")
    kind: PublicationKind = Field("digest", description="digest or newsletter.")
    title: str = Field(description="Its title (the mail's subject).")
    body: str = Field("", max_length=MAX_CONTENT, description="The text that was published.")
    articles: list[str] = Field(default_factory=list, description="The ids of the articles it carries.")
    lists: list[str] = Field(default_factory=list, description="The ids of the mailing lists it went to.")
    recipients: list[str] = Field(default_factory=list,
        description="Every address it reached: the lists' members and the people named, once each.")
    message_id: str | None = Field(None,
        description="The id of the mail message that carried it; None when it was not mailed.")
    published: datetime | None = Field(None, description="When it was published.")
    by: str | None = Field(None, description="The e-mail address of who published it.")


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Check each article names an existing feed and give it a published time (the workspace's now by default)."""
    feeds, articles = tables.get(FEEDS), tables.get(ARTICLES)
    if feeds is None or articles is None:
        return
    for key, a in list(articles.items()):
        assert isinstance(a, Article)
        if a.feed not in feeds:
            raise SpecError(f"data.feeds.articles[{key}].feed",
                            f"feed {a.feed!r} does not exist; feeds: {', '.join(sorted(feeds)) or 'none'}")
        if a.published is None:
            articles[key] = a.evolve(published=config.now)
    for key, p in list(tables.get(PUBLICATIONS, {}).items()):
        missing = [x for x in p.articles if x not in articles]  # type: ignore[attr-defined]
        if missing:
            raise SpecError(f"data.feeds.publications[{key}].articles", f"unknown articles {missing}")


SERVICE = Service("feeds", {"feeds": Feed, "articles": Article, "lists": MailingList, "publications": Publication},
                  title="Feeds", prepare=_prepare)
FEEDS = SERVICE.table("feeds")
ARTICLES = SERVICE.table("articles")
LISTS = SERVICE.table("lists")
PUBLICATIONS = SERVICE.table("publications")
