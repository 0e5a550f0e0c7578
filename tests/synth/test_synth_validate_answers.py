"""Answer mutants for read-only report tasks (synth.answer_mutants): a wrong but plausible report (an entity
swapped, a figure changed, a fact dropped, a wrong candidate added, everything listed) must fail, else validation
rejects the environment naming the mutant; the mutants are deterministic and touch only the facts the checks test."""

from __future__ import annotations

from typing import Any

import pytest

import synth.validate as validate_mod
from synth.answer_mutants import answer_mutants, checked_text
from synth.mutants import ValueIndex
from synth.procedural import generate
from synth.spec import EnvironmentSpec, parse_spec
from synth.validate import validate_spec


def _old_phone_checks(seed: int) -> EnvironmentSpec:
    """assignee_phone as it was before its excludes: the answer contains the phone and the owner's name."""
    spec = generate("information_retrieval", seed, template="assignee_phone")
    doc = spec.model_dump(mode="json", exclude_none=True)
    answer = spec.reference.final_answer
    assert answer is not None
    name, phone = answer.split(" is working on ")[0], answer.rsplit(" ", 1)[-1].rstrip(".")
    doc["predicates"] = [p for p in doc["predicates"] if p["kind"] not in ("judged", "all")] + [
        {"kind": "answer", "condition": {"contains": phone}},
        {"kind": "answer", "condition": {"contains": name, "ignore_case": True}}]
    return parse_spec(doc)


def _index(spec: EnvironmentSpec) -> ValueIndex:
    return ValueIndex(spec.build_workspace().initial, [p.email for p in spec.world.people])


def test_a_report_check_that_a_kitchen_sink_passes_is_rejected_naming_the_mutant(
        monkeypatch: pytest.MonkeyPatch) -> None:
    weak = _old_phone_checks(3)
    report = validate_spec(weak)
    survivors = [f for f in report.feedback if f.check == "mutants"]
    assert not report.ok and survivors
    assert any("wrong candidate added" in f.problem and "excludes" in f.hint for f in survivors)
    assert all(f.path == "reference.final_answer" for f in survivors)
    monkeypatch.setattr(validate_mod, "answer_mutants", lambda *a, **k: [])
    assert validate_spec(weak).ok  # before: only the filler answer was tried, and it failed


def test_the_fixed_template_kills_every_answer_mutant() -> None:
    for seed in range(4):
        spec = generate("information_retrieval", seed, template="assignee_phone")
        report = validate_spec(spec)
        assert report.ok, report.text()
        assert report.stats["mutants"] == report.stats["mutants_killed"] >= 5


def test_every_kind_is_made_from_the_checked_facts_only() -> None:
    spec = _old_phone_checks(3)
    answer = spec.reference.final_answer
    assert answer is not None
    ms = answer_mutants(spec, answer, _index(spec), len(spec.reference.steps))
    kinds = [m.kind for m in ms]
    assert {"answer_swap", "answer_drop", "answer_extra", "answer_sink"} <= set(kinds)  # no figure: phones are not
    key = answer.split(" is working on ")[1].split(";")[0]  # the ticket key: named, but no check tests it
    assert key.lower() not in checked_text(spec.predicates)
    assert all(key in (m.final_answer or "") for m in ms if m.kind in ("answer_swap", "answer_number"))
    swap = next(m for m in ms if m.kind == "answer_swap")
    assert swap.final_answer != answer and swap.path == "reference.final_answer" and "another person" in swap.description
    assert not any(m.kind == "answer_number" for m in ms)


def test_answer_mutants_are_deterministic_per_spec() -> None:
    spec = _old_phone_checks(5)
    a = answer_mutants(spec, spec.reference.final_answer, _index(spec), 3)
    b = answer_mutants(spec, spec.reference.final_answer, _index(spec), 3)
    assert a == b and a


@pytest.mark.parametrize("answer,right,wrong", [("The total is 1,200.00 EUR; 1,200.00 is final.", "1,200.00", "1,201.00"),
                                                 ("It took 19 days, not 2026-01-19.", "19", "18")])
def test_a_figure_changes_wherever_it_is_stated(answer: str, right: str, wrong: str) -> None:
    spec = _old_phone_checks(3)
    doc: dict[str, Any] = spec.model_dump(mode="json", exclude_none=True)
    doc["predicates"].append({"kind": "answer", "condition": {"contains": right}})
    spec = parse_spec(doc)
    ms = [m for m in answer_mutants(spec, answer, _index(spec), 3) if m.kind == "answer_number"]
    assert len(ms) == 1 and wrong in (ms[0].final_answer or "")
    assert f"{right} " not in (ms[0].final_answer or "")
    assert "2026-01-19" not in answer or "2026-01-19" in (ms[0].final_answer or "")  # a date is no figure
    drop = next(m for m in answer_mutants(spec, answer, _index(spec), 3) if m.kind == "answer_drop")
    assert right not in (drop.final_answer or "") or answer.count(right) > 1
