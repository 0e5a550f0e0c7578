"""`coworkenv serve` read without typer (`coworkenv.commands.serve_lean`) gives `serve_command` exactly what typer
gives it, and leaves every line it does not read to typer, whose messages and exit statuses stay as they were."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.cli import LEAN_SERVE_ENV, build_app
from coworkenv.commands import serve, serve_lean

ROOT = Path(__file__).resolve().parents[2]


def typer_reads(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any] | None:
    """The arguments typer passes to serve_command for `serve ARGV`, or None when typer refuses the line."""
    got: list[dict[str, Any]] = []
    monkeypatch.setattr(serve, "serve_command", lambda **kw: got.append(kw))
    try:
        build_app(["serve"])(args=["serve", *argv], standalone_mode=False)
    except Exception:
        return None
    return got[0] if got else None


VALUES = st.sampled_from(["x", "demo.json", "mcp_server.demo:environment", "0", "8765", "12", "257", "-1", "+3",
                          "", "a b", "runs/x", "--http", "=", "1x", "0x10", "٣", "WARNING"])
WORDS = st.one_of(st.sampled_from(sorted(serve_lean.OPTIONS) + ["--help", "--nope", "-x", "--", "-", "--port=9",
                                                                "--host=", "--workers=3", "-w=2", "--http=1"]),
                  VALUES)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=8), st.sampled_from([None, "", "1", "0", "true", "yes"]),
       st.sampled_from([None, "", "tok-0123456789abcdef"]))
def test_the_lean_reading_is_typers_wherever_it_reads_a_line(argv: list[str], strict: str | None,
                                                           token: str | None) -> None:
    with pytest.MonkeyPatch.context() as mp:
        for var, value in (("COWORKENV_STRICT_SCHEMAS", strict), ("COWORKENV_ADMIN_TOKEN", token)):
            if value is None:
                mp.delenv(var, raising=False)
            else:
                mp.setenv(var, value)
        lean = serve_lean.parse(argv)
        if lean is not None:
            assert typer_reads(argv, mp) == lean, argv


@pytest.mark.parametrize("argv", [
    ["--python", "m:f", "--http", "--port", "0", "--record-dir", "/tmp/r"],
    ["spec.json", "-w", "4", "--spec-root", "a", "--spec-root=b", "--mcp-only", "--reveal-score"],
    ["--python", "m:f", "--log-level", "INFO", "--log-file", "l.txt", "--episode-id", "e1", "--strict-schemas"],
    ["--python=m:f", "--host", "0.0.0.0", "--admin-token", "t" * 20, "--user", "llm", "--user-model", "gpt"],
])
def test_ordinary_lines_are_read_and_match_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COWORKENV_STRICT_SCHEMAS", raising=False)
    monkeypatch.delenv("COWORKENV_ADMIN_TOKEN", raising=False)
    lean = serve_lean.parse(argv)
    assert lean is not None
    assert typer_reads(argv, monkeypatch) == lean


@pytest.mark.parametrize("argv", [["--help"], ["--port", "x"], ["--workers", "0"], ["--nope"], ["a", "b"],
                                  ["--http", "--http"], ["--port"], ["--port", "1", "--port", "2"]])
def test_unusual_lines_are_left_to_typer(argv: list[str]) -> None:
    assert serve_lean.parse(argv) is None


@pytest.mark.parametrize("argv", [
    ["--port", "99999", "--python", "x:y"],  # a usage error from serve's own checks
    ["--python", "no_such_module_xyz:f", "--record-dir", "{tmp}"],  # an environment that does not load
    ["--workers", "2", "--python", "x:y"],
    ["--port", "nine"],  # typer's own refusal
])
def test_errors_read_the_same_with_or_without_typer(argv: list[str], tmp_path: Path) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]

    def run(lean: str) -> tuple[int, str, str]:
        env = {**os.environ, "PYTHONWARNINGS": "ignore", LEAN_SERVE_ENV: lean, "COLUMNS": "100"}
        proc = subprocess.run([sys.executable, "-m", "coworkenv", "serve", *argv], capture_output=True, text=True,
                              env=env, timeout=120, cwd=ROOT, stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout, proc.stderr

    lean, typer = run("1"), run("0")
    assert lean == typer
    assert lean[0] == 2 and ("error" in lean[2].lower())
