"""Helpers for tests: small workspaces and the skip-or-fail rule for optional engines."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from workspace_sim.predicates import evaluate, parse_predicates


def need(condition: bool, reason: str) -> None:
    """Skip when `condition` is false, saying why; under COWORKENV_NO_SKIP=1 (CI) fail instead.

    It works in a test and at a module's top level alike (there it skips or fails the whole file).
    """
    if condition:
        return
    if os.environ.get("COWORKENV_NO_SKIP") == "1":
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason, allow_module_level=True)


class HttpServer:
    """A real `coworkenv serve --http` subprocess on a free port of 127.0.0.1, with its admin token."""

    def __init__(self, proc: "subprocess.Popen[str]", base: str, record_dir: Path, token: str) -> None:
        self.proc, self.base, self.record_dir, self.token = proc, base, record_dir, token

    def admin(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """An admin API request with the bearer token (extra headers may be given)."""
        headers = {"Authorization": f"Bearer {self.token}", **kw.pop("headers", {})}
        return httpx.request(method, self.base + path, headers=headers, timeout=30, **kw)

    def stop(self) -> None:
        """Interrupt the server (it ends its episodes) and wait; kill it if it hangs."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_http_server(record_dir: Path, token: str, cls: type[HttpServer] = HttpServer,
                      extra: tuple[str, ...] = ()) -> HttpServer:
    """Start `coworkenv serve --http` with the demo environment (and `extra` options) and wait until its admin
    API answers; the rest of its stderr stays readable on `proc.stderr`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment", "--http",
         "--port", "0", "--record-dir", str(record_dir), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "COWORKENV_ADMIN_TOKEN": token, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.stderr is not None
    base = None
    deadline = time.monotonic() + 60
    while base is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        base = m.group(1) if m else None
    assert base, "the server did not report its address"
    server = cls(proc, base, record_dir, token)
    while time.monotonic() < deadline:
        try:
            if server.admin("GET", "/admin/episodes").status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.stop()
    raise AssertionError("the server never answered")


def call_error(ws: Any, tool: str, args: dict) -> str:
    """Call a tool that must fail; check the failure left the state unchanged; return 'code: message'."""
    before = ws.content_hash
    r = ws.call(tool, args)
    assert not r.ok, r.text
    assert ws.content_hash == before, "a failed call changed state"
    return r.error.code + ": " + r.error.message


def verdict(ws: Any, pred: dict) -> bool:
    """Whether the one predicate `pred` (spec JSON) passes on the workspace `ws` as it is now."""
    return evaluate(parse_predicates([pred]), ws).results[0].passed


def http_server_fixture(token: str, cls: type[HttpServer] = HttpServer) -> Callable[..., Any]:
    """A module-scoped `server` fixture: `coworkenv serve --http` started once for the module's tests with
    `token`, its records in a fresh folder (assign it to `server` in the test module)."""

    @pytest.fixture(scope="module")
    def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
        srv = start_http_server(tmp_path_factory.mktemp("records"), token, cls)
        yield srv
        srv.stop()

    return server


def connection_fixture(token: str) -> Callable[..., Any]:
    """A `conn` fixture: a lean harness connection (`ServerConnection`) to the module's `server`, closed after
    each test (assign it to `conn` in the test module)."""

    @pytest.fixture()
    def conn(server: HttpServer) -> Iterator[Any]:
        from trainers.episodes.harness_client import ServerConnection

        c = ServerConnection(server.base, token)
        yield c
        c.close()

    return conn
