"""Policies block calls before anything changes; faults fail transiently and deterministically."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from workspace_sim import Fault, Workspace, WorkspaceConfig

FILES = {"files": {"files": [{"path": "/finance/budget.xlsx", "content": "AA==", "encoding": "base64"},
                             {"path": "/finance/q1.csv", "content": "a,b\n"}, {"path": "/notes.txt", "content": "n"}]}}


def ws_with(policies=(), faults=()) -> Workspace:  # type: ignore[no-untyped-def]
    return Workspace.create(WorkspaceConfig(services=["files"], policies=list(policies), faults=list(faults)), FILES)


def test_protected_paths_read_only_blocks_any_change() -> None:
    ws = ws_with([{"type": "protected_paths", "paths": ["/finance/*"], "mode": "read_only"}])
    h = ws.content_hash
    r = ws.call("write_file", {"path": "/finance/q1.csv", "content": "x"})
    assert r.error.code == "policy_violation" and "protected_paths" in r.error.message and "/finance/q1.csv" in r.error.message
    assert ws.content_hash == h and ws.events()[-1].policy == "protected_paths"
    assert ws.call("read_text_file", {"path": "/finance/q1.csv"}).ok
    assert ws.call("write_file", {"path": "/notes.txt", "content": "ok"}).ok


def test_protected_paths_no_delete_allows_edits_but_not_delete_or_move() -> None:
    ws = ws_with([{"type": "protected_paths", "paths": ["/finance/*"], "mode": "no_delete"}])
    assert ws.call("write_file", {"path": "/finance/q1.csv", "content": "x"}).ok
    assert ws.call("delete_file", {"path": "/finance/q1.csv"}).error.code == "policy_violation"
    assert ws.call("move_file", {"source": "/finance/q1.csv", "destination": "/q1.csv"}).error.code == "policy_violation"
    assert "/finance/q1.csv" in ws.table("files.files")


def test_forbidden_tools() -> None:
    ws = ws_with([{"type": "forbidden_tools", "tools": ["delete_*"], "description": "never delete anything"}])
    r = ws.call("delete_file", {"path": "/notes.txt"})
    assert r.error.code == "policy_violation" and "never delete anything" in r.error.message


def test_confirmation_required_needs_a_yes_after_asking() -> None:
    ws = ws_with([{"type": "confirmation_required", "tools": ["delete_file"]}])
    assert ws.call("delete_file", {"path": "/notes.txt"}).error.code == "policy_violation"
    ws.add_message("user", "yes")  # a yes nobody asked for does not count
    assert ws.call("delete_file", {"path": "/notes.txt"}).error.code == "policy_violation"
    ws.add_message("assistant", "May I delete /notes.txt?")
    ws.add_message("user", "No, keep it.")
    assert ws.call("delete_file", {"path": "/notes.txt"}).error.code == "policy_violation"
    ws.add_message("assistant", "Understood. Should I delete it after all?")
    ws.add_message("user", "Yes, go ahead.")
    assert ws.call("delete_file", {"path": "/notes.txt"}).ok


def test_bad_policy_document_is_refused_with_its_field() -> None:
    with pytest.raises(ValidationError, match="paths"):
        WorkspaceConfig(policies=[{"type": "protected_paths", "paths": []}])
    with pytest.raises(ValidationError, match="type"):
        WorkspaceConfig(policies=[{"type": "no_such_rule"}])


def test_faults_are_transient_seeded_and_leave_state_unchanged() -> None:
    fault = {"tools": ["write_file"], "kind": "rate_limit", "rate": 0.7, "seed": 3, "max_consecutive": 2}
    outcomes = []
    for _ in range(2):
        ws = ws_with(faults=[fault])
        seq = []
        for i in range(20):
            h = ws.content_hash
            r = ws.call("write_file", {"path": f"/f{i}.txt", "content": "x"})
            if not r.ok:
                assert r.error.code == "fault" and "429" in r.error.message and ws.content_hash == h
                r = ws.call("write_file", {"path": f"/f{i}.txt", "content": "x"})
                if not r.ok:
                    r = ws.call("write_file", {"path": f"/f{i}.txt", "content": "x"})
                assert r.ok, "a third try always succeeds with max_consecutive=2"
            seq.append(r.ok)
        outcomes.append([e.ok for e in ws.events()])
        assert ws.call("read_text_file", {"path": "/notes.txt"}).ok  # other tools unaffected
    assert outcomes[0] == outcomes[1] and not all(outcomes[0])


def test_fault_model_validation() -> None:
    with pytest.raises(ValidationError):
        Fault(tools=["x"], rate=1.5)
    assert Fault(tools=["send_*"]).applies_to("send_email")


def test_tool_rules_hold_for_calls_that_change_nothing() -> None:
    # red team: policies ran only on calls with writes, so a forbidden read-only tool answered normally
    ws = ws_with([{"type": "forbidden_tools", "tools": ["read_*"]}])
    r = ws.call("read_text_file", {"path": "/notes.txt"})
    assert r.error.code == "policy_violation" and r.data is None and "read_text_file" in r.error.message
    assert ws.events()[-1].policy == "forbidden_tools" and not ws.events()[-1].ok
    ws = ws_with([{"type": "confirmation_required", "tools": ["list_directory"]}])
    assert ws.call("list_directory", {"path": "/"}).error.code == "policy_violation"
    ws.add_message("assistant", "May I list the folder?")
    ws.add_message("user", "yes")
    assert ws.call("list_directory", {"path": "/"}).ok
