"""The bubblewrap sandbox run_python runs in: what is mounted, and the `bwrap` command line.

The sandbox gets new user, mount, PID, network, IPC, UTS and (where the kernel has them) cgroup
namespaces, no way to make further user namespaces, a new session, an empty environment and a
seccomp filter (`seccomp.py`). Its root is an empty tmpfs of bounded size that will hold the
workspace; the only host files in it are the Python interpreter, its standard library and the
shared libraries those link against, bound read-only at their own paths (so the dynamic loader
finds them), with the interpreter's `site-packages` and test suite covered by an empty tmpfs.
There is no `/proc` (only the one-off probe that measures the interpreter's own memory mounts a
fresh one of its PID namespace); `/dev` is a minimal one built here rather than by bubblewrap's
`--dev` (whose tmpfs has no size): a read-only tmpfs of `DEV_BYTES` holding the host's null, zero,
full, random, urandom and tty nodes, with `/dev/shm` a tmpfs of its own bounded size.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass

from workspace_sim.sandboxes.seccomp import UnsupportedArchitecture, filter_program

_LDD_LINE = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)")
PROC, DEV, TMP, SHM = "/proc", "/dev", "/tmp", "/dev/shm"
DEV_BYTES = 64 << 10  # /dev holds only device nodes and links, and is read-only once built
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_DEV_LINKS = (("/proc/self/fd", "fd"), ("/proc/self/fd/0", "stdin"), ("/proc/self/fd/1", "stdout"),
              ("/proc/self/fd/2", "stderr"))


class IsolationUnavailable(RuntimeError):
    """bubblewrap or the interpreter layout it needs is missing here; the message says what."""


@dataclass(frozen=True)
class Layout:
    """What the sandbox mounts: bwrap's path, the interpreter and every host path bound read-only."""

    bwrap: str
    python: str
    binds: tuple[str, ...]  # host files and folders, bound read-only at the same path
    hidden: tuple[str, ...]  # folders covered by an empty tmpfs
    seccomp: bytes

    @property
    def mounts(self) -> tuple[str, ...]:
        """Sandbox paths that are not the workspace's: the binds, /dev, and /proc (only the probe has one)."""
        return tuple(sorted({*self.binds, *self.hidden, PROC, DEV}))

    def hides(self, path: str, is_file: bool) -> bool:
        """Whether a workspace path cannot be placed in the sandbox: it is, or is under, one of
        the sandbox's own mounts, or it is a file where the sandbox needs a folder."""
        for m in self.mounts:
            if path == m or path.startswith(m + "/") or (is_file and m.startswith(path + "/")):
                return True
        return False

    def command(self, *, root_bytes: int, tmp_bytes: int | None, seccomp_fd: int, argv: list[str],
                proc: bool = False, shm_bytes: int = 1 << 20) -> list[str]:
        """The bwrap command running `argv` in the sandbox; `tmp_bytes` None leaves /tmp in the root;
        `shm_bytes` is the size of /dev/shm; `proc` mounts a /proc of the sandbox's PID namespace (for
        the probe only)."""
        cmd = [self.bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
               "--unshare-cgroup-try", "--disable-userns", "--die-with-parent", "--new-session",
               "--uid", "1000", "--gid", "1000", "--hostname", "sandbox", "--cap-drop", "ALL", "--clearenv",
               "--size", str(root_bytes), "--tmpfs", "/"]
        for path in self.binds:
            cmd += ["--ro-bind", path, path]
        for path in self.hidden:
            cmd += ["--tmpfs", path, "--remount-ro", path]
        cmd += ["--perms", "0755", "--size", str(DEV_BYTES), "--tmpfs", DEV]
        for name in DEVICES:
            cmd += ["--dev-bind-try", f"{DEV}/{name}", f"{DEV}/{name}"]
        for target, name in _DEV_LINKS:
            cmd += ["--symlink", target, f"{DEV}/{name}"]
        cmd += ["--perms", "1777", "--size", str(shm_bytes), "--tmpfs", SHM, "--remount-ro", DEV]
        cmd += ["--proc", PROC] if proc else []
        if tmp_bytes is not None:
            cmd += ["--size", str(tmp_bytes), "--tmpfs", TMP]
        for key, value in (("PYTHONHASHSEED", "0"), ("PYTHONUTF8", "1"), ("LANG", "C.UTF-8"), ("HOME", "/"),
                           ("PYTHONDONTWRITEBYTECODE", "1")):
            cmd += ["--setenv", key, value]
        cmd += ["--chdir", "/", "--seccomp", str(seccomp_fd), "--", self.python, "-S", "-s", "-B", *argv]
        return cmd


def _shared_libraries(paths: list[str]) -> list[str]:
    ldd = shutil.which("ldd")
    if ldd is None:
        raise IsolationUnavailable("ldd is not installed (needed to find the interpreter's shared libraries)")
    found: set[str] = set()
    for i in range(0, len(paths), 64):
        # ldd exits non-zero when one file is not dynamic; its other answers are still good
        out = subprocess.run([ldd, *paths[i:i + 64]], capture_output=True, text=True, timeout=60, env={}).stdout
        found.update(m.group(1) for m in _LDD_LINE.finditer(out))
    return sorted(p for p in found if os.path.isfile(p))


@functools.lru_cache(maxsize=8)
def layout(bwrap: str) -> Layout:
    """The sandbox layout for this interpreter with the bubblewrap at `bwrap` (a name on PATH or a path).

    Raises IsolationUnavailable saying what is missing: bubblewrap, ldd, the standard library or a
    seccomp table for this machine. Cached: the host's layout does not change while it runs.
    """
    found = shutil.which(bwrap) if "/" not in bwrap else (bwrap if os.access(bwrap, os.X_OK) else None)
    if found is None:
        raise IsolationUnavailable(f"bubblewrap ({bwrap!r}) is not installed; on Debian: apt-get install bubblewrap")
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    base = {k: sys.base_prefix for k in ("base", "installed_base", "platbase", "installed_platbase")}
    paths = sysconfig.get_paths(vars=base)
    stdlib, platstdlib = os.path.realpath(paths["stdlib"]), os.path.realpath(paths["platstdlib"])
    if not os.path.isfile(os.path.join(stdlib, "os.py")):
        raise IsolationUnavailable(f"the standard library of {python} is not at {stdlib}")
    binds = {python, stdlib, platstdlib}
    dynload = os.path.join(platstdlib, "lib-dynload")
    extensions = sorted(os.path.join(dynload, n) for n in os.listdir(dynload)) if os.path.isdir(dynload) else []
    binds.update(_shared_libraries([python, *[e for e in extensions if e.endswith(".so")]]))
    # a bind inside another bind is already there
    kept = sorted(p for p in binds if not any(p != q and p.startswith(q + "/") for q in binds))
    hidden = tuple(os.path.join(stdlib, n) for n in ("site-packages", "dist-packages", "test")
                   if os.path.isdir(os.path.join(stdlib, n)))
    try:
        program = filter_program()
    except UnsupportedArchitecture as e:
        raise IsolationUnavailable(str(e)) from None
    return Layout(found, python, tuple(kept), hidden, program)
