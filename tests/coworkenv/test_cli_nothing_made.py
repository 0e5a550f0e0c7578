"""A command that produced nothing it was asked for exits non-zero with the reason on stderr.

Each case goes through the real console script (or typer's CliRunner where a failure has to be
injected), as a user would meet it: an LLM endpoint that is down, a benchmark area that fails inside a
task group, records with nothing to list, report, replay or export.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import benchmarks
from coworkenv.cli import app
from coworkenv.commands.bench import root_cause

ROOT = Path(__file__).resolve().parents[2]
COWORKENV = str(Path(sys.executable).parent / "coworkenv")
SPEC = ROOT / "examples" / "specs" / "handwritten-archive-invoices.yaml"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real `coworkenv` console script, from `cwd`."""
    return subprocess.run([COWORKENV, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/episodes.jsonl: two teacher episodes of one environment (`run`'s default output path);
    runs/noop.jsonl: one episode of a policy that does nothing (no SFT example in it)."""
    where = tmp_path_factory.mktemp("cli")
    for args in (["-g", "2"], ["--policy", "noop", "--out", "runs/noop.jsonl"]):
        done = cli("run", str(SPEC), *args, cwd=where)
        assert done.returncode == 0, done.stderr[-2000:]
    assert (where / "runs" / "episodes.jsonl").is_file()
    return where


def test_synth_with_an_llm_endpoint_that_is_down_exits_1(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    done = cli("synth", "--generator", "llm", "--base-url", url, "--model", "M", "--count", "2", "--out", "envs",
               cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error:" in done.stderr and "cannot reach" in done.stderr and "wrote 0 of 2" in done.stderr
    assert not list((tmp_path / "envs").glob("*"))


def test_bench_reports_a_failed_area_with_its_real_cause_and_still_prints_the_others(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def run_area(area: str, quick: bool = False) -> list[dict]:
        if area == "http":
            raise ExceptionGroup("unhandled errors in a TaskGroup (1 sub-exception)",
                                 [ConnectionRefusedError("port 1 refused")])  # what anyio raised under load
        return [{"key": f"{area}_ops_per_s", "value": 10.0, "unit": "ops/s", "baseline_key": None, "note": ""}]

    monkeypatch.setattr(benchmarks, "run_area", run_area)
    runner = CliRunner()
    for extra in (["--json"], []):
        done = runner.invoke(app, ["bench", "--only", "core", "--only", "http", *extra])
        assert done.exit_code == 1, done.output
        assert "ConnectionRefusedError: port 1 refused" in done.stderr and "TaskGroup" not in done.stderr
        assert "http failed" in done.stderr and "core: 1 figure(s)" in done.stderr  # progress, area by area
        if extra:
            assert json.loads(done.stdout) == {"core_ops_per_s": 10.0}  # the area that worked is still printed
        else:
            assert "core_ops_per_s" in done.stdout and "failed" in done.stdout


def test_root_cause_opens_nested_groups_and_names_each_cause_once() -> None:
    inner = ExceptionGroup("inner", [OSError("disk full"), OSError("disk full")])
    assert root_cause(ExceptionGroup("outer", [inner, ValueError("bad")])) == "OSError: disk full; ValueError: bad"
    assert root_cause(KeyError("k")) == "KeyError: 'k'"


def test_episodes_lists_runs_default_file_beside_the_folder_and_fails_on_nothing(runs: Path) -> None:
    done = cli("episodes", "runs/episodes", "--json", cwd=runs)  # no folder yet: runs/episodes.jsonl is read
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2
    (runs / "runs" / "episodes").mkdir(exist_ok=True)
    (runs / "runs" / "episodes" / "ep-desktop.jsonl").write_text(
        (runs / "runs" / "noop.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    rows = [json.loads(x) for x in cli("episodes", "runs/episodes", "--json", cwd=runs).stdout.splitlines()]
    assert sorted(Path(r["record"]).name for r in rows) == ["ep-desktop.jsonl", "episodes.jsonl", "episodes.jsonl"]
    (runs / "empty").mkdir()
    done = cli("episodes", "empty", cwd=runs)
    assert done.returncode != 0 and "no *.jsonl episode records" in done.stderr
    (runs / "empty" / "blank.jsonl").write_text("", encoding="utf-8")
    done = cli("episodes", "empty", cwd=runs)
    assert done.returncode == 1 and "no episode in 1 record file(s)" in done.stderr


def test_report_and_replay_of_no_records_exit_non_zero(runs: Path) -> None:
    (runs / "none").mkdir(exist_ok=True)
    for args in (["report", "none", "--out", "rep"], ["replay", "none", "--envs", str(SPEC)]):
        done = cli(*args, cwd=runs)
        assert done.returncode == 2 and "no episode records in it" in done.stderr, (args, done.stderr)
    assert not (runs / "rep" / "index.html").exists()


def test_export_sft_of_records_with_no_passing_episode_exits_1(runs: Path) -> None:
    done = cli("export", "sft", "runs/noop.jsonl", "--out", "sft-none", cwd=runs)
    assert done.returncode == 1 and "no episode qualified as SFT data" in done.stderr, done.stderr


def test_export_rl_says_how_many_groups_have_all_zero_advantages(runs: Path) -> None:
    done = cli("export", "rl", "runs/episodes.jsonl", "--out", "rl.jsonl", "--json", cwd=runs)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["groups"], summary["zero_advantage_groups"]) == (1, 1)  # a deterministic teacher, twice
    assert "1 of 1 group(s) have all-zero advantages" in done.stderr


def test_train_sft_no_limit_is_steps_0_and_a_negative_count_is_refused(tmp_path: Path) -> None:
    done = cli("train", "sft", "--model", "m", "--data", "d.jsonl", "--steps", "-1", cwd=tmp_path)
    assert done.returncode == 2 and "--steps" in done.stderr
    assert "0: no limit" in CliRunner().invoke(app, ["train", "sft", "--help"], env={"COLUMNS": "200"}).stdout
    done = cli("train", "rl", "--model", "m", "--envs", "toy:1", "--steps", "0", cwd=tmp_path)  # zero updates: nothing
    assert done.returncode == 2 and "--steps" in done.stderr
