"""The calendar service's tools (the package docstring says what the service models)."""

from __future__ import annotations

import difflib
from datetime import date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, NotFound, PermissionDenied
from workspace_sim.core.registry import tool
from workspace_sim.text.people import Availability, availability, resolve_address, resolve_addresses
from workspace_sim.text.validation import as_argument, clean_text, parse_when, zone
from .records import (
    EVENTS, UTC, MAX_TITLE, MAX_TEXT, MAX_ATTENDEES, MAX_WINDOW_DAYS, Attendee, Event
)


def _user_zone(ctx: ToolContext) -> ZoneInfo:
    return availability(ctx, ctx.user).tz


def _arg_zone(ctx: ToolContext, name: str | None) -> ZoneInfo:
    """The zone a tool argument names, or the user's own when it is None."""
    return _user_zone(ctx) if name is None else as_argument(zone, name)


def _emails(ctx: ToolContext, values: list[str], what: str) -> list[str]:
    """Canonical, de-duplicated (order kept) addresses; names from the directory are resolved, and an
    ambiguous or unknown name is refused with the candidates listed. The error names the bad entry."""
    if len(values) > MAX_ATTENDEES:
        raise InvalidArgument(f"{what} has {len(values)} entries; at most {MAX_ATTENDEES} are allowed")
    return resolve_addresses(ctx, values, what)


# --- output ---------------------------------------------------------------------------------------


def event_json(ev: Event, tz: ZoneInfo | None = None, full: bool = True) -> dict[str, Any]:
    """An event as JSON, its times shown in `tz` (default: the event's own time zone)."""
    z = tz or zone(ev.timezone)
    out: dict[str, Any] = {
        "id": ev.id, "title": ev.title,
        "start": ev.start.astimezone(z).isoformat(), "end": ev.end.astimezone(z).isoformat(),
        "timezone": z.key, "organizer": ev.organizer,
        "attendees": [a.model_dump() for a in ev.attendees], "location": ev.location,
    }
    if full:
        out["description"] = ev.description
        out["created"] = ev.created.isoformat() if ev.created else None
        out["updated"] = ev.updated.isoformat() if ev.updated else None
    elif ev.description:
        out["description"] = ev.description[:200] + ("..." if len(ev.description) > 200 else "")
    return out


def _when(d: dict[str, Any]) -> str:
    s, e = datetime.fromisoformat(d["start"]), datetime.fromisoformat(d["end"])
    end = f"{e:%H:%M}" if e.date() == s.date() else f"{e:%a %Y-%m-%d %H:%M}"
    return f"{s:%a %Y-%m-%d %H:%M}-{end}"


def _render_events(data: dict) -> str:
    head = f"{len(data['events'])} event(s) on {data['calendar']}'s calendar, times in {data['timezone']}"
    lines = [head]
    for d in data["events"]:
        mine = next((a["response"] for a in d["attendees"] if a["email"] == data["calendar"]), None)
        role = "organizer" if d["organizer"] == data["calendar"] else f"response: {mine}"
        where = f" @ {d['location']}" if d["location"] else ""
        lines.append(f"- {_when(d)}  {d['title']}{where}  [{d['id']}; {role}; {len(d['attendees'])} attendee(s)]")
    if data.get("truncated"):
        lines.append("(more events exist; narrow the range or raise max_results)")
    return "\n".join(lines)


def _render_event(data: dict) -> str:
    d = data["event"] if "event" in data else data
    lines = [f"{d['title']} [{d['id']}]", f"When: {_when(d)} ({d['timezone']})", f"Organizer: {d['organizer']}"]
    if d["location"]:
        lines.append(f"Location: {d['location']}")
    for a in d["attendees"]:
        lines.append(f"  - {a['email']}: {a['response']}{' (optional)' if a['optional'] else ''}")
    if d.get("description"):
        lines.append(d["description"])
    for c in data.get("conflicts", []):
        lines.append(f"Overlaps: {c['email']} is busy with '{c['title']}' [{c['event_id']}]")
    return "\n".join(lines)


def _render_slots(data: dict) -> str:
    if not data["slots"]:
        return f"No free {data['duration_minutes']}-minute slot for everyone in the window."
    lines = [f"Free {data['duration_minutes']}-minute slots ({data['timezone']}):"]
    lines += [f"- {_when(s)}" for s in data["slots"]]
    return "\n".join(lines)


# --- lookups --------------------------------------------------------------------------------------


def _event(ctx: ToolContext, event_id: str) -> Event:
    ev = ctx.get(EVENTS, event_id)
    if ev is None:
        close = difflib.get_close_matches(event_id, ctx.keys(EVENTS), n=3, cutoff=0.7)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use list_events to find event ids"
        raise NotFound(f"event {event_id!r} not found{hint}")
    return ev


def _need_organizer(ctx: ToolContext, ev: Event, action: str, instead: str) -> None:
    if ev.organizer != ctx.user:
        raise PermissionDenied(
            f"only the organizer ({ev.organizer}) can {action} '{ev.title}'; you are {ctx.user}. {instead}"
        )


def _conflicts(ctx: ToolContext, emails: list[str], start: datetime, end: datetime, skip: str | None) -> list[dict]:
    """Events (other than `skip`) that already keep any of `emails` busy during [start, end); a moment (a deadline,
    start == end) clashes with nothing."""
    out: list[dict] = []
    if end <= start:
        return out
    for ev in ctx.values(EVENTS):
        if ev.id == skip or ev.end <= start or ev.start >= end:
            continue
        for email in emails:
            if ev.busy_for(email):
                out.append({"email": email, "event_id": ev.id, "title": ev.title})
    return out[:50]


# --- tools ----------------------------------------------------------------------------------------


@tool(read_only=True, render=_render_events)
def list_events(
    ctx: ToolContext, calendar: str | None = None, start: str | None = None, end: str | None = None,
    query: str = "", timezone: str | None = None, max_results: int = 100,
) -> dict:
    """List the events on a person's calendar (those they organise or are invited to) that overlap a time range (a
    deadline, whose end is its start: that falls in it), earliest first.

    Args:
        calendar: The calendar's owner: an e-mail address or a name from the directory; your own calendar by default.
        start: Range start, ISO 8601 (e.g. 2026-03-02T00:00:00+00:00); a time without an offset is read in `timezone`,
            else your time zone. Default: now.
        end: Range end, same format. Default: 7 days after start.
        query: Words that must all appear in the title, description, location or an attendee's email (case-insensitive).
        timezone: IANA time zone to show times in (and to read offset-less times in); default the calendar owner's.
        max_results: Maximum number of events to return (1-500).
    """
    if not 1 <= max_results <= 500:
        raise InvalidArgument("max_results must be between 1 and 500")
    owner = ctx.user if calendar is None else resolve_address(ctx, calendar, "calendar")
    show = as_argument(zone, timezone) if timezone is not None else availability(ctx, owner).tz
    read = _arg_zone(ctx, timezone)
    lo = parse_when(start, "start", read) if start is not None else ctx.now
    hi = parse_when(end, "end", read) if end is not None else lo + timedelta(days=7)
    if hi <= lo:
        raise InvalidArgument(f"end ({hi.isoformat()}) must be after start ({lo.isoformat()})")
    words = clean_text(query, "query", 500).lower().split()
    hits = []
    for ev in ctx.values(EVENTS):
        if not ev.involves(owner) or not ev.overlaps(lo, hi):
            continue
        hay = " ".join([ev.title, ev.description, ev.location, *(a.email for a in ev.attendees)]).lower()
        if all(w in hay for w in words):
            hits.append(ev)
    hits.sort(key=lambda e: (e.start, e.id))
    shown = hits[:max_results]
    return {"calendar": owner, "timezone": show.key, "start": lo.astimezone(show).isoformat(),
            "end": hi.astimezone(show).isoformat(), "events": [event_json(e, show, full=False) for e in shown],
            "truncated": len(hits) > len(shown)}


@tool(read_only=True, render=_render_event)
def get_event(ctx: ToolContext, id: str, timezone: str | None = None) -> dict:
    """Get one event with all its details: times, organizer, attendees and their responses, location, description.

    Args:
        id: The event id, e.g. evt-0001a2b3.
        timezone: IANA time zone to show times in; default the event's own.
    """
    ev = _event(ctx, id)
    return event_json(ev, as_argument(zone, timezone) if timezone is not None else None)


@tool(render=_render_event)
def create_event(
    ctx: ToolContext, title: str, start: str, end: str, attendees: list[str] = [],
    optional_attendees: list[str] = [], location: str = "", description: str = "", timezone: str | None = None,
) -> dict:
    """Create an event that you organise and invite attendees; you are marked accepted, each invitee needs to respond.
    Overlaps with the participants' existing events are reported, not refused.

    Args:
        title: Title of the event.
        start: Start, ISO 8601 such as 2026-03-02T14:00:00+01:00; a time without an offset is read in `timezone`, else
            your time zone.
        end: End, same format; not before start (equal to it for a deadline, a moment that keeps no one busy).
        attendees: People to invite: e-mail addresses or names from the directory such as "Dana Reyes" (a name that fits
            several people is refused with the candidates listed); you are added as organizer automatically.
        optional_attendees: People invited as optional (addresses or directory names).
        location: Where the event takes place (room, address or video link).
        description: Agenda or notes.
        timezone: IANA time zone of the event (used to show it and to read offset-less times); default yours.
    """
    tz = _arg_zone(ctx, timezone)
    t = clean_text(title, "title", MAX_TITLE, required=True)
    s, e = parse_when(start, "start", tz), parse_when(end, "end", tz)
    if e < s:
        raise InvalidArgument(f"end ({e.isoformat()}) must not be before start ({s.isoformat()})")
    required = [x for x in _emails(ctx, attendees, "attendees") if x != ctx.user]
    optional = [x for x in _emails(ctx, optional_attendees, "optional_attendees")
                if x != ctx.user and x not in required]
    people = [Attendee(email=ctx.user, response="accepted")]
    people += [Attendee(email=x) for x in required] + [Attendee(email=x, optional=True) for x in optional]
    ev = Event(id=ctx.new_id("evt"), title=t, start=s, end=e, timezone=tz.key, organizer=ctx.user, attendees=people,
               location=clean_text(location, "location", MAX_TITLE), description=clean_text(description, "description", MAX_TEXT),
               created=ctx.now, updated=ctx.now)
    conflicts = _conflicts(ctx, [a.email for a in people], ev.start, ev.end, None)
    ctx.put(EVENTS, ev)
    return {"event": event_json(ev), "conflicts": conflicts}


@tool(render=_render_event)
def update_event(
    ctx: ToolContext, id: str, title: str | None = None, start: str | None = None, end: str | None = None,
    timezone: str | None = None, location: str | None = None, description: str | None = None,
    attendees: list[str] | None = None, add_attendees: list[str] = [], remove_attendees: list[str] = [],
) -> dict:
    """Change an event you organise; only the fields given change. Moving it resets the other attendees' responses to
    needs_action.

    Args:
        id: The event id.
        title: New title.
        start: New start (ISO 8601; without an offset it is read in `timezone`, else your time zone). Given without
            `end`, the event keeps its length.
        end: New end, same format.
        timezone: New IANA time zone of the event.
        location: New location.
        description: New description.
        attendees: The complete new guest list, addresses or directory names (replaces the old one; people who stay keep
            their responses).
        add_attendees: People to invite in addition (addresses or directory names).
        remove_attendees: People to uninvite (addresses or directory names).
    """
    ev = _event(ctx, id)
    _need_organizer(ctx, ev, "change", "Ask the organizer to change it, or respond_to_event to answer.")
    if all(v is None for v in (title, start, end, timezone, location, description, attendees)) \
            and not add_attendees and not remove_attendees:
        raise InvalidArgument("nothing to change; give at least one field such as start, title or attendees")
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = clean_text(title, "title", MAX_TITLE, required=True)
    if location is not None:
        changes["location"] = clean_text(location, "location", MAX_TITLE)
    if description is not None:
        changes["description"] = clean_text(description, "description", MAX_TEXT)
    if timezone is not None:
        changes["timezone"] = as_argument(zone, timezone).key
    read = _arg_zone(ctx, timezone)
    s = parse_when(start, "start", read) if start is not None else ev.start
    e = parse_when(end, "end", read) if end is not None else (s + (ev.end - ev.start) if start is not None else ev.end)
    if e < s:
        raise InvalidArgument(f"end ({e.isoformat()}) must not be before start ({s.isoformat()})")
    moved = s != ev.start or e != ev.end
    if moved:
        changes["start"], changes["end"] = s, e
    guests = _new_guests(ctx, ev, attendees, add_attendees, remove_attendees)
    if moved:
        guests = [a if a.email == ev.organizer else a.model_copy(update={"response": "needs_action"}) for a in guests]
    if guests != ev.attendees:
        changes["attendees"] = guests
    ev, changed = ctx.update(EVENTS, ev, changes, updated=ctx.now)
    return {"event": event_json(ev), "changed": changed, "responses_reset": moved,
            "conflicts": _conflicts(ctx, [a.email for a in ev.attendees], ev.start, ev.end, ev.id) if moved else []}


def _new_guests(
    ctx: ToolContext, ev: Event, replace: list[str] | None, add: list[str], remove: list[str],
) -> list[Attendee]:
    """The attendee list after replacing, adding and removing guests; responses of those who stay are kept."""
    current = {a.email: a for a in ev.attendees}
    wanted = list(current) if replace is None else [ev.organizer] + _emails(ctx, replace, "attendees")
    for x in _emails(ctx, add, "add_attendees"):
        if x not in wanted:
            wanted.append(x)
    gone = _emails(ctx, remove, "remove_attendees")
    if ev.organizer in gone:
        raise InvalidArgument(f"the organizer ({ev.organizer}) cannot be removed; delete the event instead")
    missing = [x for x in gone if x not in wanted]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise InvalidArgument(f"{', '.join(missing)} {verb} not invited to '{ev.title}'")
    out = []
    for x in wanted:
        if x in gone or (x == ev.organizer and x not in current):
            continue
        out.append(current.get(x) or Attendee(email=x))
    if len(out) > MAX_ATTENDEES + 1:
        raise InvalidArgument(f"an event may have at most {MAX_ATTENDEES} attendees")
    return out


@tool(destructive=True)
def delete_event(ctx: ToolContext, id: str) -> dict:
    """Cancel and delete an event you organise; its attendees lose it from their calendars.

    Args:
        id: The event id.
    """
    ev = _event(ctx, id)
    _need_organizer(ctx, ev, "delete", "To drop it from your own calendar, respond_to_event with 'declined'.")
    ctx.delete(EVENTS, ev.id)
    return {"deleted": ev.id, "title": ev.title, "notified": [a.email for a in ev.attendees if a.email != ctx.user]}


@tool(idempotent=True, render=_render_event)
def respond_to_event(ctx: ToolContext, id: str, response: Literal["accepted", "declined", "tentative"]) -> dict:
    """Answer an invitation you received: accept, decline or mark it tentative (changes only your own attendee entry).

    Args:
        id: The event id.
        response: Your answer: accepted, declined or tentative.
    """
    ev = _event(ctx, id)
    if ev.organizer == ctx.user:
        raise InvalidArgument(
            f"you organise '{ev.title}', so there is no invitation to answer; use delete_event to cancel it")
    mine = ev.attendee(ctx.user)
    if mine is None:
        raise PermissionDenied(f"you ({ctx.user}) are not invited to '{ev.title}'; only invitees can respond")
    if mine.response != response:
        guests = [a.model_copy(update={"response": response}) if a.email == ctx.user else a for a in ev.attendees]
        ev = ev.evolve(attendees=guests, updated=ctx.now)
        ctx.put(EVENTS, ev)
    return {"event": event_json(ev), "response": response}


# --- free slots -----------------------------------------------------------------------------------

Interval = tuple[datetime, datetime]


def _working(av: Availability, lo: datetime, hi: datetime) -> list[Interval]:
    """The person's working hours inside [lo, hi), in UTC, computed day by day in their own zone."""
    out = []
    day: date = lo.astimezone(av.tz).date() - timedelta(days=1)
    last: date = hi.astimezone(av.tz).date() + timedelta(days=1)
    while day <= last:
        if day.weekday() in av.days:
            a = datetime.combine(day, av.start, av.tz).astimezone(UTC)
            b = datetime.combine(day, av.end, av.tz).astimezone(UTC)
            a, b = max(a, lo), min(b, hi)
            if a < b:
                out.append((a, b))
        day += timedelta(days=1)
    return out


def _subtract(free: list[Interval], busy: list[Interval]) -> list[Interval]:
    """`free` minus the union of `busy` (both lists of intervals; `free` sorted and disjoint)."""
    busy = sorted(busy)
    out = []
    for a, b in free:
        cur = a
        for x, y in busy:
            if y <= cur or x >= b:
                continue
            if x > cur:
                out.append((cur, x))
            cur = max(cur, y)
            if cur >= b:
                break
        if cur < b:
            out.append((cur, b))
    return out


def _intersect(p: list[Interval], q: list[Interval]) -> list[Interval]:
    """The intersection of two sorted, disjoint interval lists."""
    out, i, j = [], 0, 0
    while i < len(p) and j < len(q):
        a, b = max(p[i][0], q[j][0]), min(p[i][1], q[j][1])
        if a < b:
            out.append((a, b))
        if p[i][1] < q[j][1]:
            i += 1
        else:
            j += 1
    return out


def _aligned(t: datetime, step: int, tz: ZoneInfo) -> datetime:
    """The first time at or after `t` that falls on a multiple of `step` minutes past local midnight in `tz`."""
    local = t.astimezone(tz)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    minutes = -(-int((local - midnight).total_seconds()) // 60)  # ceiling, in wall-clock minutes
    cand = (midnight + timedelta(minutes=-(-minutes // step) * step)).astimezone(UTC)
    while cand < t:  # a daylight-saving jump can put the wall-clock candidate before t
        cand += timedelta(minutes=step)
    return cand


@tool(read_only=True, render=_render_slots)
def find_free_slots(
    ctx: ToolContext, attendees: list[str], duration_minutes: int, window_start: str, window_end: str,
    working_hours_only: bool = True, timezone: str | None = None, max_results: int = 10, step_minutes: int = 30,
    include_self: bool = True,
) -> dict:
    """Find times when every attendee is free for the whole duration (declined events do not count as busy), optionally
    only within each person's working hours in their own time zone; slots are returned in the requested time zone,
    earliest first, never in the past.

    Args:
        attendees: The people who must all be free: e-mail addresses or names from the directory.
        duration_minutes: Length of the meeting in minutes (5-1440).
        window_start: Earliest start, ISO 8601; a time without an offset is read in `timezone`, else your time zone.
        window_end: Latest end, same format; at most 92 days after window_start.
        working_hours_only: Only propose times inside every attendee's working hours and working days.
        timezone: IANA time zone for the returned slots (and offset-less inputs); default yours.
        max_results: Maximum number of slots to return (1-100).
        step_minutes: Granularity of proposed start times in minutes past the hour in `timezone` (5-1440).
        include_self: Also require you (the user) to be free.
    """
    if not 5 <= duration_minutes <= 1440:
        raise InvalidArgument("duration_minutes must be between 5 and 1440")
    if not 5 <= step_minutes <= 1440:
        raise InvalidArgument("step_minutes must be between 5 and 1440")
    if not 1 <= max_results <= 100:
        raise InvalidArgument("max_results must be between 1 and 100")
    tz = _arg_zone(ctx, timezone)
    lo = parse_when(window_start, "window_start", tz).astimezone(UTC)
    hi = parse_when(window_end, "window_end", tz).astimezone(UTC)
    if hi <= lo:
        raise InvalidArgument(f"window_end ({hi.isoformat()}) must be after window_start ({lo.isoformat()})")
    if hi - lo > timedelta(days=MAX_WINDOW_DAYS):
        raise InvalidArgument(f"the window spans more than {MAX_WINDOW_DAYS} days; search a shorter window")
    if hi <= ctx.now:
        raise InvalidArgument(f"the window ends before now ({ctx.now.isoformat()}); search a future window")
    lo = max(lo, ctx.now.astimezone(UTC))
    people = _emails(ctx, attendees, "attendees")
    if include_self and ctx.user not in people:
        people.insert(0, ctx.user)
    if not people:
        raise InvalidArgument("attendees is empty; name at least one person")
    free: list[Interval] = [(lo, hi)]
    infos = []
    window = [ev for ev in ctx.values(EVENTS) if ev.end > lo and ev.start < hi]
    for email in people:
        av = availability(ctx, email)
        infos.append(av.to_json())
        mine = _working(av, lo, hi) if working_hours_only else [(lo, hi)]
        busy = [(ev.start, ev.end) for ev in window if ev.busy_for(email)]
        free = _intersect(free, _subtract(mine, busy))
    length, step = timedelta(minutes=duration_minutes), timedelta(minutes=step_minutes)
    slots: list[dict[str, str]] = []
    more = False
    for a, b in free:
        s = _aligned(a, step_minutes, tz)
        while s + length <= b:
            if len(slots) == max_results:
                more = True
                break
            slots.append({"start": s.astimezone(tz).isoformat(), "end": (s + length).astimezone(tz).isoformat()})
            s += step
        if more:
            break
    return {"timezone": tz.key, "duration_minutes": duration_minutes, "attendees": infos, "slots": slots,
            "more_available": more}
