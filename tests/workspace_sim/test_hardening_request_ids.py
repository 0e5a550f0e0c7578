"""Issue 24 item 4: duplicate in-flight request ids in one handshake-era session, then a stop signal.

Before: 7 concurrent calls with id 5 left 5 unanswered and gave 2 another call's result, and SIGINT no
longer stopped the server (SIGKILL after 40 s), so an unrelated live episode's record got no final line.
Now a duplicate in-flight id is answered at once with JSON-RPC -32600 naming it, every request is
answered with its own result or that error, and SIGINT stops the server within seconds with every live
episode ended and recorded. Against a real `coworkenv serve --http` process, with httpx.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import anyio
import httpx
from support import start_http_server

from workspace_sim.record import read_record_file

TOKEN = "request-ids-admin-token-0123456789"
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
PATHS = ["/drafts/notes.md", "/reports/README.md", "/reports/q1.csv"] * 3


def test_duplicate_in_flight_ids_are_refused_and_sigint_still_ends_and_records_every_episode(tmp_path: Path) -> None:
    server = start_http_server(tmp_path, TOKEN)
    try:
        for eid in ("dup", "other"):
            assert server.admin("POST", "/admin/episodes", json={"episode_id": eid}).status_code == 201
        url = f"{server.base}/episodes/dup/mcp"

        async def go() -> list[httpx.Response]:
            async with httpx.AsyncClient(timeout=20) as c:
                init = await c.post(url, headers=HEADERS, json={
                    "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
                assert init.status_code == 200, init.text
                session = {**HEADERS, "mcp-session-id": init.headers["mcp-session-id"],
                           "mcp-protocol-version": "2025-06-18"}
                await c.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
                out: list[httpx.Response] = [None] * 7  # type: ignore[list-item]

                async def call(i: int) -> None:
                    out[i] = await c.post(url, headers=session, json={
                        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
                        "params": {"name": "read_text_file", "arguments": {"path": PATHS[i]}}})

                with anyio.fail_after(15):  # every request is answered
                    async with anyio.create_task_group() as tg:
                        for i in range(7):
                            tg.start_soon(call, i)
                again = await c.post(url, headers=session, json={  # id 5 is free again once answered
                    "jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "read_text_file", "arguments": {"path": "/drafts/notes.md"}}})
                return [*out, again]

        answers = anyio.run(go)
        refused = 0
        for i, r in enumerate(answers):
            doc = r.json()
            assert doc["id"] == 5, doc
            if "error" in doc:
                refused += 1
                assert r.status_code == 400 and doc["error"]["code"] == -32600
                assert "id 5 is already in flight in this session" in doc["error"]["message"]
            else:  # its own call's result, never another's
                text = doc["result"]["content"][0]["text"]
                want = PATHS[i] if i < 7 else "/drafts/notes.md"
                assert doc["result"]["structuredContent"]["path"] == want, (i, text[:80])
        assert "error" not in answers[-1].json()
        assert refused >= 1, "the seven calls never overlapped"
        server.proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        try:
            server.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            raise AssertionError("SIGINT did not stop the server within 10 s") from None
        assert time.monotonic() - t0 < 10
    finally:
        if server.proc.poll() is None:
            server.stop()
    for eid in ("dup", "other"):
        (seg,) = read_record_file(tmp_path / f"{eid}.jsonl").segments
        assert seg.final is not None and seg.final["stop_reason"] == "user_ended", eid
    calls = [e for e in read_record_file(tmp_path / "dup.jsonl").segments[0].events if e["kind"] == "call"]
    assert len(calls) == 8 - refused and json.dumps(calls)
