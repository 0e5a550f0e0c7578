"""docs/ray.md, tested: a Ray cluster started the way a user starts one (`ray start --head`), joined by the real
`coworkenv run --ray HOST:PORT` (a subprocess); the driver writes the records, equal to a local run's; the cluster
is stopped at the end, no process of it left."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import need
from episode_helpers import comparable, generated_specs

from workspace_sim.record import read_records

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster_alive(pgid: int, marker: str) -> list[int]:
    """The live (not zombie) processes of the cluster: of its process group, or (a Ray worker may start a
    session of its own) with the cluster's unique token in their environment."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            ours = int(fields[2]) == pgid or marker.encode() in (entry / "environ").read_bytes()
        except OSError:
            continue
        if ours and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


def _stop_cluster(pgid: int, marker: str) -> list[int]:
    """Stop every process of the cluster (ours alone: `ray stop` would stop every Ray on the machine); the
    processes still alive after SIGTERM, 5 s and SIGKILL."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        for pid in _cluster_alive(pgid, marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while _cluster_alive(pgid, marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not _cluster_alive(pgid, marker):
            return []
    return _cluster_alive(pgid, marker)


@contextlib.contextmanager
def _cluster(pythonpath: str) -> Iterator[tuple[str, dict[str, str]]]:
    """A one-node Ray cluster from `ray start --head --port=0`, in a process group of its own; yields its
    address (HOST:PORT, what `ray start` prints for other nodes to join) and the environment a driver needs to
    join it: Ray's token authentication on (as `ray start --head` has it by default) with this cluster's own
    token, not the one in ~/.ray."""
    need(importlib.util.find_spec("ray") is not None, "Ray is not installed (pip install 'coworkenv[ray]')")
    ray_cli = Path(sys.executable).with_name("ray")
    need(ray_cli.exists(), f"the ray command is not next to {sys.executable}")
    temp = tempfile.mkdtemp(prefix="cwray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env = {**os.environ, "PYTHONPATH": pythonpath, "RAY_USAGE_STATS_ENABLED": "0", **auth}
    proc = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--port=0", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats", f"--temp-dir={temp}", f"--ray-client-server-port={_free_port()}",
         f"--dashboard-agent-listen-port={_free_port()}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
    pgid = proc.pid
    try:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out
        m = re.search(r"ray start --address='([^']+)'", re.sub(r"\x1b\[[0-9;]*m", "", out))
        assert m, out
        yield m.group(1), auth
    finally:
        if proc.poll() is None:
            proc.kill()
        left = _stop_cluster(pgid, auth["RAY_AUTH_TOKEN"])
        shutil.rmtree(temp, ignore_errors=True)
        assert not left, f"processes of the Ray cluster outlived the test: {left}"


@pytest.fixture
def ray_cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """The cluster, its nodes importing this checkout."""
    with _cluster(str(ROOT)) as cluster:
        yield cluster


def _write_envs(folder: Path, n: int) -> Path:
    folder.mkdir()
    for spec in generated_specs()[:n]:
        (folder / f"{spec.id}.json").write_text(spec.canonical_json(), encoding="utf-8")
    return folder


def _run(*args: str, cwd: Path, auth: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore", "COLUMNS": "200", **(auth or {})}
    return subprocess.run([sys.executable, "-m", "coworkenv", "run", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=300)


def test_coworkenv_run_on_a_ray_cluster_writes_the_local_records(ray_cluster: tuple[str, dict[str, str]],
                                                                tmp_path: Path) -> None:
    address, auth = ray_cluster
    envs = _write_envs(tmp_path / "envs", 3)
    on_ray = _run(str(envs), "--policy", "teacher", "-g", "2", "-w", "2", "--ray", address,
                  "--out", "runs/ray.jsonl", cwd=tmp_path, auth=auth)
    assert on_ray.returncode == 0, on_ray.stdout + on_ray.stderr
    assert f"ray: joining the Ray cluster at {address}" in on_ray.stderr, on_ray.stderr
    assert "ray: Ray is ready after" in on_ray.stderr, on_ray.stderr
    assert "records: runs/ray.jsonl" in on_ray.stdout
    local = _run(str(envs), "--policy", "teacher", "-g", "2", "--out", "runs/local.jsonl", cwd=tmp_path)
    assert local.returncode == 0, local.stdout + local.stderr
    ray_recs, local_recs = read_records(tmp_path / "runs/ray.jsonl"), read_records(tmp_path / "runs/local.jsonl")
    assert len(ray_recs) == len(local_recs) == 6
    assert [comparable(r) for r in ray_recs] == [comparable(r) for r in local_recs]
    assert [(r.header.episode_id, r.final.evaluation["score"]) for r in ray_recs] == \
        [(r.header.episode_id, r.final.evaluation["score"]) for r in local_recs]
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["local.jsonl", "ray.jsonl"]


def test_a_node_without_the_package_stops_the_run_with_a_clear_error(tmp_path: Path) -> None:
    """The node's Python cannot import `trainers` (a package of that name that fails to import stands first on
    its path): the run exits 1 naming the environment and the missing module, no traceback."""
    broken = tmp_path / "node-path" / "trainers"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise ModuleNotFoundError("No module named \'trainers\'", name="trainers")\n')
    envs = _write_envs(tmp_path / "envs", 2)
    with _cluster(str(broken.parent)) as (address, auth):
        res = _run(str(envs), "--policy", "teacher", "--ray", address, "--out", "runs/ray.jsonl", cwd=tmp_path,
                   auth=auth)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    first = generated_specs()[0].id
    assert re.search(rf"error: the Ray task of environment '({first}|{generated_specs()[1].id})' failed: "
                     r"\w+: .*No module named 'trainers'.*is coworkenv installed", res.stderr), res.stderr
    assert read_records(tmp_path / "runs/ray.jsonl") == []
