"""Behaviour and errors of every calendar tool, and find_free_slots across time zones.

The simulated clock starts on Monday 2026-03-02 09:00 UTC. In early March London is on UTC+0,
New York on UTC-5 until daylight saving starts on Sunday 2026-03-08 (then UTC-4), and Tokyo on
UTC+9; the expected slots below are worked out by hand from those offsets.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import event as note_event
from hypothesis import strategies as st
from support import call_error, need

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.services import all_services

ME, BOB, KENJI, ANA = "me@acme.com", "bob@acme.com", "kenji@acme.com", "ana@acme.com"
UTC = timezone.utc


def utc(day: int, hour: int, minute: int = 0) -> str:
    return datetime(2026, 3, day, hour, minute, tzinfo=UTC).isoformat()


def event(id: str, start: str, end: str, organizer: str, *attendees: tuple[str, str], title: str = "Busy") -> dict:
    return {"id": id, "title": title, "start": start, "end": end, "organizer": organizer,
            "attendees": [{"email": e, "response": r} for e, r in attendees]}


CALENDARS = [
    {"owner": ME, "timezone": "Europe/London"},
    # Bob in New York starts early: 06:00-14:00 local.
    {"owner": BOB, "timezone": "America/New_York", "working_hours_start": "06:00", "working_hours_end": "14:00"},
    # Kenji in Tokyo works late: 12:00-22:00 local.
    {"owner": KENJI, "timezone": "Asia/Tokyo", "working_hours_start": "12:00", "working_hours_end": "22:00"},
]
EVENTS = [
    event("evt-standup", utc(3, 9), utc(3, 9, 30), ME, (ME, "accepted"), (BOB, "accepted"), title="Standup"),
    event("evt-bob", utc(3, 11), utc(3, 11, 30), BOB, (BOB, "accepted"), title="Bob 1:1"),
    event("evt-kenji-declined", utc(3, 12), utc(3, 13), ANA, (ANA, "accepted"), (KENJI, "declined"), title="Review"),
    event("evt-me-tentative", utc(3, 12, 30), utc(3, 13), ANA, (ANA, "accepted"), (ME, "tentative"),
          title="Lunch talk"),
    event("evt-ana", utc(4, 15), utc(4, 16), ANA, (ANA, "accepted"), title="Ana only"),
]


def make(services: list[str] | None = None, events: list[dict] | None = None, **data: list[dict]) -> Workspace:
    tables = {"calendars": CALENDARS, "events": EVENTS if events is None else events}
    payload: dict = {"calendar": tables}
    payload.update({k: {"people": v} for k, v in data.items()})
    return Workspace.create(WorkspaceConfig(services=services or ["calendar"], user=ME), payload)


@pytest.fixture
def ws() -> Workspace:
    return make()


err = call_error


def starts(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [s["start"] for s in result.data["slots"]]


# --- find_free_slots ------------------------------------------------------------------------------


def test_free_slots_london_new_york_tokyo(ws: Workspace) -> None:
    # Tue 3 Mar working hours in UTC: me 09-17, Bob 11-19 (06-14 EST), Kenji 03-13 (12-22 JST): 11-13.
    # Bob is busy 11:00-11:30; I am tentatively busy 12:30-13:00; Kenji declined 12:00-13:00 (free).
    r = ws.call("find_free_slots", {"attendees": [BOB, KENJI], "duration_minutes": 30,
                                    "window_start": "2026-03-03T00:00:00Z", "window_end": "2026-03-04T23:59:00Z"})
    assert r.ok, r.text
    assert r.data["timezone"] == "Europe/London"
    assert starts(r) == [
        "2026-03-03T11:30:00+00:00", "2026-03-03T12:00:00+00:00",
        "2026-03-04T11:00:00+00:00", "2026-03-04T11:30:00+00:00", "2026-03-04T12:00:00+00:00",
        "2026-03-04T12:30:00+00:00",
    ]
    assert [a["email"] for a in r.data["attendees"]] == [ME, BOB, KENJI]
    assert r.data["attendees"][1] == {"email": BOB, "timezone": "America/New_York",
                                      "working_hours": "06:00-14:00 Mon,Tue,Wed,Thu,Fri", "source": "calendar"}
    assert "Tue 2026-03-03 11:30-12:00" in r.text


def test_free_slots_are_shown_in_the_requested_zone(ws: Workspace) -> None:
    r = ws.call("find_free_slots", {"attendees": [BOB, KENJI], "duration_minutes": 60, "timezone": "America/New_York",
                                    "window_start": "2026-03-03T00:00", "window_end": "2026-03-03T23:00"})
    # Free 11:30-12:30 UTC on Tuesday = 06:30-07:30 EST; a 60-minute slot fits exactly once.
    assert [(s["start"], s["end"]) for s in r.data["slots"]] == [
        ("2026-03-03T06:30:00-05:00", "2026-03-03T07:30:00-05:00")]


def test_free_slots_follow_daylight_saving_in_new_york(ws: Workspace) -> None:
    # Mon 9 Mar, New York is on EDT: Bob works 10:00-18:00 UTC, so the shared window is 10:00-13:00 UTC.
    r = ws.call("find_free_slots", {"attendees": [BOB, KENJI], "duration_minutes": 60, "step_minutes": 60,
                                    "window_start": "2026-03-09T00:00:00Z", "window_end": "2026-03-10T00:00:00Z"})
    assert starts(r) == ["2026-03-09T10:00:00+00:00", "2026-03-09T11:00:00+00:00", "2026-03-09T12:00:00+00:00"]


def test_free_slots_outside_working_hours_and_alignment(ws: Workspace) -> None:
    # Ignoring working hours, Bob and I are busy 09:00-09:30 (standup) and 11:00-11:30 (Bob) on Tuesday,
    # so from 08:00 to 12:30 we are free 08:00-09:00, 09:30-11:00 and 11:30-12:30. Starts lie on the
    # 45-minute grid from local midnight (... 07:30, 08:15, 09:00, 09:45, 10:30, 11:15, 12:00 ...):
    # 08:15-09:00 and 09:45-10:30 fit; 10:30-11:15 and 12:00-12:45 do not.
    r = ws.call("find_free_slots", {"attendees": [BOB], "duration_minutes": 45, "step_minutes": 45, "max_results": 100,
                                    "working_hours_only": False, "window_start": utc(3, 8),
                                    "window_end": utc(3, 12, 30)})
    assert starts(r) == [utc(3, 8, 15), utc(3, 9, 45)]


def test_free_slots_skip_weekends_and_the_past(ws: Workspace) -> None:
    weekend = ws.call("find_free_slots", {"attendees": [BOB], "duration_minutes": 30,
                                          "window_start": "2026-03-07T00:00Z", "window_end": "2026-03-09T00:00Z"})
    assert weekend.data["slots"] == [] and "No free 30-minute slot" in weekend.text
    # The clock is Mon 09:00 UTC: nothing before now is offered; Bob starts at 11:00 UTC.
    today = ws.call("find_free_slots", {"attendees": [BOB], "duration_minutes": 30, "max_results": 2,
                                        "window_start": "2026-03-02T00:00Z", "window_end": "2026-03-02T23:00Z"})
    assert starts(today) == ["2026-03-02T11:00:00+00:00", "2026-03-02T11:30:00+00:00"]
    assert today.data["more_available"] is True


def test_free_slots_read_offsetless_times_in_the_requested_zone(ws: Workspace) -> None:
    r = ws.call("find_free_slots", {"attendees": [], "duration_minutes": 60, "timezone": "Asia/Tokyo",
                                    "window_start": "2026-03-04T00:00", "window_end": "2026-03-04T20:00"})
    # The window is Wed 4 Mar 00:00-20:00 JST = Tue 15:00 - Wed 11:00 UTC, and only I must be free:
    # London 09-17 UTC gives Tue 15:00-17:00 UTC (00:00-02:00 JST) and Wed 09:00-11:00 UTC (18:00-20:00 JST).
    assert starts(r) == ["2026-03-04T00:00:00+09:00", "2026-03-04T00:30:00+09:00", "2026-03-04T01:00:00+09:00",
                         "2026-03-04T18:00:00+09:00", "2026-03-04T18:30:00+09:00", "2026-03-04T19:00:00+09:00"]


def test_free_slots_use_contacts_then_defaults() -> None:
    need("contacts" in all_services(), "the contacts service provides time zones for people without a calendar")
    ws = make(services=["calendar", "contacts"], events=[], contacts=[
        {"email": ANA, "name": "Ana Silva", "timezone": "America/Sao_Paulo",
         "working_hours_start": "08:00", "working_hours_end": "12:00"},
    ])
    r = ws.call("find_free_slots", {"attendees": [ANA, "guest@other.org"], "duration_minutes": 60, "step_minutes": 60,
                                    "window_start": "2026-03-03T00:00Z", "window_end": "2026-03-04T00:00Z"})
    # Ana (UTC-3) works 11:00-15:00 UTC; the guest has no record: UTC 09-17; me London 09-17 -> 11:00-15:00.
    assert starts(r) == [utc(3, h) for h in (11, 12, 13, 14)]
    assert [a["source"] for a in r.data["attendees"]] == ["calendar", "contacts", "default"]


def test_default_zone_of_the_user_is_the_workspace_zone() -> None:
    ws = Workspace.create(WorkspaceConfig(services=["calendar"], user=ME, timezone="Asia/Kolkata"))
    r = ws.call("find_free_slots", {"attendees": [], "duration_minutes": 30, "max_results": 1,
                                    "window_start": "2026-03-03T00:00", "window_end": "2026-03-04T00:00"})
    assert starts(r) == ["2026-03-03T09:00:00+05:30"]


@pytest.mark.parametrize("args,words", [
    ({"duration_minutes": 0}, "duration_minutes must be between 5 and 1440"),
    ({"step_minutes": 2}, "step_minutes must be between 5 and 1440"),
    ({"max_results": 0}, "max_results must be between 1 and 100"),
    ({"window_end": "2026-03-02T00:00Z"}, "must be after window_start"),
    ({"window_end": "2026-09-01T00:00Z"}, "more than 92 days"),
    ({"window_start": "2026-02-01T00:00Z", "window_end": "2026-02-02T00:00Z"}, "ends before now"),
    ({"window_start": "next tuesday"}, "window_start 'next tuesday' is not an ISO 8601 date-time"),
    ({"timezone": "Mars/Olympus"}, "not a known IANA time zone"),
    ({"timezone": "../../etc/passwd"}, "not a known IANA time zone"),
    ({"attendees": ["bob at acme"]}, "attendees[0] 'bob at acme'"),
    ({"attendees": [], "include_self": False}, "attendees is empty"),
    ({"duration_minutes": "long"}, "invalid arguments for find_free_slots: duration_minutes"),
])
def test_free_slots_errors(ws: Workspace, args: dict, words: str) -> None:
    base = {"attendees": [BOB], "duration_minutes": 30, "window_start": "2026-03-03T00:00Z",
            "window_end": "2026-03-04T00:00Z"}
    assert words in err(ws, "find_free_slots", {**base, **args})


ZONES = ["Europe/London", "America/New_York", "Asia/Tokyo", "Asia/Kolkata", "Australia/Adelaide", "UTC"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    zones=st.lists(st.sampled_from(ZONES), min_size=1, max_size=3),
    hours=st.lists(st.tuples(st.integers(0, 20), st.integers(1, 8)), min_size=3, max_size=3),
    busy=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 95), st.integers(1, 12), st.booleans()), max_size=8),
    duration=st.sampled_from([15, 30, 45, 60, 90]),
    step=st.sampled_from([15, 30, 60]),
    display=st.sampled_from(ZONES),
    working=st.booleans(),
)
def test_free_slots_are_exactly_the_free_aligned_times(zones, hours, busy, duration, step, display, working) -> None:  # type: ignore[no-untyped-def]
    """Every returned slot is free for all, inside everyone's hours, aligned and in order, and no
    qualifying candidate is missing (checked by brute force over the step grid)."""
    people = [f"p{i}@acme.com" for i in range(len(zones))]
    cals = [{"owner": p, "timezone": z, "working_hours_start": f"{h:02d}:00",
             "working_hours_end": f"{min(h + n, 23):02d}:00"}
            for p, z, (h, n) in zip(people, zones, hours[:len(zones)], strict=True)]
    day0 = datetime(2026, 3, 3, tzinfo=UTC)
    evs = []
    for i, (who, q, length, declined) in enumerate(busy):
        owner = people[who % len(people)]
        s = day0 + timedelta(minutes=15 * q)
        evs.append(event(f"evt-{i}", s.isoformat(), (s + timedelta(minutes=15 * length)).isoformat(), "x@acme.com",
                         (owner, "declined" if declined else "accepted")))
    ws = Workspace.create(WorkspaceConfig(services=["calendar"], user=people[0]),
                          {"calendar": {"calendars": cals, "events": evs}})
    lo, hi = day0, day0 + timedelta(days=1)
    r = ws.call("find_free_slots", {"attendees": people, "duration_minutes": duration, "step_minutes": step,
                                    "timezone": display, "working_hours_only": working, "max_results": 100,
                                    "window_start": lo.isoformat(), "window_end": hi.isoformat()})
    assert r.ok, r.text
    got = [datetime.fromisoformat(s["start"]) for s in r.data["slots"]]
    length = timedelta(minutes=duration)

    def ok(s: datetime) -> bool:
        e = s + length
        if s < lo or e > hi:
            return False
        for p, c in zip(people, cals, strict=True):
            z = ZoneInfo(c["timezone"])
            ls, le = s.astimezone(z), e.astimezone(z)
            if working:
                start_t = datetime.strptime(c["working_hours_start"], "%H:%M").time()
                end_t = datetime.strptime(c["working_hours_end"], "%H:%M").time()
                if ls.weekday() > 4 or ls.date() != le.date() or ls.time() < start_t or le.time() > end_t:
                    return False
            for ev, spec in zip(evs, busy, strict=True):
                if ev["attendees"][0]["email"] == p and not spec[3]:
                    a, b = datetime.fromisoformat(ev["start"]), datetime.fromisoformat(ev["end"])
                    if a < e and s < b:
                        return False
        return True

    z = ZoneInfo(display)
    grid, t = [], datetime.combine((lo - timedelta(days=1)).astimezone(z).date(), datetime.min.time(), z)
    while t < hi:
        if t >= lo and ok(t.astimezone(UTC)):
            grid.append(t.astimezone(UTC))
        t += timedelta(minutes=step)  # wall-clock steps from local midnight (no DST change on these days)
    note_event("some slots" if got else "no slot")
    assert got == sorted(got)
    assert all(ok(s) for s in got)
    assert got == grid[:100]


# --- list_events / get_event ----------------------------------------------------------------------


def test_list_events_range_order_and_roles(ws: Workspace) -> None:
    r = ws.call("list_events", {"start": "2026-03-03T00:00", "end": "2026-03-05T00:00"})
    assert [e["id"] for e in r.data["events"]] == ["evt-standup", "evt-me-tentative"]
    assert r.data["calendar"] == ME and r.data["timezone"] == "Europe/London"
    assert "organizer" in r.text and "response: tentative" in r.text
    # Another person's calendar, in their zone; declined invitations are still listed.
    k = ws.call("list_events", {"calendar": KENJI, "start": "2026-03-03T00:00Z", "end": "2026-03-04T00:00Z"})
    assert [e["id"] for e in k.data["events"]] == ["evt-kenji-declined"]
    assert k.data["events"][0]["start"] == "2026-03-03T21:00:00+09:00"


def test_list_events_defaults_query_and_truncation(ws: Workspace) -> None:
    week = ws.call("list_events", {"calendar": ANA})  # now (Mon 09:00 UTC) + 7 days
    assert [e["id"] for e in week.data["events"]] == ["evt-kenji-declined", "evt-me-tentative", "evt-ana"]
    only = ws.call("list_events", {"calendar": ANA, "query": "ONLY ana"})
    assert [e["id"] for e in only.data["events"]] == ["evt-ana"]
    assert [e["id"] for e in ws.call("list_events", {"calendar": ANA, "query": "kenji@"}).data["events"]] == [
        "evt-kenji-declined"]
    short = ws.call("list_events", {"calendar": ANA, "max_results": 1})
    assert short.data["truncated"] is True and "more events exist" in short.text
    shown = ws.call("list_events", {"timezone": "Asia/Tokyo", "start": "2026-03-03T18:00", "end": "2026-03-03T19:00"})
    assert [e["start"] for e in shown.data["events"]] == ["2026-03-03T18:00:00+09:00"]


@pytest.mark.parametrize("args,words", [
    ({"start": "2026-03-05", "end": "2026-03-04"}, "must be after start"),
    ({"start": "yesterday"}, "start 'yesterday' is not an ISO 8601 date-time"),
    ({"start": "0001-01-01T00:00"}, "outside the years 1900-2200"),
    ({"calendar": "not-an-email"}, "calendar 'not-an-email'"),
    ({"max_results": 0}, "max_results must be between 1 and 500"),
    ({"timezone": "Nowhere"}, "not a known IANA time zone"),
    ({"query": "x" * 501}, "query is 501 characters long"),
])
def test_list_events_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "list_events", args)


def test_get_event(ws: Workspace) -> None:
    r = ws.call("get_event", {"id": "evt-standup"})
    assert r.data["title"] == "Standup" and r.data["timezone"] == "UTC"
    assert r.data["attendees"] == [{"email": ME, "response": "accepted", "optional": False},
                                   {"email": BOB, "response": "accepted", "optional": False}]
    assert r.data["created"] == "2026-03-02T09:00:00+00:00"
    assert "Standup [evt-standup]" in r.text and "bob@acme.com: accepted" in r.text
    ny = ws.call("get_event", {"id": "evt-standup", "timezone": "America/New_York"})
    assert ny.data["start"] == "2026-03-03T04:00:00-05:00"
    assert "did you mean evt-standup" in err(ws, "get_event", {"id": "evt-standp"})
    assert "not_found" in err(ws, "get_event", {"id": "zzz"})
    assert "not a known IANA" in err(ws, "get_event", {"id": "evt-standup", "timezone": "EST5"})


# --- create / update / delete / respond -----------------------------------------------------------


def test_create_event_reads_naive_times_in_my_zone(ws: Workspace) -> None:
    r = ws.call("create_event", {"title": "  Planning ", "start": "2026-03-05T10:00", "end": "2026-03-05T11:00",
                                 "attendees": [BOB, "BOB@acme.com", ME], "optional_attendees": [KENJI],
                                 "location": "Room 1", "description": "Q2"})
    assert r.ok, r.text
    ev = r.data["event"]
    assert ev["id"].startswith("evt-") and ev["title"] == "Planning" and ev["timezone"] == "Europe/London"
    assert ev["start"] == "2026-03-05T10:00:00+00:00" and ev["organizer"] == ME
    assert ev["attendees"] == [{"email": ME, "response": "accepted", "optional": False},
                               {"email": BOB, "response": "needs_action", "optional": False},
                               {"email": KENJI, "response": "needs_action", "optional": True}]
    assert r.data["conflicts"] == []
    stored = ws.table("calendar.events")[ev["id"]]
    assert stored.start == datetime(2026, 3, 5, 10, tzinfo=UTC) and stored.created == ws.config.now
    assert [c.kind for c in r.diff] == ["added"]


def test_create_event_with_offsets_zone_and_conflicts(ws: Workspace) -> None:
    r = ws.call("create_event", {"title": "Sync", "start": "2026-03-03T06:15:00-05:00",
                                 "end": "2026-03-03T07:15:00-05:00", "attendees": [BOB],
                                 "timezone": "America/New_York"})
    ev = r.data["event"]
    assert ev["start"] == "2026-03-03T06:15:00-05:00" and ev["timezone"] == "America/New_York"
    assert r.data["conflicts"] == [{"email": BOB, "event_id": "evt-bob", "title": "Bob 1:1"}]
    assert "Overlaps: bob@acme.com is busy with 'Bob 1:1'" in r.text
    again = ws.call("create_event", {"title": "Sync", "start": "2026-03-03T06:15:00-05:00",
                                     "end": "2026-03-03T07:15:00-05:00"})
    assert again.data["event"]["id"] != ev["id"]


def test_created_ids_are_deterministic() -> None:
    def run() -> list[str]:
        ws = make()
        return [ws.call("create_event", {"title": f"E{i}", "start": "2026-03-05T10:00", "end": "2026-03-05T11:00"})
                .data["event"]["id"] for i in range(3)]

    assert run() == run()
    assert len(set(run())) == 3


@pytest.mark.parametrize("args,words", [
    ({"end": "2026-03-05T09:00"}, "must not be before start"),
    ({"title": "   "}, "title is empty"),
    ({"title": "x" * 501}, "at most 500"),
    ({"description": "bad \ud800 text"}, "description contains characters that are not valid Unicode"),
    ({"start": "2026-03-05 25:00"}, "start '2026-03-05 25:00' is not an ISO 8601 date-time"),
    ({"attendees": [BOB, "carol@"]}, "attendees[1] 'carol@'"),
    ({"optional_attendees": ["a b@x.com"]}, "optional_attendees[0]"),
    ({"attendees": [f"p{i}@x.com" for i in range(201)]}, "at most 200"),
    ({"timezone": "Europe/Londn"}, "not a known IANA time zone"),
    ({"start": 5}, "invalid arguments for create_event: start"),
    ({"colour": "red"}, "colour: Extra inputs are not permitted"),
])
def test_create_event_errors(ws: Workspace, args: dict, words: str) -> None:
    base = {"title": "T", "start": "2026-03-05T10:00", "end": "2026-03-05T11:00"}
    assert words in err(ws, "create_event", {**base, **args})


def test_update_event_moves_keeping_length_and_resets_responses(ws: Workspace) -> None:
    r = ws.call("update_event", {"id": "evt-standup", "start": "2026-03-03T10:00"})
    assert r.ok, r.text
    ev = r.data["event"]
    assert (ev["start"], ev["end"]) == ("2026-03-03T10:00:00+00:00", "2026-03-03T10:30:00+00:00")
    assert r.data["changed"] == ["attendees", "end", "start"] and r.data["responses_reset"] is True
    assert [a["response"] for a in ev["attendees"]] == ["accepted", "needs_action"]
    assert ws.table("calendar.events")["evt-standup"].updated == ws.events()[-1].sim_time


def test_update_event_fields_and_guests(ws: Workspace) -> None:
    r = ws.call("update_event", {"id": "evt-standup", "title": "Daily", "location": "Zoom",
                                 "add_attendees": [KENJI], "remove_attendees": [BOB]})
    assert r.data["changed"] == ["attendees", "location", "title"] and r.data["responses_reset"] is False
    guests = [(a["email"], a["response"]) for a in r.data["event"]["attendees"]]
    assert guests == [(ME, "accepted"), (KENJI, "needs_action")]
    replaced = ws.call("update_event", {"id": "evt-standup", "attendees": [ANA, KENJI]})
    assert [a["email"] for a in replaced.data["event"]["attendees"]] == [ME, ANA, KENJI]
    same = ws.call("update_event", {"id": "evt-standup", "title": "Daily"})
    assert same.ok and same.data["changed"] == [] and not same.diff
    zoned = ws.call("update_event", {"id": "evt-standup", "timezone": "Asia/Tokyo"})
    assert zoned.data["changed"] == ["timezone"] and zoned.data["event"]["start"] == "2026-03-03T18:00:00+09:00"


def test_update_event_errors(ws: Workspace) -> None:
    assert "permission_denied" in err(ws, "update_event", {"id": "evt-bob", "title": "Mine now"})
    assert "only the organizer (bob@acme.com)" in err(ws, "update_event", {"id": "evt-bob", "title": "x"})
    assert "nothing to change" in err(ws, "update_event", {"id": "evt-standup"})
    assert "not_found" in err(ws, "update_event", {"id": "evt-nope", "title": "x"})
    assert "cannot be removed" in err(ws, "update_event", {"id": "evt-standup", "remove_attendees": [ME]})
    assert "ana@acme.com is not invited" in err(ws, "update_event", {"id": "evt-standup", "remove_attendees": [ANA]})
    assert "must not be before start" in err(ws, "update_event", {"id": "evt-standup", "end": "2026-03-03T08:00Z"})
    assert "title is empty" in err(ws, "update_event", {"id": "evt-standup", "title": ""})
    assert "add_attendees[0]" in err(ws, "update_event", {"id": "evt-standup", "add_attendees": ["nope"]})


def test_delete_event(ws: Workspace) -> None:
    assert "permission_denied" in err(ws, "delete_event", {"id": "evt-me-tentative"})
    assert "respond_to_event with 'declined'" in err(ws, "delete_event", {"id": "evt-me-tentative"})
    r = ws.call("delete_event", {"id": "evt-standup"})
    assert r.data == {"deleted": "evt-standup", "title": "Standup", "notified": [BOB]}
    assert "evt-standup" not in ws.table("calendar.events")
    assert [c.kind for c in r.diff] == ["removed"]
    assert "not_found" in err(ws, "delete_event", {"id": "evt-standup"})
    assert ws.tools["delete_event"].mcp_annotations()["destructiveHint"] is True


def test_respond_to_event(ws: Workspace) -> None:
    ws.call("list_events", {})  # let the clock tick once so that `updated` visibly changes
    r = ws.call("respond_to_event", {"id": "evt-me-tentative", "response": "declined"})
    assert r.ok and [a["response"] for a in r.data["event"]["attendees"] if a["email"] == ME] == ["declined"]
    assert list(r.diff)[0].fields.keys() == {"attendees", "updated"}
    again = ws.call("respond_to_event", {"id": "evt-me-tentative", "response": "declined"})
    assert again.ok and not again.diff
    # A declined event no longer blocks my time.
    slots = ws.call("find_free_slots", {"attendees": [], "duration_minutes": 30, "working_hours_only": False,
                                        "window_start": utc(3, 12, 30), "window_end": utc(3, 13)})
    assert starts(slots) == [utc(3, 12, 30)]
    assert "permission_denied" in err(ws, "respond_to_event", {"id": "evt-bob", "response": "accepted"})
    assert "you organise 'Standup'" in err(ws, "respond_to_event", {"id": "evt-standup", "response": "declined"})
    assert "invalid_argument" in err(ws, "respond_to_event", {"id": "evt-me-tentative", "response": "maybe"})


# --- records, policies, persistence ---------------------------------------------------------------


@pytest.mark.parametrize("bad,words", [
    ({"end": "2026-03-03T08:00:00Z"}, "must not be before start"),
    ({"start": "2026-03-03T09:00:00"}, "time zone offset"),
    ({"organizer": "nobody"}, "organizer 'nobody'"),
    ({"timezone": "Moon/Base"}, "IANA"),
    ({"attendees": [{"email": BOB}, {"email": "Bob@acme.com"}]}, "listed twice"),
    ({"attendees": [{"email": BOB, "response": "maybe"}]}, "attendees.0.response"),
])
def test_bad_events_in_data_are_refused_with_their_path(bad: dict, words: str) -> None:
    row = {**event("e1", utc(3, 9), utc(3, 10), ME), **bad}
    with pytest.raises(SpecError) as info:
        make(events=[row])
    assert "data.calendar.events[0]" in str(info.value) and words in str(info.value)


def test_bad_calendars_in_data_are_refused() -> None:
    for row, words in [({"owner": ME, "working_hours_start": "18:00"}, "later than"),
                       ({"owner": ME, "working_days": [0, 7]}, "0 (Monday) to 6"),
                       ({"owner": ME, "timezone": "Nope"}, "IANA")]:
        with pytest.raises(SpecError, match="data.calendar.calendars"):
            Workspace.create(WorkspaceConfig(services=["calendar"], user=ME), {"calendar": {"calendars": [row]}})
        with pytest.raises(SpecError, match=words.replace("(", r"\(").replace(")", r"\)")):
            Workspace.create(WorkspaceConfig(services=["calendar"], user=ME), {"calendar": {"calendars": [row]}})


def test_policies_read_event_fields() -> None:
    need("contacts" in all_services(), "the working-hours policy reads time zones from contacts")
    config = WorkspaceConfig(services=["calendar", "contacts"], user=ME, policies=[
        {"type": "working_hours"}, {"type": "max_meeting_length", "minutes": 60}])
    ws = Workspace.create(config, {"contacts": {"people": [
        {"email": ME, "name": "Me", "timezone": "Europe/London"},
        {"email": BOB, "name": "Bob", "timezone": "America/New_York"}]}})
    late = ws.call("create_event", {"title": "Late", "start": "2026-03-03T16:00", "end": "2026-03-03T16:30",
                                    "attendees": [BOB]})
    assert late.ok, late.text  # 11:00 in New York
    early = ws.call("create_event", {"title": "Early", "start": "2026-03-03T10:00", "end": "2026-03-03T10:30",
                                     "attendees": [BOB]})
    assert early.error.code == "policy_violation" and "bob@acme.com's time zone" in early.error.message
    long = ws.call("create_event", {"title": "Long", "start": "2026-03-03T14:00", "end": "2026-03-03T16:00"})
    assert long.error.code == "policy_violation" and "120 minutes" in long.error.message


def test_state_survives_json_round_trip_and_snapshots(ws: Workspace) -> None:
    ws.call("create_event", {"title": "X", "start": "2026-03-05T10:00", "end": "2026-03-05T11:00",
                             "attendees": [BOB], "timezone": "Asia/Tokyo"})
    snap = ws.snapshot()
    back = Workspace.from_json(ws.to_json())
    assert back.content_hash == ws.content_hash
    assert back.export_data() == ws.export_data()
    ws.call("delete_event", {"id": "evt-standup"})
    ws.restore(snap)
    assert ws.content_hash == back.content_hash


def test_every_tool_is_documented_and_hinted() -> None:
    tools = all_services()["calendar"].tools
    assert set(tools) == {"list_events", "get_event", "create_event", "update_event", "delete_event",
                          "respond_to_event", "find_free_slots"}
    for name in ("list_events", "get_event", "find_free_slots"):
        assert tools[name].mcp_annotations()["readOnlyHint"] is True
    assert tools["create_event"].mcp_annotations()["readOnlyHint"] is False
    schema = tools["find_free_slots"].input_schema
    assert schema["required"] == ["attendees", "duration_minutes", "window_start", "window_end"]
    assert all(p.get("description") for p in schema["properties"].values())


# --- people named by name ------------------------------------------------------------------------

DIRECTORY = [{"email": ME, "name": "Morgan Lee"}, {"email": BOB, "name": "Bob Stone", "title": "Engineer"},
             {"email": KENJI, "name": "Kenji Sato"}, {"email": ANA, "name": "Ana Silva", "title": "Designer"},
             {"email": "ana.s@acme.com", "name": "Ana Silva", "title": "Accountant"},
             {"email": "dana.reyes@acme.com", "name": "Dana Reyes", "timezone": "America/Chicago"}]


def named() -> Workspace:
    need("contacts" in all_services(), "names resolve through the contacts directory")
    return make(services=["calendar", "contacts"], contacts=DIRECTORY)


def test_attendees_named_by_name_resolve_through_the_directory() -> None:
    ws = named()
    r = ws.call("create_event", {"title": "Pipeline", "start": utc(5, 15), "end": utc(5, 16),
                                 "attendees": ["Dana Reyes", "kenji"], "optional_attendees": ["Bob Stone <BOB@acme.com>"]})
    assert r.ok, r.text
    assert [(a["email"], a["optional"]) for a in r.data["event"]["attendees"]] == [
        (ME, False), ("dana.reyes@acme.com", False), (KENJI, False), (BOB, True)]
    eid = r.data["event"]["id"]
    up = ws.call("update_event", {"id": eid, "add_attendees": ["morgan lee", "Bob Stone"], "remove_attendees": ["Kenji Sato"]})
    assert [a["email"] for a in up.data["event"]["attendees"]] == [ME, "dana.reyes@acme.com", BOB]
    slots = ws.call("find_free_slots", {"attendees": ["Dana Reyes"], "duration_minutes": 30, "max_results": 1,
                                        "window_start": "2026-03-03T00:00Z", "window_end": "2026-03-04T00:00Z"})
    assert slots.data["attendees"][1] == {"email": "dana.reyes@acme.com", "timezone": "America/Chicago",
                                          "working_hours": "09:00-17:00 Mon,Tue,Wed,Thu,Fri", "source": "contacts"}
    assert ws.call("list_events", {"calendar": "Bob Stone", "start": utc(3, 0)}).data["calendar"] == BOB


@pytest.mark.parametrize("tool,args,words", [
    ("create_event", {"title": "x", "start": utc(5, 9), "end": utc(5, 10), "attendees": [BOB, "Ana Silva"]},
     "attendees[1] 'Ana Silva' matches 2 people: Ana Silva <ana.s@acme.com>, Accountant; "
     "Ana Silva <ana@acme.com>, Designer; give the e-mail address"),
    ("create_event", {"title": "x", "start": utc(5, 9), "end": utc(5, 10), "optional_attendees": ["Kenji Sado"]},
     "optional_attendees[0] 'Kenji Sado' is neither an e-mail address nor a name in the directory; did you mean Kenji Sato?"),
    ("update_event", {"id": "evt-standup", "add_attendees": ["ana"]}, "add_attendees[0] 'ana' matches 2 people"),
    ("find_free_slots", {"attendees": ["Nobody Here"], "duration_minutes": 30, "window_start": utc(5, 0),
                         "window_end": utc(6, 0)}, "attendees[0] 'Nobody Here' is neither"),
    ("list_events", {"calendar": "Ana Silva"}, "calendar 'Ana Silva' matches 2 people"),
])
def test_ambiguous_or_unknown_names_are_refused_with_candidates(tool: str, args: dict, words: str) -> None:
    assert words in err(named(), tool, args)


def test_names_without_a_directory_ask_for_an_address(ws: Workspace) -> None:
    message = err(ws, "create_event", {"title": "x", "start": utc(5, 9), "end": utc(5, 10), "attendees": ["Bob"]})
    assert "attendees[0] 'Bob' is not an e-mail address (and there is no directory to look names up in)" in message


def test_an_imported_event_without_an_organizer_is_the_users() -> None:
    holiday = {"id": "evt-holiday", "title": "Company holiday", "start": utc(6, 0), "end": utc(7, 0)}
    ws = make(events=[*EVENTS, holiday, {**holiday, "id": "evt-none", "organizer": None, "title": "Booking"}])
    evs = ws.table("calendar.events")
    assert evs["evt-holiday"].organizer == ME and evs["evt-none"].organizer == ME
    assert evs["evt-bob"].organizer == BOB  # a given organizer stays
    assert ws.call("get_event", {"id": "evt-holiday"}).data["organizer"] == ME
    assert ws.call("update_event", {"id": "evt-holiday", "title": "Company holiday (moved)"}).ok
    with pytest.raises(SpecError, match="organizer"):
        make(events=[{**holiday, "organizer": "not an address"}])
