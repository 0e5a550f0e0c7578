"""MCP figures: in-process tool calls against the SDK's own ceiling, stdio calls (HTTP figures: bench_http).

Baseline for in-process calls: a trivial `MCPServer` tool (echo a string) through the same
`mcp.Client`, which is the most the SDK can do per call; ours should reach 70% of it. The stdio
figure runs a real `coworkenv serve` process and has no baseline.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from typing import Any, Awaitable, Callable

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from mcp_server import Episode, build_server
from mcp_server.demo import environment

ARGS = {"path": "/reports/q1.csv"}


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


def run(quick: bool) -> list[dict[str, Any]]:
    """The MCP figures."""
    n, repeat = (100, 3) if quick else (1000, 5)
    ours, ceiling = inprocess(n, repeat)
    with tempfile.TemporaryDirectory() as tmp:
        stdio_rate = stdio(n, tmp)
    return [
        {"key": "mcp_calls_per_s", "value": ours, "unit": "calls/s", "baseline_key": "baseline_mcp_calls_per_s",
         "baseline": ceiling, "note": f"in-process Client; ours is {ours / ceiling:.0%} of the SDK ceiling (goal 70%)"},
        {"key": "stdio_calls_per_s", "value": stdio_rate, "unit": "calls/s", "baseline_key": None, "baseline": None,
         "note": "coworkenv serve subprocess, SDK stdio client, every call recorded"},
    ]
