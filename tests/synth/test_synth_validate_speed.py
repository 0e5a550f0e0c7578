"""The validator's verdicts are fixed: over a sample of the balanced mix (single-day tasks, multi-day stories,
long_horizon stories up to 100 calls) and deliberately weakened copies of some of them (a predicate dropped,
the stale or recalls marks removed, a reference that fails), `validate_spec` must give byte-identical reports
(feedback and every stat but `seconds`) to those recorded before validation was made faster.

The specs are stored with the reports (tests/data/validate_verdicts.jsonl.gz), so a change to a generator does
not move the fixture; a change to the validator, the driver or the workspace that alters any verdict does.
Rebuild only for an intended change of verdicts: `python tests/synth/test_synth_validate_speed.py`.
"""

from __future__ import annotations

import copy
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synth.spec import parse_spec
from synth.validate import validate_spec
from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.limits import WorkspaceLimits, total_chars

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "validate_verdicts.jsonl.gz"


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


# --- the size accounting behind Workspace.call: remembered per state, never recounted in full ---------------

_OPS = st.lists(st.one_of(
    st.tuples(st.just("write"), st.sampled_from(["/a.txt", "/b.txt", "/c.txt"]), st.integers(0, 400)),
    st.tuples(st.just("delete"), st.sampled_from(["/a.txt", "/b.txt", "/c.txt"]), st.just(0)),
    st.tuples(st.just("world"), st.sampled_from(["/a.txt", "/w.txt"]), st.integers(0, 400)),
    st.tuples(st.just("restore"), st.just(""), st.integers(0, 30)),
    st.tuples(st.just("fork"), st.just(""), st.just(0)),
), max_size=30)


@settings(max_examples=60, deadline=None)
@given(_OPS)
def test_size_accounting_follows_restores_forks_and_world_changes(ops: list[tuple[str, str, int]]) -> None:
    """Whatever mix of writes, deletes, world changes, restores and forks, the size a call checks against is
    the full recount's, and the total limit refuses exactly when the recount would."""
    limits = WorkspaceLimits(max_total_chars=10_000, max_record_chars=100_000)
    ws = Workspace.create(WorkspaceConfig(limits=limits), {"files": {"files": [{"path": "/a.txt", "content": "a" * 300}]}})
    seen = [ws.snapshot()]
    for op, path, n in ops:
        if op == "write":
            before = total_chars(ws.state.tables)
            res = ws.call("write_file", {"path": path, "content": "x" * (n * 25)})
            if res.ok:
                after = total_chars(ws.state.tables)
                assert after <= limits.max_total_chars or after <= before
            else:  # refused for the total alone, with the figure a full recount gives
                held = int(re.search(r"would hold ([\d,]+) characters of text", res.error.message)[1].replace(",", ""))
                assert held > limits.max_total_chars and held > before and ws.state.tables is seen[-1].tables
        elif op == "delete":
            ws.call("delete_file", {"path": path})
        elif op == "world":
            ws.apply_world_change([{"op": "put", "table": "files.files",
                                    "record": {"path": path, "content": "w" * n}}], note="test")
        elif op == "restore":
            ws.restore(seen[n % len(seen)])
        else:
            ws = ws.fork()
        seen.append(ws.snapshot())
        assert ws._total_chars(ws.state) == total_chars(ws.state.tables)


def test_total_limit_after_restore_counts_the_restored_state() -> None:
    limits = WorkspaceLimits(max_total_chars=10_000, max_record_chars=100_000)
    ws = Workspace.create(WorkspaceConfig(limits=limits), {})
    start = ws.snapshot()
    for i in range(9):
        assert ws.call("write_file", {"path": f"/f{i}.txt", "content": "c" * 1_000}).ok
    middle = ws.snapshot()
    assert "limits.max_total_chars" in ws.call("write_file", {"path": "/g.txt", "content": "c" * 1_500}).error.message
    ws.restore(start)  # back to an empty workspace: the same write now fits
    assert ws.call("write_file", {"path": "/g.txt", "content": "c" * 1_500}).ok
    ws.restore(middle)  # and refused again from the fuller state
    assert "limits.max_total_chars" in ws.call("write_file", {"path": "/g.txt", "content": "c" * 1_500}).error.message


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    built = build_fixture()
    with gzip.GzipFile(FIXTURE, "wb", mtime=0) as f:  # key order kept: a where clause reads in its order
        f.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in built).encode("utf-8"))
    print(f"{len(built)} reports written to {FIXTURE}")
