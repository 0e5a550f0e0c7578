"""Scheduling templates: busy calendars, working hours, time zones and look-alike invitees."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from ...spec import Person
from ..builder import Act, SpecBuilder, TemplateError
from . import template
from .common import TOPICS, busy_calendar, local


def _offset_hours(tz: str, when: datetime) -> float:
    off = when.astimezone(ZoneInfo(tz)).utcoffset()
    return off.total_seconds() / 3600 if off is not None else 0.0


def _near_zone(b: SpecBuilder, n: int, max_gap: float) -> list[Person]:
    """n colleagues whose time zones are within `max_gap` hours of the user's (so working days overlap)."""
    me = _offset_hours(b.world.user.timezone, b.now)
    pool = [p for p in b.world.colleagues() if abs(_offset_hours(p.timezone, b.now) - me) <= max_gap]
    b.rng.shuffle(pool)
    if len(pool) < n:
        raise TemplateError("not enough colleagues in nearby time zones")
    return pool[:n]


def _schedule(b: SpecBuilder, people: list[Person], minutes: int, days: int, title: str) -> Act:
    window_start = local(b, 1, 0)
    window_end = window_start + timedelta(days=days)
    who = " and ".join(f"{p.name} ({p.department})" for p in people)

    def act() -> None:
        emails = []
        for p in people:
            b.call("search_contacts", query=p.name)
            emails.append(p.email)
        found = b.call("find_free_slots", attendees=emails, duration_minutes=minutes,
                       window_start=window_start.isoformat(), window_end=window_end.isoformat(), max_results=3)
        if not found["slots"]:
            raise TemplateError("no common free slot in the window")
        slot = found["slots"][0]
        b.call("create_event", title=title, start=slot["start"], end=slot["end"], attendees=emails)
        b.check({"kind": "event_exists", "title": {"contains": title, "ignore_case": True}, "attendees": emails,
                 "starts_after": slot["start"], "ends_before": slot["end"], "duration_minutes": minutes,
                 "no_overlap": True, "description": f"'{title}' at the earliest common slot, {slot['start']}"})
        b.allow("calendar.events:evt-*")
        b.answer(f"Booked '{title}' with {who} for {slot['start']}.")

    return act


@template("scheduling", "earliest_common_slot")
def earliest_common_slot(b: SpecBuilder, size: int = 1) -> Act:
    """Book the earliest slot when the user and two colleagues are all free, in working hours."""
    b.use("calendar", "contacts")
    people = _near_zone(b, 2, 3)
    busy_calendar(b, [b.world.user, *people], days=3, per_day=2)
    minutes = b.rng.choice((30, 45, 60))
    title = f"{b.rng.choice(TOPICS).capitalize()} planning"
    who = " and ".join(f"{p.name} ({p.department})" for p in people)
    b.ask(f"Please book a {minutes}-minute '{title}' meeting with {who} at the earliest time from tomorrow on when all "
          f"of us are free, within everyone's working hours.", f"Schedule {title}", "scheduling", "earliest_common_slot")
    return _schedule(b, people, minutes, 3, title)


@template("scheduling", "cross_timezone_call")
def cross_timezone_call(b: SpecBuilder, size: int = 1) -> Act:
    """Book a call with a colleague several time zones away, inside both working days."""
    b.use("calendar", "contacts")
    me = _offset_hours(b.world.user.timezone, b.now)
    far = [p for p in b.world.colleagues() if 2 <= abs(_offset_hours(p.timezone, b.now) - me) <= 7]
    if not far:
        raise TemplateError("no colleague a few time zones away")
    other = b.rng.choice(far)
    busy_calendar(b, [b.world.user, other], days=4, per_day=1)
    minutes = b.rng.choice((30, 45))
    title = f"{b.rng.choice(TOPICS).capitalize()} check-in"
    b.ask(f"{other.name} works in {other.timezone}. Set up a {minutes}-minute '{title}' call with them at the earliest "
          f"time from tomorrow that is inside both our working hours and free for both of us.",
          f"Cross-time-zone call with {other.name}", "scheduling", "cross_timezone_call")
    return _schedule(b, [other], minutes, 4, title)
