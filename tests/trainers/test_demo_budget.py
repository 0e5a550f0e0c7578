"""The demo is budgeted by time (`--minutes`), says so, and Ctrl-C during training still evaluates and reports.

The interrupt is sent to a real `coworkenv demo` subprocess, as a user's Ctrl-C would be.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import need
from typer.testing import CliRunner

from coworkenv.cli import app
from trainers.demo.settings import DemoSettings
from trainers.demo.sft_stage import MIN_SHARE, REPORT_RESERVE_S, train_share

HAS_TRAIN = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "trl", "datasets", "tokenizers"))
ROOT = Path(__file__).resolve().parents[2]


def test_the_default_run_is_bounded_by_a_time_budget_within_15_minutes() -> None:
    s = DemoSettings()
    assert s.steps == 0 and 0 < s.minutes <= 14  # margin under the 15 minutes promised on 2 loaded cores
    # training gets the budget less what ran and a reserve for the after-evaluation and the report
    assert train_share(s, elapsed=60.0, before_seconds=20.0) == s.minutes * 60 - 60 - 30 - REPORT_RESERVE_S
    assert train_share(s, elapsed=10_000.0, before_seconds=20.0) == MIN_SHARE * s.minutes * 60  # never nothing
    assert train_share(DemoSettings(minutes=0, steps=10), 60.0, 20.0) == 0.0  # no budget: steps bound it


def test_help_and_first_line_say_the_budget(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "300"})
    words = " ".join(result.output.replace("│", " ").split())
    assert "Time budget of the whole run, in minutes (default 13)" in words, words
    from coworkenv.commands.demo import budget_line

    assert budget_line(DemoSettings()).startswith("demo: time budget 13 minutes (--minutes)")
    assert "Ctrl-C during training" in budget_line(DemoSettings())
    assert "training runs 3 steps" in budget_line(DemoSettings.quick())


def test_ctrl_c_during_training_evaluates_reports_and_exits_130(tmp_path: Path) -> None:
    need(HAS_TRAIN, "the train extra (torch, transformers, trl, datasets, tokenizers) is not installed")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    # a tiny run bounded by a 3-minute budget only: training would take most of it unless interrupted
    proc = subprocess.Popen([sys.executable, "-m", "coworkenv", "demo", "--quick", "--steps", "0", "--minutes", "3",
                             "--threads", "1", "--out", str(out)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 300
    for line in proc.stderr:  # the plain progress lines: redirected output
        seen.append(line)
        if line.startswith("[train] started"):
            break
        assert time.monotonic() < deadline, "".join(seen)
    else:
        pytest.fail("the demo ended before training:\n" + "".join(seen) + (proc.stdout.read() if proc.stdout else ""))
    assert seen[0].startswith("demo: time budget 3 minutes"), seen[0]
    time.sleep(2.0)  # let a few steps run
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stdout + stderr
    assert "interrupted: training stops at this step" in stderr and "Traceback" not in stderr, stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    training = summary["training"]
    assert training["stopped_by"] == "interrupt" and training["steps"] >= 1
    assert training["seconds"] < training["budget_seconds"]  # stopped well before its share ran out
    assert summary["after"] is not None and summary["after"]["episodes"] == 2  # what was trained, evaluated
    assert summary["verdict"].startswith("WARNING: training was interrupted (Ctrl-C)") and summary["verdict"] in stdout
    assert (out / "report" / "index.html").is_file() and (out / "records" / "after.jsonl").is_file()
    log = [json.loads(x) for x in (out / "model" / "train.log").read_text(encoding="utf-8").splitlines() if x.strip()]
    assert log[-1]["end"] == "stopped by an interrupt (Ctrl-C)"
