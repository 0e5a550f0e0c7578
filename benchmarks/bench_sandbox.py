"""Per-call overhead of the execution tools, each next to the obvious way measured in the same run.

- run_command_ms: `ws.call("run_command")` with the episode's container reused (files synced by
  delta, command, read back). Baseline: a fresh container per call, as `docker run` would do it:
  create, copy the files in, start, wait, copy /work out, remove.
- run_python_ms: `ws.call("run_python")`, a fresh bubblewrap sandbox per call (namespaces, tmpfs
  root, interpreter start, files in and back), with 0.3 s untimed between calls as between an
  agent's turns, in which the next sandbox is started. Baselines in the same run: a fresh unsandboxed
  interpreter per call doing the same imports and file round trip in a temporary folder
  (`baseline_run_python_ms`), and the design run_python had before the sandbox, a warm process
  forking one child per call over pyfakefs (`forked_worker_run_python_ms`, unsafe: reference only).
All work on the same 20-file workspace and run a trivial line count, so the figures are overhead.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.sandboxes.settings import SandboxSettings


def _data() -> dict[str, Any]:
    files = [{"path": f"/data/part{i:02d}.csv", "content": "id,amount\n" + "".join(f"{j},{j * i}\n" for j in range(50))}
             for i in range(20)]
    return {"files": {"files": files}}


def _median_ms(fn: Callable[[], Any], n: int, gap_s: float = 0.0) -> float:
    fn()  # warm: container start, worker start
    samples = []
    for _ in range(n):
        time.sleep(gap_s)  # not timed: the pause between an agent's turns
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def _docker_run_per_call(settings: SandboxSettings, ws: Workspace, command: str) -> Callable[[], None]:
    from workspace_sim.sandboxes.engine import client
    from workspace_sim.sandboxes.tarball import pack, unpack
    from workspace_sim.sandboxes.tree import tree_from_state

    c = client(settings.docker_host)

    def once() -> None:
        tree = tree_from_state(ws.state)
        box = c.containers.create(settings.image, ["sh", "-c", f"cd /work && {command}"], user=settings.user,
                                  network_mode="none", mem_limit=f"{settings.memory_mb}m",
                                  nano_cpus=int(settings.cpus * 1e9), pids_limit=settings.pids)
        try:
            box.put_archive("/work", pack(tree.files, tree.dirs, settings.uid, settings.gid, 0))
            box.start()
            box.wait(timeout=60)
            box.logs()
            stream, _ = box.get_archive("/work")
            unpack(b"".join(stream), 1 << 30)
        finally:
            box.remove(force=True)

    return once


def run(quick: bool) -> list[dict[str, Any]]:
    """The sandbox figures; run_command ones only when a Docker engine with the image is reachable."""
    n = 5 if quick else 20
    figures: list[dict[str, Any]] = []
    from workspace_sim.sandboxes.engine import engine_status
    from workspace_sim.sandboxes.tree import tree_from_state

    settings = SandboxSettings()
    ok, reason = engine_status(settings.docker_host, settings.image)
    if ok:
        command = "cat data/*.csv | wc -l"
        with Workspace.create(WorkspaceConfig(services=["files", "shell"]), _data()) as ws:
            reused = _median_ms(lambda: ws.call("run_command", {"command": command}), n)
            fresh = _median_ms(_docker_run_per_call(settings, ws, command), n)
        figures.append({"key": "run_command_ms", "value": reused, "unit": "ms",
                        "baseline_key": "baseline_run_command_ms", "baseline": fresh,
                        "note": "container reused vs a fresh container per call (docker run), same files"})
    else:
        figures.append({"key": "run_command_ms", "value": float("nan"), "unit": "ms", "baseline_key": None,
                        "baseline": None, "note": f"skipped: {reason}"})

    code = "import glob\nprint(sum(len(open(p).readlines()) for p in glob.glob('/data/*.csv')))"
    ws = Workspace.create(WorkspaceConfig(services=["files", "python"]), _data())
    if "run_python" not in ws.tools:
        figures.append({"key": "run_python_ms", "value": float("nan"), "unit": "ms", "baseline_key": None,
                        "baseline": None, "note": f"skipped: {ws.unavailable['python']}"})
        return figures
    assert ws.call("run_python", {"code": code}).data["stdout"] == "1020\n"
    gap = 0.3  # between calls, as between an agent's turns: the next sandbox starts meanwhile
    isolated = _median_ms(lambda: ws.call("run_python", {"code": code}), n, gap)
    back_to_back = _median_ms(lambda: ws.call("run_python", {"code": code}), n)
    tree = tree_from_state(ws.state)
    fresh = _median_ms(lambda: _fresh_interpreter(tree, code.replace("'/data", "'data")), n, gap)
    forked = _median_ms(lambda: _forked_pyfakefs(tree, code), n, gap)
    figures.append({"key": "run_python_ms", "value": isolated, "unit": "ms", "baseline_key": "baseline_run_python_ms",
                    "baseline": fresh, "note": "fresh bubblewrap sandbox per call vs a fresh unsandboxed interpreter"})
    figures.append({"key": "run_python_back_to_back_ms", "value": back_to_back, "unit": "ms",
                    "baseline_key": "baseline_run_python_ms", "baseline": fresh,
                    "note": "the same without a pause: the next sandbox is still starting when it is needed"})
    figures.append({"key": "forked_worker_run_python_ms", "value": forked, "unit": "ms",
                    "baseline_key": "baseline_run_python_ms", "baseline": fresh,
                    "note": "the old design (fork of a warm process over pyfakefs, no isolation) for reference"})
    return figures


_FRESH = """
import base64, json, os, sys
for name in PRELOAD:
    __import__(name)
req = json.loads(sys.stdin.buffer.read())
os.chdir(req["root"])
for p, b in req["files"].items():
    os.makedirs(os.path.dirname(p[1:]) or ".", exist_ok=True)
    open(p[1:], "wb").write(base64.b64decode(b))
exec(compile(req["code"], "<run_python>", "exec"), {"__name__": "__main__"})
for folder, _, names in os.walk("."):
    for n in names:
        open(os.path.join(folder, n), "rb").read()
"""


def _fresh_interpreter(tree: Any, code: str) -> None:
    """One snippet in a fresh interpreter without any sandbox: the same imports and file round trip."""
    import base64
    import json
    import subprocess
    import sys
    import tempfile

    from workspace_sim.sandboxes.python_runner import _PRELOAD

    with tempfile.TemporaryDirectory() as root:
        req = {"root": root, "code": code, "files": {p: base64.b64encode(b).decode() for p, b in tree.files.items()}}
        subprocess.run([sys.executable, "-S", "-s", "-B", "-c", f"PRELOAD = {_PRELOAD!r}\n" + _FRESH],
                       input=json.dumps(req).encode(), capture_output=True, check=True)


def _forked_pyfakefs(tree: Any, code: str) -> None:
    """One snippet as run_python ran it before the sandbox: fork this warm process, mount the files
    in pyfakefs, run, read the tree back."""
    import contextlib
    import io
    import json
    import os

    from pyfakefs.fake_filesystem_unittest import Patcher

    from workspace_sim.sandboxes.fakefs import mount_tree, read_tree

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            with Patcher(use_known_patches=False, allow_root_user=False) as patcher:
                mount_tree(patcher.fs, tree, "/")
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(compile(code, "<run_python>", "exec"), {"__name__": "__main__"})
                after, _ = read_tree(patcher.fs, "/", frozenset({"/tmp"}))
            os.write(w, json.dumps({"stdout": out.getvalue(), "files": len(after.files)}).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        f.read()
    os.waitpid(pid, 0)
