"""Validation's probes stay inside the task: collateral actions and changes that break a maintained predicate use
only tools of the services the solutions call (a notes task in a workspace that also has mail and tickets needs
no guard on them), and a natural "nothing shared with the client" guard (a maintained record_absent) is accepted
and proven to notice a share with the client."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import synth.validate as validate_mod
from synth.checks import enabled_tools
from synth.spec import parse_spec
from synth.validate import probe_tools, validate_spec

SHARE: dict[str, Any] = {
    "id": "share-attendees", "title": "Share the meeting notes", "capabilities": ["information_retrieval"],
    "difficulty": "easy", "expected_horizon": 2,
    "world": {"organisation": {"name": "Acme", "domain": "acme.io"},
              "people": [{"name": "Dana Reyes", "email": "dana@acme.io", "role": "user"},
                         {"name": "Ann Lee", "email": "ann@acme.io"}, {"name": "Bob Roy", "email": "bob@acme.io"},
                         {"name": "Zed Client", "email": "zed@client.example", "role": "external"}]},
    "services": ["notes", "mail", "tickets"],
    "initial": {
        "notes": {"notes": [
            {"id": "note-1", "title": "Kickoff notes", "body": "Budget agreed.",
             "participants": ["ann@acme.io", "bob@acme.io", "zed@client.example"]},
            {"id": "note-2", "title": "Client call", "body": "Slides.", "collaborators": [{"email": "zed@client.example"}]},
            {"id": "note-3", "title": "Internal retro", "body": "Went well."}]},
        "mail": {"messages": [{"id": "msg-1", "sender": "ann@acme.io", "to": ["dana@acme.io"], "subject": "Kickoff",
                               "body": "Thanks all", "owner": "dana@acme.io", "folder": "inbox",
                               "date": "2024-04-01T09:00:00+00:00"}]},
        "tickets": {"projects": [{"key": "OPS", "name": "Ops"}],
                    "tickets": [{"key": "OPS-1", "project": "OPS", "title": "Printer", "status": "Open"}]}},
    "now": "2024-04-02T09:00:00+00:00", "user": "dana@acme.io",
    "request": "Share the kickoff notes with our own people who attended, not with the client.",
    "predicates": [
        {"kind": "record_exists", "table": "notes.notes",
         "where": {"id": "note-1", "collaborators.email": {"includes": ["ann@acme.io", "bob@acme.io"]}}},
        {"kind": "record_absent", "table": "notes.notes", "new_only": True, "maintain": True,
         "where": {"collaborators.email": {"includes": ["zed@client.example"]}},
         "description": "nothing newly shared with the client"}],
    "reference": {"steps": [{"kind": "call", "tool": "get_note", "args": {"id": "note-1"}},
                            {"kind": "call", "tool": "share_note",
                             "args": {"id": "note-1", "people": ["ann@acme.io", "bob@acme.io"]}}],
                  "final_answer": "Shared the kickoff notes with Ann and Bob."},
}


def test_a_notes_task_needs_no_guard_on_mail_or_tickets_and_its_client_guard_is_accepted() -> None:
    report = validate_spec(parse_spec(SHARE), max_mutants=None)
    assert report.ok, report.text()
    assert report.stats["mutants"] == report.stats["mutants_killed"]


def test_the_probes_use_only_the_services_the_solutions_call() -> None:
    spec = parse_spec(SHARE)
    tools = probe_tools(spec, spec.build_workspace().tools)
    assert {t.service for t in tools.values()} == {"notes"} and "share_note" in tools
    assert "delete_email" not in tools and "transition_ticket" not in tools


def test_with_every_enabled_tool_as_a_probe_the_spec_was_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate_mod, "probe_tools", lambda spec, exposed: enabled_tools(spec))
    report = validate_spec(parse_spec(SHARE), max_mutants=None)
    forced = [f.problem for f in report.feedback if f.check == "mutants"]
    assert any("delete_email" in p for p in forced) and any("transition_ticket" in p for p in forced)


def test_the_maintained_client_guard_is_broken_by_a_share_with_the_client() -> None:
    """The guard is proven to read what it guards: a note changed to include the client fails it. A guard that
    cannot notice (it names a field no share touches) is still reported."""
    report = validate_spec(parse_spec(SHARE), max_mutants=None)
    assert not any("maintain" in f.path for f in report.feedback)
    blind = copy.deepcopy(SHARE)
    blind["predicates"][1]["where"] = {"collaborators.email": {"regex": "client\\.example$"}}
    weak = validate_spec(parse_spec(blind), max_mutants=None)
    assert any(f.path == "predicates[1].maintain" and "no change can break" in f.problem for f in weak.feedback)
