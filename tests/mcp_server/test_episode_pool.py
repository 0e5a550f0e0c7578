"""The HTTP server's episode pool and lazy MCP server: inline specs parsed once, workspaces forked from a template,
the `MCPServer` built only when a request needs it, the record header's tools dumped once; records byte for byte
those of a server that builds everything anew (real hubs behind the ASGI app, the SDK's `mcp.Client`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_server.demo import environment
from mcp_server.environment import EnvironmentLoadError
from mcp_server.http import build_app
from mcp_server.hub import EpisodeHub
from mcp_server.pool import EpisodePool, document_key
from workspace_sim.record import RecordWriter
from synth.procedural import generate

TOKEN = "pool-admin-token-0123456789"
BASE = "http://127.0.0.1:1"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _normalised(path: Path) -> str:
    """A record's text without what differs between any two runs (wall-clock start, timings)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r'"started_at":"[^"]*"', '"started_at":"T"', text)
    return re.sub(r'"timings":\{[^}]*\}', '"timings":{}', text)


async def _drive(hub: EpisodeHub, doc: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> None:
    """Three episodes of one inline spec: calls through mcp.Client (2026-07-28), a reset, a fork, the ends."""
    async with hub.run():
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=build_app(hub, TOKEN)), base_url=BASE) as http:
            for i in range(3):
                r = await http.post("/admin/episodes", json={"spec_document": doc, "episode_id": f"p-{i}"}, headers=AUTH)
                assert r.status_code == 201, r.text
                async with Client(streamable_http_client(f"{BASE}/episodes/p-{i}/mcp", http_client=http),
                                  mode="2026-07-28") as c:
                    for name, args in calls[: i + 1]:
                        await c.call_tool(name, args)
                    if i == 1:
                        assert (await http.post("/admin/episodes/p-1/reset", json={}, headers=AUTH)).status_code == 200
                        await c.call_tool(*calls[0])
                        r = await http.post("/admin/episodes/p-1/fork", json={"episode_id": "p-1f"}, headers=AUTH)
                        assert r.status_code == 201, r.text
                assert (await http.post(f"/admin/episodes/p-{i}/end", json={"final_answer": "done"},
                                        headers=AUTH)).status_code == 200
            assert (await http.delete("/admin/episodes/p-1f", headers=AUTH)).status_code == 200


def _spec_calls() -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    spec = generate("file_management", 3)
    steps = [s for s in spec.reference.steps if getattr(s, "kind", "call") == "call"]
    calls = [(s.tool, dict(s.args)) for s in steps][:3]
    assert calls, "the generated spec has reference calls"
    return spec.to_document(), calls


def test_pooled_records_are_byte_identical_to_workspaces_built_anew(tmp_path: Path) -> None:
    doc, calls = _spec_calls()
    pooled = EpisodeHub(None, None, tmp_path / "pooled")
    fresh = EpisodeHub(None, None, tmp_path / "fresh")
    fresh.pool = EpisodePool(enabled=False)
    for hub in (pooled, fresh):
        anyio.run(_drive, hub, doc, calls)
    assert (pooled.pool.parsed, pooled.pool.built) == (1, 1)  # one parse, one start state, for four episodes
    names = sorted(p.name for p in (tmp_path / "fresh").glob("*.jsonl"))
    assert names == ["p-0.jsonl", "p-1.jsonl", "p-1f.jsonl", "p-2.jsonl"]
    for name in names:
        assert _normalised(tmp_path / "pooled" / name) == _normalised(tmp_path / "fresh" / name), name
    assert '"kind":"reset"' in (tmp_path / "pooled" / "p-1.jsonl").read_text()


def test_sessionless_calls_never_build_the_mcp_server_and_a_session_does(tmp_path: Path) -> None:
    hub = EpisodeHub(environment(), None, tmp_path)

    async def main() -> None:
        async with hub.run():
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=build_app(hub, TOKEN)),
                                          base_url=BASE) as http:
                first = await hub.create(episode_id="lazy-0")
                async with Client(streamable_http_client(f"{BASE}/episodes/lazy-0/mcp", http_client=http),
                                  mode="2026-07-28") as c:
                    await c.list_tools()  # the first listing of a tool set is the SDK's, captured
                assert first._server is not None
                live = await hub.create(episode_id="lazy-1")
                async with Client(streamable_http_client(f"{BASE}/episodes/lazy-1/mcp", http_client=http),
                                  mode="2026-07-28") as c:
                    assert [t.name for t in (await c.list_tools()).tools] == [t.name for t in first.tools]
                    r = await c.call_tool("read_text_file", {"path": "/reports/q1.csv"})
                    assert not r.is_error and "north,400" in r.content[0].text
                assert live._server is None and not live.sessions_started
                assert live.info_stamp() == live.server.info_stamp()  # the stamp made without a server is the SDK's
                async with Client(streamable_http_client(f"{BASE}/episodes/lazy-1/mcp", http_client=http),
                                  mode="legacy") as c:  # a handshake session: the server and its sessions start
                    assert not (await c.call_tool("read_text_file", {"path": "/reports/q1.csv"})).is_error
                assert live.sessions_started and live.server.lock is live.lock
                await hub.end("lazy-0", None)
                await hub.end("lazy-1", None)

    anyio.run(main)


def test_a_pooled_workspace_is_a_fresh_one_and_independent_of_the_others() -> None:
    env = environment()
    pool = EpisodePool(enabled=True)
    a, b = pool.fresh(env), pool.fresh(env)
    built = env.build_workspace()
    assert pool.built == 1 and a.content_hash == built.content_hash == b.content_hash
    assert a.call("write_file", {"path": "/reports/summary.md", "content": "Total: 1234\n"}).ok
    assert b.events() == [] and pool.fresh(env).content_hash == built.content_hash
    assert set(b.table("files.files")) == set(built.table("files.files")) and "/reports/summary.md" in set(a.table("files.files"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["/reports/a.md", "/drafts/notes.md", "/archive/2025/batch.log", "/x/y"]),
                          st.text(max_size=40)), max_size=6))
def test_any_calls_in_a_fork_of_the_template_give_what_a_workspace_built_anew_gives(
        writes: list[tuple[str, str]]) -> None:
    env = environment()
    pool = EpisodePool(enabled=True)
    pool.fresh(env)  # the template exists; every later workspace is a fork
    forked, built = pool.fresh(env), env.build_workspace()
    for path, content in writes:
        for ws in (forked, built):
            ws.call("write_file", {"path": path, "content": content})
            ws.call("read_text_file", {"path": path})
    assert [e.to_json() for e in forked.events()] == [e.to_json() for e in built.events()]
    assert forked.content_hash == built.content_hash


def test_inline_documents_are_parsed_once_per_content_and_bad_ones_are_not_kept() -> None:
    doc, _ = _spec_calls()
    pool = EpisodePool(enabled=True)
    env = pool.environment(doc)
    assert pool.environment(json.loads(json.dumps(doc))) is env and pool.parsed == 1  # an equal document
    other = json.loads(json.dumps(doc))
    other["request"] = str(other.get("request")) + " Thanks."
    assert document_key(other) != document_key(doc) and pool.environment(other) is not env and pool.parsed == 2
    with pytest.raises(EnvironmentLoadError, match="spec_document"):
        pool.environment({"id": "broken"})
    assert pool.parsed == 2
    off = EpisodePool(enabled=False)
    assert off.environment(doc) is not off.environment(doc)


_keys = st.sampled_from(["a", "b", "$blob", "$esc", "name"])
_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30)
                       # a long string built from a short draw: drawing 5,000 characters trips the entropy check
                       | st.builds(lambda s, n: (s or "x") * n, st.text(min_size=1, max_size=4), st.integers(5000, 5001)),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
                       max_leaves=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.dictionaries(_keys, _values, min_size=1, max_size=3), st.lists(_values, max_size=3))
def test_write_header_writes_the_bytes_write_writes(tmp_path: Path, head: dict[str, Any], tools: list[Any]) -> None:
    head = {k: v for k, v in head.items() if k != "tools"} or {"type": "header"}
    header = {**head, "tools": tools}
    for i in range(2):  # the second time from the cached dump of the tools
        paths = [tmp_path / f"w{i}-{n}.jsonl" for n in ("write", "header")]
        for p in paths:
            p.unlink(missing_ok=True)
        plain, cached = RecordWriter(paths[0]), RecordWriter(paths[1])
        plain.write(header)
        cached.write_header(header)
        plain.close(False)
        cached.close(False)
        assert paths[0].read_bytes() == paths[1].read_bytes()
