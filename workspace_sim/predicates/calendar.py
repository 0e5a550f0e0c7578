"""Predicates on calendar events: attendees, time window, duration, and no double-booking."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from workspace_sim.services.calendar import EVENTS
from workspace_sim.predicates.base import EvalContext, PredicateBase, PredicateResult
from workspace_sim.predicates.conditions import Condition


def _busy_people(ev: Any) -> set[str]:
    people = {ev.organizer.lower()}
    people |= {a.email.lower() for a in ev.attendees if a.response != "declined"}
    return people


class EventExists(PredicateBase):
    """An event exists with the given title, attendees, time window and duration, optionally clash-free."""

    kind: Literal["event_exists"] = "event_exists"
    title: Condition | None = None
    attendees: list[str] = Field(default_factory=list, description="Emails that must all be invited.")
    organizer: str | None = None
    starts_after: datetime | None = Field(None, description="The event starts at or after this time.")
    ends_before: datetime | None = Field(None, description="The event ends at or before this time.")
    start: Condition | None = Field(None, description="Condition on the start time (e.g. a range or near).")
    end: Condition | None = Field(None, description="Condition on the end time.")
    duration_minutes: Condition | None = None
    location: Condition | None = None
    no_overlap: bool = Field(False, description="No attendee has another accepted event at that time.")
    new_only: bool = Field(True, description="Only events created during the episode count.")

    def _misses(self, ev: Any, ctx: EvalContext) -> list[str]:
        miss = []
        if self.title is not None and not self.title.check(ev.title):
            miss.append(f"title={ev.title!r}")
        invited = {a.email.lower() for a in ev.attendees} | {ev.organizer.lower()}
        lacking = [a for a in self.attendees if a.lower() not in invited]
        if lacking:
            miss.append(f"missing attendees {lacking}")
        if self.organizer is not None and ev.organizer.lower() != self.organizer.lower():
            miss.append(f"organizer={ev.organizer}")
        if self.starts_after is not None and ev.start < self.starts_after:
            miss.append(f"start={ev.start.isoformat()}")
        if self.ends_before is not None and ev.end > self.ends_before:
            miss.append(f"end={ev.end.isoformat()}")
        if self.start is not None and not self.start.check(ev.start):
            miss.append(f"start={ev.start.isoformat()}")
        if self.end is not None and not self.end.check(ev.end):
            miss.append(f"end={ev.end.isoformat()}")
        minutes = (ev.end - ev.start).total_seconds() / 60
        if self.duration_minutes is not None and not self.duration_minutes.check(minutes):
            miss.append(f"duration={minutes:g} min")
        if self.location is not None and not self.location.check(ev.location):
            miss.append(f"location={ev.location!r}")
        if self.no_overlap and ev.end > ev.start:  # a moment (a deadline, start == end) clashes with nothing
            people = _busy_people(ev)
            for other in ctx.final.table(EVENTS).values():
                if other.id != ev.id and other.start < ev.end and ev.start < other.end and other.end > other.start \
                        and people & _busy_people(other):
                    miss.append(f"overlaps {other.id} '{other.title}'")
                    break
        return miss

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        pool = ctx.added(EVENTS) if self.new_only else list(ctx.final.table(EVENTS).values())
        parts = []
        if self.title:
            parts.append(f"title {self.title.describe()}")
        if self.attendees:
            parts.append(f"attendees {self.attendees}")
        if self.starts_after:
            parts.append(f"starting at/after {self.starts_after.isoformat()}")
        if self.ends_before:
            parts.append(f"ending by {self.ends_before.isoformat()}")
        if self.start:
            parts.append(f"start {self.start.describe()}")
        if self.end:
            parts.append(f"end {self.end.describe()}")
        if self.duration_minutes:
            parts.append(f"duration {self.duration_minutes.describe()} min")
        if self.no_overlap:
            parts.append("no clash for any attendee")
        expected = ("a new " if self.new_only else "an ") + "event" + (" with " + ", ".join(parts) if parts else "")
        scored = [(ev, self._misses(ev, ctx)) for ev in pool]
        hits = [ev for ev, m in scored if not m]
        if hits:
            return self.result(True, expected, f"{hits[0].id} '{hits[0].title}' {hits[0].start.isoformat()}")
        if not pool:
            return self.result(False, expected, "no event" + (" was created" if self.new_only else " exists"))
        ev, m = min(scored, key=lambda x: len(x[1]))
        return self.result(False, expected, f"closest {ev.id} '{ev.title}': " + "; ".join(m))
