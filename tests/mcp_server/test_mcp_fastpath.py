"""The sessionless fast path answers byte for byte what the SDK answers, and hands everything else to the SDK.

Two hubs serve the same environment, one with the fast path and one without; every request goes to
an episode of the same id on each, and the two HTTP answers (status, content type, body) must be
equal. A counter says which requests the fast path answered itself, so a test cannot pass by the
fast path quietly declining everything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore
from mcp.client.streamable_http import streamable_http_client

from mcp_server.control import ControlOptions
from mcp_server.demo import environment
from mcp_server.http import build_app
from mcp_server.hub import EpisodeHub
from workspace_sim.record import read_record_file, sync_file

TOKEN = "fastpath-admin-token-0123456789"
VERSION = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientInfo":
            {"name": "test", "version": "0"}, "io.modelcontextprotocol/clientCapabilities": {}}
BASE = "http://127.0.0.1:1"


def call(rid: Any, name: str, arguments: Any, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": dict(ENVELOPE), **params}}


def headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    out = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "mcp-protocol-version": VERSION, "mcp-method": method}
    if name is not None:
        out["mcp-name"] = name
    return {**out, **extra}


class Pair:
    """The same episode id on a fast-path hub and on an SDK-only hub, driven with identical requests."""

    def __init__(self, fast: httpx2.AsyncClient, slow: httpx2.AsyncClient, hubs: tuple[EpisodeHub, EpisodeHub],
                 eid: str) -> None:
        self.fast, self.slow, self.hubs, self.eid = fast, slow, hubs, eid

    @property
    def answered(self) -> int:
        assert self.hubs[0].fast is not None and self.hubs[1].fast is None
        return self.hubs[0].fast.answered

    async def same(self, body: Any, hdrs: dict[str, str], raw: bytes | None = None) -> httpx2.Response:
        content = raw if raw is not None else json.dumps(body).encode()
        answers = [await c.post(f"/episodes/{self.eid}/mcp", content=content, headers=hdrs)
                   for c in (self.fast, self.slow)]
        (a, b) = answers
        assert (a.status_code, a.headers.get("content-type"), a.content) == \
               (b.status_code, b.headers.get("content-type"), b.content), (content[:200], a.content[:300], b.content[:300])
        return a


async def with_pair(tmp: Path, test: Any, control: ControlOptions | None = None) -> None:
    hubs = (EpisodeHub(environment(), None, tmp / "fast", control=control),
            EpisodeHub(environment(), None, tmp / "slow", control=control, fast_path=False))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with hubs[0].run(), hubs[1].run():
        clients = [httpx2.AsyncClient(transport=httpx2.ASGITransport(app=build_app(h, TOKEN)), base_url=BASE)
                   for h in hubs]
        async with clients[0] as fast, clients[1] as slow:
            for c in (fast, slow):
                r = await c.post("/admin/episodes", json={"episode_id": "twin"}, headers=auth)
                assert r.status_code == 201, r.text
            await test(Pair(fast, slow, hubs, "twin"))
            for c in (fast, slow):
                assert (await c.delete("/admin/episodes/twin", headers=auth)).status_code == 200


def test_eligible_calls_and_listings_are_answered_by_the_fast_path_with_the_sdks_bytes(tmp_path: Path) -> None:
    async def test(p: Pair) -> None:
        requests = [
            call(1, "read_text_file", {"path": "/reports/q1.csv"}),
            call("req-2", "read_text_file", {"path": "/nope.txt"}),  # a tool error: isError, no structured content
            call(3, "write_file", {"path": "/reports/summary.md", "content": "Total: 1234 \u00e9\u4e2d\n"}),
            call(4, "read_text_file", {"path": "/reports/summary.md", "head": None}),
            call(5, "list_directory", {"path": "/logs"}),  # a long result, paged
            call(6, "read_result_page", {"page": 2}),
            call(7, "no_such_tool", {}),
            call(8, "read_text_file", {"path": 42}),  # arguments the tool refuses
            call(9, "read_text_file", {}),
            {"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {"_meta": dict(ENVELOPE)}},
            {"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {"_meta": dict(ENVELOPE)}},
        ]
        before = p.answered
        for req in requests:
            name = req["params"].get("name")
            r = await p.same(req, headers(req["method"], name))
            assert r.status_code == 200 and r.json()["id"] == req["id"]
        # the first listing is captured from the SDK; every other request was answered by the fast path
        assert p.answered - before == len(requests) - 1
        assert json.loads((await p.same(requests[0], headers("tools/call", "read_text_file"))).content)["result"][
            "structuredContent"]["content"].startswith("region,amount")

    anyio.run(with_pair, tmp_path, test)


def test_the_header_checks_are_kept_across_a_harness_s_step_headers(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # run --connect sends Coworkenv-Step-Since: N (N grows) with every call: the transport checks' verdict is
    # still made once for the header set, and each answer still carries its own step's sync
    from mcp_server import fastpath

    checks: list[int] = []
    real = fastpath.check_accept_headers
    monkeypatch.setattr(fastpath, "check_accept_headers", lambda request: checks.append(1) or real(request))

    async def test(p: Pair) -> None:
        before, steps = p.answered, []
        for i in range(6):
            hdrs = headers("tools/call", "read_text_file", **{"coworkenv-step-since": str(i),
                                                              "coworkenv-step-evaluation": "compact"})
            r = await p.fast.post(f"/episodes/{p.eid}/mcp", headers=hdrs,
                                  content=json.dumps(call(i, "read_text_file", {"path": "/reports/q1.csv"})))
            assert r.status_code == 200, r.text
            steps.append(r.json()["result"]["_meta"]["coworkenv/step"])
        assert p.answered - before == 6 and len(checks) == 1
        assert [[e["index"] for e in s["events"]] for s in steps] == [[i] for i in range(6)]  # its own since

    anyio.run(with_pair, tmp_path, test)


def test_everything_else_goes_to_the_sdk_and_gets_its_answer(tmp_path: Path) -> None:
    async def test(p: Pair) -> None:
        good = call(1, "read_text_file", {"path": "/reports/q1.csv"})
        h = headers("tools/call", "read_text_file")
        before = p.answered
        cases: list[tuple[Any, dict[str, str], bytes | None]] = [
            (call(2, "read_text_file", {"path": "/reports/q1.csv"}, _meta={**ENVELOPE, "progressToken": "t"}), h, None),
            (good, {**h, "mcp-param-path": "/reports/q1.csv"}, None),
            (good, {**h, "mcp-name": "write_file"}, None),  # header and body disagree
            (good, {**h, "accept": "text/plain"}, None),
            (good, {**h, "content-type": "text/plain"}, None),
            (good, {**h, "host": "evil.example:80"}, None),  # DNS-rebinding protection
            (good, {**h, "origin": "http://evil.example"}, None),
            ({**good, "params": {"name": "read_text_file", "arguments": {}}}, h, None),  # no envelope
            ({**good, "params": {**good["params"], "_meta": {**ENVELOPE,
                                                             "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}},
             h, None),
            ({**good, "id": True}, h, None),
            ({**good, "extra": 1}, h, None),
            ([good], h, None),  # a batch
            ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}, headers("notifications/cancelled"),
             None),
            (None, h, b"{not json"),
            (None, h, b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"\\ud800"}}'),
            (None, h, b"[" * 200 + b"]" * 200),
            ({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {"_meta": dict(ENVELOPE), "cursor": "x"}},
             headers("tools/list"), None),
            ({"jsonrpc": "2.0", "id": 7, "method": "resources/list", "params": {"_meta": dict(ENVELOPE)}},
             headers("resources/list"), None),
            ({"jsonrpc": "2.0", "id": 8, "method": "server/discover", "params": {"_meta": dict(ENVELOPE)}},
             headers("server/discover"), None),
            (call(9, "write_file", {"path": "/big.md", "content": "x" * (3 << 19)}), headers("tools/call", "write_file"),
             None),  # past the fast path's 1 MiB: read on by the SDK, refused by the workspace's size limit
        ]
        for body, hdrs, raw in cases:
            await p.same(body, hdrs, raw)
        assert p.answered == before  # none of these was the fast path's to answer

    anyio.run(with_pair, tmp_path, test)


def test_control_tools_of_an_mcp_only_episode_take_the_fast_path_too(tmp_path: Path) -> None:
    async def test(p: Pair) -> None:
        before = p.answered
        await p.same({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": dict(ENVELOPE)}},
                     headers("tools/list"))
        await p.same(call(2, "read_text_file", {"path": "/reports/q1.csv"}), headers("tools/call", "read_text_file"))
        r = await p.same(call(3, "submit_answer", {"answer": "Total: 1234"}), headers("tools/call", "submit_answer"))
        assert "ended" in r.text
        await p.same(call(4, "read_text_file", {"path": "/reports/q1.csv"}), headers("tools/call", "read_text_file"))
        assert p.answered - before == 3

    anyio.run(with_pair, tmp_path, test, ControlOptions(enabled=True))


def test_a_harness_sharing_its_client_cache_lists_tools_once_per_environment(tmp_path: Path) -> None:
    """The listing carries a day's ttl; clients that share a store under an environment key list it once, and
    an episode the fast path answers alone never starts an SDK session manager. Records are complete."""
    hub = EpisodeHub(environment(), None, tmp_path)
    listed: list[str] = []

    async def count(request: httpx2.Request) -> None:
        if request.headers.get("mcp-method"):
            listed.append(request.headers["mcp-method"])

    async def main() -> None:
        store = InMemoryResponseCacheStore()
        async with hub.run():
            app = build_app(hub, TOKEN)
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE,
                                          event_hooks={"request": [count]}) as http:
                for i in range(3):
                    live = await hub.create(episode_id=f"cached-{i}")
                    cache = CacheConfig(store=store, partition="test", target_id=f"{BASE}#{live.episode.env_hash}")
                    url = f"{BASE}/episodes/cached-{i}/mcp"
                    async with Client(streamable_http_client(url, http_client=http), mode=VERSION, cache=cache) as c:
                        tools = await c.list_tools()
                        assert "read_text_file" in {t.name for t in tools.tools}
                        r = await c.call_tool("read_text_file", {"path": "/reports/q1.csv"})
                        assert not r.is_error
                    assert live.sessions_started == (i == 0)  # only the first listing came from the SDK
                    await hub.end(f"cached-{i}", "done")

    anyio.run(main)
    assert listed.count("tools/list") == 1 and listed.count("tools/call") == 3
    for i in range(3):
        (seg,) = read_record_file(tmp_path / f"cached-{i}.jsonl").segments
        assert seg.final is not None and [e["tool"] for e in seg.events] == ["read_text_file"]


def test_a_handshake_session_starts_the_session_manager_on_first_use(tmp_path: Path) -> None:
    hub = EpisodeHub(environment(), None, tmp_path)

    async def main() -> None:
        async with hub.run():
            app = build_app(hub, TOKEN)
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE) as http:
                live = await hub.create(episode_id="legacy-1")
                assert not live.sessions_started
                url = f"{BASE}/episodes/legacy-1/mcp"
                async with Client(streamable_http_client(url, http_client=http), mode="legacy") as c:
                    r = await c.call_tool("read_text_file", {"path": "/reports/q1.csv"})
                    assert not r.is_error
                assert live.sessions_started
                await hub.end("legacy-1", None)

    anyio.run(main)
    (seg,) = read_record_file(tmp_path / "legacy-1.jsonl").segments
    assert seg.final is not None


def test_sync_file_syncs_a_closed_file_and_ignores_a_missing_one(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("x\n")
    sync_file(path)
    sync_file(tmp_path / "gone.jsonl")
    assert path.read_text() == "x\n"


@pytest.mark.parametrize("value", ["1", "0", "yes", "no", ""])
def test_the_fast_path_switch_reads_one_or_zero(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    from mcp_server.fastpath import FAST_PATH_ENV, fast_path_enabled

    monkeypatch.setenv(FAST_PATH_ENV, value)
    assert fast_path_enabled() == (value not in ("0", "no"))
    monkeypatch.setenv(FAST_PATH_ENV, "maybe")
    with pytest.raises(ValueError, match=FAST_PATH_ENV):
        fast_path_enabled()


def test_a_record_that_cannot_be_synced_is_logged_and_the_hub_keeps_serving(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    import mcp_server.hub as hub_module

    def broken(path: Any) -> None:
        raise OSError(5, "Input/output error")

    import workspace_sim.record.writer as recording_module

    monkeypatch.setattr(hub_module, "sync_file", broken)
    monkeypatch.setattr(recording_module, "sync_file", broken)  # the deferred records' sync thread
    hub = EpisodeHub(environment(), None, tmp_path)

    async def main() -> None:
        async with hub.run():
            for i in range(2):  # the second episode is served after the first one's sync failed
                live = await hub.create(episode_id=f"sync-{i}")
                assert not live.episode.call("read_text_file", {"path": "/reports/q1.csv"}).is_error
                await hub.end(f"sync-{i}", None)
                await anyio.sleep(0.05)

    anyio.run(main)
    assert caplog.text.count("could not sync the record") == 2
    assert read_record_file(tmp_path / "sync-1.jsonl").segments[0].final is not None
