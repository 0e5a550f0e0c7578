"""The records of the knowledge base: spaces and articles with their version history.

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`SPACES`, `ARTICLES`).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.validation import record_id, short_name
from workspace_sim.text.validation import tag as valid_tag


Status = Literal["draft", "published", "archived"]
MAX_TITLE, MAX_BODY, MAX_TAGS, MAX_RELATED, MAX_HISTORY, MAX_QUERY = 200, 100_000, 30, 30, 50, 500
_SPACE = re.compile(r"^[A-Z][A-Z0-9]{1,9}$")
MAX_TAG = 50
TICKET_REF = re.compile(r"^(?:[A-Z][A-Z0-9]{1,9}-|#)[1-9][0-9]{0,8}$")
_URL = re.compile(r"^https?://[^\s/$.?#][^\s]{0,490}$")
WORD = re.compile(r"[\w#+.-]+")


def _space_key(v: str) -> str:
    if not _SPACE.match(v):
        raise ValueError(f"space key {v!r} must be 2-10 capital letters or digits, first a letter (e.g. IT)")
    return v


def article_tag(v: object) -> str:
    """A tag: free text in any script (e.g. vpn, remote access, 远程办公), NFKC-normalized, spaces collapsed,
    lower-cased, at most 50 characters."""
    text = valid_tag(v, "tag").lower()
    if len(text) > MAX_TAG:
        raise ValueError(f"tag {v!r} is {len(text)} characters long; at most {MAX_TAG} are allowed")
    return text


def related_ref(v: object) -> str:
    text = v.strip() if isinstance(v, str) else ""
    if TICKET_REF.match(text.upper()):
        return text.upper()
    if _URL.match(text):
        return text
    raise ValueError(f"related item {v!r} must be a ticket key like OPS-12 or #4512, or a link starting with https://")


def unique_values(values: list[str], fn: Any, what: str, limit: int) -> list[str]:
    if len(values) > limit:
        raise ValueError(f"{what} has {len(values)} entries; at most {limit} are allowed")
    return list(dict.fromkeys(fn(v) for v in values))


class Space(Record):
    """A space (section) of the knowledge base."""

    key_field = "key"
    key: str = Field(description="The space's key: an upper-case letter then 1-9 letters or digits, e.g. HR.")
    name: str = Field("", description="The space's display name.")
    description: str = Field("", max_length=2_000, description="What the space is for.")

    @field_validator("key", mode="before")
    @classmethod
    def _key(cls, v: object) -> str:
        return _space_key(v.strip().upper() if isinstance(v, str) else "")

    @model_validator(mode="after")
    def _name(self) -> "Space":
        object.__setattr__(self, "name", " ".join(self.name.split()) or self.key)
        return self


class ArticleVersion(BaseModel):
    """An earlier version of an article's content as it was: who saved it, when, and their change note."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    version: int = Field(ge=1, description="The version number this content had (1 is the first).")
    title: str = Field(description="The article's title in that version.")
    body: str = Field(description="The article's body in that version.")
    tags: list[str] = Field(default_factory=list, description="The article's tags in that version.")
    editor: str | None = Field(None, description="The e-mail address of who saved that version; None when unknown.")
    saved: datetime | None = Field(None, description="When that version was saved.")
    note: str = Field("", description="The editor's change note for that version.")


class Article(Record):
    """A knowledge-base article; `history` holds earlier versions, oldest first, ending at `version - 1`."""

    id: str = Field(description="The article's id, unique in the knowledge base.")
    space: str = Field(description="The key of the space the article is in.")
    title: str = Field(description="The article's title.")
    body: str = Field("", max_length=MAX_BODY, description="The article's text (markdown).")
    tags: list[str] = Field(default_factory=list, description="Tags, unique ignoring case.")
    owner: str | None = Field(None,
        description="The e-mail address of the person responsible for the article; None for none.")
    status: Status = Field("published", description="draft (not yet visible to readers), published or archived.")
    created: datetime | None = Field(None, description="When the article was created.")
    updated: datetime | None = Field(None, description="When its content last changed.")
    last_reviewed: date | None = Field(None,
        description="The day its content was last confirmed as still right; None if never.")
    version: int = Field(1, ge=1, description="The current version number; earlier ones are in history.")
    editor: str | None = Field(None, description="The e-mail address of who saved the current version.")
    change_note: str = Field("", max_length=300, description="The editor's note on the current version.")
    history: list[ArticleVersion] = Field(default_factory=list, max_length=MAX_HISTORY,
        description="Earlier versions, oldest first, ending at version - 1.")
    related: list[str] = Field(default_factory=list,
        description="Related items: article ids, ticket keys (PROJ-12 or #12) or http(s) URLs.")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "article id", "kb-0001")

    @field_validator("space", mode="before")
    @classmethod
    def _space(cls, v: object) -> str:
        return _space_key(v.strip().upper() if isinstance(v, str) else "")

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        return short_name(v, "title", MAX_TITLE)

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, v: object) -> object:
        return unique_values(v, article_tag, "tags", MAX_TAGS) if isinstance(v, list) else v

    @field_validator("related", mode="before")
    @classmethod
    def _rel(cls, v: object) -> object:
        return unique_values(v, related_ref, "related", MAX_RELATED) if isinstance(v, list) else v

    @field_validator("owner", "editor", mode="before")
    @classmethod
    def _owner(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "owner/editor")

    @model_validator(mode="after")
    def _check(self) -> "Article":
        numbers = [h.version for h in self.history]
        if numbers and numbers != list(range(self.version - len(numbers), self.version)):
            raise ValueError(f"article {self.id}: history versions {numbers} must count up by one to version "
                             f"{self.version - 1} (the current version is {self.version})")
        return self


TICKETS = "tickets.tickets"  # another service's table (a service imports no other), read when it is there


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Create spaces that articles name but the data leaves out, and fill in missing times."""
    spaces, articles = tables.get(SPACES), tables.get(ARTICLES)
    if spaces is None or articles is None:
        return
    for key, a in list(articles.items()):
        if a.space not in spaces:
            spaces[a.space] = Space(key=a.space)
        created = a.created or config.now
        articles[key] = a.evolve(created=created, updated=a.updated or created)


SERVICE = Service("kb", {"spaces": Space, "articles": Article}, title="Knowledge base", prepare=_prepare)
SPACES, ARTICLES = SERVICE.table("spaces"), SERVICE.table("articles")
