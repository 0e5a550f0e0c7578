"""The README's test command in a fresh clone, with a venv made from `.[dev]` alone (not the one running this)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from readme_lines import ROOT, SETUP, fresh_clone, readme_commands, run_in_shell, shell_env
from support import need


@pytest.mark.slow
def test_a_fresh_dev_venv_collects_the_suite_and_runs_the_readme(tmp_path: Path) -> None:
    """The README's test command in a fresh clone with a venv made from `.[dev]` alone (not this one).

    The suite is collected rather than run (collection is where a missing optional dependency broke
    it; this venv runs the tests themselves), and the first command of each later README block runs
    there after the activation line. Outside CI's variables, as a newcomer has them, so an optional
    dependency that `.[dev]` lacks must skip with its reason, not error.
    """
    need(shutil.which("git") is not None and (ROOT / ".git").exists(), "not a git checkout")
    clone = fresh_clone(tmp_path / "clone")
    (test_line,) = [c for c in readme_commands() if c.startswith(SETUP) and "pytest" in c]
    assert test_line.endswith(".venv/bin/python -m pytest -q"), test_line
    collect = test_line.removesuffix(" -q") + " --collect-only -q"
    env = {k: v for k, v in shell_env(Path(sys.prefix)).items() if not k.startswith("COWORKENV_")}
    run = subprocess.run(["bash", "-c", collect], cwd=clone, env=env, capture_output=True, text=True, timeout=1800)
    out = run.stdout + run.stderr
    assert run.returncode == 0, f"`{collect}` failed ({run.returncode}):\n{out[-4000:]}"
    assert re.search(r"^\d+ tests collected", out, flags=re.M), out[-2000:]
    assert "error" not in out.splitlines()[-1].lower(), out[-3000:]
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)
    firsts = [b.replace("\\\n", " ").splitlines()[0].split(" #")[0].strip() for b in blocks]
    # the endpoint line needs the scripted server and the episodes/eval lines a Claude Desktop episode: the
    # ordered test above runs those
    later = [c for c in firsts if c.startswith("coworkenv ") and "--base-url" not in c
             and shlex.split(c)[1] not in ("episodes", "eval")]
    assert [shlex.split(c)[1] for c in later] == ["synth", "claude-config"], firsts
    for line in later:
        run = run_in_shell(shlex.split(line), clone, env, 600)
        assert run.returncode == 0, f"`{line}` failed in the fresh venv ({run.returncode}):\n{run.stderr[-3000:]}"
