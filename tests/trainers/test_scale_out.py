"""Scale-out: a batch spread over several real `coworkenv serve --http` servers (`run --connect A,B`), each
episode routed by its id; a server that dies mid-batch fails only its own episodes, with a clear error;
`serve --http --workers N` serves from N processes, one port each, that `--connect` spreads over."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import HttpServer, start_http_server
from episode_helpers import generated_specs, without_remote
from typer.testing import CliRunner

from coworkenv.cli import app
from workspace_sim.record import read_record_file
from trainers.episodes.batch import BatchConfig, episode_id
from trainers.episodes.execute import run_batch
from trainers.episodes.policies import PolicySpec
from trainers.episodes.remote import RemoteServers, RemoteTarget
from workspace_sim.record import read_records

TOKEN = "scale-admin-token-0123456789"


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[HttpServer]]:
    servers = [start_http_server(tmp_path_factory.mktemp(f"records{i}"), TOKEN) for i in range(2)]
    yield servers
    for s in servers:
        s.stop()


def servers_of(*bases: str) -> RemoteServers:
    return RemoteServers(tuple(RemoteTarget(b, TOKEN, timeout=10) for b in bases))


def test_a_batch_over_two_servers_matches_the_local_batch(two: list[HttpServer]) -> None:
    specs = generated_specs()
    pool = servers_of(two[0].base, two[1].base)
    local = run_batch(specs, BatchConfig(PolicySpec("teacher"), episodes_per_env=2))
    remote = run_batch(specs, BatchConfig(PolicySpec("teacher"), episodes_per_env=2, connect=pool))
    assert [without_remote(r) for r in remote] == [without_remote(r) for r in local]
    used = set()
    for rec in remote:
        where = rec.header.policy.settings["remote"]
        # each episode ran where its id routes it, and that server recorded and ended it
        assert where["url"] == pool.pick(rec.header.episode_id).base
        server = next(s for s in two if s.base == where["url"])
        (seg,) = read_record_file(server.record_dir / f"{where['episode_id']}.jsonl").segments
        assert seg.final is not None and seg.final["stop_reason"] == "answered"
        used.add(where["url"])
    assert used == {two[0].base, two[1].base}  # 12 episodes: both servers got some


def test_a_server_dying_mid_batch_fails_only_its_episodes(tmp_path: Path, two: list[HttpServer]) -> None:
    doomed = start_http_server(tmp_path / "doomed", TOKEN)
    try:
        pool = servers_of(two[0].base, doomed.base)
        specs = generated_specs()
        seen: list[str] = []

        def kill_after_first(rec: object) -> None:
            seen.append(rec.header.episode_id)  # type: ignore[attr-defined]
            if len(seen) == 1:
                doomed.proc.kill()
                doomed.proc.wait()

        records = run_batch(specs, BatchConfig(PolicySpec("teacher"), episodes_per_env=3, connect=pool),
                            on_record=kill_after_first)
    finally:
        doomed.stop()
    assert len(records) == 3 * len(specs)  # the batch finished
    later = records[3:]  # records arrive an environment (3 seeds) at a time: the kill came after the first three
    on_doomed = [r for r in later if pool.pick(r.header.episode_id).base == doomed.base]
    on_alive = [r for r in later if pool.pick(r.header.episode_id).base == two[0].base]
    assert on_doomed and on_alive
    for rec in on_doomed:
        assert rec.final is not None and rec.final.stop_reason == "error"
        assert f"cannot reach the server at {doomed.base}" in (rec.final.stop_detail or ""), rec.final.stop_detail
    assert all(r.passed for r in on_alive)


def test_routing_is_stable_and_moves_only_what_must_move() -> None:
    bases = [f"http://10.0.0.{i}:8765" for i in range(1, 5)]
    pool = servers_of(*bases)
    smaller = servers_of(*bases[:3])
    ids = [episode_id(f"env-{i}", "teacher", s) for i in range(50) for s in range(2)]
    picks = [pool.pick(e).base for e in ids]
    assert picks == [servers_of(*bases).pick(e).base for e in ids]  # deterministic
    assert len(set(picks)) == 4
    for e, p in zip(ids, picks):
        if p != bases[3]:  # removing a server moves only its own episodes
            assert smaller.pick(e).base == p


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 250), min_size=1, max_size=6, unique=True), st.text(min_size=1, max_size=40))
def test_pick_is_one_of_the_servers_and_ignores_their_order(hosts: list[int], eid: str) -> None:
    bases = [f"http://10.1.0.{h}:80" for h in hosts]
    pick = servers_of(*bases).pick(eid).base
    assert pick in bases and servers_of(*reversed(bases)).pick(eid).base == pick


@pytest.mark.parametrize("urls,message", [
    ("http://127.0.0.1:9,,http://127.0.0.1:10", "without empty entries"),
    ("http://127.0.0.1:9,http://127.0.0.1:9/", "more than once"),
    ("http://127.0.0.1:9,127.0.0.1:10", "--connect needs the server's base URL"),
])
def test_bad_server_lists_are_refused(urls: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RemoteServers.from_options(urls, TOKEN)


def test_cli_run_over_two_servers(two: list[HttpServer], tmp_path: Path) -> None:
    envs = tmp_path / "envs"
    envs.mkdir()
    for spec in generated_specs()[:4]:
        spec.save(envs / f"{spec.id}.json")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(app, ["run", str(envs), "-o", str(out), "--connect", f"{two[0].base},{two[1].base}",
                                   "--admin-token", TOKEN], terminal_width=200)
    assert res.exit_code == 0, res.output
    recs = read_records(out)
    assert len(recs) == 4 and all(r.passed for r in recs)
    # a server that is down at the start stops the run before any episode, naming it
    res = CliRunner().invoke(app, ["run", str(envs), "-o", str(out), "--connect", f"{two[0].base},http://127.0.0.1:9",
                                   "--admin-token", TOKEN], terminal_width=300)
    assert res.exit_code == 2 and "cannot reach the server at http://127.0.0.1:9" in res.output, res.output


def test_serve_workers_spread_by_connect(tmp_path: Path) -> None:
    record_dir = tmp_path / "records"
    proc = subprocess.Popen(
        [sys.executable, "-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment", "--http", "--port", "0",
         "--workers", "2", "--record-dir", str(record_dir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "COWORKENV_ADMIN_TOKEN": TOKEN, "PYTHONWARNINGS": "ignore"})
    try:
        assert proc.stderr is not None
        urls = None
        deadline = time.monotonic() + 60
        while urls is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, "the server exited before reporting its workers"
            m = re.search(r"coworkenv run --connect (\S+)", line)
            urls = m.group(1).split(",") if m else None
        assert urls is not None and len(set(urls)) == 2
        for url in urls:  # the parent bound every port before starting the workers: no connection is refused
            r = httpx.post(f"{url}/admin/episodes", json={}, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
            assert r.status_code == 201, r.text
        # the two workers are separate hubs: an episode lives on the one that created it
        eid = r.json()["episode_id"]
        other = urls[0]
        r = httpx.get(f"{other}/admin/episodes/{eid}", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        assert r.status_code == 404
        specs = generated_specs()[:4]
        recs = run_batch(specs, BatchConfig(PolicySpec("teacher"), connect=servers_of(*urls)))
        assert all(r.passed for r in recs)
        assert {r.header.policy.settings["remote"]["url"] for r in recs} <= set(urls)
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(30)
    assert code == 0
    # stopping ended the still-live episodes (one per worker) and closed their records
    finals = [read_record_file(p).segments[-1].final for p in record_dir.glob("*.jsonl")]
    assert all(f is not None for f in finals)
    assert len(finals) == 2 + 4, [(f["episode_id"], f["stop_reason"], f.get("stop_detail")) for f in finals]


@pytest.mark.parametrize("args,message", [
    (["--workers", "2"], "--workers applies to --http only"),
    (["--http", "--workers", "2", "--default-episode", "ep-x"], "--default-episode needs one worker"),
    (["--http", "--port", "65535", "--workers", "2"], "--port must be 0-65535 (with --workers 2: at most 65534)"),
])
def test_serve_workers_refuses_what_cannot_work(args: list[str], message: str, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["serve", "--python", "mcp_server.demo:environment", "--record-dir", str(tmp_path),
                                   *args], terminal_width=300)
    assert res.exit_code == 2 and message in res.output, res.output


def test_serve_workers_with_a_taken_port_fails_before_starting(tmp_path: Path) -> None:
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:  # the second worker's port (port + 1 of a free one below it) is taken
        res = CliRunner().invoke(app, ["serve", "--python", "mcp_server.demo:environment", "--http", "--port",
                                       str(port - 1), "--workers", "2", "--record-dir", str(tmp_path)],
                                 env={"COWORKENV_ADMIN_TOKEN": TOKEN}, terminal_width=300)
    finally:
        taken.close()
    assert res.exit_code == 2, res.output
    assert f"cannot listen on 127.0.0.1:{port}" in res.output or f"127.0.0.1:{port - 1}" in res.output, res.output
    assert "Traceback" not in res.output
