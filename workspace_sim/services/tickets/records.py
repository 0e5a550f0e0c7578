"""The records of the tickets service: projects with their status workflows, tickets with comments and links, the
key forms, the priority scale, the start-data check (`prepare`) and the declared tables."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.people import normalize_email

Priority = Literal["lowest", "low", "medium", "high", "highest", "urgent", "critical"]
PRIORITIES: tuple[str, ...] = ("lowest", "low", "medium", "high", "highest", "urgent", "critical")
UNSET = "unset"
PriorityArg = Literal["lowest", "low", "medium", "high", "highest", "urgent", "critical", "unset"]
SortBy = Literal["key", "priority", "due_date", "updated"]
LinkType = Literal["blocks", "is_blocked_by", "relates_to", "duplicates", "is_duplicated_by"]
INVERSE: dict[str, str] = {"blocks": "is_blocked_by", "is_blocked_by": "blocks", "relates_to": "relates_to",
                           "duplicates": "is_duplicated_by", "is_duplicated_by": "duplicates"}
DEFAULT_WORKFLOW: dict[str, list[str]] = {
    "Open": ["In Progress", "Resolved", "Closed"],
    "In Progress": ["Open", "In Review", "Resolved"],
    "In Review": ["In Progress", "Resolved"],
    "Resolved": ["Closed", "Reopened"],
    "Closed": ["Reopened"],
    "Reopened": ["In Progress", "Resolved", "Closed"],
}
DONE_NAMES = {"resolved", "closed", "done", "cancelled", "canceled", "won't do", "rejected"}
MAX_TITLE, MAX_TEXT, MAX_LABELS, MAX_FIELD, MAX_WATCHERS = 300, 20_000, 50, 200, 50
PROJECT_KEY = re.compile(r"^[A-Z][A-Z0-9]{1,9}$")
TICKET_KEY = re.compile(r"^(?:([A-Z][A-Z0-9]{1,9})-|(#)?)([1-9][0-9]{0,8})$")
ACCOUNTS = "crm.accounts"  # the CRM's table, read by name (no service imports another)
KeyFormat = Literal["prefixed", "number", "hash"]
KEY_HELP = "PROJECT-123 (e.g. OPS-12), a ticket number such as 4512, or #4512"


def label_word(value: object) -> str:
    """A label: one printable word of at most 100 characters."""
    text = value.strip() if isinstance(value, str) else ""
    odd = any(c.isspace() or 0xD800 <= ord(c) <= 0xDFFF for c in text)
    if not text or len(text) > 100 or not text.isprintable() or odd:
        raise ValueError(f"label {value!r} must be a non-empty word of at most 100 printable characters without spaces")
    return text


def priority_rank(priority: str | None) -> int:
    """Where a priority sits on the scale: -1 for unset, 0 for lowest, up to 6 for critical."""
    return -1 if priority is None else PRIORITIES.index(priority)


def ticket_number(key: str) -> tuple[str, int]:
    """The (project, number) of a ticket key: ('OPS', 12) for 'OPS-12'; ('', 4512) for a bare '4512' or '#4512',
    whose project the ticket record carries."""
    m = TICKET_KEY.match(key)
    if m is None:
        raise ValueError(f"ticket key {key!r} must look like {KEY_HELP}")
    return m.group(1) or "", int(m.group(3))


def key_format(key: str) -> str:
    """Which form a valid ticket key has: prefixed ('OPS-12'), number ('4512') or hash ('#4512')."""
    m = TICKET_KEY.match(key)
    assert m is not None, key
    return "prefixed" if m.group(1) else "hash" if m.group(2) else "number"


class Project(Record):
    """A project: its key, name and workflow (status -> statuses it may move to)."""

    key_field = "key"
    key: str = Field(description="The project key: 2-10 capital letters or digits, first a letter, e.g. OPS.")
    name: str = Field("", description="The project's name; its key when empty.")
    workflow: dict[str, list[str]] = Field(
        default_factory=dict, description="Every status -> the statuses a ticket may move to next; when empty, the "
                                          "default workflow (Open, In Progress, In Review, Resolved, Closed, Reopened).")
    initial_status: str = Field("", description="The status new tickets get; the workflow's first status when empty.")
    done_statuses: list[str] | None = Field(
        None, description="The statuses that count as done; when None, those named like resolved, closed or done.")
    key_format: KeyFormat = Field("prefixed", description="How new tickets are numbered: prefixed (OPS-12), number "
                                                          "(4512) or hash (#4512).")

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        if not PROJECT_KEY.match(v):
            raise ValueError(f"project key {v!r} must be 2-10 capital letters or digits, first a letter (e.g. OPS)")
        return v

    @model_validator(mode="after")
    def _check(self) -> "Project":
        flow = self.workflow or {k: list(v) for k, v in DEFAULT_WORKFLOW.items()}
        for status, targets in flow.items():
            if not status.strip():
                raise ValueError("workflow has an empty status name")
            unknown = [t for t in targets if t not in flow]
            if unknown:
                raise ValueError(f"workflow status {status!r} moves to {unknown}, which are not statuses of it")
        initial = self.initial_status or next(iter(flow))
        if initial not in flow:
            raise ValueError(f"initial_status {initial!r} is not a status of the workflow ({', '.join(sorted(flow))})")
        done = self.done_statuses
        if done is None:
            done = sorted(s for s in flow if s.lower() in DONE_NAMES)
        if any(s not in flow for s in done):
            raise ValueError(f"done_statuses {done} must all be statuses of the workflow")
        # Canonical key order, so a JSON round trip (which sorts keys) gives back the same record.
        object.__setattr__(self, "workflow", dict(sorted(flow.items())))
        object.__setattr__(self, "initial_status", initial)
        object.__setattr__(self, "done_statuses", done)
        object.__setattr__(self, "name", self.name or self.key)
        return self

    def statuses(self) -> list[str]:
        """The workflow's statuses in the order a ticket meets them: breadth-first from the initial one."""
        order, queue = [self.initial_status], [self.initial_status]
        while queue:
            for nxt in self.workflow[queue.pop(0)]:
                if nxt not in order:
                    order.append(nxt)
                    queue.append(nxt)
        return order + sorted(s for s in self.workflow if s not in order)

    def status_named(self, text: str) -> str | None:
        """The workflow status matching `text` case-insensitively, or None."""
        folded = " ".join(text.split()).lower()
        return next((s for s in self.workflow if s.lower() == folded), None)


class Comment(BaseModel):
    """A comment on a ticket."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field("", description="The comment's id, e.g. OPS-12-c1; numbered in order when empty.")
    author: str = Field(description="Address of who wrote it.")
    body: str = Field(description="The comment's text.")
    created: datetime | None = Field(None, description="When it was written; the workspace's start when omitted.")

    @field_validator("author", mode="before")
    @classmethod
    def _author(cls, v: object) -> str:
        return normalize_email(v, "comment author")


class Link(BaseModel):
    """A typed link to another ticket."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: LinkType = Field(description="blocks, is_blocked_by, relates_to, duplicates or is_duplicated_by.")
    target: str = Field(description="Key of the linked ticket (the other side holds the inverse link).")

    @field_validator("target")
    @classmethod
    def _target(cls, v: str) -> str:
        ticket_number(v)
        return v


class Ticket(Record):
    """A ticket of a project; `project` is derived from the key when left empty."""

    key_field = "key"
    key: str = Field(description=f"The ticket key: {KEY_HELP}.")
    project: str = Field("", description="Key of the ticket's project; taken from a prefixed key when empty.")
    title: str = Field(description="One-line title.")
    description: str = Field("", description="Free-text description.")
    status: str = Field("", description="A status of the project's workflow; its initial status when empty.")
    priority: Priority | None = Field("medium", description="lowest, low, medium, high, highest, urgent or "
                                                            "critical; None (unset) for no priority.")
    assignee: str | None = Field(None, description="Address of the person working on it, or None when unassigned.")
    reporter: str | None = Field(None, description="Address of who reported it, or None when not known.")
    reporter_name: str = Field("", max_length=MAX_FIELD, description="Free-text name of the reporter, e.g. Priya "
                                                                      "from Acme Corp.")
    department: str = Field("", max_length=MAX_FIELD, description="The department it concerns, free text.")
    category: str = Field("", max_length=MAX_FIELD, description="Its category, free text.")
    watchers: list[str] = Field(default_factory=list, description="Addresses of the people following it.")
    labels: list[str] = Field(default_factory=list, description="Labels: single printable words, no repeats.")
    comments: list[Comment] = Field(default_factory=list, description="Comments, oldest first.")
    links: list[Link] = Field(default_factory=list, description="Typed links to other tickets.")
    due_date: date | None = Field(None, description="When it is due, or None.")
    account: str | None = Field(None, description="Id of the CRM account it is for, or None.")
    customer: str = Field("", max_length=MAX_FIELD, description="The outside organisation it is for, free text.")
    created: datetime | None = Field(None, description="When it was created; the workspace's start when omitted.")
    updated: datetime | None = Field(None, description="When it last changed; its creation time when omitted.")

    @field_validator("priority", mode="before")
    @classmethod
    def _priority(cls, v: object) -> object:
        if isinstance(v, str):
            v = v.strip().lower()
            return None if v in ("", UNSET, "none") else v
        return v

    @field_validator("assignee", "reporter", mode="before")
    @classmethod
    def _person(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "assignee/reporter")

    @field_validator("watchers")
    @classmethod
    def _watchers(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(normalize_email(x, "watcher") for x in v))

    @field_validator("reporter_name", "department", "category", "customer")
    @classmethod
    def _one_line(cls, v: str) -> str:
        return " ".join(v.split())

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: list[str]) -> list[str]:
        out: list[str] = []
        for x in v:
            x = label_word(x)
            if x not in out:
                out.append(x)
        return out

    @model_validator(mode="after")
    def _check(self) -> "Ticket":
        project, _ = ticket_number(self.key)
        if not project:
            if not self.project:
                raise ValueError(f"ticket {self.key} has a numbered key, so it needs its project (e.g. project: HELP)")
            if not PROJECT_KEY.match(self.project):
                raise ValueError(f"ticket {self.key}: project {self.project!r} must be 2-10 capital letters or digits")
            project = self.project
        if self.project and self.project != project:
            raise ValueError(f"ticket {self.key} belongs to project {project}, not {self.project!r}")
        object.__setattr__(self, "project", project)
        if self.account is not None and not self.account.strip():
            object.__setattr__(self, "account", None)
        if not self.title.strip():
            raise ValueError(f"ticket {self.key} has an empty title")
        if any(not c.id for c in self.comments):
            numbered = [c if c.id else c.model_copy(update={"id": f"{self.key}-c{i}"})
                        for i, c in enumerate(self.comments, 1)]
            object.__setattr__(self, "comments", numbered)
        if any(link.target == self.key for link in self.links):
            raise ValueError(f"ticket {self.key} links to itself")
        return self


def prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Complete initial data: create missing projects (default workflow), set initial statuses and
    times, add the reverse side of every link, and refuse statuses or links that cannot exist."""
    projects, tickets = tables.get(PROJECTS), tables.get(TICKETS)
    if projects is None or tickets is None:
        return
    for key, t in list(tickets.items()):
        where = f"data.tickets.tickets[{key}]"
        project = projects.get(t.project)
        if project is None:
            fmt = key_format(t.key)
            project = projects[t.project] = Project(key=t.project, key_format=fmt)  # type: ignore[arg-type]
        accounts = tables.get(ACCOUNTS)
        if t.account is not None and accounts is not None and t.account not in accounts:
            raise SpecError(f"{where}.account", f"CRM account {t.account!r} does not exist")
        status = t.status or project.initial_status
        if status not in project.workflow:
            raise SpecError(f"{where}.status", f"{status!r} is not a status of project {t.project} "
                            f"(workflow: {', '.join(project.statuses())})")
        comments = [c if c.created else c.model_copy(update={"created": config.now}) for c in t.comments]
        tickets[key] = t.evolve(status=status, comments=comments, created=t.created or config.now,
                                updated=t.updated or t.created or config.now)
    for key, t in list(tickets.items()):
        for i, link in enumerate(t.links):
            target = tickets.get(link.target)
            if target is None:
                raise SpecError(f"data.tickets.tickets[{key}].links[{i}]",
                                f"links to {link.target}, which does not exist")
            back = Link(type=INVERSE[link.type], target=key)  # type: ignore[arg-type]
            if back not in target.links:
                tickets[link.target] = target.evolve(links=[*target.links, back])


SERVICE = Service("tickets", {"projects": Project, "tickets": Ticket}, title="Tickets", prepare=prepare)
PROJECTS, TICKETS = SERVICE.table("projects"), SERVICE.table("tickets")
