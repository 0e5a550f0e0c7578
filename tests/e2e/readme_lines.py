"""The README as the end-to-end tests read it: its bash lines in order, the shell a newcomer has (the venv not
active until the README's activation line), and a fresh clone of the repository."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUP = ("python3 -m venv .venv",)  # the set-up lines: CI itself runs them from a fresh clone (the first ends
# with `coworkenv demo`, which tests/trainers/test_demo.py runs end to end); tests/e2e/test_fresh_venv.py the second
ACTIVATE = "source .venv/bin/activate"


def readme_commands() -> list[str]:
    """The shell commands of README.md's bash blocks, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
            if line:
                commands.append(line)
    return commands


def shell_env(venv: Path) -> dict[str, str]:
    """The environment of a new shell: this venv's bin folder off PATH, no venv active."""
    bindir = str(venv / "bin")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != bindir)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PATH": path}


def run_in_shell(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """Run one README command in bash after the README's activation line, from `cwd` (holding `.venv`)."""
    return subprocess.run(["bash", "-c", f"{ACTIVATE} && {shlex.join(args)}"], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env=env)


def fresh_clone(dest: Path) -> Path:
    """What a clone holds: the files git tracks (and new ones it does not ignore), copied to `dest`."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest
