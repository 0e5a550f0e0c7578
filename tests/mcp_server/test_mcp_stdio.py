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
from workspace_sim.record import read_record_file
from support import need

NODE_DIR = Path(__file__).resolve().parents[1] / "node"


def desktop_command(record_dir: Path, *extra: str) -> tuple[str, list[str]]:
    out = CliRunner().invoke(app, ["claude-config", "--python", "mcp_server.demo:environment",
                                   "--record-dir", str(record_dir)])
    assert out.exit_code == 0, out.output
    entry = json.loads(out.output)["mcpServers"]["workspace"]
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
        (["--python", "mcp_server.demo:environment", "--http", "--port", "0", "COWORKENV_MCP_FAST_PATH=maybe"],
         "COWORKENV_MCP_FAST_PATH must be 1 or 0"),
    ]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "400"}
    for extra, message in cases:
        variables = dict(a.split("=", 1) for a in extra if "=" in a)  # NAME=value entries set the environment
        extra = [a for a in extra if "=" not in a]
        proc = subprocess.run([sys.executable, "-m", "coworkenv", "serve", *extra, "--record-dir", str(tmp_path)],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                              env={**env, **variables})
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


BAD_LINES = [  # (line, expected id, code, words in the message); each must be answered, in order
    (b"{bad json", None, -32700, "not valid JSON"),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', None, -32600, "batches are not supported"),
    (b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":"x"}', 2, -32602, "must be an object"),
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{"p":"\\ud800"}}}', 3, -32600,
     "lone UTF-16 surrogate"),
    (b'{"jsonrpc":"2.0","id":4,"method":"x","params":{"a":' + b"[" * 2000 + b"]" * 2000 + b"}}", None, -32700,
     "nested deeper"),
    (b'{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":' + b"[" * 80 + b"]" * 80 + b"}}", 5, -32600,
     "nested deeper than 64"),
    (b'{"jsonrpc":"1.0","id":6,"method":"ping"}', 6, -32600, "jsonrpc must be"),
    (b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}', 7, -32602, "before initialize"),
    (b"\xff\xfe", None, -32700, "not UTF-8"),
]


def test_stdio_answers_every_bad_line_and_keeps_serving(tmp_path: Path) -> None:
    command, args = desktop_command(tmp_path, "--episode-id", "bad-lines")
    proc = subprocess.Popen([command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    init = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    after = [json.dumps(init).encode(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
             b'{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}',  # a bad notification: logged only
             b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":5}}',
             b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_directory","arguments":{"path":"/"}}}']
    proc.stdin.write(b"".join(line + b"\n" for line, *_ in BAD_LINES) + b"".join(line + b"\n" for line in after))
    proc.stdin.flush()
    replies = [json.loads(proc.stdout.readline()) for _ in range(len(BAD_LINES) + 3)]
    proc.stdin.close()
    assert proc.wait(30) == 0
    stderr = proc.stderr.read().decode()
    for (line, rid, code, words), reply in zip(BAD_LINES, replies):
        assert reply["id"] == rid and reply["error"]["code"] == code, (line[:60], reply)
        assert words in reply["error"]["message"], (line[:60], reply)
        assert reply["error"]["message"] in stderr  # logged too
    init_reply, bad_params, listing = replies[len(BAD_LINES):]
    assert init_reply["id"] == "init" and "result" in init_reply
    assert bad_params["id"] == 8 and bad_params["error"]["code"] == -32602
    assert "params.name" in bad_params["error"]["message"]
    assert listing["id"] == 9 and listing["result"]["isError"] is False
    assert "notifications/initialized' must be an object" in stderr


def test_stdio_refuses_an_episode_id_that_already_has_a_record(tmp_path: Path) -> None:
    (tmp_path / "taken.jsonl").write_text("")
    command, args = desktop_command(tmp_path, "--episode-id", "taken")
    proc = subprocess.run([command, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "400"})
    assert proc.returncode == 2 and "already has a record" in proc.stderr and "Traceback" not in proc.stderr



def test_stdio_refuses_a_malformed_episode_id_before_any_answer(tmp_path: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    command, args = desktop_command(tmp_path, "--episode-id", "bad id!")
    proc = subprocess.run([command, *args], capture_output=True, text=True, timeout=60, input=json.dumps(init) + "\n",
                          env={**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "400"})
    assert proc.returncode == 2 and proc.stdout == "" and "bad id!" in proc.stderr and "Traceback" not in proc.stderr


SPEC = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-archive-invoices.yaml"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "printf", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}
HANDSHAKE_THEN_CALL = [  # what `printf '...\n...\n...\n' | coworkenv serve SPEC` sends: stdin ends right after the call
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "printf", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "write_file", "arguments": {"path": "/notes.txt", "content": "piped\n"}}},
]
SESSIONLESS_CALLS = [  # the 2026-07-28 revision: no handshake, two calls, then stdin ends
    {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {
        "name": "write_file", "arguments": {"path": "/a.txt", "content": "a"}, "_meta": ENVELOPE}},
    {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {
        "name": "list_directory", "arguments": {"path": "/"}, "_meta": ENVELOPE}},
]


def _pipe(lines: list[dict[str, Any]], record_dir: Path, episode_id: str) -> list[dict[str, Any]]:
    """Send `lines` to the real console script on a pipe that closes at once; the answers it printed."""
    script = Path(sys.executable).parent / "coworkenv"
    proc = subprocess.run([str(script), "serve", str(SPEC), "--record-dir", str(record_dir), "--episode-id",
                           episode_id], input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                          capture_output=True, timeout=60, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr.decode()
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


def test_a_call_piped_with_stdin_closed_at_once_is_answered_every_time(tmp_path: Path) -> None:
    """Issue 19 item 9: the call ran and was recorded but its answer was never written (5 of 5 runs)."""
    for run in range(5):
        answers = _pipe(HANDSHAKE_THEN_CALL, tmp_path, f"pipe-{run}")
        assert [a["id"] for a in answers] == [1, 2], (run, answers)
        call = answers[1]["result"]
        assert call["isError"] is False and "/notes.txt" in call["content"][0]["text"], (run, call)
        (seg,) = read_record_file(tmp_path / f"pipe-{run}.jsonl").segments
        assert [(e["tool"], e["ok"]) for e in seg.events] == [("write_file", True)]
        assert seg.final is not None  # answered, then ended and recorded


def test_sessionless_calls_piped_with_stdin_closed_are_all_answered(tmp_path: Path) -> None:
    answers = _pipe(SESSIONLESS_CALLS, tmp_path, "pipe-modern")
    assert sorted(a["id"] for a in answers) == ["a", "b"], answers
    listing = next(a for a in answers if a["id"] == "b")["result"]
    assert listing["isError"] is False and "a.txt" in listing["content"][0]["text"]
    (seg,) = read_record_file(tmp_path / "pipe-modern.jsonl").segments
    assert [e["tool"] for e in seg.events] == ["write_file", "list_directory"]
