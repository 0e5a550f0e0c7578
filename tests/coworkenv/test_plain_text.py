"""Plain text as a user reads it: `stats` at 120 columns cuts no name and keeps every cell on one line,
`validate` ends with its totals, and an empty folder exits 1 from stats, validate and episodes alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coworkenv.cli import app

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "examples" / "specs"


def test_stats_at_120_columns_cuts_no_name() -> None:
    res = CliRunner().invoke(app, ["stats", str(SPECS)], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert all(len(line) <= 120 for line in lines) and "…" not in res.stdout
    for cap in ("injection_resistance", "policy_compliance", "file_management", "long_horizon"):
        rows = [line for line in lines if line.strip().startswith(cap)]
        assert len(rows) == 2, (cap, rows)  # one row in the sizes table, one in the shares table
    sizes = next(line for line in lines if line.strip().startswith("long_horizon"))
    assert re.search(r"16/16/16\s+5/5/5\s+3/3/3", sizes), sizes  # every median/mean/max cell whole, on one line
    overall = [line for line in lines if line.strip().startswith("overall")]
    assert len(overall) == 2 and overall[1].split()[1:] == ["10", "10%", "40%", "30%", "10%", "0%"]
    for header in ("world changes", "services", ">=2 user turns", "evidence-only fact", "targets"):
        assert header in res.stdout


def test_validate_ends_with_its_totals(tmp_path: Path) -> None:
    one = SPECS / "handwritten-archive-invoices.yaml"
    (tmp_path / "bad.yaml").write_text("id: x\n")
    res = CliRunner().invoke(app, ["validate", "--no-mutants", str(one)])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[-1] == "1 of 1 spec(s) valid, 0 invalid"
    res = CliRunner().invoke(app, ["validate", "--no-mutants", str(one), str(tmp_path / "bad.yaml")])
    assert res.exit_code == 1 and res.stdout.splitlines()[-1] == "1 of 2 spec(s) valid, 1 invalid"


@pytest.mark.parametrize("command", ["stats", "validate", "episodes"])
def test_an_empty_folder_exits_1(command: str, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, [command, str(tmp_path)])
    assert res.exit_code == 1, (res.exit_code, res.output)
    assert res.stderr.startswith("error: ") and str(tmp_path) in res.stderr and "Traceback" not in res.output
