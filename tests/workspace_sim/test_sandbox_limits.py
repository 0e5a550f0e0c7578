"""run_python's limits against native-code bypasses: memfd pages, /dev and /dev/shm, raw clone threads."""

from __future__ import annotations

import os
import platform

import pytest
from support import need

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.sandboxes import cgroups, python_sandbox
from workspace_sim.sandboxes.python_sandbox import enforcement_gaps, isolation_status, memory_budget
from workspace_sim.sandboxes.settings import SandboxSettings


@pytest.fixture(autouse=True)
def sandbox() -> None:
    ok, reason = isolation_status(SandboxSettings())
    need(ok, f"{reason} (.ci/setup_bwrap.sh installs it)")


def run(code: str, **sandbox: object) -> str:
    ws = Workspace.create(WorkspaceConfig(services=["files", "python"], sandbox=dict(sandbox)),
                          {"files": {"files": []}})
    try:
        return ws.call("run_python", {"code": code}).text
    finally:
        ws.close()


def test_a_gibibyte_into_memfd_is_refused() -> None:
    out = run("""
import os
try:
    fd = os.memfd_create("x")
except OSError as e:
    print("refused", e.errno)
else:
    n = 0
    try:
        for _ in range(1024):
            os.write(fd, b"x" * (1 << 20)); n += 1
    finally:
        print("wrote MiB", n)
""")
    assert "refused 1" in out, out  # EPERM from the seccomp filter, before any page is made


def test_sysv_shared_memory_is_refused() -> None:
    out = run("""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.shmget(0, 1 << 30, 0o1600)
print("shmget", r, ctypes.get_errno())
""")
    assert "shmget -1 1" in out, out


def test_dev_shm_and_dev_writes_are_capped() -> None:
    out = run("""
for path in ("/dev/shm/big", "/dev/big"):
    n = 0
    try:
        with open(path, "wb") as f:
            for _ in range(1024):
                f.write(b"x" * (1 << 20)); f.flush(); n += 1
    except OSError as e:
        print(path, "stopped after", n, e.strerror)
    else:
        print(path, "took", n)
with open("/dev/null", "w") as f:
    f.write("still writable")
print("null ok")
""", shm_mb=4)
    assert "/dev/shm/big stopped after" in out and "No space left on device" in out, out
    assert int(out.split("/dev/shm/big stopped after ")[1].split()[0]) <= 4, out
    assert "/dev/big stopped after 0 Read-only file system" in out, out
    assert "null ok" in out


RAW_THREADS = r"""
import ctypes, mmap
flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000  # VM FS FILES SIGHAND THREAD SYSVSEM
# spawn(stack): raw clone(flags, stack); the child pauses forever on the shared stack, the parent returns the tid
blob = (b"\x48\x89\xfe" + b"\xbf" + flags.to_bytes(4, "little") + b"\xb8\x38\x00\x00\x00\x0f\x05"
        b"\x48\x85\xc0\x75\x09" b"\xb8\x22\x00\x00\x00\x0f\x05\xeb\xf7" b"\xc3")
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(blob)
spawn = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
stack = mmap.mmap(-1, 4096)
top = ctypes.addressof(ctypes.c_char.from_buffer(stack)) + 4096 - 64
alive, err = 0, None
for _ in range(3000):
    r = spawn(top)
    if r > 0:
        alive += 1
    else:
        err = -r
        break
print("threads", alive, "errno", err, flush=True)
import os
os._exit(0)
"""


def test_three_thousand_raw_clone_threads_are_refused() -> None:
    need(platform.machine() == "x86_64", "the raw clone snippet is x86_64 machine code")
    need(not enforcement_gaps() or os.geteuid() != 0,
         "no sandbox cgroup and the host user is root: " + "; ".join(enforcement_gaps()))
    out = run(RAW_THREADS, python_tasks=100)
    alive = int(out.split("threads ")[1].split()[0])
    assert alive < 120 and "errno 11" in out, out  # EAGAIN at the task limit


def test_the_cgroup_budget_counts_every_tmpfs() -> None:
    assert memory_budget(512, 64 << 20, 64 << 20, 8 << 20) < (512 + 64 + 64 + 8 + 128) << 20
    assert memory_budget(512, 64 << 20, None, 8 << 20) < memory_budget(512, 64 << 20, 64 << 20, 8 << 20)


def test_without_a_cgroup_the_gaps_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_sandbox, "find_base", lambda: (None, "no delegated cgroup here"))
    gaps = enforcement_gaps()
    assert gaps and "no delegated cgroup here" in gaps[0]
    assert any("python_tasks" in g for g in gaps) == (os.geteuid() == 0)
    base, _ = cgroups.find_base()
    if base is not None:  # and with one, nothing is missing
        monkeypatch.undo()
        assert enforcement_gaps() == []
