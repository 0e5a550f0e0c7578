"""A small batch on a real local Ray (started by the test) gives the same records as the local run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from support import need
from episode_helpers import comparable, generated_specs, multi_turn_spec

from synth import load_spec
from trainers.episodes.batch import BatchConfig, run_local
from trainers.episodes.execute import run_batch
from trainers.episodes.policies import PolicySpec

MULTI_DAY = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml"


def test_ray_batch_matches_the_local_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    need(importlib.util.find_spec("ray") is not None, "Ray is not installed (pip install 'coworkenv[ray]')")
    import ray

    # "local" is a private instance even where ray.init() alone would join a cluster (RAY_ADDRESS, or the address
    # file a `ray start` on this machine leaves): it used to fail with "num_cpus ... must not be provided"
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")
    specs = [multi_turn_spec(), *generated_specs()[:2], load_spec(MULTI_DAY)]
    config = BatchConfig(PolicySpec("random", {"calls": 3}), episodes_per_env=2, seed=7)
    local = run_local(specs, config)
    streamed, said = [], []
    on_ray = run_batch(specs, config, workers=2, ray="local", on_record=streamed.append, on_status=said.append)
    assert said[0].startswith("starting a local Ray instance (2 CPU(s)") and said[1].startswith("Ray is ready after")
    assert not ray.is_initialized()  # the local Ray started for the batch was shut down
    assert [comparable(r) for r in on_ray] == [comparable(r) for r in local]
    assert len(streamed) == len(local) == 8
    week = [r for r in on_ray if r.env_id == "handwritten-multiday-vendor-week"]
    assert len(week) == 2 and all([s["id"] for s in r.final.evaluation["stages"]] == ["mon", "tue", "wed"] for r in week)


def test_an_unreachable_ray_address_is_a_clear_error() -> None:
    need(importlib.util.find_spec("ray") is not None, "Ray is not installed (pip install 'coworkenv[ray]')")
    from trainers.episodes.ray_executor import RayUnavailable

    try:
        run_batch([multi_turn_spec()], BatchConfig(PolicySpec("noop")), ray="127.0.0.1:9")
    except RayUnavailable as e:
        assert "cannot start or join Ray at '127.0.0.1:9'" in str(e)
    else:  # pragma: no cover
        raise AssertionError("expected RayUnavailable")
