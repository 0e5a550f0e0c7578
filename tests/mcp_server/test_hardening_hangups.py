"""Issue 37 finding 10 (b): a client that hangs up mid-body writes one log line at most, never a traceback.

Each POST whose client went away before its body ended reached the SDK, whose `request.body()` raised
ClientDisconnect and logged a traceback (300 hang-ups: 7.5k lines, then "Task group is not initialized" once the
episode had ended). Now the hub reads every body first and, on a hang-up, logs one info line and hands nothing on;
after the episode has ended a hang-up writes nothing. Through a real `coworkenv serve --http` at info level.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx
from support import start_http_server

TOKEN = "hangup-admin-token-0123456789"
MODERN = "mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: read_text_file\r\n"


def hang_up(base: str, episode: str, pad: int, modern: bool) -> None:
    """Send the headers and part of a body (`pad` bytes of a path), promise 1,000 bytes more, and hang up."""
    u = urlparse(base)
    body = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_text_file","arguments":'
            b'{"path":"/' + b"a" * pad)
    head = (f"POST /episodes/{episode}/mcp HTTP/1.1\r\nHost: {u.netloc}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\n{MODERN if modern else ''}"
            f"Content-Length: {len(body) + 1000}\r\n\r\n").encode()
    with socket.create_connection((u.hostname, u.port)) as s:
        s.sendall(head + body)
        time.sleep(0.03)  # the server has the partial body


def test_hang_ups_write_one_line_each_and_nothing_after_the_episode_ended(tmp_path: Path) -> None:
    server = start_http_server(tmp_path, TOKEN, extra=("--log-level", "info"))
    assert server.proc.stderr is not None
    lines: list[str] = []  # read as written: a full pipe would stall the server, not fail the test
    reader = threading.Thread(target=lambda: lines.extend(line.rstrip("\n") for line in server.proc.stderr))
    reader.start()
    try:
        assert server.admin("POST", "/admin/episodes", json={"episode_id": "e1"}).status_code == 201
        before = [threading.Thread(target=hang_up, args=(server.base, "e1", 111, i % 2 == 0)) for i in range(40)]
        for t in before:  # concurrent, as a flood would be, over the fast path and the SDK path alike
            t.start()
        for t in before:
            t.join()
        ok = httpx.post(f"{server.base}/episodes/e1/mcp", timeout=30, headers={
            "content-type": "application/json", "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "read_text_file"},
            json={"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "read_text_file", "arguments": {"path": "/reports/q1.csv"}, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {}}}})
        assert ok.status_code == 200 and ok.json()["id"] == 7 and "result" in ok.json(), ok.text  # still serving
        assert server.admin("POST", "/admin/episodes/e1/end", json={"final_answer": "x"}).status_code == 200
        for i in range(30):  # the episode has ended: 410 to anyone still listening, and no log line
            hang_up(server.base, "e1", 222, i % 2 == 0)
        time.sleep(0.3)
    finally:
        server.stop()
        reader.join(30)
    hung = [line for line in lines if "hung up" in line]
    assert len(hung) == 40, "\n".join(lines[-40:])  # 40 before the end, none of the 30 after it
    for line in hung:
        assert re.search(r" INFO coworkenv\.mcp\.fastpath: client hung up after \d+ bytes of a POST to 'episode e1'; "
                         "nothing answered$", line), line
    text = "\n".join(lines)
    for bad in ("Traceback", "ClientDisconnect", "Task group", "ERROR"):
        assert bad not in text, text[-3000:]
    assert len(lines) < 80, "\n".join(lines)  # one line per hang-up, a few of serving, nothing per hang-up after
