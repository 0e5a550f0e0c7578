"""Validation of multi-day scenarios: the reference passes every stage, the stale and forgetful baselines
fail, mutants break one day's work, and each way of breaking the example is rejected with its path."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synth import validate_spec
from synth.spec import SpecDriver, run_reference, run_steps
from synth.spec import CallStep, EndStageStep, SayStep, parse_spec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml"
DOC = yaml.safe_load(EXAMPLE.read_text())


@pytest.fixture
def doc() -> dict:
    return copy.deepcopy(DOC)


def _steps(d: dict) -> list[dict]:
    return d["reference"]["steps"]


def test_example_validates_with_every_baseline_failing(doc: dict) -> None:
    report = validate_spec(doc, max_mutants=None)
    assert report.ok, report.text()
    stats = report.stats
    assert stats["stages"] == 3 and stats["stage_scores"] == {"mon": 1.0, "tue": 1.0, "wed": 1.0}
    assert stats["do_nothing_score"] == 0.0
    assert 0 <= stats["stale_score"] < 1 and 0 <= stats["forgetful_score"] < 1
    assert stats["mutants"] == stats["mutants_killed"] > 0


def test_a_single_day_spec_runs_no_baseline() -> None:
    plain = Path(EXAMPLE.parent / "handwritten-archive-invoices.yaml")
    report = validate_spec(yaml.safe_load(plain.read_text()))
    assert report.ok and "stale_score" not in report.stats and "forgetful_score" not in report.stats
    assert "stages" not in report.stats


def _drop_stale(d: dict) -> None:
    for s in _steps(d):
        s.pop("stale_args", None)


def _silent_change_irrelevant(d: dict) -> None:
    # Tuesday's predicates stop checking the corrected figure: an agent that missed the change passes
    for p in d["predicates"]:
        if p.get("stage") == "tue":
            if p["kind"] == "file":
                p["content"] = {"contains": "Total:"} if "vendor-total" in p["path"] else {"contains": "Tue: total"}
            else:
                p["body"] = {"contains": "vendor spend"}
    d["predicates"][6]["predicates"][0]["content"] = {"contains": "Total:"}
    d["predicates"][7]["content"] = {"contains": "Wed: total"}


def _drop_recalls(d: dict) -> None:
    for s in _steps(d):
        s.pop("recalls", None)


def _standing_rule_unchecked(d: dict) -> None:
    # the log lines of later days are no longer checked: forgetting the standing rule costs nothing
    d["predicates"] = [p for p in d["predicates"] if not (p.get("path") == "/reports/log.md" and p.get("stage") != "mon")]


def _extra_end_stage(d: dict) -> None:
    _steps(d).insert(17, {"kind": "end_stage", "text": "Done."})


def _unknown_stage(d: dict) -> None:
    d["predicates"][0]["stage"] = "thu"


def _event_on_day_one(d: dict) -> None:
    d["events"][0]["at_stage"] = "mon"


def _opens_at_back_in_time(d: dict) -> None:
    d["stages"][2]["opens_at"] = "2026-03-03T08:00:00+01:00"


def _vague_gives_value(d: dict) -> None:
    d["user_simulator"]["facts"][0]["vague"] = "Dana, dana.reyes@brightline.example, obviously."


def _day_one_mail_checked_only_at_the_end(d: dict) -> None:
    del d["predicates"][1]["stage"]


def _failing_monday_log(d: dict) -> None:
    _steps(d)[6]["args"]["content"] = "Mon: total 4300\n"


def _world_change_satisfies(d: dict) -> None:
    d["predicates"].append({"stage": "tue", "kind": "file", "path": "/data/vendors.csv",
                            "content": {"contains": "Acme,1500"}})


def _stale_args_equal(d: dict) -> None:
    _steps(d)[11]["stale_args"] = dict(_steps(d)[11]["args"])


CASES: list[tuple[str, Callable[[dict], None], str, str, str]] = [
    # (name, defect, check, path prefix, words in the problem)
    ("no stale_args", _drop_stale, "stale", "events[0]", "no reference step carries stale_args"),
    ("silent change irrelevant", _silent_change_irrelevant, "stale", "reference.steps[11].stale_args",
     "stale baseline"),
    ("no recalls", _drop_recalls, "forgetful", "reference.steps", "no step marked recalls"),
    ("standing rule unchecked", _standing_rule_unchecked, "forgetful", "reference.steps[14].recalls",
     "forgetful baseline"),
    ("end_stage count", _extra_end_stage, "schema", "reference.steps", "closes 3 stage(s)"),
    ("unknown stage", _unknown_stage, "schema", "predicates[0].stage", "no stage 'thu'"),
    ("event at stage one", _event_on_day_one, "schema", "events[0].at_stage", "day one"),
    ("opens_at not increasing", _opens_at_back_in_time, "schema", "stages[2].opens_at", "must be after"),
    ("vague contains value", _vague_gives_value, "schema", "user_simulator.facts[0]", "vague must not contain"),
    ("day-one work checked late", _day_one_mail_checked_only_at_the_end, "mutants", "reference.steps[5]",
     "a day late"),
    ("reference fails a stage", _failing_monday_log, "reference", "predicates[2]", "at the close of stage 'mon'"),
    ("world change alone passes", _world_change_satisfies, "do_nothing", "predicates[9]", "world's changes"),
    ("stale_args equal args", _stale_args_equal, "references", "reference.steps[11].stale_args", "equals args"),
]


@pytest.mark.parametrize(("name", "defect", "check", "path", "words"), CASES, ids=[c[0] for c in CASES])
def test_each_way_of_breaking_the_example_is_rejected(doc: dict, name: str, defect: Callable[[dict], None],
                                                      check: str, path: str, words: str) -> None:
    defect(doc)
    report = validate_spec(doc)
    assert not report.ok, name
    hits = [f for f in report.feedback if f.check == check and f.path.startswith(path) and words in f.problem]
    assert hits, report.text()
    assert all(f.hint for f in report.feedback)


def test_recalls_before_any_later_turn_is_rejected() -> None:
    d = yaml.safe_load((EXAMPLE.parent / "handwritten-archive-invoices.yaml").read_text())
    first = next(i for i, s in enumerate(_steps(d)) if s["kind"] == "call")
    _steps(d)[first]["recalls"] = True
    report = validate_spec(d)
    assert any(f.check == "references" and f.path == f"reference.steps[{first}].recalls"
               and "no earlier instruction" in f.problem for f in report.feedback), report.text()


def test_a_wrong_day_one_call_fails_that_day_only(doc: dict) -> None:
    """A change to Monday's report is overwritten on Tuesday: only Monday's checkpoint can see it."""
    _steps(doc)[4]["args"]["content"] = "Total: 4201\n"
    spec = parse_spec(doc)
    run = run_reference(spec)
    stages = {s.id: s for s in spec.evaluate(run.workspace, run.final_answer).stages()}
    assert not stages["mon"].passed and stages["tue"].passed and stages["wed"].passed


def test_a_maintained_predicate_of_a_closed_stage_is_broken_before_it_closes(doc: dict) -> None:
    doc["predicates"].append({"stage": "mon", "kind": "file", "path": "/data/vendors.csv", "maintain": True,
                              "content": {"contains": "Acme,1200"}, "description": "Monday leaves the data alone"})
    report = validate_spec(doc)
    assert report.ok, report.text()
    plain = validate_spec(copy.deepcopy(DOC))
    assert report.stats["mutants"] > plain.stats["mutants"]


# --- a closed stage's verdict never depends on what happens after it closed -----------------------------

AFTER = [
    CallStep(tool="write_file", args={"path": "/reports/vendor-total.md", "content": "Total: 1\n"}),
    CallStep(tool="write_file", args={"path": "/reports/log.md", "content": "nothing\n"}),
    CallStep(tool="delete_file", args={"path": "/reports/log.md"}),
    CallStep(tool="send_email", args={"to": ["dana.reyes@brightline.example"], "subject": "x", "body": "4200 4500"}),
    CallStep(tool="move_file", args={"source": "/reports/vendor-total.md", "destination": "/shared/vendor-total.md"}),
    SayStep(text="Which Dana? Her email address, please."),
    EndStageStep(text="Total: 4200 and 4500, all done."),
]


def _staged_variant(n_stages: int, keep: list[bool]) -> Any:
    d = copy.deepcopy(DOC)
    if n_stages == 2:
        d["stages"] = d["stages"][:2]
        ends = [i for i, s in enumerate(_steps(d)) if s["kind"] == "end_stage"]
        d["reference"]["steps"] = _steps(d)[:ends[1]]
        d["predicates"] = [p for p in d["predicates"] if p.get("stage") != "wed"]
    chosen = [p for p, k in zip(d["predicates"], keep) if k] or d["predicates"][:1]
    d["predicates"] = chosen
    return parse_spec(d)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_stages=st.sampled_from([2, 3]), keep=st.lists(st.booleans(), min_size=9, max_size=9),
       close=st.integers(0, 1), suffix=st.lists(st.integers(0, len(AFTER) - 1), max_size=8))
def test_closed_stage_verdict_ignores_what_follows(n_stages: int, keep: list[bool], close: int,
                                                   suffix: list[int]) -> None:
    spec = _staged_variant(n_stages, keep)
    close = min(close, n_stages - 2)
    steps = list(spec.reference.steps)
    ends = [i for i, s in enumerate(steps) if isinstance(s, EndStageStep)]
    prefix = steps[:ends[close] + 1]  # up to and including the end_stage that closes stage `close`

    def verdicts(extra: list[Any]) -> dict[int, tuple[bool, str]]:
        driver = SpecDriver(spec)
        driver.start()
        run_steps(driver, prefix, None)
        run_steps(driver, extra, None)
        ev = spec.evaluate(driver.ws, "Total: 4500")
        closed = {st_.id for st_ in spec.stages[:close + 1]}
        return {i: (r.passed, r.observed) for i, r in enumerate(ev.results)
                if spec.predicates[i].get("stage") in closed}

    alone = verdicts([])
    assert verdicts([AFTER[i] for i in suffix]) == alone
    assert verdicts(steps[ends[close] + 1:]) == alone
