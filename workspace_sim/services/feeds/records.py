"""The records of feeds: sources, articles, mailing lists, and what was published to whom."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator

from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.text.validation import record_id, short_name, tag_list

FeedKind = Literal["news", "blog", "newsletter", "wire", "internal"]
PublicationKind = Literal["digest", "newsletter"]
MAX_NAME, MAX_TITLE, MAX_SUMMARY, MAX_CONTENT, MAX_TAGS, MAX_MEMBERS = 120, 300, 2_000, 100_000, 30, 500


class Feed(Record):
    """A source of articles: a name, what kind it is, its category and address."""

    id: str
    name: str
    kind: FeedKind = "news"
    category: str = ""
    url: str = ""
    description: str = Field("", max_length=MAX_SUMMARY)

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

    id: str
    feed: str
    title: str
    category: str = ""
    published: datetime | None = None
    author: str = ""
    summary: str = Field("", max_length=MAX_SUMMARY)
    content: str = Field("", max_length=MAX_CONTENT)
    tags: list[str] = Field(default_factory=list)
    url: str = ""

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

    id: str
    name: str
    description: str = Field("", max_length=MAX_SUMMARY)
    members: list[str] = Field(default_factory=list, max_length=MAX_MEMBERS)

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

    id: str
    kind: PublicationKind = "digest"
    title: str
    body: str = Field("", max_length=MAX_CONTENT)
    articles: list[str] = Field(default_factory=list)
    lists: list[str] = Field(default_factory=list)
    recipients: list[str] = Field(default_factory=list)
    message_id: str | None = None
    published: datetime | None = None
    by: str | None = None
