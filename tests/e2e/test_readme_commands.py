"""Every command in README.md runs as written, in order, from an empty folder (as a newcomer would).

The README's `bash` blocks are read, continuation lines joined and comments dropped; each
`coworkenv` line runs through the real console script, in a fresh folder holding only a copy of
`examples/`. What a person does between the lines is done here too: the Claude Desktop step is
played by a real MCP client that starts the server exactly as the printed configuration says, and
`ep-XXXX` becomes that episode's record. Each line runs in bash after the README's own activation
line, with this interpreter's folder taken off PATH and `.venv` linked to this virtual environment,
so a README that forgets to activate its venv fails here as it would for a newcomer. Three things are changed, each named here so that a README
edit that drops them fails this test instead of passing silently: the model endpoint line points
at a local scripted OpenAI-compatible server, `bench` gets its documented quick flags, and the
multi-minute `demo` line is left to `tests/trainers/test_demo.py`, which runs the demo end to end.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from scripted_openai import Message, ScriptedOpenAI
from readme_lines import ACTIVATE, ROOT, SETUP, readme_commands, run_in_shell, shell_env

QUICK = {"bench": ["--quick", "--only", "core"]}


def test_the_readme_python_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "README lost its Python example"
    for code in blocks:
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert run.returncode == 0, run.stderr[-3000:]
        assert run.stdout.strip().splitlines()[-1] == "True", run.stdout  # the example's predicate verdict


def test_ci_runs_the_readme_test_command_as_written() -> None:
    (test_line,) = [c for c in readme_commands() if c.startswith(SETUP) and "pytest" in c]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == test_line, "README's test command and the one .ci/run runs differ"


def later_commands() -> list[str]:
    """The README's commands after the set-up and the activation line (which must come before them)."""
    cmds = readme_commands()
    assert ACTIVATE in cmds, "README lost its activation line: later bare `coworkenv` lines would not be found"
    first = next(i for i, c in enumerate(cmds) if c.startswith("coworkenv "))
    assert cmds.index(ACTIVATE) < first, "README activates its venv only after the first `coworkenv` line"
    return [c for c in cmds if not c.startswith(SETUP) and c != ACTIVATE]


def test_the_readme_lists_the_path_from_requirements_to_training_data() -> None:
    cmds = later_commands()
    verbs = [shlex.split(c)[1] for c in cmds]
    assert all(c.startswith("coworkenv ") for c in cmds), cmds
    for needed in ("synth", "validate", "run", "report", "replay", "export", "train", "bench"):
        assert needed in verbs, f"README lost its `coworkenv {needed}` line"
    assert verbs.index("train") > verbs.index("export")  # data before the model that learns from it


def play_claude_desktop(config: str) -> None:
    """What a person does in Claude Desktop: start the server as configured, use a tool, quit."""
    (entry,) = json.loads(config)["mcpServers"].values()
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env={**os.environ, **entry["env"]})

    async def session() -> None:
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "list_directory" in tools
            assert not (await client.call_tool("list_directory", {"path": "/"})).is_error

    anyio.run(session)


@pytest.mark.slow
def test_every_readme_command_runs_in_order(tmp_path: Path) -> None:
    setup = [c for c in readme_commands() if c.startswith(SETUP)]
    assert any(c.endswith("coworkenv demo") for c in setup), "README lost its demo line"  # test_demo.py runs it
    cmds = later_commands()
    endpoint_lines = [c for c in cmds if "--base-url http://localhost:8000/v1" in c]
    assert endpoint_lines, "README's model-endpoint line changed; update this test"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    venv = Path(sys.prefix)
    (tmp_path / ".venv").symlink_to(venv, target_is_directory=True)
    env = {**shell_env(venv), "OPENAI_API_KEY": "readme-test"}
    assert subprocess.run(["bash", "-c", "command -v coworkenv"], env=env, capture_output=True).returncode != 0, \
        "coworkenv is on PATH without activation; this test could not tell a missing activation line"
    with ScriptedOpenAI(default=Message("I looked, but I cannot finish this task."), models=("M",)) as server:
        for line in cmds:
            if "ep-XXXX" in line:
                (record,) = (tmp_path / "runs" / "episodes").glob("*.jsonl")
                line = line.replace("ep-XXXX.jsonl", record.name)
            args = shlex.split(line.replace("http://localhost:8000/v1", server.base_url))[1:]
            args += QUICK.get(args[0], [])
            # train sft trains on every example (5k-13k tokens each): 72 s on a quiet 2-core machine, several
            # times that at a load average of 15
            run = run_in_shell(["coworkenv", *args], tmp_path, env, 1800 if args[0] == "train" else 600)
            assert run.returncode == 0, f"`{line}` failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
            assert "Traceback" not in run.stderr, f"`{line}` printed a traceback:\n{run.stderr[-3000:]}"
            if args[0] == "claude-config":
                play_claude_desktop(run.stdout)
            if args[:2] == ["train", "sft"]:  # the README's own data trains (it once used 7 of 43 examples)
                used = re.search(r"on (\d+) of (\d+) examples", run.stdout)
                assert used and int(used[1]) >= 0.95 * int(used[2]), f"`{line}`: {run.stdout}{run.stderr[-1000:]}"
    for made in ("envs", "runs/teacher.jsonl", "runs/student.jsonl", "report/index.html", "data/sft/train.jsonl",
                 "data/rl.jsonl", "tiny-model", "sft-model", "runs/episodes"):
        assert (tmp_path / made).exists(), f"the README's commands did not make {made}"
