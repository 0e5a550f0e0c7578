"""The records of the calendar service: per-person calendars (time zone, working hours) and events with their attendees.

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`CALENDARS`, `EVENTS`).
"""

from __future__ import annotations

from datetime import datetime, time
from datetime import timezone as dt_timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.people import DEFAULT_DAYS, DEFAULT_END, DEFAULT_START, normalize_email
from workspace_sim.text.validation import TimeZoneName, zone


UTC = dt_timezone.utc
Response = Literal["needs_action", "accepted", "declined", "tentative"]
MAX_TITLE, MAX_TEXT, MAX_ATTENDEES = 500, 20_000, 200
MAX_WINDOW_DAYS = 92


# --- validation helpers (shared by records and tools) ---------------------------------------------


# --- records --------------------------------------------------------------------------------------


class Attendee(BaseModel):
    """One invited person and their answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    email: str = Field(description="The invitee's e-mail address.")
    response: Response = Field("needs_action",
        description="Their answer: needs_action (not answered yet), accepted, declined or tentative.")
    optional: bool = Field(False,
        description="Whether attendance is optional (an optional attendee's conflicts do not block a slot).")

    @field_validator("email", mode="before")
    @classmethod
    def _email(cls, v: object) -> str:
        return normalize_email(v, "attendee email")


class Calendar(Record):
    """A person's calendar settings: time zone and working hours (days 0=Monday .. 6=Sunday)."""

    key_field = "owner"
    owner: str = Field(description="The e-mail address of the person whose calendar this is.")
    timezone: TimeZoneName = Field("UTC", description="The IANA time zone the person works in, e.g. Europe/Berlin.")
    working_hours_start: time = Field(DEFAULT_START, description="Local time the working day starts.")
    working_hours_end: time = Field(DEFAULT_END, description="Local time the working day ends.")
    working_days: list[int] = Field(default_factory=lambda: list(DEFAULT_DAYS),
        description="Working weekdays, 0=Monday .. 6=Sunday.")

    @field_validator("owner", mode="before")
    @classmethod
    def _owner(cls, v: object) -> str:
        return normalize_email(v, "owner")

    @model_validator(mode="after")
    def _check(self) -> "Calendar":
        if self.working_hours_end <= self.working_hours_start:
            raise ValueError("working_hours_end must be later than working_hours_start")
        if any(d < 0 or d > 6 for d in self.working_days) or len(set(self.working_days)) != len(self.working_days):
            raise ValueError("working_days must be distinct numbers 0 (Monday) to 6 (Sunday)")
        object.__setattr__(self, "working_days", sorted(self.working_days))
        return self


class Event(Record):
    """A meeting: aware start/end (stored in its own time zone), organizer and attendees. Initial data may leave the
    organizer out (an imported or system event, e.g. a holiday or a booking); it then defaults to the user."""

    id: str = Field(description="The event's id, unique in the calendar service.")
    title: str = Field(description="The event's title.")
    start: datetime = Field(description="When it starts (aware; stored in the event's own time zone).")
    end: datetime = Field(description="When it ends (aware; not before the start: equal for a deadline, a moment that "
                                      "keeps no one busy).")
    timezone: TimeZoneName = Field("UTC", description="The IANA time zone the event is kept in.")
    organizer: str = Field("",
        description="The organizer's e-mail address; empty in initial data means the workspace user.")
    attendees: list[Attendee] = Field(default_factory=list,
        description="The invited people and their answers (the organizer is not listed).")
    location: str = Field("", description="Where it happens: a room, an address or a video link.")
    description: str = Field("", description="The invitation's text (agenda, notes).")
    created: datetime | None = Field(None,
        description="When the event was created (the workspace start when initial data leaves it out).")
    updated: datetime | None = Field(None, description="When the event was last changed.")

    @field_validator("organizer", mode="before")
    @classmethod
    def _organizer(cls, v: object) -> str:
        return "" if v is None or v == "" else normalize_email(v, "organizer")

    @model_validator(mode="after")
    def _check(self) -> "Event":
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ValueError("start and end must include a time zone offset")
        if self.end < self.start:
            raise ValueError(f"end ({self.end.isoformat()}) must not be before start ({self.start.isoformat()})")
        emails = [a.email for a in self.attendees]
        if len(set(emails)) != len(emails):
            raise ValueError("an attendee is listed twice")
        z = zone(self.timezone)
        object.__setattr__(self, "start", self.start.astimezone(z))
        object.__setattr__(self, "end", self.end.astimezone(z))
        return self

    def attendee(self, email: str) -> Attendee | None:
        """The attendee entry of `email`, or None."""
        return next((a for a in self.attendees if a.email == email), None)

    def involves(self, email: str) -> bool:
        """Whether the event is on `email`'s calendar (organised or invited, declined or not)."""
        return self.organizer == email or self.attendee(email) is not None

    @property
    def instant(self) -> bool:
        """Whether the event is a moment (a deadline: end == start), which keeps no one's time busy."""
        return self.end == self.start

    def overlaps(self, lo: datetime, hi: datetime) -> bool:
        """Whether the event falls in [lo, hi): it overlaps the range, or, a moment, lies in it."""
        return self.start < hi and (self.end > lo or self.instant and self.start >= lo)

    def busy_for(self, email: str) -> bool:
        """Whether the event blocks `email`'s time (on their calendar and not declined; a moment blocks nothing)."""
        if self.instant:
            return False
        a = self.attendee(email)
        if a is not None:
            return a.response != "declined"
        return self.organizer == email


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Give events without creation or update times the workspace start time, and events without an organizer
    (imported or system events) the user as organizer."""
    events = tables.get(EVENTS)
    if events is None:
        return
    for key, ev in list(events.items()):
        if ev.created is None or ev.updated is None or not ev.organizer:
            events[key] = ev.evolve(created=ev.created or config.now, updated=ev.updated or ev.created or config.now,
                                    organizer=ev.organizer or config.user)


SERVICE = Service("calendar", {"calendars": Calendar, "events": Event}, title="Calendar", prepare=_prepare)
CALENDARS, EVENTS = SERVICE.table("calendars"), SERVICE.table("events")
