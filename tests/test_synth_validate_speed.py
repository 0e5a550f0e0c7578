"""The validator's verdicts are fixed: over a sample of the balanced mix (single-day tasks, multi-day stories,
long_horizon stories up to 100 calls) and deliberately weakened copies of some of them (a predicate dropped,
the stale or recalls marks removed, a reference that fails), `validate_spec` must give byte-identical reports
(feedback and every stat but `seconds`) to those recorded before validation was made faster.

The specs are stored with the reports (tests/data/validate_verdicts.jsonl.gz), so a change to a generator does
not move the fixture; a change to the validator, the driver or the workspace that alters any verdict does.
Rebuild only for an intended change of verdicts: `python tests/test_synth_validate_speed.py`.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from synth.spec import parse_spec
from synth.validate import validate_spec

FIXTURE = Path(__file__).parent / "data" / "validate_verdicts.jsonl.gz"


def _canonical(report: Any) -> str:
    """A report as compared: its JSON with `seconds` (the only figure that may vary) left out."""
    doc = report.to_json()
    doc["stats"] = {k: v for k, v in doc["stats"].items() if k != "seconds"}
    return json.dumps(doc, sort_keys=True, ensure_ascii=False)


def _weakened(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Copies of a spec document that validation must reject, each for a different reason."""
    out = []
    success = [i for i, p in enumerate(doc.get("predicates", []))
               if p.get("kind") not in ("unchanged", "only_changed", "tool_not_called") and not p.get("maintain")]
    if len(success) > 1:  # survivors among the mutants
        d = copy.deepcopy(doc)
        del d["predicates"][success[-1]]
        out.append(("drop_predicate", d))
    steps = doc["reference"]["steps"]
    if any(s.get("stale_args") is not None for s in steps):
        d = copy.deepcopy(doc)
        for s in d["reference"]["steps"]:
            s.pop("stale_args", None)
        out.append(("no_stale_args", d))
    if any(s.get("recalls") for s in steps):
        d = copy.deepcopy(doc)
        for s in d["reference"]["steps"]:
            s.pop("recalls", None)
        out.append(("no_recalls", d))
    calls = [i for i, s in enumerate(steps) if s.get("kind") == "call" and not s.get("expect_error")]
    if calls:  # the reference leaves out a step: it fails, so no mutant is run
        d = copy.deepcopy(doc)
        del d["reference"]["steps"][calls[len(calls) // 2]]
        out.append(("reference_broken", d))
    return out


def build_fixture() -> list[dict[str, Any]]:
    """The sample (60 environments of the mix and weakened copies of a few) with today's reports."""
    from synth.pipeline import plan
    from synth.procedural import generate

    jobs = plan(None, 56, seed=700) + [("long_horizon", s) for s in (900, 901, 902, 903)]
    rows: list[dict[str, Any]] = []
    for n, (cap, seed) in enumerate(jobs):
        doc = json.loads(json.dumps(generate(cap, seed).to_document()))
        cases = [("as_generated", doc)] + (_weakened(doc) if n % 6 == 0 else [])
        for variant, d in cases:
            rows.append({"capability": cap, "seed": seed, "variant": variant, "spec": d,
                         "report": _canonical(validate_spec(parse_spec(d)))})
    return rows


def _rows() -> list[dict[str, Any]]:
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_fixture_covers_the_mix_and_failures() -> None:
    rows = _rows()
    generated = [r for r in rows if r["variant"] == "as_generated"]
    assert len(generated) == 60
    assert {r["capability"] for r in generated} >= {"long_horizon", "dynamic_world", "policy_compliance"}
    assert max(len(r["spec"]["reference"]["steps"]) for r in generated) >= 90
    checks = {f["check"] for r in rows for f in json.loads(r["report"])["feedback"]}
    assert {"mutants", "reference", "stale", "forgetful"} <= checks  # the weakened copies fail for their reasons


@pytest.mark.parametrize("row", _rows() if FIXTURE.exists() else [],
                         ids=lambda r: f"{r['capability']}-{r['seed']}-{r['variant']}")
def test_verdict_is_byte_identical(row: dict[str, Any]) -> None:
    assert _canonical(validate_spec(parse_spec(row["spec"]))) == row["report"]


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    built = build_fixture()
    with gzip.GzipFile(FIXTURE, "wb", mtime=0) as f:  # key order kept: a where clause reads in its order
        f.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in built).encode("utf-8"))
    print(f"{len(built)} reports written to {FIXTURE}")
