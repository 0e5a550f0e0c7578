"""examples/adapters/gym_episode.py runs as a user runs it, whatever number of working days seed 0 draws."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from support import need

ROOT = Path(__file__).resolve().parents[2]


def test_gym_example_runs_to_the_end_of_the_episode(tmp_path: Path) -> None:
    need(importlib.util.find_spec("gymnasium") is not None, "gymnasium (the gym extra) is not installed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "adapters" / "gym_episode.py")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stop:" in done.stdout and "terminated=True" in done.stdout, done.stdout
    assert (tmp_path / "gym-episode.jsonl").is_file()
