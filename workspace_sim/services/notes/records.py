"""The records of the notes service: notebooks (personal folders) and notes with their collaborators.

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`NOTEBOOKS`, `NOTES`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.text.folding import fold
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
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


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Give owners and times their defaults; check notebooks exist, belong to the note's owner and
    have unique names, and that no owner is a collaborator of their own note."""
    notebooks, notes = tables.get(NOTEBOOKS), tables.get(NOTES)
    if notebooks is None or notes is None:
        return
    seen: dict[tuple[str, str], str] = {}
    for key, nb in list(notebooks.items()):
        assert isinstance(nb, Notebook)
        nb = notebooks[key] = nb.evolve(owner=nb.owner or config.user, created=nb.created or config.now)
        name = (nb.owner, fold(nb.name))
        if name in seen:
            raise SpecError(f"data.notes.notebooks[{key}].name",
                            f"{nb.owner} already has a notebook named {nb.name!r} ({seen[name]})")
        seen[name] = key
    for key, n in list(notes.items()):
        assert isinstance(n, Note)
        where = f"data.notes.notes[{key}]"
        owner = n.owner or config.user
        if any(c.email == owner for c in n.collaborators):
            raise SpecError(f"{where}.collaborators", f"the owner {owner} cannot also be a collaborator")
        if n.notebook is not None:
            nb = notebooks.get(n.notebook)
            if nb is None:
                raise SpecError(f"{where}.notebook", f"notebook {n.notebook!r} does not exist; notebooks: "
                                f"{', '.join(notebooks) or 'none'}")
            if nb.owner != owner:  # type: ignore[attr-defined]
                raise SpecError(f"{where}.notebook", f"notebook {n.notebook} belongs to {nb.owner}, "  # type: ignore[attr-defined]
                                f"not to the note's owner {owner}")
        notes[key] = n.evolve(owner=owner, created=n.created or config.now,
                              updated=n.updated or n.created or config.now)


SERVICE = Service("notes", {"notebooks": Notebook, "notes": Note}, title="Notes", prepare=_prepare)
NOTEBOOKS, NOTES = SERVICE.table("notebooks"), SERVICE.table("notes")
