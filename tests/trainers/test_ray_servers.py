"""Servers held by Ray actors (the way to spread episodes over machines): a batch over them with `connect=`
matches the local batch, each episode on the server its id routes to; stopping ends the servers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from support import need
from episode_helpers import generated_specs, without_remote

from workspace_sim.record import read_record_file
from trainers.episodes.batch import BatchConfig
from trainers.episodes.execute import run_batch
from trainers.episodes.policies import PolicySpec

TOKEN = "ray-servers-token-0123456789"


def test_a_batch_over_ray_held_servers(tmp_path: Path) -> None:
    need(importlib.util.find_spec("ray") is not None, "Ray is not installed (pip install 'coworkenv[ray]')")
    import ray

    from trainers.episodes.ray_servers import start_ray_servers

    servers = start_ray_servers(2, "--python", "mcp_server.demo:environment", token=TOKEN, address="local",
                                record_dir=str(tmp_path / "records"), host="127.0.0.1")
    try:
        assert len(set(servers.urls)) == 2
        specs = generated_specs()[:4]
        pool = servers.remote(TOKEN)
        remote = run_batch(specs, BatchConfig(PolicySpec("teacher"), connect=pool))
        local = run_batch(specs, BatchConfig(PolicySpec("teacher")))
        assert [without_remote(r) for r in remote] == [without_remote(r) for r in local]
        assert all(r.header.policy.settings["remote"]["url"] == pool.pick(r.header.episode_id).base for r in remote)
    finally:
        codes = servers.stop()
    assert all(c in (0, 130) for c in codes), codes  # stopped by the interrupt, not killed
    assert not ray.is_initialized()
    records = list((tmp_path / "records").glob("*.jsonl"))
    assert len(records) == 4 and all(read_record_file(p).segments[-1].final is not None for p in records)


def test_bad_arguments_are_refused_before_ray_starts() -> None:
    from trainers.episodes.ray_servers import start_ray_servers

    with pytest.raises(ValueError, match="at least one server"):
        start_ray_servers(0, token=TOKEN)
    with pytest.raises(ValueError, match="16 characters"):
        start_ray_servers(1, token="short")
