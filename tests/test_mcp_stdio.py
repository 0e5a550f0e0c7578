"""stdio: `coworkenv serve` as a subprocess, started exactly as `claude-config` tells Claude Desktop to."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from coworkenv.cli import app
from mcp_server.recording import read_record_file
from support import need

NODE_DIR = Path(__file__).parent / "node"


def desktop_command(record_dir: Path, *extra: str) -> tuple[str, list[str]]:
    out = CliRunner().invoke(app, ["claude-config", "--python", "mcp_server.demo:environment",
                                   "--record-dir", str(record_dir)])
    assert out.exit_code == 0, out.output
    entry = json.loads(out.output)["mcpServers"]["coworkenv-demo-q1-total"]
    return entry["command"], [*entry["args"], *extra]


def test_stdio_episode_is_served_recorded_and_scored(tmp_path: Path) -> None:
    command, args = desktop_command(tmp_path, "--episode-id", "stdio-1", "--log-level", "DEBUG")
    params = StdioServerParameters(command=command, args=args, env={**os.environ, "PYTHONWARNINGS": "ignore"})

    async def go() -> dict[str, Any]:
        async with Client(params) as c:  # DEBUG logging must not corrupt the protocol on stdout
            tools = [t.name for t in (await c.list_tools()).tools]
            csv = await c.call_tool("read_text_file", {"path": "/reports/q1.csv"})
            total = sum(int(line.split(",")[1]) for line in csv.content[0].text.splitlines()[1:])
            wrote = await c.call_tool("write_file", {"path": "/reports/summary.md", "content": f"Total: {total}\n"})
            bad = await c.call_tool("write_file", {"path": "/no/such/dir/x.md", "content": "x"})
            return {"tools": tools, "wrote": wrote, "bad": bad}

    r = anyio.run(go)
    assert "write_file" in r["tools"] and not r["wrote"].is_error
    assert r["bad"].is_error and "create it first with create_directory" in r["bad"].content[0].text
    (seg,) = read_record_file(tmp_path / "stdio-1.jsonl").segments  # the client hung up: the episode ended
    assert seg.settings["transport"] == "stdio"
    assert [e["ok"] for e in seg.events] == [True, True, False]
    assert seg.final is not None and seg.final["evaluation"]["passed"] is True


def test_serve_rejects_bad_input_without_a_traceback(tmp_path: Path) -> None:
    cases = [  # (more bad environments are covered in-process by the claude-config test, same option handling)
        (["--python", "mcp_server.demo:no_such_factory"], "has no function"),
        (["--python", "mcp_server.demo:environment", "--episode-id", "bad id!"], "episode id"),
        (["--python", "mcp_server.demo:environment", "--http", "--admin-token", "short"], "at least 16"),
    ]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "400"}
    for extra, message in cases:
        proc = subprocess.run([sys.executable, "-m", "coworkenv", "serve", *extra, "--record-dir", str(tmp_path)],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=env)
        assert proc.returncode == 2, (extra, proc.stderr)
        assert message in proc.stderr and "Traceback" not in proc.stderr, (extra, proc.stderr)
        assert proc.stdout == "", extra


def test_the_official_typescript_sdk_drives_an_episode(tmp_path: Path) -> None:
    """A real client written by others: @modelcontextprotocol/sdk over stdio (installed by .ci/setup_node.sh)."""
    node = shutil.which("node")
    need(node is not None, "node is not installed (run .ci/setup_node.sh)")
    need((NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(),
         "the MCP TypeScript SDK is not installed in tests/node (run .ci/setup_node.sh)")
    command, args = desktop_command(tmp_path, "--episode-id", "node-1")
    proc = subprocess.run([str(node), str(NODE_DIR / "client.mjs"), command, *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    names = [t["name"] for t in out["tools"]]
    assert "read_text_file" in names and "read_result_page" in names
    move = next(t for t in out["tools"] if t["name"] == "move_file")
    assert move["annotations"] == {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                                   "openWorldHint": False}
    assert "Total: <number>" in out["task"] and out["task"] in out["prompt"]
    assert not out["listing"]["isError"] and "q1.csv" in out["listing"]["text"]
    assert out["total"] == 1234 and out["write"]["structured"]["created"] is True
    assert out["missing"]["isError"] and out["missing"]["text"].startswith("Error (not_found): file /reports/q9.csv")
    (seg,) = read_record_file(tmp_path / "node-1.jsonl").segments
    assert [e["tool"] for e in seg.events] == ["list_directory", "read_text_file", "write_file", "read_text_file"]
    assert seg.final is not None and seg.final["evaluation"]["passed"] is True


def test_sigterm_ends_and_records_the_stdio_episode(tmp_path: Path) -> None:
    """Claude Desktop stops servers with a signal: the episode must still be judged and closed."""
    import signal

    command, args = desktop_command(tmp_path, "--episode-id", "sig-1")
    proc = subprocess.Popen([command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.stdin is not None and proc.stdout is not None
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    proc.stdin.write(json.dumps(init) + "\n")
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())  # the server loop (and its signal handling) is running
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "coworkenv"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    (seg,) = read_record_file(tmp_path / "sig-1.jsonl").segments
    assert seg.final is not None and seg.final["stop_reason"] == "user_ended"
