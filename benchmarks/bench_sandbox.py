"""Per-call overhead of the execution tools, each next to the obvious way measured in the same run.

- run_command_ms: `ws.call("run_command")` with the episode's container reused (files synced by
  delta, command, read back). Baseline: a fresh container per call, as `docker run` would do it:
  create, copy the files in, start, wait, copy /work out, remove.
- run_python_ms: `ws.call("run_python")` through the warm worker (one fork per call). Baseline:
  a fresh worker process per call (interpreter start, imports, pyfakefs set-up).
Both work on the same 20-file workspace and run a trivial line count, so the figures are overhead.
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


def _median_ms(fn: Callable[[], Any], n: int) -> float:
    fn()  # warm: container start, worker start
    samples = []
    for _ in range(n):
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
    from workspace_sim.sandboxes.python_sandbox import Worker, build_request
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
    warm = _median_ms(lambda: ws.call("run_python", {"code": code}), n)
    tree = tree_from_state(ws.state)

    def cold() -> None:
        worker = Worker()
        try:
            worker.ask(build_request(tree, code, settings, 0), 60)
        finally:
            worker.close()

    fresh_py = _median_ms(cold, max(3, n // 4))
    figures.append({"key": "run_python_ms", "value": warm, "unit": "ms", "baseline_key": "baseline_run_python_ms",
                    "baseline": fresh_py, "note": "warm worker, one fork per call vs a fresh interpreter per call"})
    return figures
