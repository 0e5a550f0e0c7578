"""run_command against a real Docker engine: file diffs, isolation, limits, and container cleanup.

Needs a running engine with the default image (`.ci/setup_docker.sh` provides both); elsewhere
these tests skip, and in CI (COWORKENV_NO_SKIP=1) they fail instead.
"""

from __future__ import annotations

import gc
import hashlib
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest
from support import need

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.rules.policies import ProtectedPaths
from workspace_sim.predicates import evaluate, parse_predicates
from workspace_sim.sandboxes.engine import LABEL, client, engine_status, reap_orphans
from workspace_sim.sandboxes.settings import DEFAULT_IMAGE

FILES = {"files": {"files": [
    {"path": "/data/names.txt", "content": "carol\nalice\nbob\nalice\n"},
    {"path": "/drafts/old.md", "content": "# old\n"},
    {"path": "/report.md", "content": "Total: TBD\n"},
]}}


@pytest.fixture(scope="module")
def engine() -> None:
    ok, reason = engine_status(None, DEFAULT_IMAGE)
    need(ok, f"Docker sandbox unavailable: {reason}")


def make(**sandbox: object) -> Workspace:
    config = WorkspaceConfig(services=["files", "shell"], sandbox={"timeout_s": 5, **sandbox})
    return Workspace.create(config, FILES)


def container_exists(cid: str) -> bool:
    import docker

    try:
        client().containers.get(cid)
        return True
    except docker.errors.NotFound:
        return False


def sandbox_id(ws: Workspace) -> str:
    box = ws.resources.peek("sandbox.docker")
    assert box is not None and box.container_id
    return box.container_id


def test_created_edited_and_deleted_files_are_a_diff_that_predicates_check(engine: None) -> None:
    with make() as ws:
        cmd = ("sort -u data/names.txt > data/unique.txt && rm drafts/old.md && rmdir drafts && "
               "mkdir -p out && sed -i \"s/TBD/$(wc -l < data/unique.txt)/\" report.md && "
               "printf '\\377\\376' > out/blob.bin && cat data/unique.txt")
        r = ws.call("run_command", {"command": cmd})
        assert r.ok, r.text
        assert r.data["exit_code"] == 0 and r.data["stdout"] == "alice\nbob\ncarol\n"
        assert r.data["files"] == {"written": ["/data/unique.txt", "/out/blob.bin", "/report.md"],
                                   "deleted": ["/drafts/old.md"], "folders_created": ["/out"],
                                   "folders_deleted": ["/drafts"]}
        assert r.diff.summary() == {"files.files": {"added": 2, "changed": 1, "removed": 1},
                                    "files.folders": {"added": 1, "removed": 1}}
        assert ws.table("files.files")["/out/blob.bin"].encoding == "base64"
        preds = parse_predicates([
            {"kind": "file", "path": "/report.md", "content": "Total: 3\n"},
            {"kind": "file", "path": "/data/unique.txt", "content": {"contains": "carol"}},
            {"kind": "file", "path": "/drafts/old.md", "exists": False},
            {"kind": "only_changed", "scopes": ["files"]},
            {"kind": "tool_called", "tool": "run_command"},
        ])
        ev = evaluate(preds, ws)
        assert ev.passed, ev.to_json()
        # the next command sees the new state, and files changed by other tools in between
        assert ws.call("write_file", {"path": "/data/extra.txt", "content": "dave\n"}).ok
        assert ws.call("delete_file", {"path": "/report.md"}).ok
        r2 = ws.call("run_command", {"command": "cat data/*.txt | sort | uniq -c | sort -rn | head -1; ls"})
        assert r2.data["stdout"].split() == ["3", "alice", "data", "out"] and not r2.diff


def test_runs_as_non_root_without_network(engine: None) -> None:
    server = socket.socket()
    server.bind(("0.0.0.0", 0))
    server.listen(5)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                conn = server.accept()[0]
            except OSError:
                continue
            accepted.append(conn.getpeername())
            conn.close()  # so the client's nc ends at once

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    # control: a container on the default bridge reaches the host server through its gateway
    control = "gw=$(ip route | awk '/default/ {print $3}'); echo $gw; nc -w 2 $gw " + f"{port} </dev/null"
    box = client().containers.run(DEFAULT_IMAGE, ["sh", "-c", control], detach=True)
    try:
        box.wait(timeout=30)
        gateway = box.logs().decode().split()[0]
    finally:
        box.remove(force=True)
    probe = f"nc -w 2 {gateway} {port} </dev/null"
    time.sleep(0.3)
    assert accepted, "control probe could not reach the host; the isolation check below would prove nothing"
    accepted.clear()
    with make() as ws:
        r = ws.call("run_command", {"command": f"id -u; {probe}; echo rc=$?; ls /sys/class/net"})
        assert r.ok
        lines = r.data["stdout"].split()
        assert lines[0] == "1000" and "rc=1" in lines and lines[-1] == "lo"
        assert "unreachable" in r.data["stderr"].lower()
    time.sleep(0.3)
    assert not accepted
    server.close()


def test_time_limit_kills_the_command_and_what_it_left_running(engine: None) -> None:
    with make(timeout_s=1) as ws:
        t0 = time.monotonic()
        r = ws.call("run_command", {"command": "echo started > started.txt; (sleep 300 &) ; sleep 300"})
        assert time.monotonic() - t0 < 15
        assert r.ok and r.data["timed_out"] and r.data["exit_code"] is None
        assert any("time limit" in n for n in r.data["notes"]) and "timed out" in r.text
        assert "/started.txt" in ws.table("files.files")  # what it wrote before the kill is kept
        r = ws.call("run_command", {"command": "ps -o user,args | grep -c '[s]leep 300'"})
        assert r.data["stdout"].strip() == "0"  # nothing of the killed command survives


def test_background_processes_do_not_outlive_their_call(engine: None) -> None:
    with make() as ws:
        ws.call("run_command", {"command": "(sleep 2; echo late > late.txt) > /dev/null 2>&1 &"})
        time.sleep(3)
        r = ws.call("run_command", {"command": "ls"})
        assert "late.txt" not in r.data["stdout"] and "/late.txt" not in ws.table("files.files")


def test_memory_process_and_output_limits(engine: None) -> None:
    with make(memory_mb=32, pids=16, output_bytes=1000) as ws:
        r = ws.call("run_command", {"command": "awk 'BEGIN { s = \"x\"; while (1) s = s s }'"})
        assert r.ok and r.data["exit_code"] == 137 and any("memory limit" in n for n in r.data["notes"])
        r = ws.call("run_command", {"command": "for i in $(seq 40); do sleep 3 & done 2>&1; wait; echo done"})
        assert "can't fork" in (r.data["stdout"] + r.data["stderr"]).lower() and r.data["exit_code"] != 0
        r = ws.call("run_command", {"command": "yes | head -c 50000; echo; echo END"})
        assert "bytes of output left out" in r.data["stdout"] and r.data["stdout"].rstrip().endswith("END")
        assert any("truncated" in n for n in r.data["notes"])


def _hash_tree(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def test_host_filesystem_is_untouched(engine: None, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("host data")
    before = _hash_tree(tmp_path)
    tag = uuid.uuid4().hex
    host_probes = [Path("/tmp") / f"probe-{tag}", Path("/") / f"probe-{tag}", tmp_path / f"probe-{tag}",
                   Path.cwd() / f"probe-{tag}"]
    cmd = "; ".join(f"echo x > {p} 2>/dev/null" for p in host_probes) + (
        f"; echo x > ../probe-{tag}; rm -rf {tmp_path} 2>/dev/null; cat /etc/hostname > /dev/null;"
        f" touch /etc/probe-{tag} /bin/probe-{tag}; echo inside > ok.txt")
    with make() as ws:
        r = ws.call("run_command", {"command": cmd})
        assert r.ok
    for p in host_probes + [Path("/etc") / f"probe-{tag}", Path("/bin") / f"probe-{tag}"]:
        assert not p.exists(), p
    assert _hash_tree(tmp_path) == before
    # only /work came back, as the workspace's files
    assert r.data["files"]["written"] == ["/ok.txt"]


def test_links_and_odd_files_are_reported_not_followed(engine: None) -> None:
    with make() as ws:
        r = ws.call("run_command", {"command": "ln -s /etc/passwd pw; mkfifo pipe; ln data/names.txt hard.txt"})
        assert r.ok
        assert r.data["files"]["written"] == ["/hard.txt"]
        notes = " ".join(r.data["notes"])
        assert "/pw (symbolic link" in notes and "/pipe (special file" in notes
        assert ws.table("files.files")["/hard.txt"].content == ws.table("files.files")["/data/names.txt"].content
        # the workspace cannot hold them, so the next call does not see them either
        assert "pw" not in ws.call("run_command", {"command": "ls"}).data["stdout"].split()


def test_a_policy_blocked_command_changes_nothing_and_the_sandbox_resyncs(engine: None) -> None:
    config = WorkspaceConfig(services=["files", "shell"], sandbox={"timeout_s": 5},
                             policies=[ProtectedPaths(paths=["/report.md"])])
    with Workspace.create(config, FILES) as ws:
        h = ws.content_hash
        r = ws.call("run_command", {"command": "echo hacked > report.md; echo x > other.txt"})
        assert not r.ok and r.error.code == "policy_violation" and ws.content_hash == h
        r = ws.call("run_command", {"command": "cat report.md; ls"})
        assert r.data["stdout"].split()[:2] == ["Total:", "TBD"] and "other.txt" not in r.data["stdout"]


def test_bad_commands_are_refused_clearly(engine: None) -> None:
    with make() as ws:
        for args, needle in [({"command": " "}, "empty"), ({"command": "x" * 20001}, "longer"),
                             ({}, "command"), ({"command": ["ls"]}, "command")]:
            r = ws.call("run_command", args)
            assert not r.ok and r.error.code == "invalid_argument" and needle in r.error.message
        r = ws.call("run_command", {"command": "exit 7"})
        assert r.ok and r.data["exit_code"] == 7


def test_fork_gets_its_own_container_and_restore_resyncs(engine: None) -> None:
    with make() as ws:
        snap = ws.snapshot()
        ws.call("run_command", {"command": "echo 1 > a.txt"})
        fork = ws.fork()
        try:
            fork.call("run_command", {"command": "echo 2 > b.txt"})
            assert sandbox_id(fork) != sandbox_id(ws)
            assert ws.call("run_command", {"command": "ls"}).data["stdout"].split() == [
                "a.txt", "data", "drafts", "report.md"]
        finally:
            fork.close()
        ws.restore(snap)
        assert ws.call("run_command", {"command": "ls"}).data["stdout"].split() == ["data", "drafts", "report.md"]


def test_container_is_removed_when_the_episode_ends(engine: None) -> None:
    ws = make()
    ws.call("run_command", {"command": "true"})
    cid = sandbox_id(ws)
    assert container_exists(cid)
    ws.close()
    assert not container_exists(cid)
    # a workspace dropped without close() is cleaned up when collected
    ws = make()
    ws.call("run_command", {"command": "true"})
    cid = sandbox_id(ws)
    del ws
    gc.collect()
    assert not container_exists(cid)


_CHILD = textwrap.dedent("""
    import os, signal, sys
    from workspace_sim import Workspace, WorkspaceConfig
    ws = Workspace.create(WorkspaceConfig(services=["files", "shell"]))
    assert ws.call("run_command", {"command": "true"}).ok
    print(ws.resources.peek("sandbox.docker").container_id, flush=True)
    if sys.argv[1] == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    """)


def _run_child(mode: str) -> str:
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, timeout=120)
    cid = out.stdout.strip()
    assert cid, out.stderr
    return cid


def test_container_is_removed_at_normal_exit_even_without_close(engine: None) -> None:
    cid = _run_child("exit")
    assert not container_exists(cid)


def test_container_left_by_a_crashed_process_is_reaped(engine: None) -> None:
    cid = _run_child("crash")
    assert container_exists(cid)  # SIGKILL left no chance to clean up
    assert cid in reap_orphans()
    assert not container_exists(cid)
    live = make()
    try:
        live.call("run_command", {"command": "true"})
        assert sandbox_id(live) not in reap_orphans()  # a live owner's container is left alone
    finally:
        live.close()
    assert not client().containers.list(all=True, filters={"label": LABEL, "id": cid})


def test_tool_is_not_offered_without_an_engine(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    config = WorkspaceConfig(services=["files", "shell"], sandbox={"docker_host": f"unix://{tmp_path}/none.sock"})
    with caplog.at_level("WARNING"):
        ws = Workspace.create(config, FILES)
    assert "run_command" not in ws.tools and "read_text_file" in ws.tools
    assert "no Docker engine reachable" in ws.unavailable["shell"]
    assert "shell offers no tools" in caplog.text
    r = ws.call("run_command", {"command": "ls"})
    assert not r.ok and r.error.code == "unknown_tool"


def test_tool_is_not_offered_without_the_image(engine: None) -> None:
    ws = Workspace.create(WorkspaceConfig(services=["files", "shell"], sandbox={"image": "coworkenv-missing:none"}))
    assert "run_command" not in ws.tools and "build-image" in ws.unavailable["shell"]


def test_cli_builds_the_image_and_reports_status(engine: None) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    runner = CliRunner()
    tag = f"coworkenv-sandbox-test:{uuid.uuid4().hex[:8]}"
    try:
        r = runner.invoke(app, ["sandbox", "build-image", "--tag", tag])
        assert r.exit_code == 0, r.output
        assert f"built {tag}" in r.output
        out = client().containers.run(tag, ["sh", "-c", "id -un; ls /"], user="1000", remove=True).decode()
        assert out.split()[0] == "sandbox" and "work" in out.split()
        r = runner.invoke(app, ["sandbox", "status", "--image", tag])
        assert r.exit_code == 0 and "available" in r.output
        r = runner.invoke(app, ["sandbox", "build-image", "--tag", tag, "--busybox", "/etc/passwd"])
        assert r.exit_code == 1 and "error:" in r.output
    finally:
        client().images.remove(tag, force=True)
    r = runner.invoke(app, ["sandbox", "status", "--image", "coworkenv-missing:none"])
    assert r.exit_code == 1 and "build-image" in r.output
