"""Admission under load: p99 of a cheap call while 50 episodes run 10-second slow calls, next to none.

An in-process `EpisodeHub` behind uvicorn (a real socket) serves 51 demo episodes. The slow call is a
sleep-based stand-in for a sandbox (bubblewrap is not needed): `read_text_file` of `/slow` sleeps
`SLOW_S` seconds on its worker thread and `read_text_file` is counted a slow tool, so it goes through
`mcp_server.admission` exactly as `run_python` does. Each of 50 episodes keeps asking for its slow
call, retrying after a `busy` answer, while a victim episode makes `CHEAP` cheap `list_directory`
calls; `admission_p99_ms` is their 99th percentile (`admission_max_ms` the slowest), `baseline_p99_ms` the same calls with no slow
episode, in the same run. `python -m benchmarks.bench_admission` prints JSON.
"""

from __future__ import annotations

import json
import socket
import statistics
import threading
import time
from typing import Any

import anyio
import httpx
import uvicorn

from mcp_server import admission
from mcp_server.demo import environment
from mcp_server.episode import Episode
from mcp_server.http import build_app
from mcp_server.hub import EpisodeHub

TOKEN = "bench-admission-token-0123456789"
SLOW_S, SLOW_EPISODES, CHEAP = 10.0, 50, 100
VERSION = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientInfo":
            {"name": "bench", "version": "0"}, "io.modelcontextprotocol/clientCapabilities": {}}


def _request(rid: int, name: str, arguments: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": ENVELOPE}}
    return json.dumps(body).encode(), {"content-type": "application/json", "mcp-protocol-version": VERSION,
                                       "accept": "application/json, text/event-stream", "mcp-method": "tools/call",
                                       "mcp-name": name}


def _p99(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=100)[98] if len(xs) >= 2 else xs[0]


def measure(slow_s: float = SLOW_S, slow_episodes: int = SLOW_EPISODES, cheap: int = CHEAP,
            admitted: bool = True) -> dict[str, Any]:
    """Run the benchmark and return its figures (milliseconds; counts of slow calls run and refused busy);
    `admitted=False` runs the slow calls on the shared pool as before admission existed, for reference."""
    real_call = Episode.call

    def call(self: Episode, name: str, arguments: Any) -> Any:
        if isinstance(arguments, dict) and arguments.get("path") == "/slow":
            time.sleep(slow_s)
        return real_call(self, name, arguments)

    Episode.call = call  # type: ignore[method-assign]
    saved = admission._SHARED
    admission._SHARED = admission.Admission(admission.max_slow_from_env(),
                                             frozenset({"read_text_file"}) if admitted else frozenset())
    hub = EpisodeHub(environment(), None, None)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(build_app(hub, TOKEN), log_level="error", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        return anyio.run(_drive, base, slow_s, slow_episodes, cheap)
    finally:
        server.should_exit = True
        thread.join(30)
        Episode.call = real_call  # type: ignore[method-assign]
        admission._SHARED = saved


async def _drive(base: str, slow_s: float, slow_episodes: int, cheap: int) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    limits = httpx.Limits(max_connections=slow_episodes + 10)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as c:
        eids = []
        for _ in range(slow_episodes + 1):
            r = await c.post("/admin/episodes", json={}, headers=auth)
            eids.append(r.json()["episode_id"])
        victim, slow_ids = eids[0], eids[1:]

        async def cheap_calls() -> list[float]:
            out = []
            for i in range(cheap):
                body, hdrs = _request(i, "list_directory", {"path": "/reports"})
                t = time.perf_counter()
                r = await c.post(f"/episodes/{victim}/mcp", content=body, headers=hdrs)
                out.append((time.perf_counter() - t) * 1000)
                assert r.status_code == 200
                await anyio.sleep(0.01)
            return out

        baseline = await cheap_calls()
        counts = {"ran": 0, "busy": 0}
        stop = time.monotonic() + slow_s

        async def slow(eid: str) -> None:
            while time.monotonic() < stop:
                body, hdrs = _request(1, "read_text_file", {"path": "/slow"})
                r = await c.post(f"/episodes/{eid}/mcp", content=body, headers=hdrs)
                if "Error (busy)" in r.text:
                    counts["busy"] += 1
                    await anyio.sleep(0.5)  # what a client told "retry" does
                else:
                    counts["ran"] += 1

        loaded: list[float] = []
        async with anyio.create_task_group() as tg:
            for eid in slow_ids:
                tg.start_soon(slow, eid)
            await anyio.sleep(0.5)  # every slow episode has asked once
            loaded = await cheap_calls()
    return {"baseline_p99_ms": round(_p99(baseline), 2), "admission_p99_ms": round(_p99(loaded), 2),
            "ratio": round(_p99(loaded) / _p99(baseline), 2), "baseline_max_ms": round(max(baseline), 2),
            "admission_max_ms": round(max(loaded), 2), "slow_calls_ran": counts["ran"],
            "slow_calls_busy": counts["busy"], "max_slow": admission.max_slow_from_env(),
            "slow_episodes": slow_episodes, "slow_s": slow_s}


if __name__ == "__main__":
    import sys

    print(json.dumps(measure(admitted="--shared-pool" not in sys.argv[1:]), indent=1))
