"""World events between days, through specs: the collateral-damage guards judge what the agent changed, not the
world (a two-day spec whose day-2 event delivers a mail passes its `only_changed` / `unchanged` guards on the
reference, and an agent that edits, moves or deletes that world-added mail, or the file the world corrected,
fails them); a database row patched between days keeps the agent's day-one update, and a bad value in the patch
is refused naming the event and the column."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from synth import validate_spec
from workspace_sim.core.errors import SpecError
from synth.spec import CallStep, SpecDriver, parse_spec, run_reference, run_steps

ME, LEE = "sam.ortiz@brightline.example", "lee.park@brightline.example"

SPEC: dict[str, Any] = {
    "version": "1.2", "id": "world-mail-guard", "title": "Log the figures Lee sends over two days",
    "capabilities": ["document_from_data"], "difficulty": "medium", "expected_horizon": 6,
    "world": {"organisation": {"name": "Brightline Labs", "domain": "brightline.example"},
              "people": [{"name": "Sam Ortiz", "email": ME, "role": "user"},
                         {"name": "Lee Park", "email": LEE, "title": "Procurement Lead"}]},
    "services": ["files", "mail"],
    "initial": {"files": {"files": [{"path": "/data/spend.csv", "content": "vendor,spend\nAcme,1200\n"}],
                          "folders": [{"path": "/reports"}]},
                "mail": {"accounts": [{"email": ME, "name": "Sam Ortiz"}, {"email": LEE, "name": "Lee Park"}]}},
    "now": "2026-03-02T09:00:00+01:00", "timezone": "Europe/Berlin", "user": ME,
    "request": "Write Acme's spend from /data/spend.csv to /reports/mon.md as 'Spend: N'. Standing rule: at the "
               "end of each day, /reports/log.md has one line per day so far, 'Mon: N' (then 'Tue: N').",
    "stages": [{"id": "mon", "title": "Monday"},
               {"id": "tue", "title": "Tuesday", "opens_at": "2026-03-03T09:00:00+01:00",
                "instructions": "Lee mailed me Globex's spend: write it to /reports/tue.md as 'Spend: N'."}],
    "events": [{"id": "lee-mail", "at_stage": "tue", "announce": "Lee's mail is in your inbox.", "changes": [
        {"op": "put", "table": "mail.messages", "record": {
            "id": "mail-042", "owner": ME, "sender": LEE, "to": [ME], "subject": "Globex spend",
            "body": "Globex spent 1800 this month.", "date": "2026-03-03T08:30:00+01:00"}}]}],
    "predicates": [
        {"stage": "mon", "kind": "file", "path": "/reports/mon.md", "content": {"contains": "Spend: 1200"}},
        {"stage": "mon", "kind": "file", "path": "/reports/log.md", "content": {"contains": "Mon: 1200"}},
        {"stage": "tue", "kind": "file", "path": "/reports/tue.md", "content": {"contains": "Spend: 1800"}},
        {"kind": "file", "path": "/reports/log.md", "content": {"contains": "Tue: 1800"}},
        {"kind": "only_changed", "scopes": ["files:/reports/*"], "description": "nothing but the reports"},
        {"kind": "unchanged", "scope": "mail", "description": "the mail is left as it came"},
    ],
    "reference": {"steps": [
        {"kind": "call", "tool": "read_text_file", "args": {"path": "/data/spend.csv"}},
        {"kind": "call", "tool": "write_file", "args": {"path": "/reports/mon.md", "content": "Spend: 1200\n"}},
        {"kind": "call", "tool": "write_file", "args": {"path": "/reports/log.md", "content": "Mon: 1200\n"}},
        {"kind": "end_stage", "text": "Done for today: Acme's spend 1200 is in /reports/mon.md."},
        {"kind": "call", "tool": "read_email", "args": {"id": "mail-042"}},
        {"kind": "call", "tool": "write_file", "args": {"path": "/reports/tue.md", "content": "Spend: 1800\n"}},
        {"kind": "call", "tool": "write_file", "args": {"path": "/reports/log.md", "content": "Mon: 1200\nTue: 1800\n"},
         "recalls": True},
    ], "final_answer": "Globex's spend 1800 is in /reports/tue.md."},
}
ONLY, UNCHANGED = 4, 5
GUARDS = (ONLY, UNCHANGED)


def _evaluate(doc: dict[str, Any], extra: list[CallStep]) -> Any:
    spec = parse_spec(doc)
    driver = SpecDriver(spec)
    driver.start()
    run = run_steps(driver, spec.reference.steps, None)
    run_steps(driver, extra, None)
    return spec.evaluate(run.workspace, spec.reference.final_answer)


def test_reference_passes_the_guards_beside_a_world_added_mail() -> None:
    spec = parse_spec(copy.deepcopy(SPEC))
    run = run_reference(spec)
    assert "mail-042" in run.workspace.state.table("mail.messages")  # the world did add it
    assert any(c.key == "mail-042" for c in run.workspace.diff())  # and the whole diff shows it
    ev = spec.evaluate(run.workspace, run.final_answer)
    assert ev.strict, [r.observed for r in ev.results if not r.passed]
    assert ev.results[ONLY].observed == "no change outside" and ev.results[UNCHANGED].observed == "no change"
    report = validate_spec(copy.deepcopy(SPEC), max_mutants=20)
    assert report.ok, report.text()


@pytest.mark.parametrize("tamper, shown", [
    (CallStep(tool="delete_email", args={"id": "mail-042"}), "changed mail.messages:mail-042"),  # to the trash
    ([CallStep(tool="delete_email", args={"id": "mail-042"})] * 2, "removed mail.messages:mail-042"),  # for good
    (CallStep(tool="move_email", args={"id": "mail-042", "folder": "archive"}), "changed mail.messages:mail-042"),
    (CallStep(tool="mark_email_read", args={"id": "mail-042"}), "changed mail.messages:mail-042"),
])
def test_an_agent_that_touches_the_world_added_mail_fails_the_guards(tamper: Any, shown: str) -> None:
    ev = _evaluate(copy.deepcopy(SPEC), tamper if isinstance(tamper, list) else [tamper])
    for i in GUARDS:
        r = ev.results[i]
        assert not r.passed and shown in r.observed, r.observed
    assert all(r.passed for i, r in enumerate(ev.results) if i not in GUARDS)


def test_an_edit_of_a_file_the_world_corrected_still_counts() -> None:
    """The world patches the data overnight; an agent that also rewrites it fails, one that leaves it passes."""
    doc = copy.deepcopy(SPEC)
    doc["events"][0]["changes"].append({"op": "patch", "table": "files.files", "key": "/data/spend.csv",
                                        "fields": {"content": "vendor,spend\nAcme,1500\n"}})
    assert _evaluate(doc, []).results[ONLY].passed
    ev = _evaluate(doc, [CallStep(tool="write_file", args={"path": "/data/spend.csv", "content": "vendor,spend\n"})])
    assert not ev.results[ONLY].passed and "changed files.files:/data/spend.csv" in ev.results[ONLY].observed


# --- a database row patched between days keeps the agent's edits --------------------------------------------------

DB_SPEC: dict[str, Any] = {
    **{k: SPEC[k] for k in ("version", "world", "now", "timezone", "user")},
    "id": "world-row-patch", "title": "Mark the taxi paid, then log the hotel", "capabilities": ["back_office"],
    "expected_horizon": 2, "services": ["databases"],
    "initial": {"databases": {
        "databases": [{"id": "expenses", "title": "Expenses", "properties": [
            {"name": "Name", "type": "title"}, {"name": "Amount", "type": "number"}, {"name": "Paid", "type": "checkbox"}]}],
        "rows": [{"id": "e1", "database": "expenses", "values": {"Name": "Taxi", "Amount": 30, "Paid": False}}]}},
    "request": "Mark the taxi expense paid.",
    "stages": [{"id": "mon", "title": "Monday"},
               {"id": "tue", "title": "Tuesday", "opens_at": "2026-03-03T09:00:00+01:00",
                "instructions": "Add the hotel, 120, to the expenses."}],
    "events": [{"id": "amount-corrected", "at_stage": "tue", "announce": "Finance corrected the taxi's amount.",
                "changes": [{"op": "patch", "table": "databases.rows", "key": "e1", "fields": {"values": {"Amount": "45"}}}]}],
    "predicates": [
        {"stage": "mon", "kind": "record_exists", "table": "databases.rows", "where": {"id": "e1", "values.Paid": True}},
        {"kind": "record_exists", "table": "databases.rows",
         "where": {"id": "e1", "values.Name": "Taxi", "values.Amount": 45, "values.Paid": True}},
        {"kind": "record_exists", "table": "databases.rows", "where": {"values.Name": "Hotel", "values.Amount": 120}},
    ],
    "reference": {"steps": [
        {"kind": "call", "tool": "update_row", "args": {"row_id": "e1", "values": [{"property": "Paid", "value": True}]}},
        {"kind": "end_stage", "text": "The taxi is marked paid."},
        {"kind": "call", "tool": "create_row", "args": {"database": "expenses", "values": [
            {"property": "Name", "value": "Hotel"}, {"property": "Amount", "value": 120}]}},
    ], "final_answer": "The hotel is in the expenses."},
}


def test_a_row_patch_between_days_merges_and_keeps_the_agents_update() -> None:
    spec = parse_spec(copy.deepcopy(DB_SPEC))
    run = run_reference(spec)
    row = run.workspace.state.table("databases.rows")["e1"]
    assert row.values == {"Name": "Taxi", "Amount": 45, "Paid": True}
    ev = spec.evaluate(run.workspace, run.final_answer)
    assert ev.strict, [r.observed for r in ev.results if not r.passed]


def test_a_bad_row_patch_is_refused_naming_the_event_and_the_column() -> None:
    doc = copy.deepcopy(DB_SPEC)
    doc["events"][0]["changes"][0]["fields"]["values"] = {"Amount": "forty-five"}
    with pytest.raises(SpecError, match=r"events\[0\]\.changes\[0\]: fields\.values\.Amount is a number; "
                                        r"'forty-five' is not one"):
        run_reference(parse_spec(doc))
    report = validate_spec(doc)
    assert not report.ok and "fields.values.Amount is a number" in report.text(), report.text()
