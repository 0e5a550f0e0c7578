"""The lean harness client against a real `coworkenv serve --http`: the SDK client's bytes on the wire, the same
answers, one listing per environment, clear errors; `run --connect` through it and through `mcp.Client` alike."""

from __future__ import annotations

import asyncio
import re
import socket
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from support import HttpServer, http_server_fixture
from episode_helpers import generated_specs, without_remote

from trainers.episodes.harness_client import EpisodeClient, HarnessError, ServerConnection, _answer, result_text
from trainers.episodes.policies import make_policy
from trainers.episodes.remote import REMOTE_CLIENT_ENV, RemoteTarget, close_pools
from trainers.episodes.runner import run_episode

TOKEN = "lean-client-token-0123456789"
READ = {"path": "/reports/q1.csv"}


class Recorder:
    """A TCP proxy in front of a server that keeps every byte clients send through it, request by request."""

    def __init__(self, port: int) -> None:
        self.target, self.sent = port, bytearray()
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(10)
        self.base = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.target)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, keep: bool) -> None:
            try:
                while data := await src.read(65536):
                    if keep:
                        self.sent.extend(data)
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pump(reader, up_w, True), pump(up_r, writer, False))

    def take(self) -> list[bytes]:
        """The requests sent since the last take, each as its bytes (head and body)."""
        data, self.sent = bytes(self.sent), bytearray()
        out = []
        while data:
            head, _, rest = data.partition(b"\r\n\r\n")
            found = re.search(rb"(?i)content-length: (\d+)", head)
            length = int(found.group(1)) if found else 0
            out.append(head + b"\r\n\r\n" + rest[:length])
            data = rest[length:]
        return out

    def stop(self) -> None:
        async def shut() -> None:
            self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.loop.stop()

        asyncio.run_coroutine_threadsafe(shut(), self.loop)
        self.thread.join(10)
        self.loop.close()


server = http_server_fixture(TOKEN)


@pytest.fixture()
def recorder(server: HttpServer) -> Iterator[Recorder]:
    rec = Recorder(int(server.base.rsplit(":", 1)[1]))
    yield rec
    rec.stop()


def new_episode(server: HttpServer) -> dict[str, Any]:
    made = server.admin("POST", "/admin/episodes", json={})
    assert made.status_code == 201, made.text
    return made.json()


CALLS = [("read_text_file", READ), ("read_text_file", {"path": "/reports/année-ü.csv"}),
         ("no_such_tool", {}), ("read_text_file", {"path": "/nowhere.txt"})]


def sdk_requests(url: str) -> list[Any]:
    """What the SDK's client (2026-07-28 mode, on the SDK's own HTTP client) answers: the listing, then CALLS."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def go() -> list[Any]:
        async with create_mcp_http_client() as http:
            async with Client(streamable_http_client(url, http_client=http, terminate_on_close=False),
                              mode="2026-07-28") as c:
                out: list[Any] = [[t.name for t in (await c.list_tools()).tools]]
                for name, args in CALLS:
                    r = await c.call_tool(name, args)
                    out.append(("".join(x.text for x in r.content if x.type == "text"), bool(r.is_error),
                                r.structured_content))
                return out

    return anyio.run(go)


def test_the_lean_client_sends_the_sdk_clients_bytes_and_reads_the_same_answers(server: HttpServer,
                                                                                recorder: Recorder) -> None:
    ep = new_episode(server)
    sdk = sdk_requests(recorder.base + ep["mcp_path"])
    sdk_bytes = recorder.take()
    conn = ServerConnection(recorder.base)
    try:
        client = EpisodeClient(conn, ep["mcp_path"])
        lean: list[Any] = [[t["name"] for t in client.list_tools()]]
        for name, args in CALLS:
            r = client.call_tool(name, args)
            lean.append((result_text(r), bool(r.get("isError")), r.get("structuredContent")))
    finally:
        conn.close()
    lean_bytes = recorder.take()
    assert len(sdk_bytes) == len(CALLS) + 1
    assert lean_bytes == sdk_bytes  # headers, their order, the envelope, non-ASCII arguments: byte for byte
    assert lean == sdk
    assert lean[1][1] is False and lean[3][1] is True and lean[4][1] is True  # a read; an unknown tool; a miss
    assert "not found" in lean[4][0]
    server.admin("DELETE", f"/admin/episodes/{ep['episode_id']}")


def test_one_connection_and_one_listing_for_every_episode_of_an_environment(server: HttpServer,
                                                                           recorder: Recorder) -> None:
    conn = ServerConnection(recorder.base, TOKEN)
    try:
        for _ in range(3):
            ep = conn.admin("POST", "/admin/episodes", {}).json()
            client = EpisodeClient(conn, ep["mcp_path"], env_key=ep["env_hash"])
            assert {t["name"] for t in client.list_tools()} >= {"read_text_file"}
            assert result_text(client.call_tool("read_text_file", READ))
            assert conn.admin("POST", f"/admin/episodes/{ep['episode_id']}/end", {}).status_code == 200
        sent = recorder.take()
        assert sum(b"mcp-method: tools/list" in r for r in sent) == 1
        assert sum(b"mcp-method: tools/call" in r for r in sent) == 3
        assert len(sent) == 3 * 3 + 1
    finally:
        conn.close()


def test_failed_requests_say_what_failed(server: HttpServer) -> None:
    conn = ServerConnection(server.base)
    try:
        with pytest.raises(HarnessError, match="no episode 'ep-missing'") as unknown:
            EpisodeClient(conn, "/episodes/ep-missing/mcp").call_tool("read_text_file", READ)
        assert unknown.value.status == 404
        ep = new_episode(server)
        server.admin("DELETE", f"/admin/episodes/{ep['episode_id']}")
        with pytest.raises(HarnessError, match="has ended") as ended:
            EpisodeClient(conn, ep["mcp_path"]).list_tools()
        assert ended.value.status == 410
        with pytest.raises(HarnessError, match="HTTP 404 without a JSON-RPC answer"):
            EpisodeClient(conn, "/nowhere").call_tool("read_text_file", READ)
    finally:
        conn.close()
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    down = ServerConnection(dead, timeout=5)
    with pytest.raises(HarnessError, match="cannot reach the server"):
        EpisodeClient(down, "/episodes/x/mcp").call_tool("read_text_file", READ)
    down.close()


def test_an_event_stream_answer_is_read_too() -> None:
    body = (': keep-alive\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n'
            'event: message\ndata: {"jsonrpc":"2.0","id":7,\ndata: "result":{"content":[]}}\n\n')
    r = httpx2.Response(200, headers={"content-type": "text/event-stream"}, text=body)
    assert _answer(r, 7) == {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}
    assert _answer(r, 8) is None
    assert _answer(httpx2.Response(200, headers={"content-type": "application/json"}, text="[1]"), 1) is None


def test_run_connect_with_either_client_gives_the_same_records(server: HttpServer, recorder: Recorder,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    spec = generated_specs()[0]
    local = run_episode(spec, make_policy("teacher"), seed=2)
    records = {}
    for client in ("lean", "sdk"):
        records[client] = [run_episode(spec, make_policy("teacher"), seed=2,
                                       connect=RemoteTarget(recorder.base, TOKEN, 30, client=client))
                           for _ in range(2)]
        sent = recorder.take()
        # lean: one listing per environment for the thread; the SDK client without a portal: one per episode
        assert sum(b"mcp-method: tools/list" in r for r in sent) == (1 if client == "lean" else 2), client
    close_pools()
    for client, recs in records.items():
        for rec in recs:
            assert rec.passed and without_remote(rec) == without_remote(local), client
    monkeypatch.setenv(REMOTE_CLIENT_ENV, "sdk")
    assert RemoteTarget(server.base, TOKEN).client == "sdk"
    monkeypatch.setenv(REMOTE_CLIENT_ENV, "fast")
    with pytest.raises(ValueError, match="lean or sdk"):
        RemoteTarget(server.base, TOKEN)


def test_a_training_loop_reuses_its_threads_connection(server: HttpServer, recorder: Recorder) -> None:
    spec = generated_specs()[1]
    target = RemoteTarget(recorder.base, TOKEN, 30)
    for seed in range(3):
        assert run_episode(spec, make_policy("teacher"), seed=seed, connect=target).passed
    sent = recorder.take()
    # one keep-alive connection carried all three episodes
    from trainers.episodes.remote import thread_pools

    conn = thread_pools().connection(target)
    assert conn.wire.opened == 1 and len(sent) > 10
    close_pools()


def test_a_call_asked_for_the_steps_sync_brings_it_and_no_other_call_does(server: HttpServer) -> None:
    conn = ServerConnection(server.base, TOKEN)
    try:
        ep = conn.admin("POST", "/admin/episodes", {}).json()
        assert ep["start"]["count"] == 0 and ep["start"]["events"] == []
        client = EpisodeClient(conn, ep["mcp_path"], env_key=ep["env_hash"])
        plain = client.call_tool("read_text_file", READ)
        assert "coworkenv/step" not in plain["_meta"]  # never without the header (the SDK's client never sends it)
        asked = client.call_tool("write_file", {"path": "/reports/s.md", "content": "Total: 1234\n"}, step_since=1)
        step = asked["_meta"].pop("coworkenv/step")
        p = f"/admin/episodes/{ep['episode_id']}"
        assert step == conn.admin("POST", p + "/step", {"since": 1}).json()
        assert [e["tool"] for e in step["events"]] == ["write_file"] and step["count"] == 2
        assert asked["_meta"] == plain["_meta"] and asked["content"][0]["text"]
        bad = client.call_tool("read_text_file", READ, step_since=None)
        assert "coworkenv/step" not in bad["_meta"]
        assert conn.admin("POST", p + "/end", {}).status_code == 200
    finally:
        conn.close()
