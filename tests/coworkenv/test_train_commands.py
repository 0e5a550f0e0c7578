"""The training commands as a user meets them: long ones show their progress (one log line per step with the
step of the total, the loss or reward and the time left on stderr when it is not a terminal, a rich bar when it
is; stdout keeps only the result); `train rl --envs` takes one spec file as well as a folder or toy:N."""

from __future__ import annotations

import importlib.util
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import need
from typer.testing import CliRunner

need(all(importlib.util.find_spec(m) for m in ("torch", "transformers", "trl", "datasets")),
     "the train extra (torch, transformers, trl, datasets) is not installed")
os.environ["HF_HUB_OFFLINE"] = "1"

from coworkenv.cli import app  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "specs" / "handwritten-archive-invoices.yaml"
LINE = r"\[{what}\] step {n}/{total} {figure} -?[0-9.e+-]+, [0-9.]+ s elapsed, about [0-9.]+ s left"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from trainers.export.sft import to_hf
    from trainers.training.episode import EpisodeRecorder
    from trainers.training.toy import archive_environments
    from workspace_sim.record import PolicyInfo

    folder = tmp_path_factory.mktemp("progress")
    examples = []
    for env in archive_environments(2):
        rec = EpisodeRecorder(env, f"t-{env.id}", PolicyInfo(name="teacher"))
        rec.turn(None, env.solution())
        rec.turn("Done: archived.")
        examples.append(to_hf(rec.finish("answered")))
    data = folder / "train.jsonl"
    data.write_text("".join(json.dumps(e) + "\n" for e in examples))
    res = CliRunner().invoke(app, ["train", "tiny", "--data", str(data), "--out", str(folder / "m"), "--vocab", "500"])
    assert res.exit_code == 0, res.output
    return folder / "m", data


def test_train_sft_logs_a_line_per_step(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    model, data = tiny
    res = CliRunner().invoke(app, ["train", "sft", "--model", str(model), "--data", str(data), "--out",
                                   str(tmp_path / "s"), "--steps", "3", "--threads", "1", "--json"])
    assert res.exit_code == 0, res.output
    lines = res.stderr.splitlines()
    for n in (1, 2, 3):
        assert any(re.fullmatch(LINE.format(what="train sft", n=n, total=3, figure="loss"), x) for x in lines), lines
    assert json.loads(res.stdout)["steps"] == 3  # stdout holds the result only


def test_train_rl_logs_a_line_per_step(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["train", "rl", "--model", str(tiny[0]), "--envs", "toy:2", "--out",
                                   str(tmp_path / "o"), "--steps", "2", "--group-size", "2", "--envs-per-step", "1",
                                   "--max-turns", "1", "--max-new-tokens", "4", "--threads", "1", "--json"])
    assert res.exit_code == 0, res.output
    lines = res.stderr.splitlines()
    for n in (1, 2):
        pattern = LINE.format(what="train rl", n=n, total=2, figure="mean reward")
        assert any(re.fullmatch(pattern, x) for x in lines), lines
    assert [json.loads(x)["step"] for x in res.stdout.splitlines()] == [0, 1]


def test_train_base_on_a_terminal_draws_a_rich_bar(tmp_path: Path) -> None:
    main, child = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "coworkenv", "train", "base", "--tiny", "--steps", "3",
                             "--threads", "1", "--out", str(tmp_path / "b")],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=child, cwd=ROOT, env=env)
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=120)
    os.close(main)
    assert proc.returncode == 0, seen.decode(errors="replace")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace"))
    assert "train base" in text and "3/3" in text and "━" in text and "left" in text, text
    assert "[train base] step" not in text  # the bar, not the log lines
    assert out.decode().startswith("trained 3 steps")


def test_train_rl_takes_one_spec_file(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    # issue 38 item 7: one file was "not a folder of environment specs (or toy:N)"
    from workspace_sim.record import read_records

    res = CliRunner().invoke(app, ["train", "rl", "--model", str(tiny[0]), "--envs", str(SPEC), "--out",
                                   str(tmp_path / "o"), "--steps", "1", "--group-size", "2", "--max-turns", "1",
                                   "--max-new-tokens", "4", "--threads", "1", "--records", str(tmp_path / "r.jsonl"),
                                   "--json"])
    assert res.exit_code == 0, res.output
    assert {r.env_id for r in read_records(tmp_path / "r.jsonl")} == {"handwritten-archive-invoices"}
    for bad, says in ((tmp_path / "missing.yaml", "no such file or folder"),
                      (ROOT / "README.md", "not an environment spec file")):
        res = CliRunner().invoke(app, ["train", "rl", "--model", str(tiny[0]), "--envs", str(bad)])
        assert res.exit_code == 2 and says in res.stderr and "Traceback" not in res.output, res.output
