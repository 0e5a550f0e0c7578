"""Streamable HTTP: a real `coworkenv serve --http` process, many isolated episodes, the admin API."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from workspace_sim.record import read_record_file
from support import HttpServer, http_server_fixture

TOKEN = "test-admin-token-0123456789"


Server = HttpServer


server = http_server_fixture(TOKEN)


def create(server: Server, **body: Any) -> dict[str, Any]:
    r = server.admin("POST", "/admin/episodes", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def state_files(server: Server, eid: str) -> dict[str, str]:
    r = server.admin("GET", f"/admin/episodes/{eid}/state")
    assert r.status_code == 200, r.text
    return {f["path"]: f["content"] for f in r.json()["data"]["files"]["files"]}


def test_fifty_concurrent_episodes_stay_isolated(server: Server) -> None:
    n = 50
    eids = [create(server)["episode_id"] for _ in range(n)]
    assert len(set(eids)) == n

    async def work(i: int, eid: str) -> None:
        mode = "legacy" if i % 2 else "auto"  # both the session handshake and the sessionless protocol
        async with Client(f"{server.base}/episodes/{eid}/mcp", mode=mode) as c:
            r = await c.call_tool("write_file", {"path": f"/reports/from-{i}.md", "content": f"episode {i}\n"})
            assert not r.is_error, r
            if i % 3 == 0:
                r = await c.call_tool("delete_file", {"path": "/drafts/notes.md"})
                assert not r.is_error, r
            r = await c.call_tool("read_text_file", {"path": f"/reports/from-{i}.md"})
            assert r.content[0].text == f"episode {i}\n"

    async def all_() -> None:
        async with anyio.create_task_group() as tg:
            for i, eid in enumerate(eids):
                tg.start_soon(work, i, eid)

    anyio.run(all_)
    for i, eid in enumerate(eids):
        files = state_files(server, eid)
        mine = {p for p in files if p.startswith("/reports/from-")}
        assert mine == {f"/reports/from-{i}.md"}, (eid, mine)
        assert ("/drafts/notes.md" in files) == (i % 3 != 0)
    for eid in eids:
        assert server.admin("DELETE", f"/admin/episodes/{eid}").status_code == 200
    for i, eid in enumerate(eids):
        (seg,) = read_record_file(server.record_dir / f"{eid}.jsonl").segments
        assert seg.final is not None
        assert [e["args"]["path"] for e in seg.events if e["tool"] == "write_file"] == [f"/reports/from-{i}.md"]


def test_admin_reset_snapshot_restore_fork_evaluate(server: Server) -> None:
    eid = create(server, episode_id="lifecycle-1")["episode_id"]
    url = f"{server.base}/episodes/{eid}/mcp"

    async def call(u: str, name: str, args: dict[str, Any]) -> Any:
        async with Client(u) as c:
            return await c.call_tool(name, args)

    anyio.run(call, url, "write_file", {"path": "/reports/summary.md", "content": "Total: 1234\n"})
    snap = server.admin("POST", f"/admin/episodes/{eid}/snapshot").json()["snapshot_id"]
    anyio.run(call, url, "delete_file", {"path": "/reports/README.md"})
    assert "/reports/README.md" not in state_files(server, eid)
    assert server.admin("POST", f"/admin/episodes/{eid}/restore", json={"snapshot_id": snap}).status_code == 200
    assert "/reports/README.md" in state_files(server, eid) and "/reports/summary.md" in state_files(server, eid)
    fork = server.admin("POST", f"/admin/episodes/{eid}/fork", json={"episode_id": "lifecycle-2"})
    assert fork.status_code == 201 and fork.json()["mcp_path"] == "/episodes/lifecycle-2/mcp"
    anyio.run(call, server.base + fork.json()["mcp_path"], "delete_file", {"path": "/drafts/notes.md"})
    assert "/drafts/notes.md" in state_files(server, eid)  # the fork's write stays in the fork
    assert "/drafts/notes.md" not in state_files(server, "lifecycle-2")
    verdict = server.admin("POST", f"/admin/episodes/{eid}/evaluate", json={}).json()
    assert verdict["passed"] is True
    assert server.admin("POST", "/admin/episodes/lifecycle-2/evaluate").json()["passed"] is False
    assert server.admin("POST", f"/admin/episodes/{eid}/reset").status_code == 200
    assert "/reports/summary.md" not in state_files(server, eid)
    log = server.admin("GET", f"/admin/episodes/{eid}/log").json()
    assert [s["header"]["episode_id"] for s in log["segments"]] == [eid, f"{eid}.1", f"{eid}.2"]
    assert log["segments"][0]["final"]["stop_reason"] == "user_ended"
    ended = server.admin("POST", f"/admin/episodes/{eid}/end", json={"final_answer": "Done."})
    assert ended.status_code == 200 and ended.json()["passed"] is False
    server.admin("DELETE", "/admin/episodes/lifecycle-2")


@pytest.mark.parametrize("method,path,kw,status,code", [
    ("GET", "/admin/episodes", {"headers": {"Authorization": ""}}, 401, "missing_token"),
    ("GET", "/admin/episodes", {"headers": {"Authorization": "Bearer wrong-token"}}, 403, "bad_token"),
    ("GET", "/admin/episodes", {"headers": {"Authorization": f"Basic {TOKEN}"}}, 403, "bad_token"),
    ("POST", "/admin/episodes", {"content": b"{not json"}, 400, "malformed_body"),
    ("POST", "/admin/episodes", {"json": [1, 2]}, 400, "malformed_body"),
    ("POST", "/admin/episodes", {"json": {"spek": "x.yaml"}}, 400, "malformed_body"),
    ("POST", "/admin/episodes", {"json": {"episode_id": 7}}, 400, "malformed_body"),
    ("POST", "/admin/episodes", {"json": {"episode_id": "../etc"}}, 400, "invalid_episode_id"),
    ("POST", "/admin/episodes", {"json": {"spec": "/nonexistent/spec.yaml"}}, 403, "spec_outside_roots"),
    ("POST", "/admin/episodes", {"json": {"spec_document": {"id": 5}}}, 400, "bad_environment"),
    ("POST", "/admin/episodes", {"content": b"x" * (1 << 21)}, 413, "body_too_large"),
    ("GET", "/admin/episodes/ep-unknown", {}, 404, "unknown_episode"),
    ("POST", "/admin/episodes/ep-unknown/reset", {}, 404, "unknown_episode"),
    ("GET", "/admin/episodes/ep-unknown/log", {}, 404, "unknown_episode"),
    ("PUT", "/admin/episodes", {}, 405, "method_not_allowed"),
    ("GET", "/admin/nothing-here", {}, 404, "no_route"),
])
def test_admin_errors_are_clear(server: Server, method: str, path: str, kw: dict[str, Any], status: int, code: str) -> None:
    r = server.admin(method, path, **kw)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] == code and len(err["message"]) > 10


def test_admin_conflicts_and_ended_episodes(server: Server) -> None:
    create(server, episode_id="dup-1")
    again = server.admin("POST", "/admin/episodes", json={"episode_id": "dup-1"})
    assert again.status_code == 409 and "already taken" in again.json()["error"]["message"]
    bad_snap = server.admin("POST", "/admin/episodes/dup-1/restore", json={"snapshot_id": "s99"})
    assert bad_snap.status_code == 404 and "no snapshot 's99'" in bad_snap.json()["error"]["message"]
    no_snap = server.admin("POST", "/admin/episodes/dup-1/restore", json={})
    assert no_snap.status_code == 400
    assert server.admin("DELETE", "/admin/episodes/dup-1").status_code == 200
    gone = server.admin("GET", "/admin/episodes/dup-1")
    assert gone.status_code == 410 and gone.json()["error"]["code"] == "episode_ended"
    mcp = httpx.post(f"{server.base}/episodes/dup-1/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert mcp.status_code == 410 and "has ended" in mcp.json()["error"]["message"] and mcp.json()["id"] == 1
    unknown = httpx.post(f"{server.base}/episodes/nope/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert unknown.status_code == 404 and "no episode 'nope'" in unknown.json()["error"]["message"]


KILLED_CLIENT = textwrap.dedent("""
    import sys, anyio
    from mcp import Client

    async def main(url):
        async with Client(url) as c:
            i = 0
            while True:
                r = await c.call_tool("write_file", {"path": f"/reports/n{i}.md", "content": str(i)})
                assert not r.is_error
                print(i, flush=True)
                i += 1

    anyio.run(main, sys.argv[1])
""")


def test_a_client_killed_mid_episode_leaves_a_readable_record(server: Server) -> None:
    eid = create(server, episode_id="killed-1")["episode_id"]
    client = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, f"{server.base}/episodes/{eid}/mcp"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert client.stdout is not None
    answered = [client.stdout.readline() for _ in range(8)]
    client.kill()
    client.wait(10)
    assert all(a.strip().isdigit() for a in answered)
    path = server.record_dir / f"{eid}.jsonl"
    rec = read_record_file(path)
    assert rec.ends_cleanly and not rec.skipped
    (seg,) = rec.segments
    paths = [e["args"]["path"] for e in seg.events]
    assert len(paths) >= len(answered)
    assert paths == [f"/reports/n{i}.md" for i in range(len(paths))]  # in order, nothing lost or torn
    # the server is unharmed and the episode can be judged and closed
    verdict = server.admin("POST", f"/admin/episodes/{eid}/end", json={"final_answer": "stopped"})
    assert verdict.status_code == 200 and verdict.json()["passed"] is False
    final = read_record_file(path).segments[0].final
    assert final is not None and final["final_answer"] == "stopped" and final["stop_reason"] == "answered"
    record = pytest.importorskip("workspace_sim.record")
    (ep,) = record.read_records(path)
    assert ep.complete and len(ep.events) == len(paths)
