"""The network path: episodes over HTTP against a plain REST mock doing the same read, in the same run.

The baseline is a tiny Starlette/uvicorn REST mock (`REST_MOCK`) in its own process, the shape of a
coworker benchmark's environment server: `POST /reset` rebuilds its in-memory state from the
demo environment's files, `POST /call` reads one of them and answers its text. Against it, in the
same run and interleaved so drift in load hits both alike:

- `http_call_ms`: a tool call through the lean harness client (`trainers.episodes.harness_client`),
  goal <= 1.0x `rest_call_ms`; `http_call_sdk_ms` the same call through `mcp.Client` (2026-07-28);
  `http_call_httpx_ms` the lean client's very request sent with plain httpx2, the client the mocks are called
  with (the servers side by side; the lean client's own HTTP, `trainers.episodes.wire`, costs less than httpx2);
- `http_reset_ms` and `http_create_ms`: the admin reset and create, goal <= 1.0x `rest_reset_ms`, in one
  loop (mock reset, reset, FastAPI reset, create: each request right after one to another server, which
  costs any server tens of microseconds more than one right after its own; the episodes made are ended
  after the loop, so no end's record work lands on another server's request);
- the FastAPI mock (`REST_MOCK_FASTAPI`, below) runs beside them when fastapi is installed: its call, reset
  and reset + call (`rest_fastapi_call_ms`, `rest_fastapi_reset_ms`, `rest_fastapi_episode_ms`) are the
  second baseline of the call, reset, create and end-and-next figures (`*_vs_fastapi_ms`: the same value
  against it), the shape of the REST mock the issue measured against;
- `http_episode_next_ms`: an episode loop's episode with the lean client, call + end-and-next (`end` with
  `next`, which creates the next episode in the same request), goal <= 1.3x `rest_episode_ms` (reset +
  call: two requests each); `http_episode_ms` the same with create + call + end apart (three requests);
  `http_reset_call_ms` a reset and a call to the same episode (the record work a reset leaves for after its
  answer meets the call);
  `http_episode_sdk_ms` the same with a fresh `mcp.Client` per episode on a shared
  HTTP client and listing cache (the SDK's best case);
- `remote_episodes_per_s`: teacher episodes over `run --connect` (lean client, one `POST .../step`
  per step's sync), goal >= 2x `remote_before_episodes_per_s`, the same episodes the way they ran
  before issue 25 (`mcp.Client` on a worker's shared pools, `GET .../events` and `POST .../evaluate`
  apart);
- `serve_cold_start_ms` / `serve_http_cold_start_ms`: spawn to the first answer (stdio `initialize`;
  HTTP admin create), goal <= 1.0x `rest_cold_start_ms` (spawn to the mock's first reset);
  `serve_http_cold_start_vs_fastapi_ms` the HTTP one against `rest_fastapi_cold_start_ms`, the same mock
  written with FastAPI and a pydantic body model, as the issue's benchmark writes its REST servers (when
  fastapi is installed: the `dev` extra has it);
  `serve_first_call_ms` / `serve_http_first_call_ms`: spawn to the answer of the first tool call
  (the `mcp` SDK loads after the first answer, so this is where a cold start pays for it), against
  the same baseline; and `serve_import_ms`, what `python -X importtime` counts for `coworkenv serve`
  up to its first answer, against `rest_import_ms` for the mock; every cold start runs from bytecode
  (written by one untimed start of each), as an installed package does, even where
  PYTHONDONTWRITEBYTECODE is set;
- concurrency: 100 episodes x 20 calls (`mcp.Client`, one pool per ten) against one episode's rate.

Every client keeps its connection open (a fresh `httpx` client costs tens of milliseconds to load
its CA bundle, the client's cost, not the server's).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Iterator

import anyio
import httpx
import httpx2

from .http_servers import (ARGS, CLIENTS_PER_POOL, MODERN, PYCACHE, REST_CALL, REST_MOCK, REST_MOCK_FASTAPI, TOKEN,
                           ServerProcess, lean_call_request, mcp_client, ms_since, ok_bytes, ok_json, percentile,
                           serve_args, spawn_env)

@dataclass
class _Rig:
    """What `_measure`'s loops share: the servers' clients and the timings by loop step."""

    conn: Any  # the lean client's ServerConnection
    mock: Any
    fast: Any  # the FastAPI mock's client, or None
    t: dict[str, list[float]]


async def _measure(base: str, rest: str, n: int, episodes: int, fastapi: str | None = None) -> dict[str, float]:
    """Calls, resets, creates and episodes: the lean client, mcp.Client and the REST mock, interleaved (and the
    FastAPI mock's call, reset and reset + call when `fastapi` is its URL)."""
    from trainers.episodes.harness_client import EpisodeClient, ServerConnection

    t: dict[str, list[float]] = {k: [] for k in ("rest_call", "call", "call_sdk", "call_httpx", "rest_reset", "reset",
                                                 "create", "rest_episode", "episode", "episode_sdk", "episode_next",
                                                 "reset_call")}
    rig = _Rig(ServerConnection(base, TOKEN), httpx2.Client(base_url=rest, timeout=60),
               httpx2.Client(base_url=fastapi, timeout=60) if fastapi else None, t)
    if rig.fast is not None:
        t.update(fastapi_call=[], fastapi_reset=[], fastapi_episode=[])
    plain = httpx2.Client(base_url=base, timeout=60)  # the lean client's request, sent as the mocks' are
    try:
        ok_json(rig.mock.post("/reset"))
        if rig.fast is not None:
            ok_json(rig.fast.post("/reset"))
        ep = ok_json(rig.conn.admin("POST", "/admin/episodes", {}))
        lean = EpisodeClient(rig.conn, ep["mcp_path"], ep["env_hash"])
        lean.list_tools()
        async with httpx2.AsyncClient(timeout=60) as http, mcp_client(base + ep["mcp_path"], http) as sdk:
            await _calls(rig, lean, sdk, plain, ep["mcp_path"], n)
            _resets(rig, ep["episode_id"], n // 4 + 5)
            await _episodes(rig, base, http, episodes)
    finally:
        rig.conn.close()
        rig.mock.close()
        plain.close()
        if rig.fast is not None:
            rig.fast.close()
    del t["episode_next"][:3]  # warm-up, as the others
    names = {"episode_next": "http_episode_next_ms", "rest_call": "rest_call_ms", "call": "http_call_ms",
             "call_sdk": "http_call_sdk_ms", "call_httpx": "http_call_httpx_ms", "reset_call": "http_reset_call_ms",
             "rest_reset": "rest_reset_ms", "reset": "http_reset_ms", "create": "http_create_ms",
             "rest_episode": "rest_episode_ms", "episode": "http_episode_ms", "episode_sdk": "http_episode_sdk_ms",
             "fastapi_call": "rest_fastapi_call_ms", "fastapi_reset": "rest_fastapi_reset_ms",
             "fastapi_episode": "rest_fastapi_episode_ms"}
    return {names[k]: statistics.median(v) for k, v in t.items()}


async def _calls(rig: _Rig, lean: Any, sdk: Any, plain: Any, mcp_path: str, n: int) -> None:
    """The sequential call: the mock's, the lean client's, the SDK's and the lean request over plain httpx2."""
    t, mock, fast = rig.t, rig.mock, rig.fast
    call_headers, call_body = lean_call_request()
    for i in range(n + 10):  # the first ten warm up
        t0 = time.perf_counter()
        ok_json(mock.post("/call", json=REST_CALL))
        t1 = time.perf_counter()
        assert not lean.call_tool("read_text_file", ARGS).get("isError")
        t2 = time.perf_counter()
        await sdk.call_tool("read_text_file", ARGS)
        t3 = time.perf_counter()
        assert b'"isError":false' in ok_bytes(plain.post(mcp_path, content=call_body, headers=call_headers))
        if i >= 10:
            t["rest_call"].append((t1 - t0) * 1000)
            t["call"].append((t2 - t1) * 1000)
            t["call_sdk"].append((t3 - t2) * 1000)
            t["call_httpx"].append(ms_since(t3))
        if fast is not None:
            t3 = time.perf_counter()
            ok_json(fast.post("/call", json=REST_CALL))
            if i >= 10:
                t["fastapi_call"].append(ms_since(t3))


def _resets(rig: _Rig, episode_id: str, rounds: int) -> None:
    """Resets and creates, each request right after one to another server; the episodes made are ended after
    the loop (an end's record work would land on another's request), then `episode_id` too."""
    t, mock, fast, conn = rig.t, rig.mock, rig.fast, rig.conn
    made_here: list[str] = []
    for i in range(rounds):
        t0 = time.perf_counter()
        ok_json(mock.post("/reset"))
        t1 = time.perf_counter()
        ok_json(conn.admin("POST", f"/admin/episodes/{episode_id}/reset", {}))
        if i >= 5:
            t["rest_reset"].append((t1 - t0) * 1000)
            t["reset"].append(ms_since(t1))
        if fast is not None:
            t2 = time.perf_counter()
            ok_json(fast.post("/reset"))
            if i >= 5:
                t["fastapi_reset"].append(ms_since(t2))
        t3 = time.perf_counter()
        made_here.append(ok_json(conn.admin("POST", "/admin/episodes", {}))["episode_id"])
        if i >= 5:
            t["create"].append(ms_since(t3))
    for eid in made_here:
        ok_json(conn.admin("POST", f"/admin/episodes/{eid}/end", {}))
    ok_json(conn.admin("POST", f"/admin/episodes/{episode_id}/end", {}))


async def _episodes(rig: _Rig, base: str, http: Any, episodes: int) -> None:
    """Whole episodes: the mock's reset + call; create + call + end; call + end-and-next; a fresh SDK client
    per episode on a shared listing cache; and a reset + call to one held episode."""
    from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore

    from trainers.episodes.harness_client import EpisodeClient

    t, mock, fast, conn = rig.t, rig.mock, rig.fast, rig.conn
    store = InMemoryResponseCacheStore()
    looped = conn.create()  # the end-and-next loop's first episode (made once, before the loop)
    held = conn.create()  # reset + call: the reset's record work (after its answer) meets the call
    held_client = EpisodeClient(conn, held["mcp_path"], held["env_hash"])
    held_client.call_tool("read_text_file", ARGS)
    for i in range(episodes + 3):
        t0 = time.perf_counter()
        ok_json(mock.post("/reset"))
        ok_json(mock.post("/call", json=REST_CALL))
        t1 = time.perf_counter()
        made = ok_json(conn.admin("POST", "/admin/episodes", {}))
        client = EpisodeClient(conn, made["mcp_path"], made["env_hash"])
        client.list_tools()  # from the listing cached per environment
        client.call_tool("read_text_file", ARGS)
        ok_json(conn.admin("POST", f"/admin/episodes/{made['episode_id']}/end", {}))
        t3 = time.perf_counter()
        client = EpisodeClient(conn, looped["mcp_path"], looped["env_hash"])  # call + end-and-next
        client.list_tools()
        client.call_tool("read_text_file", ARGS)
        looped = conn.end(looped["episode_id"], next={})["next"]
        t["episode_next"].append(ms_since(t3))
        t5 = time.perf_counter()
        made = ok_json(conn.admin("POST", "/admin/episodes", {}))
        cache = CacheConfig(store=store, partition="bench", target_id=f"{base}#{made['env_hash']}")
        async with mcp_client(base + made["mcp_path"], http, MODERN, cache) as c:
            await c.list_tools()
            await c.call_tool("read_text_file", ARGS)
        ok_json(conn.admin("POST", f"/admin/episodes/{made['episode_id']}/end", {}))
        if fast is not None:
            t6 = time.perf_counter()
            ok_json(fast.post("/reset"))
            ok_json(fast.post("/call", json=REST_CALL))
            if i >= 3:
                t["fastapi_episode"].append(ms_since(t6))
        t7 = time.perf_counter()
        ok_json(conn.admin("POST", f"/admin/episodes/{held['episode_id']}/reset", {}))
        held_client.call_tool("read_text_file", ARGS)
        if i >= 3:
            t["reset_call"].append(ms_since(t7))
            t["rest_episode"].append((t1 - t0) * 1000)
            t["episode"].append((t3 - t1) * 1000)
            t["episode_sdk"].append(ms_since(t5))
    conn.end(looped["episode_id"])
    conn.end(held["episode_id"])


async def _concurrent(base: str, n: int, concurrent: int, calls_each: int) -> dict[str, float]:
    """100 episodes x 20 calls at once through mcp.Client (one pool per ten), against one episode's rate."""
    out: dict[str, float] = {}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=base, headers=auth, timeout=60) as admin, \
            httpx2.AsyncClient(timeout=60) as http:
        eid = (await admin.post("/admin/episodes", json={})).json()["episode_id"]
        async with mcp_client(f"{base}/episodes/{eid}/mcp", http) as c:
            for _ in range(10):
                await c.call_tool("read_text_file", ARGS)
            t0 = time.perf_counter()
            for _ in range(n):
                await c.call_tool("read_text_file", ARGS)
            out["http_single_calls_per_s"] = n / (time.perf_counter() - t0)
        await admin.delete(f"/admin/episodes/{eid}")
        eids = [(await admin.post("/admin/episodes", json={})).json()["episode_id"] for _ in range(concurrent)]
        latencies: list[float] = []
        connected, go = [0], anyio.Event()
        # One pool per ten episodes, as a harness would: httpx's pool checks every idle connection (a syscall
        # each) to hand out one, so a single pool of a hundred connections spends the client's time there.
        groups = [httpx2.AsyncClient(timeout=60, limits=httpx2.Limits(max_connections=CLIENTS_PER_POOL + 2))
                  for _ in range(-(-concurrent // CLIENTS_PER_POOL))]

        async def work(i: int, e: str) -> None:
            async with mcp_client(f"{base}/episodes/{e}/mcp", groups[i % len(groups)]) as c:
                connected[0] += 1
                await go.wait()  # the rate counts calls, not connections
                for _ in range(calls_each):
                    t = time.perf_counter()
                    await c.call_tool("read_text_file", ARGS)
                    latencies.append(ms_since(t))

        async with anyio.create_task_group() as tg:
            for i, e in enumerate(eids):
                tg.start_soon(work, i, e)
            while connected[0] < len(eids):
                await anyio.sleep(0.01)
            t0 = time.perf_counter()
            go.set()
        out["http_concurrent_calls_per_s"] = len(latencies) / (time.perf_counter() - t0)
        out["http_concurrent_p50_ms"], out["http_concurrent_p99_ms"] = percentile(latencies, 0.5), percentile(latencies, 0.99)
        for g in groups:
            await g.aclose()
        for e in eids:
            await admin.delete(f"/admin/episodes/{e}")
    return out


@contextlib.contextmanager
def _admin_over_httpx2() -> Iterator[None]:
    """Admin requests sent through an `httpx2.Client` per connection, as they were before issue 25 (the lean
    client's `wire` since): the path before is measured as it ran, not with today's admin transport."""
    from trainers.episodes.harness_client import ServerConnection

    clients: dict[int, Any] = {}  # connection -> its httpx2 client, for this block only

    def admin(self: Any, method: str, path: str, body: Any = None, params: Any = None) -> Any:
        http = clients.get(id(self))
        if http is None:
            http = clients[id(self)] = httpx2.Client(base_url=self.base, timeout=self.timeout)
        return http.request(method, path, json=body, params=params, headers=dict(self._auth))

    saved = ServerConnection.admin
    ServerConnection.admin = admin  # type: ignore[method-assign]
    try:
        yield
    finally:
        ServerConnection.admin = saved  # type: ignore[method-assign]
        for http in clients.values():
            http.close()


def remote_episodes_per_s(base: str, count: int, rounds: int = 2) -> tuple[float, float]:
    """(lean, before) teacher episodes per second through `run_episode(..., connect=...)` against the server at
    `base`: the lean client on this thread's pooled connection with one request per step's sync (`POST .../step`)
    and the start from the create's answer; and the path before issue 25, `mcp.Client` on a batch worker's portal
    with its shared HTTP client and listing cache, syncing each step with `GET .../events` and `POST .../evaluate`
    apart (COWORKENV_REMOTE_STEP_SYNC=0), its admin requests through httpx2 as then (`_admin_over_httpx2`);
    alternated in rounds."""
    from anyio.from_thread import start_blocking_portal

    from synth.procedural import generate
    from trainers.episodes.policies import TeacherPolicy
    from trainers.episodes.remote import STEP_SYNC_ENV, RemoteTarget, close_pools
    from trainers.episodes.prepared import PreparedSpec
    from trainers.episodes.runner import run_episode

    prepared = [PreparedSpec(generate("file_management", i)) for i in range(4)]
    teacher = TeacherPolicy()
    seconds = {"lean": 0.0, "sdk": 0.0}
    saved = os.environ.get(STEP_SYNC_ENV)
    with start_blocking_portal() as portal:
        for r in range(rounds + 1):  # round 0 warms both up
            for client in ("lean", "sdk"):
                target = RemoteTarget(base, TOKEN, client=client)
                os.environ[STEP_SYNC_ENV] = "1" if client == "lean" else "0"
                with _admin_over_httpx2() if client == "sdk" else contextlib.nullcontext():
                    t0 = time.perf_counter()
                    for i in range(count):
                        rec = run_episode(prepared[i % len(prepared)], teacher, seed=i,
                                          episode_id=f"bench-{client}-{r}-{i}",
                                          portal=portal if client == "sdk" else None, connect=target)
                        assert rec.final is not None and rec.final.stop_reason != "error", rec.final
                    if r:
                        seconds[client] += time.perf_counter() - t0
        close_pools(portal)
    close_pools()
    if saved is None:
        os.environ.pop(STEP_SYNC_ENV, None)
    else:
        os.environ[STEP_SYNC_ENV] = saved
    return rounds * count / seconds["lean"], rounds * count / seconds["sdk"]


INIT = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}\n')
FIRST_CALL = (b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":2,"method":"tools/call",'
              b'"params":{"name":"read_text_file","arguments":{"path":"/reports/q1.csv"}}}\n')


def _stdio_start_ms(record_dir: str) -> tuple[float, float]:
    """Spawn `serve` (stdio): milliseconds to its answer to initialize, and to the answer of the first tool call."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(serve_args(record_dir, http=False), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=spawn_env())
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INIT)
    proc.stdin.flush()
    proc.stdout.readline()
    first = ms_since(t0)
    proc.stdin.write(FIRST_CALL)
    proc.stdin.flush()
    assert b"north,400" in proc.stdout.readline()
    called = ms_since(t0)
    proc.stdin.close()
    proc.wait(30)
    return first, called


def _http_start_ms(args: list[str], first: tuple[str, str, dict[str, str]],
                   then: Any = None) -> tuple[float, float | None]:
    """Spawn a server, wait for its address, send its first request: milliseconds from spawn to the answer, and
    to the end of `then(url, answer)` when given (a first tool call)."""
    server = ServerProcess(args)
    try:
        method, path, headers = first
        while True:  # a server may say where it listens a moment before it accepts
            try:
                answer = ok_json(httpx2.request(method, server.url + path, headers=headers, json={}, timeout=60))
                break
            except httpx2.ConnectError:
                time.sleep(0.002)
        took = ms_since(server.t0)
        if then is None:
            return took, None
        then(server.url, answer)
        return took, ms_since(server.t0)
    finally:
        server.stop()


def _first_call(url: str, made: dict[str, Any]) -> None:
    from trainers.episodes.harness_client import EpisodeClient, ServerConnection

    conn = ServerConnection(url, TOKEN)
    try:
        result = EpisodeClient(conn, made["mcp_path"], made["env_hash"]).call_tool("read_text_file", ARGS)
        assert "north,400" in result["content"][0]["text"]
    finally:
        conn.close()


def cold_starts(record_dir: str, repeat: int) -> dict[str, float]:
    """Median ms from spawn to the first answer: stdio serve (initialize), HTTP serve (admin create), REST mock
    (reset); and to the first tool call's answer (stdio, HTTP with the lean client); interleaved. Every process
    runs from bytecode (one untimed start of each writes it under `record_dir`), as an installed package does."""
    PYCACHE[:] = [os.path.join(record_dir, "pycache")]  # `figures` clears it when its folder goes
    t: dict[str, list[float]] = {k: [] for k in ("serve_cold_start_ms", "serve_http_cold_start_ms", "rest_cold_start_ms",
                                                 "serve_first_call_ms", "serve_http_first_call_ms")}
    fastapi = importlib.util.find_spec("fastapi") is not None  # the `dev` extra has it (through openenv-core)
    if fastapi:
        t["rest_fastapi_cold_start_ms"] = []
        _http_start_ms([sys.executable, "-c", REST_MOCK_FASTAPI], ("POST", "/reset", {}))
    create = ("POST", "/admin/episodes", {"Authorization": f"Bearer {TOKEN}"})
    _http_start_ms([sys.executable, "-c", REST_MOCK], ("POST", "/reset", {}))  # untimed: they write the bytecode
    _stdio_start_ms(record_dir)
    _http_start_ms(serve_args(record_dir, http=True), create, _first_call)
    for _ in range(repeat):
        t["rest_cold_start_ms"].append(_http_start_ms([sys.executable, "-c", REST_MOCK], ("POST", "/reset", {}))[0])
        first, called = _stdio_start_ms(record_dir)
        t["serve_cold_start_ms"].append(first)
        t["serve_first_call_ms"].append(called)
        first, http_called = _http_start_ms(serve_args(record_dir, http=True), create, _first_call)
        t["serve_http_cold_start_ms"].append(first)
        t["serve_http_first_call_ms"].append(http_called or 0.0)
        if fastapi:
            t["rest_fastapi_cold_start_ms"].append(
                _http_start_ms([sys.executable, "-c", REST_MOCK_FASTAPI], ("POST", "/reset", {}))[0])
    return {k: statistics.median(v) for k, v in t.items()}


def import_profile(args: list[str], stdin: bytes = b"", first_answer: bool = False) -> tuple[float, list[tuple[str, float]]]:
    """What `python -X importtime` counts for a command: total ms of every import, and the heaviest top-level
    packages (name, cumulative ms). The command runs until it exits (stdin given, then closed), or with
    `first_answer` until it writes its first line on stdout (what a cold start's first answer imports)."""
    env = spawn_env()  # from bytecode after `cold_starts`, as it measured
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([args[0], "-X", "importtime", *args[1:]], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, env=env)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(stdin)
        proc.stdin.flush()
        if first_answer:
            proc.stdout.readline()
            proc.kill()
        else:
            proc.stdin.close()
            proc.stdout.read()
        proc.wait(120)
        err.seek(0)
        text = err.read().decode(errors="replace")
    total, top = 0.0, {}
    for line in text.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            total += int(m.group(1)) / 1000
            if not m.group(3).strip(" ") and len(m.group(3)) == 1:  # a top-level import
                top[m.group(4)] = max(top.get(m.group(4), 0.0), int(m.group(2)) / 1000)
    return total, sorted(top.items(), key=lambda kv: -kv[1])[:4]


def run(quick: bool) -> list[dict[str, Any]]:
    """The network-path figures (100 episodes x 20 calls for the concurrent ones; fewer when quick)."""
    return figures(*((60, 10, 20, 5, 2) if quick else (400, 40, 100, 20, 5)))


def figures(n: int, episodes: int, concurrent: int, calls_each: int, starts: int) -> list[dict[str, Any]]:
    """The figures at the given sizes: sequential calls, episodes, concurrent episodes x calls, cold starts."""
    with tempfile.TemporaryDirectory() as tmp:
        rest, server = ServerProcess([sys.executable, "-c", REST_MOCK]), None
        fast = ServerProcess([sys.executable, "-c", REST_MOCK_FASTAPI]) if importlib.util.find_spec("fastapi") else None
        try:
            server = ServerProcess(serve_args(tmp, http=True)).ready()
            rest.ready()
            m = anyio.run(_measure, server.url, rest.url, n, episodes, fast.ready().url if fast else None)
            m.update(anyio.run(_concurrent, server.url, n, concurrent, calls_each))
            m["remote_episodes_per_s"], m["remote_before_episodes_per_s"] = remote_episodes_per_s(server.url, episodes)
        finally:
            rest.stop()
            if fast is not None:
                fast.stop()
            if server is not None:
                server.stop()
        try:
            m.update(cold_starts(tmp, starts))
            m["serve_import_ms"], serve_top = import_profile(serve_args(tmp, http=False), INIT, first_answer=True)
            loaded = REST_MOCK.replace("uvicorn.Server(uvicorn.Config(app, log_level=\"error\", access_log=False)).run(sockets=[sock])",
                                       "uvicorn.Config(app, log_level=\"error\", access_log=False).load()")
            assert loaded != REST_MOCK
            m["rest_import_ms"], _ = import_profile([sys.executable, "-c", loaded])  # the mock's imports, then it exits
        finally:
            PYCACHE.clear()
    single_ms = 1000 / m["http_single_calls_per_s"]
    against_fastapi = {"http_call_ms": "rest_fastapi_call_ms", "http_reset_ms": "rest_fastapi_reset_ms",
                       "http_create_ms": "rest_fastapi_reset_ms", "http_episode_next_ms": "rest_fastapi_episode_ms",
                       "serve_http_cold_start_ms": "rest_fastapi_cold_start_ms",
                       "serve_cold_start_ms": "rest_fastapi_cold_start_ms"}
    for key, fastapi_key in against_fastapi.items():  # the same figures against the second baseline, when it ran
        if fastapi_key in m:
            m[key.replace("_ms", "_vs_fastapi_ms")] = m[key]

    def fig(key: str, baseline_key: str, note: str, unit: str = "ms") -> dict[str, Any]:
        return {"key": key, "value": m[key], "unit": unit, "baseline_key": baseline_key, "baseline": m[baseline_key],
                "note": note}

    def x(key: str, baseline_key: str) -> str:
        return f"{m[key] / m[baseline_key]:.2f}x"

    def vs_fastapi(key: str, fastapi_key: str) -> list[dict[str, Any]]:
        """`key` against the FastAPI mock (the issue's baseline shape) as a figure of its own, when it ran."""
        if fastapi_key not in m:
            return []
        return [fig(key.replace("_ms", "_vs_fastapi_ms"), fastapi_key,
                    f"{key} is {x(key, fastapi_key)} the same request to the REST mock written with FastAPI and a "
                    "pydantic body model, as the issue's benchmark writes its REST servers (the goal's ratio)")]

    heaviest = ", ".join(f"{name} {ms:.0f} ms" for name, ms in serve_top)
    return [
        fig("http_call_ms", "rest_call_ms", f"a tool call through the lean harness client is {x('http_call_ms', 'rest_call_ms')} "
                                            "the REST mock's read (goal <= 1.0x)"),
        *vs_fastapi("http_call_ms", "rest_fastapi_call_ms"),
        fig("http_call_httpx_ms", "rest_call_ms", f"the lean client's request sent with plain httpx2, the client the "
                                                  f"mock is called with, is {x('http_call_httpx_ms', 'rest_call_ms')} "
                                                  "the REST read: the servers side by side, one client for both "
                                                  "(the lean client's own HTTP, `wire`, costs half httpx2's)"),
        fig("http_call_sdk_ms", "rest_call_ms", f"the same call through mcp.Client (2026-07-28) is "
                                                f"{x('http_call_sdk_ms', 'rest_call_ms')} the REST read"),
        fig("http_reset_ms", "rest_reset_ms", f"admin reset is {x('http_reset_ms', 'rest_reset_ms')} the REST reset "
                                              "(goal <= 1.0x)"),
        *vs_fastapi("http_reset_ms", "rest_fastapi_reset_ms"),
        fig("http_create_ms", "rest_reset_ms", f"admin create is {x('http_create_ms', 'rest_reset_ms')} the REST reset "
                                               "(goal <= 1.0x)"),
        *vs_fastapi("http_create_ms", "rest_fastapi_reset_ms"),
        fig("http_episode_next_ms", "rest_episode_ms", f"an episode loop's episode, call + end-and-next (`end` with "
                                                       f"`next`: the next episode made in the same request; lean "
                                                       f"client, listing cached) is "
                                                       f"{x('http_episode_next_ms', 'rest_episode_ms')} the REST "
                                                       "reset + call (goal <= 1.3x)"),
        *vs_fastapi("http_episode_next_ms", "rest_fastapi_episode_ms"),
        fig("http_reset_call_ms", "rest_episode_ms", f"a reset and a call to the same episode (the reset's record "
                                                     f"work, done after its answer, meets the call) is "
                                                     f"{x('http_reset_call_ms', 'rest_episode_ms')} the REST reset + "
                                                     "call"),
        fig("http_episode_ms", "rest_episode_ms", f"create + call + end apart (three requests; lean client, listing "
                                                  f"cached) is {x('http_episode_ms', 'rest_episode_ms')} the REST "
                                                  "reset + call"),
        fig("http_episode_sdk_ms", "rest_episode_ms", f"the same through a fresh mcp.Client per episode (shared HTTP "
                                                      f"client and listing cache) is "
                                                      f"{x('http_episode_sdk_ms', 'rest_episode_ms')} the REST episode"),
        fig("remote_episodes_per_s", "remote_before_episodes_per_s",
            f"teacher episodes over `run --connect` (lean client, one request per step's sync): "
            f"{x('remote_episodes_per_s', 'remote_before_episodes_per_s')} those of the path before issue 25 "
            "(mcp.Client on a worker's shared pools, events and evaluate requested apart) (goal >= 2x)", "episodes/s"),
        fig("http_concurrent_calls_per_s", "http_single_calls_per_s",
            f"{concurrent} episodes x {calls_each} calls keep "
            f"{m['http_concurrent_calls_per_s'] / m['http_single_calls_per_s']:.0%} of one episode's rate (goal 80%)",
            "calls/s"),
        fig("http_concurrent_p99_ms", "http_concurrent_p50_ms",
            f"p99 is {x('http_concurrent_p99_ms', 'http_concurrent_p50_ms')} p50 (goal under 10x); one "
            f"sequential call takes {single_ms:.2f} ms"),
        fig("serve_cold_start_ms", "rest_cold_start_ms", f"spawn `coworkenv serve` (stdio) to its answer to initialize is "
                                                         f"{x('serve_cold_start_ms', 'rest_cold_start_ms')} spawn to the REST "
                                                         "mock's first reset (goal <= 1.0x)"),
        *vs_fastapi("serve_cold_start_ms", "rest_fastapi_cold_start_ms"),
        fig("serve_http_cold_start_ms", "rest_cold_start_ms", f"spawn `coworkenv serve --http` to its first create is "
                                                              f"{x('serve_http_cold_start_ms', 'rest_cold_start_ms')} the "
                                                              "mock's (goal <= 1.0x)"),
        *vs_fastapi("serve_http_cold_start_ms", "rest_fastapi_cold_start_ms"),
        fig("serve_first_call_ms", "rest_cold_start_ms", f"spawn `coworkenv serve` (stdio) to its first tool call's "
                                                         f"answer is {x('serve_first_call_ms', 'rest_cold_start_ms')} the "
                                                         "mock's first reset (the SDK loads after the first answer)"),
        fig("serve_http_first_call_ms", "rest_cold_start_ms", f"spawn `coworkenv serve --http` to a create and its "
                                                              f"first tool call is "
                                                              f"{x('serve_http_first_call_ms', 'rest_cold_start_ms')} "
                                                              "the mock's first reset"),
        fig("serve_import_ms", "rest_import_ms", f"python -X importtime up to serve's first answer: "
                                                 f"{x('serve_import_ms', 'rest_import_ms')} what the mock imports; "
                                                 f"heaviest: {heaviest}"),
    ]
