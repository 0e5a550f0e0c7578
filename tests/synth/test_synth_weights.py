"""A check of weight 0 is informational: it sits beside weighted checks, is judged and reported, and counts in no
score, not in strict success, and not as progress that credits the guards; a spec whose weights are all 0 is
refused with a clear error (library and CLI)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from coworkenv.cli import app
from synth import validate_spec
from synth.errors import SpecLoadError
from synth.spec import load_spec, parse_spec, run_reference

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-archive-invoices.yaml"
DOC = yaml.safe_load(EXAMPLE.read_text())
# the reference never writes a summary: this informational check fails on it; the other holds from the start
SUMMARY = {"kind": "file", "path": "/finance/archive/2025/README.md", "weight": 0,
           "description": "a summary was left beside the archive (for information)"}
KEPT = {"kind": "file", "path": "/finance/invoices/2025-11-acme.txt", "exists": True, "weight": 0,
        "description": "the Acme invoice is still in the inbox folder (for information)"}


def _with_info() -> dict:
    doc = copy.deepcopy(DOC)
    doc["predicates"] = [*doc["predicates"], SUMMARY, KEPT]
    return doc


def test_an_informational_check_is_reported_and_counted_nowhere() -> None:
    spec = parse_spec(_with_info())
    run = run_reference(spec)
    ev = spec.evaluate(run.workspace, run.final_answer)
    info = ev.results[-2]
    assert info.weight == 0 and not info.passed and "does not exist" in info.observed  # judged and reported
    assert ev.strict and ev.passed and ev.score == 1.0  # but it fails nothing and costs nothing
    assert ev.to_json()["results"][-2] == {**info.to_json(), "weight": 0, "passed": False}
    assert spec.passes_all(run.workspace, run.final_answer)
    nothing = spec.evaluate(spec.build_workspace(), None)
    assert nothing.results[-1].passed and nothing.score == 0.0 and not nothing.passed  # no progress: guards uncredited
    assert "not credited" in nothing.results[4].observed
    report = validate_spec(_with_info())
    assert report.ok, report.text()
    assert report.stats["do_nothing_score"] == 0.0


def test_weights_all_zero_are_refused_with_a_clear_error(tmp_path: Path) -> None:
    doc = copy.deepcopy(DOC)
    doc["predicates"] = [{**p, "weight": 0} for p in doc["predicates"]]
    with pytest.raises(SpecLoadError, match="every predicate has weight 0, so nothing is graded"):
        parse_spec(doc)
    path = tmp_path / "zero.yaml"
    path.write_text(yaml.safe_dump(doc))
    r = CliRunner().invoke(app, ["validate", str(path)])
    assert r.exit_code == 1 and "predicates" in r.output and "every predicate has weight 0" in r.output, r.output
    doc["predicates"][0]["weight"] = -1
    with pytest.raises(SpecLoadError, match="greater than or equal to 0"):
        parse_spec(doc)
    doc["predicates"][0]["weight"] = 2
    assert load_spec(_dump(tmp_path, doc)).parsed_predicates()[0].weight == 2


def _dump(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path
