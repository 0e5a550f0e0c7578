"""The servers and clients the network-path benchmark (bench_http) measures: the REST mocks (Starlette, and
FastAPI as the issue's benchmark writes them), `coworkenv serve` spawned as a subprocess, the SDK client on a shared
pool, the lean client's very request, and the small timing helpers."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from typing import Any

ARGS = {"path": "/reports/q1.csv"}
# Where cold starts keep their bytecode: an installed package runs from compiled modules (the mock's Starlette and
# uvicorn do, compiled at install), so a cold start must not count compiling coworkenv's sources on every spawn, as
# it would under PYTHONDONTWRITEBYTECODE (set on some machines, this one included). Set by `cold_starts`.
PYCACHE: list[str] = []


def spawn_env(**extra: str) -> dict[str, str]:
    """The environment of a spawned server: this one's, warnings off, and bytecode kept under the cold starts'
    cache folder once `cold_starts` has made one."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore", **extra}
    if PYCACHE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = PYCACHE[0]
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


def serve_args(record_dir: str, http: bool) -> list[str]:
    args = [sys.executable, "-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment",
            "--record-dir", record_dir]
    return args + ["--http", "--port", "0"] if http else args


class ServerProcess:
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

    def ready(self) -> "ServerProcess":
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


def mcp_client(url: str, http: Any, mode: str = MODERN, cache: Any = None) -> Any:
    """The SDK's client over the shared pool; `cache` (a `CacheConfig`) shares listings across episodes."""
    from mcp import Client
    from mcp.client.caching import CacheConfig
    from mcp.client.streamable_http import streamable_http_client

    return Client(streamable_http_client(url, http_client=http, terminate_on_close=False), mode=mode,
                  cache=cache if cache is not None else CacheConfig())


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def lean_call_request() -> tuple[dict[str, str], bytes]:
    """The headers and body the lean client sends for the benchmark's read (request id 1)."""
    from trainers.episodes.harness_client import _ACCEPT, CLIENT_INFO, PROTOCOL_VERSION

    envelope = {"io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read_text_file", "arguments": ARGS, "_meta": envelope}}
    headers = {"accept": _ACCEPT, "content-type": "application/json", "mcp-protocol-version": PROTOCOL_VERSION,
               "mcp-method": "tools/call", "mcp-name": "read_text_file"}
    return headers, json.dumps(body, separators=(",", ":")).encode()


def ok_bytes(r: Any) -> bytes:
    if r.status_code >= 400:
        raise RuntimeError(f"HTTP {r.status_code}: {r.text[:300]}")
    return r.content


def ok_json(r: Any) -> Any:
    """The JSON of a successful answer (an httpx2 response or the lean client's `Reply`)."""
    if r.status_code >= 400:
        raise RuntimeError(f"HTTP {r.status_code}: {r.text[:300]}")
    return r.json()
