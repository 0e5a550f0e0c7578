"""Calendar: per-person calendars and events with time-zone-aware times, invitations and free-slot search.

A person's calendar is every event they organise or are invited to; their busy time is the part of
it they have not declined. Times are stored as aware datetimes in each event's own time zone and
shown in whatever zone the caller asks for. Working hours and time zones come from the person's
calendar record, else their contact record (when the contacts service is enabled), else defaults.
"""

from __future__ import annotations

from .records import (
    SERVICE, CALENDARS, EVENTS, UTC, Response, MAX_TITLE, MAX_TEXT, MAX_ATTENDEES, MAX_WINDOW_DAYS, Attendee,
    Calendar, Event,
)
from .tools import (
    event_json, list_events, get_event, create_event, update_event, delete_event,
    respond_to_event, Interval, find_free_slots
)

SERVICE.add_tools(
    list_events, get_event, create_event, update_event, delete_event, respond_to_event, find_free_slots,
)

__all__ = [
    "SERVICE", "CALENDARS", "EVENTS", "event_json", "list_events", "get_event", "create_event", "update_event",
    "delete_event", "respond_to_event", "Interval", "find_free_slots", "UTC", "Response", "MAX_TITLE", "MAX_TEXT",
    "MAX_ATTENDEES", "MAX_WINDOW_DAYS", "Attendee", "Calendar", "Event",
]
