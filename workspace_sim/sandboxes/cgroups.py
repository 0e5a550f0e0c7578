"""A control group per run_python sandbox: memory (process, tmpfs, memfd and shared pages) and task count.

Address-space limits cannot see pages that belong to no process (tmpfs files, memfd, SysV
shared memory) and nothing in a process's own limits counts threads made with a raw
`clone(CLONE_THREAD)` when the server runs as root (RLIMIT_NPROC does not apply to uid 0). A
cgroup does both: every page the sandbox's processes allocate, file pages included, is charged to
`memory.max` (v2) / `memory.limit_in_bytes` (v1), and `pids.max` bounds its tasks, threads
included. `find_base()` looks once per process for a place where this process may create child
cgroups with those two controllers (a delegated v2 subtree, or writable v1 `memory` and `pids`
hierarchies, always below this process's own cgroup); `SandboxCgroup` is one sandbox's group.
The bubblewrap process joins it before it forks (`join_argv`), so everything in the sandbox is
inside. Where no such place exists, `find_base` says why and run_python says so at start-up.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass

CGROUP_ROOT = "/sys/fs/cgroup"
_COUNTER = itertools.count()
_LOCK = threading.Lock()
_BASE: "tuple[CgroupBase | None, str] | None" = None


@dataclass(frozen=True)
class CgroupBase:
    """Parent folders under which sandboxes' cgroups are made: one (v2) or one per controller (v1)."""

    version: int
    memory: str  # parent folder for the memory controller (v2: the only one)
    pids: str  # parent folder for the pids controller (v2: same as memory)


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per controller ("" key: the v2 unified path)."""
    out: dict[str, str] = {}
    with open("/proc/self/cgroup", encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split(":", 2)
            if len(parts) != 3:
                continue
            for name in parts[1].split(",") if parts[1] else [""]:
                out[name] = parts[2]
    return out


def _writable_parent(folder: str, probe_files: tuple[str, ...]) -> str | None:
    """`folder` when a child made in it has `probe_files` and takes writes (the child is removed again)."""
    test = os.path.join(folder, f"coworkenv-probe-{os.getpid()}-{next(_COUNTER)}")
    try:
        os.mkdir(test)
    except OSError:
        return None
    try:
        return folder if all(os.path.exists(os.path.join(test, p)) for p in probe_files) else None
    finally:
        try:
            os.rmdir(test)
        except OSError:
            pass


def _find_v2(own: dict[str, str]) -> CgroupBase | None:
    path = own.get("")
    for mount in (CGROUP_ROOT, os.path.join(CGROUP_ROOT, "unified")):
        if path is None or not os.path.exists(os.path.join(mount, "cgroup.subtree_control")):
            continue
        folder = os.path.normpath(mount + path)
        try:
            with open(os.path.join(folder, "cgroup.subtree_control"), encoding="ascii") as f:
                enabled = set(f.read().split())
            if not {"memory", "pids"} <= enabled:
                with open(os.path.join(folder, "cgroup.subtree_control"), "w", encoding="ascii") as f:
                    f.write("+memory +pids")
        except OSError:
            continue
        if _writable_parent(folder, ("memory.max", "pids.max")):
            return CgroupBase(2, folder, folder)
    return None


def _find_v1(own: dict[str, str]) -> CgroupBase | None:
    found: dict[str, str] = {}
    for controller, probe in (("memory", "memory.limit_in_bytes"), ("pids", "pids.max")):
        mount = os.path.join(CGROUP_ROOT, controller)
        if controller not in own or not os.path.exists(os.path.join(mount, "cgroup.procs")):
            return None
        folder = os.path.normpath(mount + own[controller])
        if not os.path.isdir(folder):  # a cgroup namespace shows its own root at the mount
            folder = mount
        if _writable_parent(folder, (probe,)) is None:
            return None
        found[controller] = folder
    return CgroupBase(1, found["memory"], found["pids"])


def find_base() -> tuple[CgroupBase | None, str]:
    """Where this process can make sandbox cgroups with memory and pids limits, or None and why not (cached)."""
    global _BASE
    with _LOCK:
        if _BASE is None:
            try:
                own = _own_paths()
            except OSError as e:
                _BASE = (None, f"/proc/self/cgroup cannot be read ({e.strerror})")
            else:
                base = _find_v2(own) or _find_v1(own)
                _BASE = (base, "") if base else (
                    None, "no cgroup with the memory and pids controllers can be created below this process's own "
                          "(neither a delegated cgroup v2 subtree nor writable v1 memory and pids hierarchies)")
        return _BASE


class SandboxCgroup:
    """One sandbox's cgroup(s) with a memory limit (no swap) and a task limit; `close()` kills and removes them."""

    def __init__(self, base: CgroupBase, memory_bytes: int, pids: int) -> None:
        name = f"coworkenv-sandbox-{os.getpid()}-{next(_COUNTER)}"
        self.folders = sorted({os.path.join(base.memory, name), os.path.join(base.pids, name)})
        for folder in self.folders:
            os.mkdir(folder)
        try:
            if base.version == 2:
                self._set(base.memory, name, "memory.max", memory_bytes)
                self._set(base.memory, name, "memory.swap.max", 0, optional=True)
                self._set(base.pids, name, "pids.max", pids)
            else:
                self._set(base.memory, name, "memory.limit_in_bytes", memory_bytes)
                self._set(base.memory, name, "memory.memsw.limit_in_bytes", memory_bytes, optional=True)
                self._set(base.memory, name, "memory.swappiness", 0, optional=True)
                self._set(base.pids, name, "pids.max", pids)
        except OSError:
            self.close()
            raise

    @staticmethod
    def _set(parent: str, name: str, key: str, value: int, optional: bool = False) -> None:
        try:
            with open(os.path.join(parent, name, key), "w", encoding="ascii") as f:
                f.write(str(value))
        except OSError:
            if not optional:
                raise

    def join_argv(self, argv: list[str]) -> list[str]:
        """`argv` run by a shell that first moves itself into this cgroup, then execs it (so its children start inside)."""
        procs = [os.path.join(f, "cgroup.procs") for f in self.folders]
        script = 'for f in "$@"; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 126; shift; done; shift; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *procs, "--", *argv]

    def close(self) -> None:
        """Kill whatever is left in the group and remove it (retried briefly while the kernel reaps)."""
        for folder in self.folders:
            for _ in range(50):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    self._kill_all(folder)
                    time.sleep(0.01)

    @staticmethod
    def _kill_all(folder: str) -> None:
        try:
            with open(os.path.join(folder, "cgroup.kill"), "w", encoding="ascii") as f:
                f.write("1")
            return
        except OSError:
            pass
        try:
            with open(os.path.join(folder, "cgroup.procs"), encoding="ascii") as f:
                pids = [int(x) for x in f.read().split()]
        except OSError:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
