"""Mail, calendar and ticket predicates, and the policies that guard those services."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.predicates import evaluate, parse_predicates

USER = "ana@acme.com"
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)  # a Monday


def make(policies: list | None = None) -> Workspace:
    data = {
        "contacts": {"people": [
            {"email": USER, "name": "Ana", "timezone": "Europe/London"},
            {"email": "bo@acme.com", "name": "Bo", "timezone": "America/New_York"},
            {"email": "cy@acme.com", "name": "Cy", "timezone": "Europe/London"},
        ]},
        "mail": {"accounts": [{"email": USER, "name": "Ana"}, {"email": "bo@acme.com", "name": "Bo"}],
                 "messages": [{"id": "m1", "owner": USER, "folder": "inbox", "sender": "bo@acme.com", "to": [USER],
                               "subject": "Budget?", "body": "What is the Q1 total?", "date": "2026-03-01T10:00:00+00:00"}]},
        "calendar": {"events": [{"id": "e1", "title": "Standup", "start": "2026-03-03T14:00:00+00:00",
                                 "end": "2026-03-03T14:30:00+00:00", "organizer": "bo@acme.com",
                                 "attendees": [{"email": "bo@acme.com", "response": "accepted"},
                                               {"email": USER, "response": "accepted"}]}]},
        "tickets": {"projects": [{"key": "OPS", "name": "Ops"}],
                    "tickets": [{"key": "OPS-1", "title": "Printer jam", "status": "In Progress", "reporter": "bo@acme.com"}]},
    }
    return Workspace.create(WorkspaceConfig(user=USER, now=NOW, services=["mail", "calendar", "contacts", "tickets"],
                                            policies=policies or []), data)


def verdict(ws: Workspace, pred: dict) -> tuple[bool, str]:
    r = evaluate(parse_predicates([pred]), ws).results[0]
    return r.passed, r.reason


def test_mail_sent(ws_reply: Workspace | None = None) -> None:
    ws = make()
    p = {"kind": "mail_sent", "to": ["bo@acme.com"], "body": {"contains": "15"}, "in_reply_to": "m1"}
    ok, why = verdict(ws, p)
    assert not ok and "no mail was sent" in why
    r = ws.call("reply_email", {"id": "m1", "body": "The total is 15."})
    assert r.ok, r.text
    assert verdict(ws, p)[0]
    ok, why = verdict(ws, dict(p, body={"contains": "16"}))
    assert not ok and "closest" in why and "body=" in why
    assert verdict(ws, {"kind": "mail_sent", "recipients": ["bo@acme.com"], "only_recipients": True})[0]
    assert not verdict(ws, {"kind": "mail_sent", "to": ["cy@acme.com"]})[0]
    assert verdict(ws, {"kind": "mail_sent", "count": 1})[0]
    # the internal recipient's inbox copy is not "sent by the user"
    assert verdict(ws, {"kind": "record_exists", "table": "mail.messages",
                        "where": {"owner": "bo@acme.com", "folder": "inbox"}, "count": 1})[0]


def test_event_exists_with_window_duration_and_overlap() -> None:
    ws = make()
    pred = {"kind": "event_exists", "title": {"contains": "sync"}, "attendees": ["bo@acme.com"],
            "starts_after": "2026-03-03T00:00:00+00:00", "ends_before": "2026-03-04T00:00:00+00:00",
            "duration_minutes": 30, "no_overlap": True}
    assert not verdict(ws, pred)[0]
    r = ws.call("create_event", {"title": "Budget sync", "start": "2026-03-03T14:15:00+00:00",
                                 "end": "2026-03-03T14:45:00+00:00", "attendees": ["bo@acme.com"]})
    assert r.ok, r.text
    ok, why = verdict(ws, pred)
    assert not ok and "overlaps e1" in why
    ws.call("update_event", {"id": r.data["event"]["id"], "start": "2026-03-03T15:00:00+00:00", "end": "2026-03-03T15:30:00+00:00"})
    assert verdict(ws, pred)[0], verdict(ws, pred)[1]
    ok, why = verdict(ws, dict(pred, duration_minutes=60))
    assert not ok and "duration=30" in why


def test_ticket_predicate() -> None:
    ws = make()
    p = {"kind": "ticket", "key": "OPS-1", "status": "Resolved", "new_comment": {"contains": "toner"}}
    ok, why = verdict(ws, p)
    assert not ok and "status='In Progress'" in why
    r = ws.call("transition_ticket", {"key": "OPS-1", "status": "Resolved", "comment": "Replaced the toner."})
    assert r.ok, r.text
    assert verdict(ws, p)[0]
    assert verdict(ws, {"kind": "ticket", "key": "OPS-1", "fields": {"reporter": "bo@acme.com"}})[0]
    ok, why = verdict(ws, {"kind": "ticket", "key": "OPS-404"})
    assert not ok and "does not exist" in why
    assert verdict(ws, {"kind": "record_exists", "table": "tickets.tickets", "where": {"key": "OPS-1", "status": "Resolved"}})[0]


def test_ticket_predicate_on_priority_scale_department_and_outside_reporter() -> None:
    ws = make()
    r = ws.call("create_ticket", {"project": "OPS", "title": "Refund", "priority": "unset", "department": "Billing",
                                  "category": "Refund request", "reporter_name": "Priya from Acme Corp",
                                  "watchers": ["Bo"]})
    assert r.ok, r.text
    key = r.data["ticket"]["key"]
    unset = {"kind": "ticket", "key": key, "fields": {"priority": None, "reporter": None,
                                                      "reporter_name": {"contains": "Acme"}, "department": "Billing",
                                                      "category": {"equals": "refund request", "ignore_case": True},
                                                      "watchers": {"includes": ["bo@acme.com"]}}}
    assert verdict(ws, unset)[0], verdict(ws, unset)[1]
    escalated = {"kind": "ticket", "key": key, "fields": {"priority": {"one_of": ["urgent", "critical"]}}}
    ok, why = verdict(ws, escalated)
    assert not ok and "priority=None" in why
    assert ws.call("update_ticket", {"key": key, "priority": "critical"}).ok
    assert verdict(ws, escalated)[0] and not verdict(ws, unset)[0]
    assert verdict(ws, {"kind": "record_exists", "table": "tickets.tickets",
                        "where": {"priority": "critical", "department": "Billing"}, "new_only": True})[0]


def test_recipient_domain_policy() -> None:
    ws = make([{"type": "allowed_recipient_domains", "domains": ["acme.com"]}])
    r = ws.call("send_email", {"to": ["bo@acme.com", "x@gmail.com"], "subject": "Q1", "body": "numbers"})
    assert r.error.code == "policy_violation" and "x@gmail.com" in r.error.message
    assert not ws.diff()
    assert ws.call("send_email", {"to": ["bo@acme.com"], "subject": "Q1", "body": "numbers"}).ok


def test_resolution_comment_policy() -> None:
    ws = make([{"type": "resolution_comment"}])
    r = ws.call("transition_ticket", {"key": "OPS-1", "status": "Resolved"})
    assert r.error.code == "policy_violation" and "comment" in r.error.message
    assert ws.table("tickets.tickets")["OPS-1"].status == "In Progress"
    assert ws.call("transition_ticket", {"key": "OPS-1", "status": "Resolved", "comment": "fixed"}).ok


@pytest.mark.parametrize("start,end,ok", [
    ("2026-03-03T15:00:00+00:00", "2026-03-03T15:30:00+00:00", True),    # 10:00 New York, 15:00 London
    ("2026-03-03T10:00:00+00:00", "2026-03-03T10:30:00+00:00", False),   # 05:00 in New York
    ("2026-03-07T15:00:00+00:00", "2026-03-07T15:30:00+00:00", False),   # a Saturday
])
def test_working_hours_policy_uses_each_attendees_zone(start: str, end: str, ok: bool) -> None:
    ws = make([{"type": "working_hours"}])
    r = ws.call("create_event", {"title": "Sync", "start": start, "end": end, "attendees": ["bo@acme.com"]})
    assert r.ok == ok, r.text
    if not ok:
        assert "working_hours" in r.error.message


def test_max_meeting_length_policy() -> None:
    ws = make([{"type": "max_meeting_length", "minutes": 45}])
    r = ws.call("create_event", {"title": "Long", "start": "2026-03-03T15:00:00+00:00", "end": "2026-03-03T16:00:00+00:00"})
    assert r.error.code == "policy_violation" and "60 minutes" in r.error.message
