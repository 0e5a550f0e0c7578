"""Zero-length calendar events (deadlines, start == end): created, moved and loaded; listed when they fall in the
range; they keep no one busy (no conflicts, no lost free slot, no `no_overlap` clash)."""

from __future__ import annotations

from test_service_calendar import ANA, BOB, ME, event, make, utc

from workspace_sim.predicates import evaluate, parse_predicates

DUE = "2026-03-03T12:00:00+00:00"


def test_a_deadline_is_created_listed_and_moved() -> None:
    ws = make()
    r = ws.call("create_event", {"title": "Report due", "start": DUE, "end": DUE, "attendees": [BOB]})
    assert r.ok, r.text
    ev = r.data["event"]
    assert ev["start"] == ev["end"] and r.data["conflicts"] == []
    listed = [e["id"] for e in ws.call("list_events", {"start": DUE, "end": "2026-03-03T13:00Z"}).data["events"]]
    assert ev["id"] in listed  # at the range's start
    before = ws.call("list_events", {"start": "2026-03-03T11:00Z", "end": DUE}).data["events"]
    assert ev["id"] not in [e["id"] for e in before]  # the range ends as the deadline comes
    moved = ws.call("update_event", {"id": ev["id"], "start": "2026-03-04T17:00Z"})
    assert moved.ok and moved.data["event"]["start"] == moved.data["event"]["end"]
    longer = ws.call("update_event", {"id": ev["id"], "end": "2026-03-04T18:00Z"})
    assert longer.ok and longer.data["event"]["end"].startswith("2026-03-04T18:00")


def test_a_deadline_keeps_no_one_busy() -> None:
    due = event("evt-due", utc(3, 10, 15), utc(3, 10, 15), ME, (ME, "accepted"), (BOB, "accepted"), title="Due")
    ws = make(events=[due])
    slots = ws.call("find_free_slots", {"attendees": [BOB], "duration_minutes": 60, "window_start": utc(3, 10),
                                        "window_end": utc(3, 11, 30), "working_hours_only": False})
    assert slots.data["slots"][0] == {"start": "2026-03-03T10:00:00+00:00", "end": "2026-03-03T11:00:00+00:00"}
    meeting = ws.call("create_event", {"title": "Sync", "start": utc(3, 10), "end": utc(3, 11), "attendees": [BOB]})
    assert meeting.ok and meeting.data["conflicts"] == []
    check = parse_predicates([{"kind": "event_exists", "title": "Sync", "no_overlap": True},
                              {"kind": "event_exists", "title": "Due", "new_only": False, "no_overlap": True}])
    assert [r.passed for r in evaluate(check, ws).results] == [True, True]


def test_deadlines_load_from_initial_data() -> None:
    ws = make(events=[event("evt-due", utc(5, 17), utc(5, 17), ANA, (ANA, "accepted"), title="Filing deadline")])
    assert ws.call("get_event", {"id": "evt-due"}).data["start"] == ws.call("get_event", {"id": "evt-due"}).data["end"]
