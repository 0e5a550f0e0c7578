"""`gymnasium.make(MAKE_ID)` works without `envs=`, as a Gymnasium user expects `make(id)` to: it plays the shipped
example specs (issue 38 item 9: it failed with "missing 1 required positional argument: 'envs'")."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import need

need(importlib.util.find_spec("gymnasium") is not None, "gymnasium (the gym extra) is not installed")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import json, gymnasium
env = gymnasium.make("trainers.adapters.gym:coworkenv/CoworkEnv-v0")
obs, info = env.reset(seed=3)
ids = sorted(env.unwrapped.source.prepared(i).spec.id for i in range(len(env.unwrapped.source)))
obs, reward, terminated, truncated, info = env.step(json.dumps({"message": "Which file do you mean?"}))
print(json.dumps({"ids": ids, "stepped": isinstance(reward, float)}))
"""


def test_make_without_envs_plays_the_example_specs(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)  # a fresh interpreter, away from the checkout, as a user runs it
    assert done.returncode == 0, done.stderr
    import json

    got = json.loads(done.stdout.strip().splitlines()[-1])
    shipped = sorted(p.stem.removeprefix("generated-") for p in (ROOT / "examples" / "specs").glob("*.yaml"))
    assert got["ids"] == sorted(shipped)
    assert got["stepped"]


def test_without_the_examples_folder_the_default_is_generated(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    from trainers.adapters import gym as gym_adapter

    monkeypatch.setattr(gym_adapter, "EXAMPLE_SPECS", tmp_path / "not-installed")
    env = gym_adapter.CoworkEnv()
    caps = sorted(env.source.prepared(i).spec.capabilities[0] for i in range(len(env.source)))
    assert caps == sorted(gym_adapter.EXAMPLE_CAPABILITIES)
    obs, _ = env.reset(seed=0)
    assert obs.startswith("[system]")
    env.close()
