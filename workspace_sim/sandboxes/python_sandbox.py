"""The host side of run_python: one fresh bubblewrap sandbox per snippet, and its answer checked.

Each call gets its own `bwrap` (see `bwrap.py`) running `python_runner.py`, sends it the workspace's
files and the code on stdin, collects stdout and stderr (bounded), enforces the wall time by
killing the sandbox's whole process group (and with it its PID namespace), and turns the runner's
answer into a `Delta` after checking every path and content, since the snippet could have written
that answer itself. No state can survive from one call to the next. To keep the start off a
call's path, one sandbox of the usual shape is started ahead of need (`_Spares`); it still
serves a single call (figures: benchmarks/bench_sandbox.py).
"""

from __future__ import annotations

import atexit
import base64
import binascii
import functools
import json
import logging
import os
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from workspace_sim.core.errors import InvalidArgument
from workspace_sim.text.paths import resolve
from workspace_sim.sandboxes.bwrap import DEV_BYTES, TMP, IsolationUnavailable, Layout, layout
from workspace_sim.sandboxes.cgroups import SandboxCgroup, find_base
from workspace_sim.sandboxes.output import BoundedOutput
from workspace_sim.sandboxes.settings import SandboxSettings
from workspace_sim.sandboxes.tree import Delta, Tree

_log = logging.getLogger("workspace_sim.sandboxes")
_HARD_GRACE_S = 3.0  # beyond the snippet's own limit: sandbox start, writing and reading the files
_RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_runner.py")
_STATUSES = {"ok", "error", "timeout"}


class WorkerError(RuntimeError):
    """The sandbox could not be run (not the snippet's doing)."""


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
    hidden: list[str]  # workspace paths the sandbox could not show (they are its own mounts)
    vm_bytes: int | None = None  # the runner's address space before the code ran (only the probe has /proc)


@functools.lru_cache(maxsize=1)
def _runner_source() -> str:
    with open(_RUNNER, encoding="utf-8") as f:
        return f.read()


def visible_tree(tree: Tree, box: Layout) -> tuple[Tree, list[str]]:
    """The part of `tree` the sandbox can show, and the paths it cannot (under its own mounts)."""
    hidden = sorted([p for p in tree.files if box.hides(p, True)] + [d for d in tree.dirs if box.hides(d, False)])
    gone = set(hidden)
    files = {p: b for p, b in tree.files.items() if p not in gone}
    return Tree(files, frozenset(d for d in tree.dirs if d not in gone)), hidden


def _request(tree: Tree, code: str, settings: SandboxSettings, seed: int, mounts: list[str], vm: int) -> bytes:
    files = {p: base64.b64encode(b).decode() for p, b in sorted(tree.files.items())}
    # the runner holds the request about four times over (text, parsed, decoded, read back)
    data = 4 * (sum(len(b) for b in files.values()) + len(code))
    return json.dumps({
        "code": code, "files": files, "dirs": sorted(tree.dirs), "timeout_s": settings.python_timeout_s,
        "cpu_s": int(settings.python_timeout_s + _HARD_GRACE_S) + 3,
        "memory_mb": settings.python_memory_mb, "tasks": settings.python_tasks, "seed": seed, "mounts": mounts, "vm_base": vm + data,
    }).encode()


def _feed(pipe: Any, data: bytes) -> None:
    try:
        pipe.write(data)
    except OSError:
        pass  # the sandbox died early; its exit status says why
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # bwrap and its PID-1 share this group; the namespace dies with it
    except (ProcessLookupError, PermissionError):
        pass


@dataclass
class _Sandbox:
    """One started sandbox whose runner waits for its single request on stdin."""

    proc: subprocess.Popen
    answer_fd: int
    cgroup: SandboxCgroup | None = None

    def discard(self) -> None:
        _kill(self.proc)
        self.proc.wait()
        self.release()
        os.close(self.answer_fd)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass

    def release(self) -> None:
        """Remove the sandbox's cgroup (after its processes ended; whatever is left is killed)."""
        if self.cgroup is not None:
            self.cgroup.close()
            self.cgroup = None


_BASE_MEMORY = 96 << 20  # the interpreter, the runner and the request, beyond the snippet's own allowance


def memory_budget(memory_mb: int, root_bytes: int, tmp_bytes: int | None, shm_bytes: int) -> int:
    """Bytes the sandbox's cgroup may hold: the snippet's allowance, every tmpfs full, and the interpreter."""
    return (memory_mb << 20) + root_bytes + (tmp_bytes or 0) + shm_bytes + DEV_BYTES + _BASE_MEMORY


def _start(box: Layout, root_bytes: int, tmp_bytes: int | None, memory_mb: int = 512, tasks: int = 256,
           shm_bytes: int = 8 << 20, proc: bool = False) -> _Sandbox:
    sec_r, sec_w = os.pipe()
    res_r, res_w = os.pipe()
    os.write(sec_w, box.seccomp)  # a few hundred bytes: fits the pipe's buffer
    os.close(sec_w)
    argv = box.command(root_bytes=root_bytes, tmp_bytes=tmp_bytes, seccomp_fd=sec_r,
                       argv=["-c", _runner_source(), str(res_w)], proc=proc, shm_bytes=shm_bytes)
    base, _ = find_base()
    group = None
    try:
        if base is not None:
            group = SandboxCgroup(base, memory_budget(memory_mb, root_bytes, tmp_bytes, shm_bytes), tasks + 8)
            argv = group.join_argv(argv)
        popen = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 pass_fds=(sec_r, res_w), env={}, cwd="/", start_new_session=True)
    except OSError as e:
        os.close(res_r)
        if group is not None:
            group.close()
        raise WorkerError(f"bubblewrap could not be started ({e})") from None
    finally:
        os.close(sec_r)
        os.close(res_w)
    return _Sandbox(popen, res_r, group)


_Key = tuple[Layout, int, "int | None", int, int, int]


class _Spares:
    """Sandboxes started ahead of need, one per recent shape (bubblewrap, root size, /tmp size).

    A spare serves exactly one snippet and then ends, like any sandbox: keeping one ready moves
    the start (namespaces, interpreter, imports) off the call's path without sharing anything
    between calls. A replacement is started in the background when one is taken.
    """

    KEEP = 4  # shapes kept warm; older ones are stopped

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: dict[_Key, _Sandbox] = {}
        # shapes with a replacement being started: eight calls taking at once start one, not eight of which
        # seven would be stopped again (each a bubblewrap and an interpreter start: CPU other calls wait for)
        self._refilling: set[_Key] = set()

    def take(self, key: _Key) -> _Sandbox:
        with self._lock:
            box = self._ready.pop(key, None)
        if box is not None and box.proc.poll() is not None:
            box.discard()  # it died while waiting (e.g. killed from outside): start a fresh one
            box = None
        if box is None:
            box = _start(*key)
        with self._lock:
            refill = key not in self._refilling
            self._refilling.add(key)
        if refill:
            threading.Thread(target=self._refill, args=(key,), daemon=True).start()
        return box

    def _refill(self, key: _Key) -> None:
        try:
            fresh = _start(*key)
        except WorkerError:
            return
        finally:
            with self._lock:
                self._refilling.discard(key)
        with self._lock:
            old = self._ready.pop(key, None)
            self._ready[key] = fresh
            stale = [self._ready.pop(k) for k in list(self._ready)[:-self.KEEP]] if len(self._ready) > self.KEEP else []
        for b in ([old] if old else []) + stale:
            b.discard()

    def close(self) -> None:
        """Stop every spare (also run at interpreter exit)."""
        with self._lock:
            boxes, self._ready = list(self._ready.values()), {}
        for b in boxes:
            b.discard()

    def forget(self) -> None:
        """After os.fork the spares belong to the parent: drop them here without stopping them."""
        self._lock, self._ready, self._refilling = threading.Lock(), {}, set()


SPARES = _Spares()
atexit.register(SPARES.close)
os.register_at_fork(after_in_child=SPARES.forget)


def run_python_code(tree: Tree, code: str, settings: SandboxSettings, seed: int) -> PythonOutcome:
    """Run `code` over a copy of `tree` in a fresh sandbox and return what it did.

    Raises IsolationUnavailable when the sandbox cannot be built or fails its probe here, and
    WorkerError when it fails to start; the snippet's own errors, time-outs and kills are outcomes.
    """
    ok, reason, vm = _probe(settings.bwrap)
    if not ok:
        raise IsolationUnavailable(reason)
    return _run(layout(settings.bwrap), tree, code, settings, seed, vm, proc=False)


def _run(box: Layout, tree: Tree, code: str, settings: SandboxSettings, seed: int, vm: int,
         proc: bool) -> PythonOutcome:
    shown, hidden = visible_tree(tree, box)
    scratch = TMP not in shown.dirs
    work = settings.work_mb << 20
    disk = max(work, tree.size() + (1 << 20))
    mounts = list(box.mounts) + ([TMP] if scratch else [])
    request = _request(shown, code, settings, seed, mounts, vm)
    key: _Key = (box, disk + (1 << 20), work if scratch else None, settings.python_memory_mb,
                 settings.python_tasks, settings.shm_mb << 20)
    # the usual shape comes from a spare; an unusually large workspace or the probe starts its own
    sandbox = SPARES.take(key) if disk == work and not proc else _start(*key, proc=proc)
    popen, res_r = sandbox.proc, sandbox.answer_fd
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    feeder = threading.Thread(target=_feed, args=(popen.stdin, request), daemon=True)
    feeder.start()
    limit = settings.output_bytes
    out, err, res = BoundedOutput(limit), BoundedOutput(limit), bytearray()
    res_cap = disk * 2 + (1 << 20)
    streams: dict[int, BoundedOutput | None] = {popen.stdout.fileno(): out, popen.stderr.fileno(): err, res_r: None}
    deadline = time.monotonic() + settings.python_timeout_s + _HARD_GRACE_S
    timed_out = too_big = False
    sel = selectors.DefaultSelector()
    for fd in streams:
        sel.register(fd, selectors.EVENT_READ)
    try:
        while streams:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for item, _ in sel.select(left):
                fd = int(item.fd)
                chunk = os.read(fd, 65536)
                sink = streams[fd]
                if not chunk:
                    del streams[fd]
                    sel.unregister(fd)
                elif sink is None:
                    res += chunk
                    too_big = too_big or len(res) > res_cap
                else:
                    sink.write(chunk)
            if too_big:
                break
    finally:
        sel.close()
        if streams or popen.poll() is None:
            _kill(popen)
        rc = popen.wait()
        sandbox.release()
        feeder.join()
        os.close(res_r)
        popen.stdout.close()
        popen.stderr.close()
    common = {"stdout": out.text(), "stderr": err.text(), "output_truncated": out.truncated or err.truncated,
              "ignored": [], "hidden": hidden}
    if timed_out:
        return PythonOutcome(status="timeout", exit_code=None, error=None, delta=None, **common)
    if too_big:
        return PythonOutcome(status="killed", exit_code=None, error="the files written are too large", delta=None,
                             **common)
    if not res:
        why = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
        if rc == -signal.SIGXCPU:
            why = "CPU time limit"
        elif rc in (-signal.SIGKILL, 137):
            why = "killed (memory limit?)"
        if err.text().startswith("bwrap: "):  # bubblewrap itself failed and says why
            raise WorkerError(f"the sandbox did not start: {err.text().strip()[:300]}")
        return PythonOutcome(status="killed", exit_code=None, error=f"the process ended without an answer ({why})",
                             delta=None, **common)
    try:
        answer = _check_answer(bytes(res), shown)
    except ValueError as e:
        return PythonOutcome(status="killed", exit_code=None, error=f"the sandbox's answer was refused: {e}",
                             delta=None, **common)
    common["ignored"] = answer.pop("ignored")
    return PythonOutcome(**answer, **common)


def _path(p: object, where: str) -> str:
    try:
        ok = resolve(p, where) == p
    except InvalidArgument as e:
        raise ValueError(e.message) from None
    if not ok:
        raise ValueError(f"{where} {p!r} is not a plain absolute path")
    assert isinstance(p, str)
    return p


def _strings(v: object, where: str) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise ValueError(f"{where} must be a list of strings")
    return v


def _check_answer(raw: bytes, shown: Tree) -> dict[str, Any]:
    """The runner's answer as outcome fields; ValueError when any part of it is not what a runner writes."""
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        raise ValueError("not JSON") from None
    if not isinstance(doc, dict):
        raise ValueError("not an object")
    status, exit_code, error = doc.get("status"), doc.get("exit_code"), doc.get("error")
    if status not in _STATUSES:
        raise ValueError(f"unknown status {str(status)[:40]!r}")
    if not (exit_code is None or (isinstance(exit_code, int) and not isinstance(exit_code, bool))):
        raise ValueError("exit_code must be an integer or null")
    if not (error is None or isinstance(error, str)):
        raise ValueError("error must be a string or null")
    put_doc = doc.get("put")
    if not isinstance(put_doc, dict):
        raise ValueError("put must be an object")
    put: dict[str, bytes] = {}
    for p, b in sorted(put_doc.items()):
        if not isinstance(b, str):
            raise ValueError(f"the content of {p!r} is not base64 text")
        try:
            put[_path(p, "written path")] = base64.b64decode(b, validate=True)
        except binascii.Error:
            raise ValueError(f"the content of {p!r} is not base64") from None
    removed = [_path(p, "deleted path") for p in _strings(doc.get("removed"), "removed")]
    new_dirs = [_path(p, "new folder") for p in _strings(doc.get("new_dirs"), "new_dirs")]
    removed_dirs = [_path(p, "deleted folder") for p in _strings(doc.get("removed_dirs"), "removed_dirs")]
    # the runner reports changes against what it was given: it cannot delete what it never saw
    if not set(removed) <= set(shown.files) or not set(removed_dirs) <= set(shown.dirs):
        raise ValueError("it deletes paths the sandbox was never given")
    ignored = [s[:300] for s in _strings(doc.get("ignored"), "ignored")[:1000]]
    vm = doc.get("vm")
    if not (vm is None or (isinstance(vm, int) and not isinstance(vm, bool) and vm > 0)):
        raise ValueError("vm must be a positive integer or null")
    d = Delta(put, tuple(sorted(set(removed))), tuple(sorted(set(new_dirs) - shown.dirs)),
              tuple(sorted(set(removed_dirs))))
    return {"status": status, "exit_code": exit_code, "error": error, "delta": d, "ignored": ignored, "vm_bytes": vm}


_PROBE_LOCK = threading.Lock()
_PROBES: dict[str, tuple[bool, str, int]] = {}


def _probe(bwrap: str) -> tuple[bool, str, int]:
    """Build the layout for `bwrap` and run a probe snippet in a real sandbox (with a /proc, to
    measure the interpreter's address space): (works, why not, address space in bytes). Once per
    bubblewrap path and process."""
    with _PROBE_LOCK:
        known = _PROBES.get(bwrap)
        if known is not None:
            return known
        settings = SandboxSettings(bwrap=bwrap, python_timeout_s=30.0)
        try:
            out = _run(layout(bwrap), Tree({"/probe.txt": b"ok"}), "print(open('/probe.txt').read())", settings, 0,
                       0, proc=True)
            if out.status == "ok" and out.stdout == "ok\n" and out.vm_bytes:
                result = (True, "", out.vm_bytes)
            else:
                detail = (out.error or out.stderr.strip() or out.status)[:300]
                result = (False, f"a probe snippet failed in the bubblewrap sandbox: {detail}", 0)
        except (IsolationUnavailable, WorkerError) as e:
            result = (False, str(e), 0)
        if not result[0]:
            result = (False, f"run_python needs an isolated sandbox: {result[1]}", 0)
        else:
            for gap in enforcement_gaps():
                _log.warning("run_python: %s", gap)
        _PROBES[bwrap] = result
        return result


def enforcement_gaps() -> list[str]:
    """The limits the kernel cannot enforce here, each with the reason (empty when a cgroup holds them all).

    Without a sandbox cgroup, memory is bounded by the address-space limit, the tmpfs sizes and the
    seccomp filter (no memfd, no SysV shared memory), but kernel memory such as pipe buffers is not
    counted; the task cap is RLIMIT_NPROC, which the kernel does not apply when the host user is root.
    """
    base, why = find_base()
    if base is not None:
        return []
    gaps = [f"memory is not held by a cgroup ({why}); the address-space limit, tmpfs sizes and the seccomp "
            f"filter bound it, but kernel buffers (pipes, sockets) are not counted"]
    if os.geteuid() == 0:
        gaps.append("the thread limit (python_tasks) is not enforced: without a cgroup it is RLIMIT_NPROC, which "
                    "the kernel does not apply to a host user of uid 0; run the server as another user or give it "
                    "a delegated cgroup")
    return gaps


def isolation_status(settings: SandboxSettings) -> tuple[bool, str]:
    """Whether run_python can run here with `settings.bwrap`, and why not (from a cached probe run
    in a real sandbox: see `_probe`)."""
    ok, reason, _ = _probe(settings.bwrap)
    return ok, reason
