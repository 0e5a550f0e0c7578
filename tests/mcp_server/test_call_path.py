"""The per-call cuts of the request path (issue 25, fifth pass) change no byte.

- `fastpath.plain_result` builds a tool result's serialized form directly; over generated results (plain
  and not: odd keys, NaN, tuples, several contents, annotations, `_meta`) it is either None or exactly the
  SDK's `model_dump` + `serialize_server_result`, compared as the JSON-RPC bytes the fast path sends;
- `http.McpShortcut` sends MCP requests to the endpoint past Starlette's stack: through it and through the
  Starlette app it fronts, the same requests get the same answers (a read, a write, an unknown tool, bad
  JSON, an unknown and an ended episode, a handshake-era request), the admin API is unchanged, records are
  written after each answer, and an exception is answered 500 as Starlette's error middleware answers it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import anyio
import httpx2
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mcp_types import Annotations, CallToolResult, ImageContent, TextContent
from mcp_types import methods as sdk_methods

from mcp_server.demo import environment
from mcp_server.fastpath import PLAIN_NODES, _response, plain_result
from mcp_server.http import McpShortcut, build_app
from mcp_server.hub import EpisodeHub
from workspace_sim.record import read_record_file

VERSION = "2026-07-28"
TOKEN = "call-path-admin-token-0123456789"
BASE = "http://127.0.0.1:1"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientInfo":
            {"name": "test", "version": "0"}, "io.modelcontextprotocol/clientCapabilities": {}}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "mcp-protocol-version": VERSION, "mcp-method": "tools/call"}
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def sdk_dump(result: CallToolResult) -> dict[str, Any]:
    return sdk_methods.serialize_server_result(
        "tools/call", VERSION, result.model_dump(by_alias=True, mode="json", exclude_none=True))


keys = st.one_of(st.text(max_size=6), st.text(max_size=6), st.integers(-3, 3), st.booleans(), st.none(),
                 st.floats(allow_nan=False, width=16))
leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-2**70, 2**70),
                   st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=False, allow_infinity=False),
                   st.text(max_size=20), st.just("\udc80 lone"), st.just("é ✓ \x00 \u2028"))
json_like = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=8), st.lists(inner, max_size=4).map(tuple),
    st.dictionaries(st.text(max_size=6), inner, max_size=8), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=90)
plain_json = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                                    st.floats(allow_nan=False, allow_infinity=False)),
                          lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                  st.dictionaries(st.text(max_size=6), inner, max_size=5)),
                          max_leaves=40)
texts = st.one_of(st.text(max_size=60), st.just("\udc80"), st.just("line\nnext \"quoted\" \\ ✓"))


@st.composite
def results(draw: Any) -> CallToolResult:
    content: list[Any] = [TextContent(type="text", text=draw(texts))]
    shape = draw(st.sampled_from(["plain"] * 8 + ["annotated", "text_meta", "meta", "two", "image"]))
    if shape == "annotated":
        content = [TextContent(type="text", text="x", annotations=Annotations(priority=0.5))]
    elif shape == "text_meta":
        content = [TextContent(type="text", text="x", _meta={"k": 1})]
    elif shape == "two":
        content.append(TextContent(type="text", text="second"))
    elif shape == "image":
        content.append(ImageContent(type="image", data="aGk=", mime_type="image/png"))
    structured = draw(st.one_of(st.none(), st.dictionaries(st.text(max_size=8), plain_json, max_size=8),
                                st.dictionaries(st.text(max_size=8), json_like, max_size=8),
                                st.dictionaries(keys, json_like, max_size=3)))
    extra = {"_meta": {"m": True}} if shape == "meta" else {}
    return CallToolResult(content=content, structured_content=structured, is_error=draw(st.booleans()), **extra)


@settings(max_examples=400, deadline=None)
@given(results())
def test_a_plain_result_is_the_sdk_dump_byte_for_byte(result: CallToolResult) -> None:
    fast = plain_result(result)
    if fast is None:
        return
    assert _response(7, fast) == _response(7, sdk_dump(result))


def test_plain_results_are_taken_and_the_others_left_to_the_sdk() -> None:
    def made(structured: Any, **kw: Any) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="t")], structured_content=structured,
                              is_error=False, **kw)

    read = made({"path": "/reports/q1.csv", "content": "a,b\n1,2\n", "size": 8, "tags": ["x", None, 1.5, True]})
    assert plain_result(read) == sdk_dump(read)
    assert plain_result(made(None)) == sdk_dump(made(None))
    for odd in ({"v": math.inf}, {"v": math.nan}, {"v": (1, 2)}, {1: "int key"}, {"v": {None: 1}},
                {"v": list(range(PLAIN_NODES))}):
        assert plain_result(made(odd)) is None, odd
        assert _response(1, sdk_dump(made(odd)))  # the SDK still serializes it (the caller's fallback)
    assert plain_result(made({"v": "x"}, _meta={"k": 1})) is None


# --- the MCP shortcut: the same answers as the Starlette app it fronts ---------------------------------------


def call(rid: Any, name: str, arguments: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments, "_meta": ENVELOPE}}).encode()


async def _twins(tmp: Path, test: Any) -> None:
    """Two hubs of the same environment, one behind the shortcut and one behind the bare Starlette app."""
    hubs = (EpisodeHub(environment(), None, tmp / "short"), EpisodeHub(environment(), None, tmp / "plain"))
    apps = [build_app(h, TOKEN) for h in hubs]
    assert isinstance(apps[0], McpShortcut)
    apps[1] = apps[1].app  # the Starlette app alone: every request through its middleware and router
    async with hubs[0].run(), hubs[1].run():
        clients = [httpx2.AsyncClient(transport=httpx2.ASGITransport(app=a), base_url=BASE) for a in apps]
        async with clients[0] as short, clients[1] as plain:
            for c in (short, plain):
                r = await c.post("/admin/episodes", json={"episode_id": "twin"}, headers=AUTH)
                assert r.status_code == 201, r.text
            await test(short, plain, hubs)


async def _same(clients: tuple[httpx2.AsyncClient, httpx2.AsyncClient], method: str, path: str,
                **kw: Any) -> httpx2.Response:
    a, b = [await c.request(method, path, **kw) for c in clients]
    mine = a.content.replace(b"/short/", b"/plain/")  # the record folders differ, nothing else may
    assert (a.status_code, a.headers.get("content-type"), mine) == \
           (b.status_code, b.headers.get("content-type"), b.content), (path, a.content[:300], b.content[:300])
    return a


def test_mcp_requests_get_the_same_answers_through_the_shortcut(tmp_path: Path) -> None:
    async def test(short: httpx2.AsyncClient, plain: httpx2.AsyncClient, hubs: Any) -> None:
        pair = (short, plain)
        mcp = "/episodes/twin/mcp"
        read = await _same(pair, "POST", mcp, content=call(1, "read_text_file", {"path": "/reports/q1.csv"}),
                           headers={**HEADERS, "mcp-name": "read_text_file"})
        assert json.loads(read.content)["result"]["isError"] is False
        await _same(pair, "POST", mcp, content=call(2, "write_file", {"path": "/n.md", "content": "x"}),
                    headers={**HEADERS, "mcp-name": "write_file"})
        await _same(pair, "POST", mcp, content=call(3, "no_such_tool", {}), headers={**HEADERS, "mcp-name": "no_such_tool"})
        await _same(pair, "POST", mcp, content=call(3, "read_text_file", {}), headers=HEADERS)  # no Mcp-Name: 400
        await _same(pair, "POST", mcp, content=b'{"jsonrpc":"2.0","id":4,', headers=HEADERS)
        await _same(pair, "POST", mcp, content=b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":NaN}',
                    headers=HEADERS)
        await _same(pair, "POST", "/episodes/nobody/mcp", content=call(6, "read_text_file", {}), headers=HEADERS)
        await _same(pair, "GET", "/episodes/twin/mcp/extra")  # not the endpoint's path: Starlette's 404
        legacy = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        init = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        a, b = [await c.post(mcp, json=init, headers=legacy) for c in pair]  # the SDK's session (ids differ)
        assert a.status_code == b.status_code == 200 and a.json()["result"] == b.json()["result"]
        await _same(pair, "POST", "/admin/episodes/twin/reset", json={}, headers=AUTH)
        await _same(pair, "POST", "/admin/episodes/twin/end", json={}, headers=AUTH)
        await _same(pair, "POST", mcp, content=call(8, "read_text_file", {"path": "/reports/q1.csv"}),
                    headers=HEADERS)  # ended: 410
        assert hubs[0].fast.answered == hubs[1].fast.answered >= 2

    anyio.run(_twins, tmp_path, test)


def test_each_call_is_in_the_record_once_answered_through_the_shortcut(tmp_path: Path) -> None:
    async def test(short: httpx2.AsyncClient, plain: httpx2.AsyncClient, hubs: Any) -> None:
        path = tmp_path / "short" / "twin.jsonl"
        for i in range(3):
            r = await short.post("/episodes/twin/mcp", content=call(i, "read_text_file", {"path": "/reports/q1.csv"}),
                                 headers={**HEADERS, "mcp-name": "read_text_file"})
            assert r.status_code == 200
            (seg,) = read_record_file(path).segments  # written after the answer, before the next request
            assert len(seg.calls) == i + 1

    anyio.run(_twins, tmp_path, test)


def test_an_exception_under_the_endpoint_is_answered_500_as_starlette_does(tmp_path: Path) -> None:
    async def test(short: httpx2.AsyncClient, plain: httpx2.AsyncClient, hubs: Any) -> None:
        def broken(*a: Any, **k: Any) -> None:
            raise RuntimeError("boom")

        for h in hubs:
            h.handle_mcp = broken
        for c in (short, plain):  # the exception reaches the client's transport once the 500 is sent
            c._transport = httpx2.ASGITransport(app=c._transport.app, raise_app_exceptions=False)
        await _same((short, plain), "POST", "/episodes/twin/mcp", content=call(1, "read_text_file", {}),
                    headers=HEADERS)

    anyio.run(_twins, tmp_path, test)


# --- event lines built after the answer: the same lines as built at each call ------------------------------

paths = st.sampled_from(["/reports/q1.csv", "/reports/README.md", "/n.md", "/drafts/x.md", "/missing.txt"])
calls = st.lists(st.one_of(
    st.tuples(st.just("read_text_file"), st.builds(lambda p: {"path": p}, paths)),
    st.tuples(st.just("write_file"), st.builds(lambda p, c: {"path": p, "content": c}, paths, st.text(max_size=30))),
    st.tuples(st.just("list_directory"), st.just({"path": "/reports"})),
    st.tuples(st.just("delete_file"), st.builds(lambda p: {"path": p}, paths)),
    st.tuples(st.just("read_text_file"), st.just({"nope": 1})),
), max_size=12)


@settings(max_examples=40, deadline=None)
@given(calls=calls, flushes=st.lists(st.booleans(), min_size=12, max_size=12), reset=st.booleans())
@example(calls=[("write_file", {"path": "/reports/q1.csv", "content": "\x85\u2028"})], flushes=[False] * 12,
         reset=False)  # written raw in the record (no escape): a reader must split on "\n" alone
def test_event_lines_made_after_the_answers_are_the_lines_made_at_each_call(
        calls: list[tuple[str, dict[str, Any]]], flushes: list[bool], reset: bool) -> None:
    import tempfile

    from mcp_server.episode import Episode
    from workspace_sim.record import DeferredRecords, event_line

    with tempfile.TemporaryDirectory() as tmp:
        later = DeferredRecords()
        eager: list[dict[str, Any]] = []

        async def run() -> None:
            episode = Episode(environment(), "lazy", record_dir=tmp, transport="http", record_later=later)
            segments = 2 if reset else 1
            for segment in range(segments):
                for i, (tool, args) in enumerate(calls):
                    episode.call(tool, args)
                    event = episode.workspace.events()[-1]  # what the line was built from before this pass
                    eager.append(json.loads(json.dumps(event_line(event, episode.segment_id, i))))
                    if flushes[i]:
                        later.flush_due()  # an answer sent: the queued lines are written
                if segment + 1 < segments:
                    episode.reset()
            episode.end(None, sync=False)

        anyio.run(run)
        later.close()
        # lines end with "\n" only: str.splitlines would also split inside a string holding U+0085 or U+2028
        lines = [json.loads(x) for x in (Path(tmp) / "lazy.jsonl").read_text().split("\n") if x]
        events = [x for x in lines if x["type"] == "event"]
        assert events == eager
        finals = [x for x in lines if x["type"] == "final"]
        assert len(finals) == (2 if reset else 1)
