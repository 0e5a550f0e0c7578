"""MCP figures: in-process tool calls against the SDK's own ceiling, stdio calls, HTTP episode lifetime.

Baseline for in-process calls: a trivial `MCPServer` tool (echo a string) through the same
`mcp.Client`, which is the most the SDK can do per call; ours should reach 70% of it. The stdio
and HTTP figures run a real `coworkenv serve` process and have no baseline.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Awaitable, Callable

import anyio
import httpx
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from mcp_server import Episode, build_server
from mcp_server.demo import environment

ARGS = {"path": "/reports/q1.csv"}
TOKEN = "bench-admin-token-0123456789"


async def _rate(client: Client, name: str, args: dict[str, Any], n: int) -> float:
    for _ in range(min(20, n)):  # warm up
        await client.call_tool(name, args)
    t0 = time.perf_counter()
    for _ in range(n):
        await client.call_tool(name, args)
    return n / (time.perf_counter() - t0)


def _best(measure: Callable[[], Awaitable[float]], repeat: int) -> float:
    return statistics.median(anyio.run(measure) for _ in range(repeat))


def inprocess(n: int, repeat: int) -> tuple[float, float]:
    """Calls per second: ours (read a file through the episode) and the SDK ceiling (a trivial tool)."""
    trivial = MCPServer("ceiling", log_level="WARNING")

    @trivial.tool()
    def read_text_file(path: str) -> str:
        """Echo the path."""
        return path

    async def ours() -> float:
        async with Client(build_server(Episode(environment()))) as c:
            return await _rate(c, "read_text_file", ARGS, n)

    async def ceiling() -> float:
        async with Client(trivial) as c:
            return await _rate(c, "read_text_file", ARGS, n)

    samples_ours, samples_base = [], []
    for _ in range(repeat):  # interleaved, so drift in machine load hits both alike
        samples_base.append(anyio.run(ceiling))
        samples_ours.append(anyio.run(ours))
    return statistics.median(samples_ours), statistics.median(samples_base)


def stdio(n: int, record_dir: str) -> float:
    """Calls per second over stdio to a `coworkenv serve` subprocess."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment",
                                      "--record-dir", record_dir],
        env={**os.environ, "PYTHONWARNINGS": "ignore"})

    async def go() -> float:
        async with Client(params) as c:
            return await _rate(c, "read_text_file", ARGS, n)

    return anyio.run(go)


def http_episode_ms(n: int, record_dir: str) -> float:
    """Median milliseconds to create an HTTP episode, make one call in it, and end it (evaluated, recorded)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment", "--http",
         "--port", "0", "--record-dir", record_dir],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        env={**os.environ, "COWORKENV_ADMIN_TOKEN": TOKEN, "PYTHONWARNINGS": "ignore"})
    try:
        assert proc.stderr is not None
        base = None
        for line in proc.stderr:
            m = re.search(r"listening on (http://\S+?) ", line)
            if m:
                base = m.group(1)
                break
        if base is None:
            raise RuntimeError("the HTTP server did not start")
        auth = {"Authorization": f"Bearer {TOKEN}"}

        async def go() -> list[float]:
            async with httpx.AsyncClient(base_url=base, headers=auth, timeout=30) as hc:
                for _ in range(100):
                    try:
                        await hc.get("/admin/episodes")
                        break
                    except httpx.TransportError:
                        await anyio.sleep(0.1)
                times = []
                for _ in range(n):
                    t0 = time.perf_counter()
                    created = (await hc.post("/admin/episodes", json={})).json()
                    async with Client(base + created["mcp_path"]) as c:
                        await c.call_tool("read_text_file", ARGS)
                    r = await hc.delete(f"/admin/episodes/{created['episode_id']}")
                    r.raise_for_status()
                    times.append((time.perf_counter() - t0) * 1000)
                return times

        return statistics.median(anyio.run(go))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def run(quick: bool) -> list[dict[str, Any]]:
    """The MCP figures."""
    n, repeat, episodes = (100, 3, 5) if quick else (1000, 5, 30)
    ours, ceiling = inprocess(n, repeat)
    with tempfile.TemporaryDirectory() as tmp:
        stdio_rate = stdio(n, tmp)
        episode_ms = http_episode_ms(episodes, tmp)
    return [
        {"key": "mcp_calls_per_s", "value": ours, "unit": "calls/s", "baseline_key": "baseline_mcp_calls_per_s",
         "baseline": ceiling, "note": f"in-process Client; ours is {ours / ceiling:.0%} of the SDK ceiling (goal 70%)"},
        {"key": "stdio_calls_per_s", "value": stdio_rate, "unit": "calls/s", "baseline_key": None, "baseline": None,
         "note": "coworkenv serve subprocess, SDK stdio client, every call recorded"},
        {"key": "http_episode_ms", "value": episode_ms, "unit": "ms", "baseline_key": None, "baseline": None,
         "note": "create + connect + one call + end (evaluated, record closed), median"},
    ]
