"""The network path: MCP over HTTP against a do-nothing REST endpoint, episodes, concurrency, cold start.

Baselines, measured in this same run: `rest_floor_call_ms` is a do-nothing Starlette POST endpoint
under uvicorn in its own process (the transport floor an MCP call cannot beat), and
`http_single_calls_per_s` is one episode's sequential rate (what 100 concurrent episodes are held
to). `mock_post_ms` is a plain POST against an instant in-process transport, beside
`mcp_client_call_ms` (the SDK client's own cost), and `remote_fresh_episodes_per_s` is `run
--connect` with fresh clients per episode, beside `remote_episodes_per_s` (a worker's shared ones).
The clients speak the 2026-07-28 (sessionless) revision unless a key says `legacy`, and share HTTP
connection pools as a harness does (one per ten concurrent episodes); a fresh `httpx` client costs
tens of milliseconds (it loads the CA bundle) and is the client's cost, not the server's.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import Any, Iterator

import anyio
import httpx

ARGS = {"path": "/reports/q1.csv"}
TOKEN = "bench-admin-token-0123456789"

REST_FLOOR = """
import socket, sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

async def call(request):
    body = await request.json()
    return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": {}})

sock = socket.socket()
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
sock.bind(("127.0.0.1", 0))
print(f"listening on http://127.0.0.1:{sock.getsockname()[1]} ", file=sys.stderr, flush=True)
uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/call", call, methods=["POST"])]), log_level="error",
                              access_log=False)).run(sockets=[sock])
"""


@contextmanager
def _process(args: list[str]) -> Iterator[str]:
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            env={**os.environ, "COWORKENV_ADMIN_TOKEN": TOKEN, "PYTHONWARNINGS": "ignore"})
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            m = re.search(r"listening on (http://\S+?) ", line)
            if m:
                yield m.group(1)
                return
        raise RuntimeError(f"{args[:4]} did not start")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


CLIENTS_PER_POOL = 10
MODERN = "2026-07-28"  # the sessionless protocol revision: no handshake, every request stands alone


def _mcp_client(url: str, http: Any, mode: str = MODERN, cache: Any = None) -> Any:
    """The SDK's client over the shared pool; `cache` (a `CacheConfig`) shares listings across episodes."""
    from mcp import Client
    from mcp.client.caching import CacheConfig
    from mcp.client.streamable_http import streamable_http_client

    return Client(streamable_http_client(url, http_client=http, terminate_on_close=False), mode=mode,
                  cache=cache if cache is not None else CacheConfig())


def _p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def _client_cost(n: int) -> tuple[float, float]:
    """(mcp.Client tools/call, plain POST) in milliseconds against an instant in-process transport: what the
    client library itself costs per call, with no server and no socket."""
    import json

    import httpx2

    listing = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
        {"name": "read_text_file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}]}
    result = {"resultType": "complete", "isError": False, "content": [{"type": "text", "text": "x" * 64}],
              "structuredContent": {"path": ARGS["path"], "content": "x" * 64}}

    def answer(request: Any) -> Any:
        body = json.loads(request.content)
        if "id" not in body:
            return httpx2.Response(202)
        res = listing if body.get("method") == "tools/list" else result
        return httpx2.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": res})

    post_ms, call_ms = [], []
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as http:
        async with _mcp_client("http://mock/mcp", http) as c:
            await c.call_tool("read_text_file", ARGS)
            for i in range(n):
                t0 = time.perf_counter()
                await http.post("http://mock/call", json={"jsonrpc": "2.0", "id": i, "method": "x"})
                t1 = time.perf_counter()
                await c.call_tool("read_text_file", ARGS)
                t2 = time.perf_counter()
                post_ms.append((t1 - t0) * 1000)
                call_ms.append((t2 - t1) * 1000)
    return statistics.median(call_ms), statistics.median(post_ms)


async def _calls(base: str, floor: str, eid: str, http: Any, n: int, mode: str) -> tuple[list[float], list[float]]:
    """n tools/call latencies of one episode and n do-nothing POSTs, interleaved so drift in load hits both."""
    floor_ms, call_ms = [], []
    async with _mcp_client(f"{base}/episodes/{eid}/mcp", http, mode) as c:
        for i in range(n + 20):
            t0 = time.perf_counter()
            await http.post(floor + "/call", json={"jsonrpc": "2.0", "id": i, "method": "x"})
            t1 = time.perf_counter()
            await c.call_tool("read_text_file", ARGS)
            t2 = time.perf_counter()
            if i >= 20:
                floor_ms.append((t1 - t0) * 1000)
                call_ms.append((t2 - t1) * 1000)
    return floor_ms, call_ms


async def _episodes(base: str, admin: Any, http: Any, count: int, mode: str, shared: bool) -> float:
    """Median ms of create + connect + list tools + one call + end; with `shared`, the clients share one
    response cache keyed by the environment, as a harness running many episodes of it does."""
    from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore

    store = InMemoryResponseCacheStore()
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        created = (await admin.post("/admin/episodes", json={})).json()
        cache = CacheConfig(store=store, partition="bench", target_id=f"{base}#env={created['env_hash']}") \
            if shared else None
        async with _mcp_client(base + created["mcp_path"], http, mode, cache) as c:
            await c.list_tools()
            await c.call_tool("read_text_file", ARGS)
        (await admin.delete(f"/admin/episodes/{created['episode_id']}")).raise_for_status()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


async def _measure(base: str, floor: str, n: int, episodes: int, concurrent: int, calls_each: int) -> dict[str, float]:
    import httpx2

    auth = {"Authorization": f"Bearer {TOKEN}"}
    out: dict[str, float] = {}
    async with httpx.AsyncClient(base_url=base, headers=auth, timeout=60) as admin, \
            httpx2.AsyncClient(timeout=60) as http:
        for _ in range(100):
            try:
                await admin.get("/admin/episodes")
                break
            except httpx.TransportError:
                await anyio.sleep(0.1)
        eid = (await admin.post("/admin/episodes", json={})).json()["episode_id"]
        floor_ms, call_ms = await _calls(base, floor, eid, http, n, MODERN)
        _, legacy_ms = await _calls(base, floor, eid, http, max(5, n // 2), "legacy")
        async with _mcp_client(f"{base}/episodes/{eid}/mcp", http) as c:
            t0 = time.perf_counter()
            for _ in range(n):
                await c.call_tool("read_text_file", ARGS)
            out["http_single_calls_per_s"] = n / (time.perf_counter() - t0)
        await admin.delete(f"/admin/episodes/{eid}")
        out["http_call_ms"], out["rest_floor_call_ms"] = statistics.median(call_ms), statistics.median(floor_ms)
        out["http_call_legacy_ms"] = statistics.median(legacy_ms)

        out["http_episode_ms"] = await _episodes(base, admin, http, episodes, MODERN, shared=True)
        out["http_episode_uncached_ms"] = await _episodes(base, admin, http, episodes, MODERN, shared=False)
        out["http_episode_legacy_ms"] = await _episodes(base, admin, http, episodes, "legacy", shared=False)

        eids = [(await admin.post("/admin/episodes", json={})).json()["episode_id"] for _ in range(concurrent)]
        latencies: list[float] = []
        connected, go = [0], anyio.Event()
        # One pool per ten episodes, as a harness would: httpx's pool checks every idle connection (a syscall
        # each) to hand out one, so a single pool of a hundred connections spends the client's time there.
        groups = [httpx2.AsyncClient(timeout=60, limits=httpx2.Limits(max_connections=CLIENTS_PER_POOL + 2))
                  for _ in range(-(-concurrent // CLIENTS_PER_POOL))]

        async def work(i: int, e: str) -> None:
            async with _mcp_client(f"{base}/episodes/{e}/mcp", groups[i % len(groups)]) as c:
                connected[0] += 1
                await go.wait()  # the rate counts calls, not connections
                for _ in range(calls_each):
                    t = time.perf_counter()
                    await c.call_tool("read_text_file", ARGS)
                    latencies.append((time.perf_counter() - t) * 1000)

        async with anyio.create_task_group() as tg:
            for i, e in enumerate(eids):
                tg.start_soon(work, i, e)
            while connected[0] < len(eids):
                await anyio.sleep(0.01)
            t0 = time.perf_counter()
            go.set()
        out["http_concurrent_calls_per_s"] = len(latencies) / (time.perf_counter() - t0)
        out["http_concurrent_p50_ms"], out["http_concurrent_p99_ms"] = _p(latencies, 0.5), _p(latencies, 0.99)
        for g in groups:
            await g.aclose()
        for e in eids:
            await admin.delete(f"/admin/episodes/{e}")
    out["mcp_client_call_ms"], out["mock_post_ms"] = await _client_cost(n)
    return out


def remote_episodes_per_s(base: str, count: int) -> tuple[float, float]:
    """(pooled, fresh) teacher episodes per second through `run_episode(..., connect=...)` against the server at
    `base`: on one batch worker's portal, which shares HTTP clients and the listing cache between episodes,
    and with a fresh portal and clients per episode (what every episode paid before the pools)."""
    from anyio.from_thread import start_blocking_portal

    from synth.procedural import generate
    from trainers.episodes.policies import TeacherPolicy
    from trainers.episodes.remote import RemoteTarget, close_pools
    from trainers.episodes.runner import PreparedSpec, run_episode

    target = RemoteTarget(base, TOKEN)
    prepared = [PreparedSpec(generate("file_management", i)) for i in range(4)]
    teacher = TeacherPolicy()

    def rate(portal: Any, tag: str) -> float:
        t0 = time.perf_counter()
        for i in range(count):
            rec = run_episode(prepared[i % len(prepared)], teacher, seed=i, episode_id=f"bench-{tag}-{i}",
                              portal=portal, connect=target)
            assert rec.final is not None and rec.final.stop_reason != "error", rec.final
        return count / (time.perf_counter() - t0)

    with start_blocking_portal() as portal:
        rate(portal, "warm")
        pooled = rate(portal, "pooled")
        close_pools(portal)
    return pooled, rate(None, "fresh")


def serve_cold_start_ms(record_dir: str, repeat: int) -> float:
    """Median milliseconds from spawning `coworkenv serve` (stdio) to its answer to `initialize`."""
    init = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}\n')
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment",
                                 "--record-dir", record_dir], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(init)
        proc.stdin.flush()
        proc.stdout.readline()
        times.append((time.perf_counter() - t0) * 1000)
        proc.stdin.close()
        proc.wait(30)
    return statistics.median(times)


def run(quick: bool) -> list[dict[str, Any]]:
    """The network-path figures (100 episodes x 20 calls for the concurrent ones; fewer when quick)."""
    return figures(*((50, 5, 20, 5, 2) if quick else (500, 30, 100, 20, 5)))


def figures(n: int, episodes: int, concurrent: int, calls_each: int, starts: int) -> list[dict[str, Any]]:
    """The figures at the given sizes: sequential calls, episodes, concurrent episodes x calls, cold starts."""
    with tempfile.TemporaryDirectory() as tmp:
        with _process([sys.executable, "-c", REST_FLOOR]) as floor, \
                _process([sys.executable, "-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment",
                          "--http", "--port", "0", "--record-dir", tmp]) as base:
            m = anyio.run(_measure, base, floor, n, episodes, concurrent, calls_each)
            m["remote_episodes_per_s"], m["remote_fresh_episodes_per_s"] = remote_episodes_per_s(base, episodes)
        cold = serve_cold_start_ms(tmp, starts)
    single_ms = 1000 / m["http_single_calls_per_s"]
    call, floor = m["http_call_ms"], m["rest_floor_call_ms"]

    def fig(key: str, baseline_key: str, note: str, unit: str = "ms") -> dict[str, Any]:
        return {"key": key, "value": m[key], "unit": unit, "baseline_key": baseline_key, "baseline": m[baseline_key],
                "note": note}

    episode = "create + connect + list tools + one call + end"
    return [
        fig("http_call_ms", "rest_floor_call_ms", f"MCP tools/call over HTTP (2026-07-28, sessionless) is "
                                                  f"{call / floor:.2f}x a do-nothing Starlette POST (goal 1.5x)"),
        fig("http_call_legacy_ms", "rest_floor_call_ms", f"the same call in a handshake-era session (the SDK's "
                                                         f"session transport) is {m['http_call_legacy_ms'] / floor:.2f}x "
                                                         "the POST"),
        fig("mcp_client_call_ms", "mock_post_ms",
            f"the SDK client alone (instant in-process transport) costs {m['mcp_client_call_ms']:.2f} ms a call "
            f"against {m['mock_post_ms']:.2f} ms for a plain POST: "
            f"{(m['mcp_client_call_ms'] - m['mock_post_ms']) / floor:.0%} of the floor before any server work"),
        fig("http_episode_ms", "http_call_ms", f"{episode} is {m['http_episode_ms'] / call:.1f}x one call with the "
                                               "listing cached across episodes of the environment (goal 3x)"),
        fig("http_episode_uncached_ms", "http_call_ms", f"the same with a fresh client cache per episode (the listing "
                                                        f"fetched each time): {m['http_episode_uncached_ms'] / call:.1f}x"),
        fig("http_episode_legacy_ms", "http_call_ms", f"the same in a handshake-era session (initialize + initialized "
                                                      f"first): {m['http_episode_legacy_ms'] / call:.1f}x one call"),
        fig("http_concurrent_calls_per_s", "http_single_calls_per_s",
            f"{concurrent} episodes x {calls_each} calls keep "
            f"{m['http_concurrent_calls_per_s'] / m['http_single_calls_per_s']:.0%} of one episode's rate (goal 80%)",
            "calls/s"),
        fig("http_concurrent_p99_ms", "http_concurrent_p50_ms",
            f"p99 is {m['http_concurrent_p99_ms'] / m['http_concurrent_p50_ms']:.1f}x p50 (goal under 10x); one "
            f"sequential call takes {single_ms:.2f} ms"),
        fig("remote_episodes_per_s", "remote_fresh_episodes_per_s",
            f"teacher episodes over `run --connect` on a worker's shared HTTP clients and listing cache: "
            f"{m['remote_episodes_per_s'] / m['remote_fresh_episodes_per_s']:.1f}x the same episodes with fresh "
            "clients each", "episodes/s"),
        {"key": "serve_cold_start_ms", "value": cold, "unit": "ms", "baseline_key": None, "baseline": None,
         "note": "spawn `coworkenv serve` (stdio) to the answer to initialize, median (goal under 1,000 ms)"},
    ]
