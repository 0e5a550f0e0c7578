"""Validation's equivalence understands the choices predicates allow (synth.choices): a mutant that passes by
another branch of `any`, `at_least` or a `one_of` condition is a right solution, so "complete one of each
duplicate pair" or "at least 3 of 4 attendees" needs no alternative per combination; a difference outside the
choice is still a survivor."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import synth.validate as validate_mod
from synth.choices import choice_equivalent
from synth.spec import run_reference
from synth.spec import CallStep, parse_spec
from synth.validate import validate_spec
from workspace_sim.predicates import EvalContext

PAIRS: dict[str, Any] = {
    "id": "choice-pairs", "title": "Close duplicate to-dos", "capabilities": ["ticket_workflow"],
    "difficulty": "easy", "expected_horizon": 2,
    "world": {"organisation": {"name": "Acme", "domain": "acme.io"},
              "people": [{"name": "Dana Reyes", "email": "dana@acme.io", "role": "user"}]},
    "services": ["todo"],
    "initial": {"todo": {"tasks": [
        {"id": "task-1", "title": "Pay the ACME invoice"}, {"id": "task-2", "title": "Pay the ACME invoice"},
        {"id": "task-3", "title": "Renew the badge"}, {"id": "task-4", "title": "Renew the badge"},
        {"id": "task-5", "title": "Book the dentist"}]}},
    "now": "2024-04-02T09:00:00+00:00", "user": "dana@acme.io",
    "request": "Two of my to-dos are in twice. Complete one of each duplicate pair; leave the rest open.",
    "predicates": [
        {"kind": "any", "predicates": [
            {"kind": "record_exists", "table": "todo.tasks", "where": {"id": "task-1", "status": "completed"}},
            {"kind": "record_exists", "table": "todo.tasks", "where": {"id": "task-2", "status": "completed"}}]},
        {"kind": "record_exists", "table": "todo.tasks",
         "where": {"id": {"one_of": ["task-3", "task-4"]}, "status": "completed"}},
        {"kind": "unchanged", "scope": "todo:task-5"}],
    "reference": {"steps": [{"kind": "call", "tool": "complete_task", "args": {"id": "task-1"}},
                            {"kind": "call", "tool": "complete_task", "args": {"id": "task-3"}}],
                  "final_answer": "Completed one of each pair."},
}

ATTENDEES = ["ann@acme.io", "bob@acme.io", "cat@acme.io", "anne@acme.io"]
QUORUM: dict[str, Any] = {
    "id": "choice-quorum", "title": "Send the agenda", "capabilities": ["mail_triage"],
    "difficulty": "easy", "expected_horizon": 1,
    "world": {"organisation": {"name": "Acme", "domain": "acme.io"},
              "people": [{"name": "Dana Reyes", "email": "dana@acme.io", "role": "user"},
                         {"name": "Ann Lee", "email": "ann@acme.io"}, {"name": "Bob Roy", "email": "bob@acme.io"},
                         {"name": "Cat Moss", "email": "cat@acme.io"}, {"name": "Anne Fox", "email": "anne@acme.io"}]},
    "services": ["mail"],
    "initial": {"mail": {"messages": []}},
    "now": "2024-04-02T09:00:00+00:00", "user": "dana@acme.io",
    "request": "Mail the agenda (item: budget) to at least three of the four attendees: Ann, Bob, Cat and Anne.",
    "predicates": [
        {"kind": "at_least", "k": 3, "predicates": [
            {"kind": "mail_sent", "recipients": [a], "body": {"contains": "budget"}} for a in ATTENDEES]},
        {"kind": "mail_sent", "count": {"equals": 1}, "body": {"contains": "budget"}}],
    "reference": {"steps": [{"kind": "call", "tool": "send_email",
                             "args": {"to": ATTENDEES[:3], "subject": "Agenda", "body": "Agenda: budget"}}],
                  "final_answer": "Sent."},
}


@pytest.mark.parametrize("doc", [PAIRS, QUORUM], ids=["one-of-each-pair", "three-of-four"])
def test_another_allowed_choice_is_equivalent_not_a_survivor(doc: dict[str, Any]) -> None:
    report = validate_spec(parse_spec(doc), max_mutants=None)
    assert report.ok, report.text()
    assert report.stats["mutants_equivalent"] >= 1
    assert any("another choice the predicates allow" in e for e in report.stats["equivalent"])


@pytest.mark.parametrize("doc", [PAIRS, QUORUM], ids=["one-of-each-pair", "three-of-four"])
def test_without_the_choice_rule_the_same_spec_needed_every_combination(doc: dict[str, Any],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate_mod, "choice_equivalent", lambda *a: None)
    report = validate_spec(parse_spec(doc), max_mutants=None)
    assert not report.ok and any(f.check == "mutants" and "cannot tell" in f.problem for f in report.feedback)


def _ctx(spec: Any, steps: list[dict[str, Any]]) -> EvalContext:
    sol = spec.reference.model_copy(update={"steps": [CallStep(**s) for s in steps]})
    run = run_reference(spec, solution=sol)
    ws = run.workspace
    return EvalContext(ws.initial, ws.state, ws.events(), run.final_answer, ws.config.user)


def test_a_difference_outside_the_choice_is_not_excused() -> None:
    doc = copy.deepcopy(PAIRS)
    doc["predicates"].pop()  # nothing guards task-5
    spec = parse_spec(doc)
    preds = spec.parsed_predicates()
    right = _ctx(spec, [{"tool": "complete_task", "args": {"id": "task-1"}},
                        {"tool": "complete_task", "args": {"id": "task-3"}}])
    other = _ctx(spec, [{"tool": "complete_task", "args": {"id": "task-2"}},
                        {"tool": "complete_task", "args": {"id": "task-3"}}])
    assert choice_equivalent(preds, [right], other, []) is not None
    extra = _ctx(spec, [{"tool": "complete_task", "args": {"id": "task-2"}},
                        {"tool": "complete_task", "args": {"id": "task-3"}},
                        {"tool": "complete_task", "args": {"id": "task-5"}}])
    assert choice_equivalent(preds, [right], extra, []) is None  # task-5 is no branch of any choice
    same_branch = _ctx(spec, [{"tool": "complete_task", "args": {"id": "task-1"}},
                              {"tool": "complete_task", "args": {"id": "task-3"}},
                              {"tool": "complete_task", "args": {"id": "task-5"}}])
    assert choice_equivalent(preds, [right], same_branch, []) is None  # every choice taken alike
