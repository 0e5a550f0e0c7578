"""The validator catches each kind of defect: one seeded defect per check, each named by path."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from synth import validate_spec
from synth.procedural import generate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-archive-invoices.yaml"


@pytest.fixture(scope="module")
def base() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def doc_of(cap: str, seed: int) -> dict:
    return generate(cap, seed).to_document()


def _step(d: dict, tool: str) -> dict:
    return next(s for s in d["reference"]["steps"] if s.get("tool") == tool)


def test_valid_example_passes_every_check(base: dict) -> None:
    report = validate_spec(base)
    assert report.ok, report.text()
    assert report.stats["reference_score"] == 1.0 and report.stats["do_nothing_score"] == 0.0
    assert report.stats["mutants"] == report.stats["mutants_killed"] > 0


Defect = Callable[[dict], None]

CASES: list[tuple[str, Defect, str, str]] = [
    # (check, seeded defect, expected path prefix, words in the problem)
    ("schema", lambda d: d.update(expected_horizon="many"), "expected_horizon", "integer"),
    ("references", lambda d: d["reference"]["steps"][1].update(tool="make_folder"), "reference.steps[1].tool", "unknown"),
    ("references", lambda d: d["reference"]["steps"][2]["args"].update(colour="red"), "reference.steps[2].args", "colour"),
    ("references", lambda d: d["reference"]["steps"][2]["args"].update(source="{{fact:where}}"),
     "reference.steps[2].args", "names no hidden fact"),
    ("references", lambda d: d["initial"]["files"]["files"][0].update(content="ask lee.k@northwind.example"),
     "initial.files.files[0].content", "nobody in the world"),
    ("references", lambda d: d.update(faults=[{"tools": ["send_email"], "rate": 0.5}]), "faults[0].tools[0]", "matches no"),
    ("references", lambda d: d.update(events=[{"id": "late", "at_turn": 3, "changes": [
        {"op": "delete", "table": "files.files", "key": "/finance/budget-2026.md"}]}]), "events[0].at_turn", "never reached"),
    ("predicates", lambda d: d["predicates"].append({"kind": "unchanged", "scope": "files:/finanse/*"}),
     "predicates[5].scope", "covers no record"),
    ("predicates", lambda d: d["predicates"].append({"kind": "tool_not_called", "tool": "send_email"}),
     "predicates[5].tool", "matches no enabled tool"),
    ("predicates", lambda d: d["predicates"].append({"kind": "record_exists", "table": "files.drive"}),
     "predicates[5].table", "unknown or disabled table"),
    ("reference", lambda d: d["reference"]["steps"][2]["args"].update(source="/finance/invoices/2025-11-acme.md"),
     "reference.steps[2]", "not_found"),
    ("reference", lambda d: d.update(policies=[{"type": "protected_paths", "paths": ["/finance/invoices/*"],
                                                "mode": "no_delete"}]), "reference.steps[2]", "policy"),
    ("reference", lambda d: d["predicates"][0]["content"].update(contains="Total: 1300.00"), "predicates[0]",
     "reference solution fails"),
    ("do_nothing", lambda d: d["predicates"].insert(0, {"kind": "file", "path": "/finance/budget-2026.md"}),
     "predicates[0]", "before the agent does anything"),
    ("mutants", lambda d: d["predicates"].pop(), "predicates", "collateral"),
    ("mutants", lambda d: [d["predicates"].pop(1), d["predicates"].pop(2)], "reference.steps[3]", "left out"),
    ("mutants", lambda d: d["predicates"].__setitem__(0, {"kind": "file", "path": "/finance/invoices/2025-11-acme.txt",
                                                          "exists": False}),
     "reference.steps[2].args.destination", "changed"),
    ("capability", lambda d: d.update(capabilities=["long_horizon"]), "capabilities", "15+ tool calls"),
    ("capability", lambda d: d.update(capabilities=["clarification"]), "capabilities", "hidden user facts"),
]


@pytest.mark.parametrize("check, defect, path, words", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_seeded_defect_is_caught(base: dict, check: str, defect: Defect, path: str, words: str) -> None:
    d = copy.deepcopy(base)
    defect(d)
    report = validate_spec(d)
    assert not report.ok
    hits = [f for f in report.feedback if f.check == check and f.path.startswith(path)]
    assert hits, report.text()
    assert any(words.lower() in f.problem.lower() for f in hits), report.text()
    assert all(f.hint for f in report.feedback)


def test_changed_answer_mutant_is_caught() -> None:
    d = doc_of("information_retrieval", 5)
    d["predicates"] = [{"kind": "answer", "condition": {"regex": "."}}] + [  # the answer checks replaced
        p for p in d["predicates"] if p["kind"] not in ("answer", "judged", "all")]
    report = validate_spec(d)
    assert any(f.check == "mutants" and f.path == "reference.final_answer" for f in report.feedback), report.text()


def test_multi_turn_spec_that_does_not_need_the_answers_is_rejected() -> None:
    d = generate("clarification", 1, template="ticket_details_from_user").to_document()
    assert validate_spec(d).ok
    # the predicates stop checking the hidden values (priority, owner): the answers are no longer needed
    d["predicates"] = [p for p in d["predicates"] if p["kind"] != "record_exists"] + [
        {"kind": "record_exists", "table": "tickets.tickets", "new_only": True}]
    report = validate_spec(d)
    assert any(f.check == "multi_turn" for f in report.feedback), report.text()


def test_fact_asked_without_its_keyword_is_reported() -> None:
    d = doc_of("clarification", 2)
    ask = next(s for s in d["reference"]["steps"] if s["kind"] == "ask")
    ask["text"] = "Anything else I should know?"
    report = validate_spec(d)
    # with a vague fact, the press that follows now gets only the vague answer: either way the question is named
    assert any(f.check == "references" and ("does not reveal" in f.problem or "only the vague answer" in f.problem)
               for f in report.feedback), report.text()


def test_expected_fault_that_does_not_happen_is_reported() -> None:
    d = doc_of("fault_robustness", 0)
    d["faults"] = []
    report = validate_spec(d)
    assert any(f.check == "reference" and f.path.endswith("expect_error") for f in report.feedback), report.text()
    assert any(f.check == "capability" for f in report.feedback)


def test_world_event_on_missing_record_is_reported() -> None:
    d = doc_of("dynamic_world", 0)
    d["events"][0]["changes"][0]["key"] = "/nowhere.txt" if d["events"][0]["changes"][0]["table"] == "files.files" \
        else "cal-999"
    report = validate_spec(d)
    assert any(f.check == "references" and f.path.startswith("events[0]") for f in report.feedback), report.text()


def test_raw_garbage_gives_schema_feedback_not_a_crash() -> None:
    for junk in ({}, {"id": 5}, {"predicates": "all"}):
        report = validate_spec(junk)
        assert not report.ok and all(f.check == "schema" for f in report.feedback)
    report = validate_spec([1, 2])  # type: ignore[arg-type]
    assert not report.ok


def test_report_is_json_ready(base: dict) -> None:
    import json

    d = copy.deepcopy(base)
    d["predicates"].pop()
    out: Any = json.loads(json.dumps(validate_spec(d).to_json()))
    assert out["ok"] is False and {"check", "path", "problem", "hint"} <= set(out["feedback"][0])
