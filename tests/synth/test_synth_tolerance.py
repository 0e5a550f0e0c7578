"""Validation that accepts every right solution: free arguments, tolerances, alternatives, maintain.

Each feature is shown accepting a right answer that validation used to reject, and validation is
shown still rejecting real mistakes (a change outside every tolerance that no predicate catches).
The base is the full example spec of docs/spec.md, so the documented example is what is tested.
"""

from __future__ import annotations

import copy
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from synth import SpecLoadError, parse_spec, spec_json_schema, validate_spec
from synth.spec import run_reference
from synth.tolerance import equivalent, field_rules, state_delta
from workspace_sim.core.errors import SpecError
from workspace_sim.predicates import parse_predicates
from workspace_sim.predicates.conditions import Condition

ROOT = Path(__file__).resolve().parents[2]
TZ = timezone(timedelta(hours=1))
DAY = datetime(2026, 3, 3, tzinfo=TZ)


@pytest.fixture(scope="module")
def example() -> dict:
    text = (ROOT / "docs" / "spec.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S) if b.startswith("version:"))
    return yaml.safe_load(block)


def changed(doc: dict, edit: Callable[[dict], Any]) -> dict:
    d = copy.deepcopy(doc)
    edit(d)
    return d


def problems(doc: dict) -> list[tuple[str, str, str]]:
    return [(f.check, f.path, f.problem) for f in validate_spec(doc, max_mutants=None).feedback]


# --- conditions ----------------------------------------------------------------------------------


def test_new_condition_operators() -> None:
    c = Condition.model_validate({"contains_any": ["booked", "scheduled"], "ignore_case": True})
    assert c.check("I Scheduled it") and c.check(["x", "booked"]) and not c.check("cancelled") and not c.check(3)
    r = Condition.model_validate({"not_before": "2026-03-03T09:00:00+01:00", "not_after": "2026-03-03T11:00:00+01:00"})
    assert r.check("2026-03-03T09:00:00+01:00") and r.check(DAY.replace(hour=11)) and r.check("2026-03-03T08:30:00Z")
    assert not r.check("2026-03-03T11:01:00+01:00") and not r.check("tomorrow") and not r.check("2026-03-03T10:00:00")
    n = Condition.model_validate({"near": "2026-03-03T10:00:00+01:00", "within_minutes": 15})
    assert n.check("2026-03-03T09:45:00+01:00") and n.check("2026-03-03T10:15:00+01:00")
    assert not n.check("2026-03-03T10:16:00+01:00")
    assert "within 15 minutes" in n.describe() and "contains any" in c.describe()


@pytest.mark.parametrize("bad, words", [
    ({"near": "2026-03-03T10:00:00+01:00"}, "go together"),
    ({"within_minutes": 5}, "go together"),
    ({"not_before": "2026-03-03T10:00:00"}, "not_before needs a time zone"),
    ({"contains_any": []}, "at least 1"),
    ({"near": "2026-03-03T10:00:00+01:00", "within_minutes": -1}, "greater than or equal"),
])
def test_bad_tolerances_are_refused_with_the_path(bad: dict, words: str) -> None:
    with pytest.raises(SpecError) as e:
        parse_predicates([{"kind": "answer", "condition": bad}])
    assert e.value.path.startswith("predicates[0].condition") and words in e.value.problem


@settings(max_examples=60, deadline=None)
@given(lo=st.integers(0, 600), width=st.integers(0, 600), at=st.integers(-120, 1300))
def test_any_time_inside_a_range_is_accepted_and_none_outside(lo: int, width: int, at: int) -> None:
    start, end, t = DAY + timedelta(minutes=lo), DAY + timedelta(minutes=lo + width), DAY + timedelta(minutes=at)
    c = Condition.model_validate({"not_before": start.isoformat(), "not_after": end.isoformat()})
    assert c.check(t.isoformat()) == (start <= t <= end)
    n = Condition.model_validate({"near": start.isoformat(), "within_minutes": width})
    assert n.check(t.astimezone(timezone.utc).isoformat()) == (abs(t - start) <= timedelta(minutes=width))


@settings(max_examples=40, deadline=None)
@given(options=st.lists(st.sampled_from(["low", "medium", "high", "urgent", "critical"]), min_size=1, unique=True),
       value=st.sampled_from(["low", "medium", "high", "urgent", "critical", "HIGH"]))
def test_one_of_accepts_exactly_its_members(options: list[str], value: str) -> None:
    assert Condition.model_validate({"one_of": options}).check(value) == (value in options)


# --- the documented example, feature by feature ----------------------------------------------------


def test_example_validates_and_reports_the_equivalent_mutant(example: dict) -> None:
    report = validate_spec(example, max_mutants=None)
    assert report.ok, report.text()
    assert report.stats["reference_score"] == 1.0 and report.stats["do_nothing_score"] == 0.0
    assert report.stats["mutants_equivalent"] == 1 and report.stats["alternatives"] == 1
    assert "reference.steps[0].args.start" in report.stats["equivalent"][0]
    assert report.stats["mutants"] == report.stats["mutants_killed"] + report.stats["mutants_equivalent"]


def test_free_argument_is_not_mutated_and_without_it_the_change_is_caught(example: dict) -> None:
    assert problems(example) == []
    got = problems(changed(example, lambda d: d["reference"]["steps"][0].pop("free")))
    assert got and all(c == "mutants" and p == "reference.steps[0].args.end" for c, p, _ in got)


def test_free_must_name_an_argument_of_the_call(example: dict) -> None:
    got = problems(changed(example, lambda d: d["reference"]["steps"][0].update(free=["ending"])))
    assert got == [("schema", "reference.steps[0].free[0]", got[0][2])] and "'ending' is not an argument" in got[0][2]


def test_change_outside_every_tolerance_still_fails_validation(example: dict) -> None:
    # without the start range nothing checks the start: moving the meeting is a real mistake
    got = problems(changed(example, lambda d: d["predicates"][0].pop("start")))
    assert [(c, p) for c, p, _ in got] == [("mutants", "reference.steps[0].args.start")]
    # a tolerance on another field does not excuse the change either
    got = problems(changed(example, lambda d: d["predicates"][0].update(
        start={"not_before": "2026-03-03T09:00:00+01:00"}, title={"contains_any": ["OPS-4", "ops-4"]})))
    assert got == [] or all(p != "reference.steps[0].args.start" for _, p, _ in got)


def test_tolerance_that_excludes_the_mutant_kills_it(example: dict) -> None:
    narrow = changed(example, lambda d: [d["predicates"][0].update(
        start={"near": "2026-03-03T09:00:00+01:00", "within_minutes": 30}), d.pop("alternatives")])
    report = validate_spec(narrow, max_mutants=None)
    assert report.ok, report.text()
    assert report.stats.get("mutants_equivalent", 0) == 0


@settings(max_examples=8, deadline=None)
@given(start_min=st.integers(0, 120), width=st.integers(0, 150))
def test_mutants_inside_the_tolerance_are_never_required_to_fail(example: dict, start_min: int, width: int) -> None:
    """Whatever the range and the reference's start in it, validation accepts the spec, and the
    start-one-hour-later mutant is equivalent exactly when that time is still inside the range."""
    lo = DAY.replace(hour=9)
    ref_start = lo + timedelta(minutes=min(start_min, width))
    hi = lo + timedelta(minutes=width)

    def edit(d: dict) -> None:
        d["predicates"][0]["start"] = {"not_before": lo.isoformat(), "not_after": hi.isoformat()}
        d["reference"]["steps"][0]["args"]["start"] = ref_start.isoformat()
        d["reference"]["steps"][0]["args"]["end"] = (ref_start + timedelta(hours=2)).isoformat()
        d["alternatives"][0]["steps"][0]["args"].update(start=lo.isoformat(), end=(lo + timedelta(hours=2)).isoformat())

    report = validate_spec(changed(example, edit), max_mutants=None)
    assert report.ok, report.text()
    inside = ref_start + timedelta(hours=1) <= hi
    shown = report.stats.get("equivalent", [])
    assert any(s.startswith("reference.steps[0].args.start") for s in shown) == inside


def test_alternative_that_fails_is_named(example: dict) -> None:
    got = problems(changed(example, lambda d: d["predicates"][1]["body"].update(contains_any=["booked"])))
    assert [(c, p) for c, p, _ in got] == [("reference", "alternatives[0]")]
    assert "alternative alternatives[0] fails predicates[1]" in got[0][2]
    got = problems(changed(example, lambda d: d["alternatives"][0]["steps"][0].update(tool="create_meeting")))
    assert ("references", "alternatives[0].steps[0].tool") in [(c, p) for c, p, _ in got]


def test_alternative_mutants_are_checked_and_named(example: dict) -> None:
    got = problems(changed(example, lambda d: d["alternatives"][0]["steps"][0].pop("free")))
    assert [(c, p) for c, p, _ in got] == [("mutants", "alternatives[0].steps[0].args.end")]
    assert "alternative alternatives[0]" in got[0][2]


def test_maintained_guard_is_accepted_where_a_plain_predicate_was_rejected(example: dict) -> None:
    got = problems(changed(example, lambda d: d["predicates"][3].pop("maintain")))
    assert [(c, p) for c, p, _ in got] == [("do_nothing", "predicates[3]")]
    assert validate_spec(changed(example, lambda d: d["predicates"][3].pop("maintain")), max_mutants=None
                         ).feedback[0].hint.count("maintain: true") == 1


def test_maintained_guard_earns_credit_only_after_success(example: dict) -> None:
    spec = parse_spec(example)
    assert spec.is_guard(3) and not spec.is_guard(2)
    start = spec.evaluate(spec.build_workspace(), None)
    assert start.score == 0.0 and "not credited" in start.results[3].observed
    assert spec.evaluate(spec.build_workspace(), None, gate_guards=False).results[3].passed
    run = run_reference(spec)
    assert spec.evaluate(run.workspace, run.final_answer).score == 1.0
    # the agent that does the task but changes the priority loses the guard's credit
    run.workspace.call("update_ticket", {"key": "OPS-4", "priority": "low"})
    ev = spec.evaluate(run.workspace, run.final_answer)
    assert not ev.results[3].passed and ev.results[4].passed and ev.score == pytest.approx(4 / 5)


def test_maintained_predicate_is_broken_by_a_tool_mutant(example: dict) -> None:
    report = validate_spec(example, max_mutants=None)
    # reference + alternative each break the guard with update_ticket; both killed
    assert report.ok and report.stats["mutants_killed"] >= 2
    # a maintained predicate that does not watch the specific record misses the break
    weak = changed(example, lambda d: d["predicates"].__setitem__(3, {
        "kind": "record_exists", "table": "tickets.tickets", "where": {"project": "OPS"}, "maintain": True}))
    got = problems(weak)
    assert got and all(c == "mutants" and p.startswith("predicates[3]") for c, p, _ in got), got


def test_maintain_that_fails_at_the_start_or_is_nested_is_reported(example: dict) -> None:
    got = problems(changed(example, lambda d: d["predicates"][3].update(fields={"priority": "low"})))
    assert ("do_nothing", "predicates[3].maintain") in [(c, p) for c, p, _ in got]
    nested = changed(example, lambda d: d["predicates"].append(
        {"kind": "all", "predicates": [{"kind": "ticket", "key": "OPS-3", "status": "Open", "maintain": True}]}))
    got = problems(nested)
    assert ("predicates", "predicates[5].predicates[0].maintain") in [(c, p) for c, p, _ in got]


def test_maintain_that_nothing_can_break_is_reported(example: dict) -> None:
    got = problems(changed(example, lambda d: d["predicates"][3].update(fields={"title": {"exists": True}})))
    assert [(c, p) for c, p, _ in got] == [("mutants", "predicates[3].maintain")] and "accepts every value" in got[0][2]


# --- equivalence on states ----------------------------------------------------------------------


def test_state_delta_and_equivalence(example: dict) -> None:
    spec = parse_spec(example)
    a = run_reference(spec).workspace.state
    b = run_reference(spec, solution=spec.alternatives[0]).workspace.state
    assert state_delta(a, a) == [] and equivalent([a], a, []) == "the same end state as a right solution"
    delta = state_delta(a, b)
    assert delta is not None and {(t, f) for t, _, f, _, _ in delta} >= {("calendar.events", "start"),
                                                                      ("mail.messages", "body")}
    rules = field_rules(spec.parsed_predicates())
    # the alternative differs in the title and the end too, which no tolerance covers
    assert equivalent([a], b, rules) is None
    assert state_delta(a, spec.build_workspace().state) is None  # different records exist


# --- format version and schema --------------------------------------------------------------------


def test_old_version_loads_and_new_fields_are_in_the_schema(example: dict) -> None:
    for v in ("1", "1.0", 1, "1.1", "1.2"):
        assert parse_spec({**example, "version": v}).version == "1.2"
    with pytest.raises(SpecLoadError, match="unsupported spec version '1.3'"):
        parse_spec({**example, "version": "1.3"})
    schema = spec_json_schema()
    assert "alternatives" in schema["properties"] and "free" in schema["$defs"]["CallStep"]["properties"]
    assert "stages" in schema["properties"] and "stale_args" in schema["$defs"]["CallStep"]["properties"]
    assert "EndStageStep" in schema["$defs"] and "at_stage" in schema["$defs"]["WorldEvent"]["properties"]
    jsonschema.validate(parse_spec(example).to_document(), schema)
