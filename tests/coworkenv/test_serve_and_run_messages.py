"""What `serve` and `run` say while they start or fail: a busy port suggests `--port 0`; `run --ray` says what it
is starting or joining before Ray's slow start (issue 38 item 11)."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

from support import need
from typer.testing import CliRunner

from coworkenv.cli import app

ROOT = Path(__file__).resolve().parents[2]


def test_serve_http_on_a_busy_port_suggests_port_0(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment",
                               "--http", "--port", str(port), "--record-dir", str(tmp_path)],
                              capture_output=True, text=True, timeout=60, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use; pass --port 0 for a free port" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_ray_says_what_it_is_joining(tmp_path: Path) -> None:
    need(importlib.util.find_spec("ray") is not None, "Ray is not installed (pip install 'coworkenv[ray]')")
    spec = ROOT / "examples" / "specs" / "handwritten-archive-invoices.yaml"
    res = CliRunner().invoke(app, ["run", str(spec), "--ray", "127.0.0.1:9", "--out", str(tmp_path / "r.jsonl")],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 2, res.output
    assert "ray: joining the Ray cluster at 127.0.0.1:9" in res.stderr
    assert "cannot start or join Ray at '127.0.0.1:9'" in res.stderr
