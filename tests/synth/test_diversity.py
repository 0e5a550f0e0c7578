"""synth.diversity and the diversity table of `coworkenv stats`: masked openings, sentences, tool sequences,
workplaces and languages of a folder, in the printed report and in --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coworkenv.cli import app
from synth import diversity
from synth.generate import compose


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("envs")
    for i, (cap, loc) in enumerate([("mail_triage", "en-US"), ("scheduling", "zh-CN"), ("ticket_workflow", "en-GB")]):
        spec = compose(cap, i, loc_code=loc)
        spec.save(out / f"{spec.id}.json")
    return out


def test_masking_hides_what_differs_between_one_template_s_requests() -> None:
    a = diversity.mask("Send Dana Reyes the total of /finance/q3.md (1,234.50) by March 3", ["Dana Reyes"])
    b = diversity.mask("Send Omar Patel the total of /ops/q4.md (98.00) by June 9", ["Omar Patel"])
    assert a == b and "<N>" in a and "<P>" in a and "#" in a


def test_figures_count_openings_languages_and_workplaces(folder: Path) -> None:
    from synth.spec import load_spec
    specs = [load_spec(p) for p in sorted(folder.glob("*.json"))]
    fig = diversity.figures(specs)
    assert fig["envs"] == 3 and fig["distinct_openings"] == 3 and fig["top_opening"] == pytest.approx(1 / 3)
    assert fig["languages"] == {"en": 2, "zh": 1} and fig["chinese"] == pytest.approx(1 / 3)
    assert fig["distinct_sentences"] >= 3 and 1 <= fig["workplace_kinds"] <= 3
    same = diversity.figures(specs[:1] * 4)
    assert same["top_opening"] == 1.0 and same["distinct_openings"] == 1 and same["distinct_tool_sequences"] == 0.25


def test_stats_prints_the_diversity_table_and_json(folder: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["stats", str(folder)])
    assert res.exit_code == 0, res.output
    assert "diversity" in res.output and "distinct masked openings" in res.output and "zh 1" in res.output
    res = runner.invoke(app, ["stats", str(folder), "--json"])
    assert res.exit_code == 0, res.output
    div = json.loads(res.output)["diversity"]
    assert div["distinct_openings"] == 3 and div["languages"] == {"en": 2, "zh": 1}
