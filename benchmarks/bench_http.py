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
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Iterator

import anyio
import httpx
import httpx2

ARGS = {"path": "/reports/q1.csv"}
# Where cold starts keep their bytecode: an installed package runs from compiled modules (the mock's Starlette and
# uvicorn do, compiled at install), so a cold start must not count compiling coworkenv's sources on every spawn, as
# it would under PYTHONDONTWRITEBYTECODE (set on some machines, this one included). Set by `cold_starts`.
_PYCACHE: list[str] = []


def spawn_env(**extra: str) -> dict[str, str]:
    """The environment of a spawned server: this one's, warnings off, and bytecode kept under the cold starts'
    cache folder once `cold_starts` has made one."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore", **extra}
    if _PYCACHE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = _PYCACHE[0]
    return env
TOKEN = "bench-admin-token-0123456789"

REST_MOCK = """
import json, socket, sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

LOG = "".join(f"2025-12-{1 + i % 28:02d} 10:{i % 60:02d}:00 batch job {i:05d} finished in {i % 97} s\\n"
              for i in range(800))
SEED = json.dumps({"files": [
    {"path": "/reports/q1.csv", "content": "region,amount\\nnorth,400\\nsouth,350\\neast,484\\n"},
    {"path": "/reports/README.md", "content": "# Reports\\nQuarterly figures live here, one CSV per quarter.\\n"},
    {"path": "/archive/2025/batch.log", "content": LOG},
    {"path": "/drafts/notes.md", "content": "- ask Bo about the Q2 template\\n"}]})
state = {}

async def reset(request):
    state.clear()
    state.update({f["path"]: f for f in json.loads(SEED)["files"]})
    return JSONResponse({"ok": True, "files": len(state)})

async def call(request):
    body = await request.json()
    found = state.get(body.get("args", {}).get("path"))
    if found is None:
        return JSONResponse({"error": "not found"}, status_code=404)
    return JSONResponse({"result": {"content": [{"type": "text", "text": found["content"]}],
                                    "structuredContent": found, "isError": False}})

sock = socket.socket()
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
sock.bind(("127.0.0.1", 0))
print(f"listening on http://127.0.0.1:{sock.getsockname()[1]} ", file=sys.stderr, flush=True)
app = Starlette(routes=[Route("/reset", reset, methods=["POST"]), Route("/call", call, methods=["POST"])])
uvicorn.Server(uvicorn.Config(app, log_level="error", access_log=False)).run(sockets=[sock])
"""
REST_CALL = {"tool": "read_text_file", "args": ARGS}
# The same mock the way the benchmark writes its REST environment servers: FastAPI, a pydantic model for
# the call's body. Only its cold start is measured (`rest_fastapi_cold_start_ms`), beside the bare Starlette one's.
REST_MOCK_FASTAPI = REST_MOCK.replace("""from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
""", """from typing import Any
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel

class Call(BaseModel):
    tool: str
    args: dict[str, Any] = {}
""").replace("async def reset(request):", "async def reset():").replace("""async def call(request):
    body = await request.json()
    found = state.get(body.get("args", {}).get("path"))""", """async def call(body: Call):
    found = state.get(body.args.get("path"))""").replace(
    """app = Starlette(routes=[Route("/reset", reset, methods=["POST"]), Route("/call", call, methods=["POST"])])""",
    """app = FastAPI()
app.post("/reset")(reset)
app.post("/call")(call)""")


def _serve_args(record_dir: str, http: bool) -> list[str]:
    args = [sys.executable, "-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment",
            "--record-dir", record_dir]
    return args + ["--http", "--port", "0"] if http else args


class _Process:
    """A server subprocess whose stderr says `listening on URL `; `url` once it has (`ready()` waits until it
    accepts connections too)."""

    def __init__(self, args: list[str]) -> None:
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                     env=spawn_env(COWORKENV_ADMIN_TOKEN=TOKEN))
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            m = re.search(r"listening on (http://\S+?) ", line)
            if m:
                self.url = m.group(1)
                return
        self.stop()
        raise RuntimeError(f"{args[:4]} did not start")

    def ready(self) -> "_Process":
        host, port = self.url.removeprefix("http://").rsplit(":", 1)
        for _ in range(5000):
            try:
                socket.create_connection((host, int(port)), timeout=5).close()
                return self
            except ConnectionRefusedError:
                time.sleep(0.002)
        raise RuntimeError(f"{self.url} never accepted a connection")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


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


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def _lean_call_request() -> tuple[dict[str, str], bytes]:
    """The headers and body the lean client sends for the benchmark's read (request id 1)."""
    from trainers.episodes.harness_client import _ACCEPT, CLIENT_INFO, PROTOCOL_VERSION

    envelope = {"io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read_text_file", "arguments": ARGS, "_meta": envelope}}
    headers = {"accept": _ACCEPT, "content-type": "application/json", "mcp-protocol-version": PROTOCOL_VERSION,
               "mcp-method": "tools/call", "mcp-name": "read_text_file"}
    return headers, json.dumps(body, separators=(",", ":")).encode()


def _ok_bytes(r: Any) -> bytes:
    if r.status_code >= 400:
        raise RuntimeError(f"HTTP {r.status_code}: {r.text[:300]}")
    return r.content


def _ok(r: Any) -> Any:
    """The JSON of a successful answer (an httpx2 response or the lean client's `Reply`)."""
    if r.status_code >= 400:
        raise RuntimeError(f"HTTP {r.status_code}: {r.text[:300]}")
    return r.json()


async def _measure(base: str, rest: str, n: int, episodes: int, fastapi: str | None = None) -> dict[str, float]:
    """Calls, resets, creates and episodes: the lean client, mcp.Client and the REST mock, interleaved (and the
    FastAPI mock's call, reset and reset + call when `fastapi` is its URL)."""
    from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore

    from trainers.episodes.harness_client import EpisodeClient, ServerConnection

    conn = ServerConnection(base, TOKEN)
    mock = httpx2.Client(base_url=rest, timeout=60)
    fast = httpx2.Client(base_url=fastapi, timeout=60) if fastapi else None
    t: dict[str, list[float]] = {k: [] for k in ("rest_call", "call", "call_sdk", "call_httpx", "rest_reset", "reset",
                                                 "create", "rest_episode", "episode", "episode_sdk", "episode_next",
                                                 "reset_call")}
    if fast is not None:
        t.update(fastapi_call=[], fastapi_reset=[], fastapi_episode=[])
    store = InMemoryResponseCacheStore()
    plain = httpx2.Client(base_url=base, timeout=60)  # the lean client's request, sent as the mock's are
    try:
        _ok(mock.post("/reset"))
        if fast is not None:
            _ok(fast.post("/reset"))
        ep = _ok(conn.admin("POST", "/admin/episodes", {}))
        lean = EpisodeClient(conn, ep["mcp_path"], ep["env_hash"])
        lean.list_tools()
        call_headers, call_body = _lean_call_request()
        async with httpx2.AsyncClient(timeout=60) as http, _mcp_client(base + ep["mcp_path"], http) as sdk:
            for i in range(n + 10):  # the first ten warm up
                t0 = time.perf_counter()
                _ok(mock.post("/call", json=REST_CALL))
                t1 = time.perf_counter()
                assert not lean.call_tool("read_text_file", ARGS).get("isError")
                t2 = time.perf_counter()
                await sdk.call_tool("read_text_file", ARGS)
                t3 = time.perf_counter()
                assert b'"isError":false' in _ok_bytes(plain.post(ep["mcp_path"], content=call_body,
                                                                  headers=call_headers))
                if i >= 10:
                    t["rest_call"].append((t1 - t0) * 1000)
                    t["call"].append((t2 - t1) * 1000)
                    t["call_sdk"].append((t3 - t2) * 1000)
                    t["call_httpx"].append(_ms(t3))
                if fast is not None:
                    t3 = time.perf_counter()
                    _ok(fast.post("/call", json=REST_CALL))
                    if i >= 10:
                        t["fastapi_call"].append(_ms(t3))
            made_here: list[str] = []  # ended after the loop: an end's record work would land on another's request
            for i in range(n // 4 + 5):  # every request here comes right after one to another server
                t0 = time.perf_counter()
                _ok(mock.post("/reset"))
                t1 = time.perf_counter()
                _ok(conn.admin("POST", f"/admin/episodes/{ep['episode_id']}/reset", {}))
                if i >= 5:
                    t["rest_reset"].append((t1 - t0) * 1000)
                    t["reset"].append(_ms(t1))
                if fast is not None:
                    t2 = time.perf_counter()
                    _ok(fast.post("/reset"))
                    if i >= 5:
                        t["fastapi_reset"].append(_ms(t2))
                t3 = time.perf_counter()
                made_here.append(_ok(conn.admin("POST", "/admin/episodes", {}))["episode_id"])
                if i >= 5:
                    t["create"].append(_ms(t3))
            for eid in made_here:
                _ok(conn.admin("POST", f"/admin/episodes/{eid}/end", {}))
            _ok(conn.admin("POST", f"/admin/episodes/{ep['episode_id']}/end", {}))
            looped = conn.create()  # the end-and-next loop's first episode (made once, before the loop)
            held = conn.create()  # reset + call: the reset's record work (after its answer) meets the call
            held_client = EpisodeClient(conn, held["mcp_path"], held["env_hash"])
            held_client.call_tool("read_text_file", ARGS)
            for i in range(episodes + 3):
                t0 = time.perf_counter()
                _ok(mock.post("/reset"))
                _ok(mock.post("/call", json=REST_CALL))
                t1 = time.perf_counter()
                made = _ok(conn.admin("POST", "/admin/episodes", {}))
                client = EpisodeClient(conn, made["mcp_path"], made["env_hash"])
                client.list_tools()  # from the listing cached per environment
                client.call_tool("read_text_file", ARGS)
                _ok(conn.admin("POST", f"/admin/episodes/{made['episode_id']}/end", {}))
                t3 = time.perf_counter()
                client = EpisodeClient(conn, looped["mcp_path"], looped["env_hash"])  # call + end-and-next
                client.list_tools()
                client.call_tool("read_text_file", ARGS)
                looped = conn.end(looped["episode_id"], next={})["next"]
                t["episode_next"].append(_ms(t3))
                t5 = time.perf_counter()
                made = _ok(conn.admin("POST", "/admin/episodes", {}))
                cache = CacheConfig(store=store, partition="bench", target_id=f"{base}#{made['env_hash']}")
                async with _mcp_client(base + made["mcp_path"], http, MODERN, cache) as c:
                    await c.list_tools()
                    await c.call_tool("read_text_file", ARGS)
                _ok(conn.admin("POST", f"/admin/episodes/{made['episode_id']}/end", {}))
                if fast is not None:
                    t6 = time.perf_counter()
                    _ok(fast.post("/reset"))
                    _ok(fast.post("/call", json=REST_CALL))
                    if i >= 3:
                        t["fastapi_episode"].append(_ms(t6))
                t7 = time.perf_counter()
                _ok(conn.admin("POST", f"/admin/episodes/{held['episode_id']}/reset", {}))
                held_client.call_tool("read_text_file", ARGS)
                if i >= 3:
                    t["reset_call"].append(_ms(t7))
                if i >= 3:
                    t["rest_episode"].append((t1 - t0) * 1000)
                    t["episode"].append((t3 - t1) * 1000)
                    t["episode_sdk"].append(_ms(t5))
        conn.end(looped["episode_id"])
        conn.end(held["episode_id"])
    finally:
        conn.close()
        mock.close()
        plain.close()
        if fast is not None:
            fast.close()
    del t["episode_next"][:3]  # warm-up, as the others
    names = {"episode_next": "http_episode_next_ms", "rest_call": "rest_call_ms", "call": "http_call_ms",
             "call_sdk": "http_call_sdk_ms", "call_httpx": "http_call_httpx_ms", "reset_call": "http_reset_call_ms",
             "rest_reset": "rest_reset_ms", "reset": "http_reset_ms", "create": "http_create_ms",
             "rest_episode": "rest_episode_ms", "episode": "http_episode_ms", "episode_sdk": "http_episode_sdk_ms",
             "fastapi_call": "rest_fastapi_call_ms", "fastapi_reset": "rest_fastapi_reset_ms",
             "fastapi_episode": "rest_fastapi_episode_ms"}
    return {names[k]: statistics.median(v) for k, v in t.items()}


async def _concurrent(base: str, n: int, concurrent: int, calls_each: int) -> dict[str, float]:
    """100 episodes x 20 calls at once through mcp.Client (one pool per ten), against one episode's rate."""
    out: dict[str, float] = {}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=base, headers=auth, timeout=60) as admin, \
            httpx2.AsyncClient(timeout=60) as http:
        eid = (await admin.post("/admin/episodes", json={})).json()["episode_id"]
        async with _mcp_client(f"{base}/episodes/{eid}/mcp", http) as c:
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
            async with _mcp_client(f"{base}/episodes/{e}/mcp", groups[i % len(groups)]) as c:
                connected[0] += 1
                await go.wait()  # the rate counts calls, not connections
                for _ in range(calls_each):
                    t = time.perf_counter()
                    await c.call_tool("read_text_file", ARGS)
                    latencies.append(_ms(t))

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
    proc = subprocess.Popen(_serve_args(record_dir, http=False), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=spawn_env())
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INIT)
    proc.stdin.flush()
    proc.stdout.readline()
    first = _ms(t0)
    proc.stdin.write(FIRST_CALL)
    proc.stdin.flush()
    assert b"north,400" in proc.stdout.readline()
    called = _ms(t0)
    proc.stdin.close()
    proc.wait(30)
    return first, called


def _http_start_ms(args: list[str], first: tuple[str, str, dict[str, str]],
                   then: Any = None) -> tuple[float, float | None]:
    """Spawn a server, wait for its address, send its first request: milliseconds from spawn to the answer, and
    to the end of `then(url, answer)` when given (a first tool call)."""
    server = _Process(args)
    try:
        method, path, headers = first
        while True:  # a server may say where it listens a moment before it accepts
            try:
                answer = _ok(httpx2.request(method, server.url + path, headers=headers, json={}, timeout=60))
                break
            except httpx2.ConnectError:
                time.sleep(0.002)
        took = _ms(server.t0)
        if then is None:
            return took, None
        then(server.url, answer)
        return took, _ms(server.t0)
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
    _PYCACHE[:] = [os.path.join(record_dir, "pycache")]  # `figures` clears it when its folder goes
    t: dict[str, list[float]] = {k: [] for k in ("serve_cold_start_ms", "serve_http_cold_start_ms", "rest_cold_start_ms",
                                                 "serve_first_call_ms", "serve_http_first_call_ms")}
    fastapi = importlib.util.find_spec("fastapi") is not None  # the `dev` extra has it (through openenv-core)
    if fastapi:
        t["rest_fastapi_cold_start_ms"] = []
        _http_start_ms([sys.executable, "-c", REST_MOCK_FASTAPI], ("POST", "/reset", {}))
    create = ("POST", "/admin/episodes", {"Authorization": f"Bearer {TOKEN}"})
    _http_start_ms([sys.executable, "-c", REST_MOCK], ("POST", "/reset", {}))  # untimed: they write the bytecode
    _stdio_start_ms(record_dir)
    _http_start_ms(_serve_args(record_dir, http=True), create, _first_call)
    for _ in range(repeat):
        t["rest_cold_start_ms"].append(_http_start_ms([sys.executable, "-c", REST_MOCK], ("POST", "/reset", {}))[0])
        first, called = _stdio_start_ms(record_dir)
        t["serve_cold_start_ms"].append(first)
        t["serve_first_call_ms"].append(called)
        first, http_called = _http_start_ms(_serve_args(record_dir, http=True), create, _first_call)
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
        rest, server = _Process([sys.executable, "-c", REST_MOCK]), None
        fast = _Process([sys.executable, "-c", REST_MOCK_FASTAPI]) if importlib.util.find_spec("fastapi") else None
        try:
            server = _Process(_serve_args(tmp, http=True)).ready()
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
            m["serve_import_ms"], serve_top = import_profile(_serve_args(tmp, http=False), INIT, first_answer=True)
            loaded = REST_MOCK.replace("uvicorn.Server(uvicorn.Config(app, log_level=\"error\", access_log=False)).run(sockets=[sock])",
                                       "uvicorn.Config(app, log_level=\"error\", access_log=False).load()")
            assert loaded != REST_MOCK
            m["rest_import_ms"], _ = import_profile([sys.executable, "-c", loaded])  # the mock's imports, then it exits
        finally:
            _PYCACHE.clear()
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
