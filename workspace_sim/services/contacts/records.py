"""The records of the contacts service: the people of the directory (name, title, manager, time zone, working hours).

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`PEOPLE`).
"""

from __future__ import annotations

import re
from datetime import time
from typing import Any

from pydantic import Field, field_validator, model_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.people import normalize_email
from workspace_sim.text.validation import TimeZoneName, zone


MAX_QUERY = 500
MAX_FIELD, MAX_NOTES, MAX_NOTE = 200, 20_000, 2_000
PHONE = re.compile(r"^\+?[0-9][0-9 ()./-]{2,30}[0-9)]( *(x|ext\.?) *[0-9]{1,6})?$")
HOURS = re.compile(r"^([0-9]{1,2}:[0-9]{2})-([0-9]{1,2}:[0-9]{2})$")


class Person(Record):
    """One person of the directory. Working hours are local times in the person's time zone."""

    key_field = "email"
    email: str = Field(description="The person's e-mail address (the directory's key).")
    name: str = Field(description="Full name as shown in the directory.")
    title: str = Field("", description="Job title.")
    department: str = Field("", description="Department or team.")
    manager: str | None = Field(None,
        description="The e-mail address of the person's manager, who is in the directory too; None for none.")
    timezone: TimeZoneName = Field("UTC", description="The IANA time zone the person works in.")
    phone: str = Field("", description="Phone number, digits with optional + and separators, an extension allowed.")
    location: str | None = Field(None, description="Office or city; None when unknown.")
    working_hours_start: time = Field(time(9, 0), description="Local time the person's working day starts.")
    working_hours_end: time = Field(time(17, 0), description="Local time the person's working day ends.")
    notes: str = Field("", max_length=MAX_NOTES, description="Free-text notes about the person, newest added last.")

    @field_validator("email")
    @classmethod
    def _email(cls, v: str) -> str:
        return normalize_email(v)

    @field_validator("manager")
    @classmethod
    def _manager(cls, v: str | None) -> str | None:
        return None if v is None or not v.strip() else normalize_email(v)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        v = " ".join(v.split())
        if not v:
            raise ValueError("name is empty")
        return v

    @field_validator("working_hours_start", "working_hours_end")
    @classmethod
    def _local_time(cls, v: time) -> time:
        if v.tzinfo is not None:
            raise ValueError("working hours are local to the person's time zone; give them without an offset")
        return v

    @model_validator(mode="after")
    def _check(self) -> "Person":
        if self.working_hours_start >= self.working_hours_end:
            raise ValueError(
                f"working_hours_start {self.working_hours_start:%H:%M} must be before "
                f"working_hours_end {self.working_hours_end:%H:%M}"
            )
        if self.manager == self.email:
            raise ValueError(f"{self.email} cannot be their own manager")
        return self


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Check that every manager is in the directory and that no management chain loops."""
    people = tables.get(PEOPLE)
    if not people:
        return
    for email, p in people.items():
        assert isinstance(p, Person)
        if p.manager is not None and p.manager not in people:
            raise SpecError(f"data.contacts.people[email={email}].manager", f"{p.manager} is not in the directory")
    for email in people:
        loop = chain_loop(lambda e: getattr(people.get(e), "manager", None), email)
        if loop:
            raise SpecError(f"data.contacts.people[email={email}].manager", f"management chain loops: {loop}")


def chain_loop(manager_of: Any, email: str) -> str:
    """'a -> b -> a' when following managers up from `email` comes back round, else ''."""
    seen = [email]
    boss = manager_of(email)
    while boss is not None:
        if boss in seen:
            return " -> ".join([*seen, boss])
        seen.append(boss)
        boss = manager_of(boss)
    return ""


SERVICE = Service("contacts", {"people": Person}, title="Contacts", prepare=_prepare)
PEOPLE = SERVICE.table("people")  # the table workspace_sim.text.people.PEOPLE names
