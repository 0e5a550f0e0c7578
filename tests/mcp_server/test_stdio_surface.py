"""What a stdio server offers, as docs/mcp.md says: the environment's tools, the task resource and the start
prompt, and nothing that resets, snapshots or restores the workspace (those are the HTTP admin API's)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from mcp_server.demo import environment

ROOT = Path(__file__).resolve().parents[2]


def test_stdio_offers_the_tools_task_and_prompt_and_no_reset_or_snapshot(tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment", "--record-dir", str(tmp_path)],
        env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))

    async def go() -> tuple[list[str], list[str], list[str]]:
        async with Client(params) as c:
            tools = [t.name for t in (await c.list_tools()).tools]
            resources = [str(r.uri) for r in (await c.list_resources()).resources]
            prompts = [p.name for p in (await c.list_prompts()).prompts]
            return tools, resources, prompts

    tools, resources, prompts = anyio.run(go)
    assert tools == [*environment().build_workspace().tools, "read_result_page"]
    names = " ".join([*tools, *resources, *prompts]).lower()
    assert not any(word in names for word in ("reset", "snapshot", "restore", "checkpoint")), names
    assert "workspace://task" in resources and prompts == ["start_task"]
