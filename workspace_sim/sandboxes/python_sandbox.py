"""The host side of run_python: a small pool of warm worker processes, and one call to run a snippet.

A worker (`python_zygote`) is started on first use and kept for later calls of any workspace in
this process; each call forks a fresh child inside it, so snippets never share state. A worker
that stops answering is killed and replaced. Workers end with this process (their stdin closes).
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from .settings import SandboxSettings
from .tree import Delta, Tree

_GRACE_S = 15.0  # beyond the snippet's own time limit, for forking, mounting and reading back


class WorkerError(RuntimeError):
    """The worker process failed (not the snippet)."""


@dataclass
class PythonOutcome:
    """What one snippet did: how it ended, its output, and the file changes (None when killed)."""

    status: str  # "ok" | "error" | "timeout" | "killed"
    exit_code: int | None
    stdout: str
    stderr: str
    output_truncated: bool
    error: str | None
    delta: Delta | None
    ignored: list[str]


class Worker:
    """One warm worker process (`python_zygote`); `ask` sends a request and waits for its answer."""

    def __init__(self) -> None:
        # a clean environment: fixed hash seed (set order is reproducible), our package importable
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONHASHSEED": "0", "LANG": "C.UTF-8",
               "HOME": "/", "PYTHONPATH": package_root}
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-s", "-m", "workspace_sim.sandboxes.python_zygote"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd="/",
            start_new_session=True,
        )

    def ask(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request (see `build_request`) and return the answer; WorkerError if none comes."""
        body = json.dumps(request).encode()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(struct.pack(">I", len(body)) + body)
            self.proc.stdin.flush()
        except OSError as e:
            raise WorkerError(f"the run_python worker is gone ({e})") from None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        head = self._read(fd, 4, deadline)
        return json.loads(self._read(fd, struct.unpack(">I", head)[0], deadline))

    @staticmethod
    def _read(fd: int, n: int, deadline: float) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerError("the run_python worker did not answer in time")
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                raise WorkerError("the run_python worker exited")
            buf += chunk
        return bytes(buf)

    def close(self) -> None:
        """Stop the worker process."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass


class _Pool:
    def __init__(self) -> None:
        self._idle: list[Worker] = []
        self._all: list[Worker] = []
        self._lock = threading.Lock()

    def take(self) -> Worker:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        worker = Worker()
        with self._lock:
            self._all.append(worker)
        return worker

    def give(self, worker: Worker, healthy: bool) -> None:
        with self._lock:
            if healthy:
                self._idle.append(worker)
                return
            self._all.remove(worker)
        worker.close()

    def close(self) -> None:
        """Stop every worker (also run at interpreter exit)."""
        with self._lock:
            workers, self._all, self._idle = self._all, [], []
        for w in workers:
            w.close()


    def forget(self) -> None:
        """Drop the workers without stopping them: after a fork they belong to the parent."""
        self._idle, self._all, self._lock = [], [], threading.Lock()


POOL = _Pool()
atexit.register(POOL.close)
os.register_at_fork(after_in_child=POOL.forget)


def build_request(tree: Tree, code: str, settings: SandboxSettings, seed: int) -> dict[str, Any]:
    """The worker request running `code` over `tree` under the limits of `settings`."""
    return {
        "code": code,
        "files": {p: base64.b64encode(b).decode() for p, b in tree.files.items()},
        "dirs": sorted(tree.dirs),
        "timeout_s": settings.python_timeout_s,
        "memory_mb": settings.python_memory_mb,
        "disk_bytes": max(settings.work_mb * (1 << 20), tree.size() + (1 << 20)),
        "output_bytes": settings.output_bytes,
        "seed": seed,
    }


def run_python_code(tree: Tree, code: str, settings: SandboxSettings, seed: int) -> PythonOutcome:
    """Run `code` over a copy of `tree` in a fresh child process and return what it did.

    Raises WorkerError when the worker itself fails; the snippet's own errors, time-outs and kills
    are outcomes.
    """
    request = build_request(tree, code, settings, seed)
    worker = POOL.take()
    healthy = False
    try:
        answer = worker.ask(request, settings.python_timeout_s + _GRACE_S)
        healthy = True
    finally:
        POOL.give(worker, healthy)
    raw_delta = answer.get("delta")
    return PythonOutcome(
        status=answer["status"], exit_code=answer.get("exit_code"), stdout=answer.get("stdout", ""),
        stderr=answer.get("stderr", ""), output_truncated=bool(answer.get("output_truncated")),
        error=answer.get("error"), delta=Delta.from_json(raw_delta) if raw_delta is not None else None,
        ignored=list(answer.get("ignored") or []),
    )
