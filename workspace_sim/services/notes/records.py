"""The records of the notes service: notebooks (personal folders) and notes with their collaborators."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.text.validation import short_name, tag_list


Permission = Literal["view", "edit"]
Format = Literal["text", "markdown"]
MAX_TITLE, MAX_TEXT, MAX_NAME = 300, 50_000, 100
MAX_TAGS, MAX_COLLABORATORS, MAX_QUERY, MAX_MESSAGE, MAX_PARTICIPANTS = 50, 50, 500, 5_000, 100

# --- records --------------------------------------------------------------------------------------


class Notebook(Record):
    """A personal folder of notes; names are unique per owner (case-insensitive)."""

    id: str = Field(description="The notebook's id.")
    name: str = Field(description="The notebook's name, unique per owner ignoring case.")
    owner: str = Field("", description="The owner's e-mail address; empty in initial data means the workspace user.")
    created: datetime | None = Field(None, description="When the notebook was created.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return short_name(v, "notebook name", MAX_NAME)

    @field_validator("owner", mode="before")
    @classmethod
    def _owner(cls, v: object) -> str:
        return "" if v is None or v == "" else normalize_email(v, "notebook owner")


class Collaborator(BaseModel):
    """A person a note is shared with, and what they may do with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    email: str = Field(description="The collaborator's e-mail address.")
    permission: Permission = Field("view", description="What they may do: view (read) or edit (read and change).")

    @field_validator("email", mode="before")
    @classmethod
    def _email(cls, v: object) -> str:
        return normalize_email(v, "collaborator email")


class Note(Record):
    """A note: title and body, its notebook (None for none), tags, flags, owner and collaborators."""

    id: str = Field(description="The note's id.")
    title: str = Field("", description="The note's title, one line (a note needs a title or a body).")
    body: str = Field("", description="The note's text, plain or markdown as format says.")
    format: Format = Field("markdown", description="How the body is written: text or markdown.")
    notebook: str | None = Field(None, description="The id of the notebook the note is in; None for none.")
    tags: list[str] = Field(default_factory=list, description="Tags, unique ignoring case.")
    pinned: bool = Field(False, description="Whether the note is pinned to the top.")
    archived: bool = Field(False, description="Whether the note is archived (kept, out of the way).")
    owner: str = Field("", description="The owner's e-mail address; empty in initial data means the workspace user.")
    collaborators: list[Collaborator] = Field(default_factory=list,
        description="The people the note is shared with and their permissions (never the owner).")
    participants: list[str] = Field(default_factory=list, max_length=MAX_PARTICIPANTS,
        description="Who took part in what the note records (e.g. a meeting), by e-mail address; gives no access.")
    created: datetime | None = Field(None, description="When the note was created.")
    updated: datetime | None = Field(None, description="When the note last changed.")

    @field_validator("owner", mode="before")
    @classmethod
    def _owner(cls, v: object) -> str:
        return "" if v is None or v == "" else normalize_email(v, "note owner")

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: list[str]) -> list[str]:
        return tag_list(v, "tags", each="tag")

    @field_validator("participants", mode="before")
    @classmethod
    def _participants(cls, v: object) -> object:
        if not isinstance(v, list):
            return v
        return list(dict.fromkeys(normalize_email(x, "participant") for x in v))

    @model_validator(mode="after")
    def _check(self) -> "Note":
        if "\n" in self.title or "\r" in self.title or len(self.title) > MAX_TITLE:
            raise ValueError(f"note {self.id} title must be one line of at most {MAX_TITLE} characters")
        if len(self.body) > MAX_TEXT:
            raise ValueError(f"note {self.id} body is longer than {MAX_TEXT} characters")
        if not self.title.strip() and not self.body.strip():
            raise ValueError(f"note {self.id} has neither a title nor a body")
        emails = [c.email for c in self.collaborators]
        if len(set(emails)) != len(emails):
            raise ValueError(f"note {self.id} lists a collaborator twice")
        if self.owner and self.owner in emails:
            raise ValueError(f"note {self.id}: its owner {self.owner} cannot also be a collaborator")
        return self

    def permission_of(self, email: str) -> str | None:
        """'owner', 'edit' or 'view' for `email`, or None when the note is not theirs or shared with them."""
        if email == self.owner:
            return "owner"
        return next((c.permission for c in self.collaborators if c.email == email), None)

    def display_title(self) -> str:
        """The title, or for an untitled note the start of its first line."""
        if self.title:
            return self.title
        first = self.body.strip().splitlines()[0] if self.body.strip() else ""
        return (first[:60] + "...") if len(first) > 60 else first
