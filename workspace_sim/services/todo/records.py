"""The records of the to-do service: task lists and tasks (due dates, priorities, assignees, labels, subtasks).

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`LISTS`, `TASKS`).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from datetime import timezone as dt_timezone
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import Field, field_validator, model_validator

from workspace_sim.core.errors import InvalidArgument, SpecError
from workspace_sim.text.folding import fold
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.validation import as_argument, parse_when, short_name, tag_list, zone


INBOX = "inbox"
UTC = dt_timezone.utc
Priority = Literal["none", "low", "medium", "high"]
Status = Literal["open", "in_progress", "waiting", "completed"]
ActiveStatus = Literal["open", "in_progress", "waiting"]
STATUS_WORDS: dict[str, str] = {"open": "not started", "in_progress": "in progress", "waiting": "waiting",
                                "completed": "completed"}
RANK: dict[str, int] = {"high": 0, "medium": 1, "low": 2, "none": 3}
MAX_TITLE, MAX_TEXT, MAX_SOURCE, MAX_NAME, MAX_LABELS, MAX_QUERY = 300, 20_000, 500, 100, 50, 500
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# --- validation helpers ---------------------------------------------------------------------------


def label_list(values: list[str], what: str) -> list[str]:
    """Labels (free text in any script), de-duplicated case-insensitively in order."""
    return as_argument(tag_list, values, what, True, MAX_LABELS)


def parse_due(value: str, what: str, tz: ZoneInfo) -> tuple[date | None, datetime | None]:
    """(local date, UTC instant or None) from a due text: empty for none, YYYY-MM-DD for a day, or an ISO
    date-time (read in `tz` when it has no offset)."""
    text = value.strip()
    if not text:
        return None, None
    if _DATE.match(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise InvalidArgument(f"{what} {value!r} is not a real date (YYYY-MM-DD)") from None
        if not 1900 <= day.year <= 2200:
            raise InvalidArgument(f"{what} {value!r} is outside the years 1900-2200")
        return day, None
    at = parse_when(text, what, tz)
    return at.astimezone(tz).date(), at.astimezone(UTC)


# --- records --------------------------------------------------------------------------------------


class TaskList(Record):
    """A list (project) of tasks; names are unique, ignoring case."""

    id: str = Field(description="The list's id (the Inbox is inbox).")
    name: str = Field(description="The list's name, unique ignoring case.")
    created: datetime | None = Field(None, description="When the list was created.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return short_name(v, "list name", MAX_NAME)


class Task(Record):
    """A task of a list; `parent` makes it a subtask (same list). `due_at` is set only for a due time."""

    id: str = Field(description="The task's id.")
    list_id: str = Field(INBOX, description="The id of the list the task is in (the Inbox when none is named).")
    title: str = Field(description="What is to be done, one line.")
    notes: str = Field("", description="Free-text notes on the task.")
    due_date: date | None = Field(None, description="The local day the task is due; None for no due date.")
    due_at: datetime | None = Field(None,
        description="The due time, set only when the task is due at a time (its local date is due_date).")
    priority: Priority = Field("none", description="none < low < medium < high.")
    status: Status = Field("open",
        description="open (not started), in_progress, waiting (on someone else) or completed.")
    completed_at: datetime | None = Field(None, description="When the task was completed; None while it is not.")
    assignee: str | None = Field(None, description="The e-mail address of who is to do it; None for the user.")
    labels: list[str] = Field(default_factory=list, description="Free-text labels, unique ignoring case.")
    parent: str | None = Field(None,
        description="The id of the task this is a subtask of (same list); None for a top-level task.")
    source: str = Field("", description="Where the task came from, e.g. a mail message id or a ticket key.")
    created: datetime | None = Field(None, description="When the task was created.")
    updated: datetime | None = Field(None, description="When the task last changed.")

    @field_validator("priority", mode="before")
    @classmethod
    def _priority(cls, v: object) -> object:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("assignee", mode="before")
    @classmethod
    def _assignee(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "assignee")

    @field_validator("labels")
    @classmethod
    def label_list(cls, v: list[str]) -> list[str]:
        return tag_list(v, "labels", True, each="label")

    @field_validator("due_at")
    @classmethod
    def _due_at(cls, v: datetime | None) -> datetime | None:
        if v is not None and (v.tzinfo is None or v.utcoffset() is None):
            raise ValueError("due_at must include a time zone offset, e.g. 2026-03-05T17:00:00+00:00")
        return v.astimezone(UTC) if v is not None else None

    @model_validator(mode="after")
    def _check(self) -> "Task":
        title = self.title.strip()
        if not title or "\n" in title or len(title) > MAX_TITLE:
            raise ValueError(f"task {self.id} title must be one non-empty line of at most {MAX_TITLE} characters")
        if len(self.notes) > MAX_TEXT or len(self.source) > MAX_SOURCE:
            raise ValueError(f"task {self.id}: notes or source too long ({MAX_TEXT} / {MAX_SOURCE} characters)")
        if self.status != "completed" and self.completed_at is not None:
            raise ValueError(f"task {self.id} is {self.status} but has completed_at; remove it or set status completed")
        if self.parent == self.id:
            raise ValueError(f"task {self.id} cannot be its own parent")
        return self

    def is_overdue(self, now: datetime, tz: ZoneInfo) -> bool:
        """Not completed and past due: after its due time, or (due on a day) after that day in `tz`."""
        if self.status == "completed" or self.due_date is None:
            return False
        return self.due_at < now if self.due_at is not None else self.due_date < now.astimezone(tz).date()


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Add the Inbox list, fill times and local due dates, and check lists, parents (same list, no
    loops) and that no completed task has an open subtask."""
    lists, tasks = tables.get(LISTS), tables.get(TASKS)
    if lists is None or tasks is None:
        return
    tz = zone(config.timezone)
    names: dict[str, str] = {}
    for key, lst in lists.items():
        name = fold(lst.name)  # type: ignore[attr-defined]
        if name in names:
            raise SpecError(f"data.todo.lists[{key}].name", f"{lst.name!r} is also the name of list {names[name]}")  # type: ignore[attr-defined]
        names[name] = key
        lists[key] = lst.evolve(created=lst.created or config.now)  # type: ignore[attr-defined]
    if INBOX not in lists and "inbox" not in names:
        lists[INBOX] = TaskList(id=INBOX, name="Inbox", created=config.now)
    for key, t in list(tasks.items()):
        assert isinstance(t, Task)
        where = f"data.todo.tasks[{key}]"
        if t.list_id not in lists:
            raise SpecError(f"{where}.list_id", f"list {t.list_id!r} does not exist; lists: {', '.join(sorted(lists))}")
        local = t.due_at.astimezone(tz).date() if t.due_at is not None else t.due_date
        if t.due_at is not None and t.due_date is not None and t.due_date != local:
            raise SpecError(f"{where}.due_date", f"{t.due_date} is not the local date of due_at ({local} in {tz.key})")
        done_at = (t.completed_at or config.now) if t.status == "completed" else None
        tasks[key] = t.evolve(due_date=local, completed_at=done_at, created=t.created or config.now,
                              updated=t.updated or t.created or config.now)
    for key, t in tasks.items():
        where = f"data.todo.tasks[{key}].parent"
        if t.parent is None:  # type: ignore[attr-defined]
            continue
        parent = tasks.get(t.parent)  # type: ignore[attr-defined]
        if parent is None:
            raise SpecError(where, f"task {t.parent!r} does not exist")  # type: ignore[attr-defined]
        if parent.list_id != t.list_id:  # type: ignore[attr-defined]
            raise SpecError(where, f"the parent {parent.id} is in list {parent.list_id}, not {t.list_id}")  # type: ignore[attr-defined]
        if parent.status == "completed" and t.status != "completed":  # type: ignore[attr-defined]
            raise SpecError(where, f"the parent {parent.id} is completed but this subtask is {t.status}")  # type: ignore[attr-defined]
        seen, up = [key], t.parent  # type: ignore[attr-defined]
        while up is not None:
            if up in seen:
                raise SpecError(where, f"parents loop: {' -> '.join([*seen, up])}")
            seen.append(up)
            up = tasks[up].parent  # type: ignore[attr-defined]


SERVICE = Service("todo", {"lists": TaskList, "tasks": Task}, title="To-do", prepare=_prepare)
LISTS, TASKS = SERVICE.table("lists"), SERVICE.table("tasks")
