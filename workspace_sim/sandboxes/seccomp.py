"""A seccomp filter for run_python: no new processes, no namespace or kernel-interface tricks.

`filter_program()` returns a classic-BPF program (the bytes bubblewrap's `--seccomp FD` reads) for
the host architecture. It refuses with EPERM: fork, vfork and clone without CLONE_THREAD (threads
still work, processes cannot be made, so a fork bomb ends at its first fork), ptrace and
process_vm_*, namespace and mount calls, keyrings, bpf, perf, userfaultfd, io_uring, and the
memory no process owns and no tmpfs bounds (memfd_create, memfd_secret, SysV shmget and msgget); clone3
gets ENOSYS so the C library falls back to clone, whose flags the filter can check. A system call
of another ABI (x32 on x86_64, or a foreign architecture) kills the process.
"""

from __future__ import annotations

import errno
import platform
import struct

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000
_CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000
# offsets in struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64)
_NR, _ARCH, _ARG0_LOW = 0, 4, 16

# (audit arch, clone, clone3, {refused name: number}); numbers from the kernel's unistd tables
_ARCHES: dict[str, tuple[int, int, int, dict[str, int]]] = {
    "x86_64": (0xC000003E, 56, 435, {
        "fork": 57, "vfork": 58, "ptrace": 101, "personality": 135, "pivot_root": 155, "chroot": 161,
        "mount": 165, "umount2": 166, "init_module": 175, "kexec_load": 246, "add_key": 248,
        "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298, "open_by_handle_at": 304,
        "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313, "bpf": 321,
        "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "mount_setattr": 442, "shmget": 29, "msgget": 68, "memfd_create": 319, "memfd_secret": 447}),
    "aarch64": (0xC00000B7, 220, 435, {
        "umount2": 39, "mount": 40, "pivot_root": 41, "chroot": 51, "personality": 92, "unshare": 97,
        "kexec_load": 104, "init_module": 105, "ptrace": 117, "add_key": 217, "request_key": 218, "keyctl": 219,
        "perf_event_open": 241, "open_by_handle_at": 265, "setns": 268, "process_vm_readv": 270,
        "process_vm_writev": 271, "finit_module": 273, "bpf": 280, "userfaultfd": 282, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "msgget": 186, "shmget": 194,
        "memfd_create": 279, "memfd_secret": 447}),
}


class UnsupportedArchitecture(RuntimeError):
    """The filter has no system call table for this machine."""


def supported(machine: str | None = None) -> bool:
    """Whether a filter can be built for `machine` (default: this one)."""
    return _machine(machine) in _ARCHES


def _machine(machine: str | None) -> str:
    m = (machine or platform.machine()).lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def filter_program(machine: str | None = None) -> bytes:
    """The filter as packed `struct sock_filter` entries for `machine` (default: this one).

    Raises UnsupportedArchitecture for a machine without a table (the caller then offers no
    run_python rather than running without the filter).
    """
    name = _machine(machine)
    if name not in _ARCHES:
        raise UnsupportedArchitecture(f"no seccomp table for the {name} architecture (have: {', '.join(_ARCHES)})")
    arch, clone, clone3, refused = _ARCHES[name]
    # instructions with symbolic jump targets ("allow", "eperm", ...), resolved below
    prog: list[tuple[int, object, object, int]] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 0, "kill", arch),
        (_LD_W_ABS, 0, 0, _NR),
    ]
    if name == "x86_64":
        prog.append((_JGE_K, "kill", 0, _X32_BIT))
    prog.append((_JEQ_K, "clone", 0, clone))
    prog.append((_JEQ_K, "enosys", 0, clone3))
    for nr in sorted(set(refused.values())):
        prog.append((_JEQ_K, "eperm", 0, nr))
    prog.append((_RET_K, 0, 0, _ALLOW))
    labels = {"clone": len(prog)}
    prog.append((_LD_W_ABS, 0, 0, _ARG0_LOW))  # clone's flags (low word, little-endian machines)
    prog.append((_JSET_K, "allow", "eperm", _CLONE_THREAD))
    for label, ret in (("allow", _ALLOW), ("eperm", _ERRNO | errno.EPERM), ("enosys", _ERRNO | errno.ENOSYS),
                       ("kill", _KILL_PROCESS)):
        labels[label] = len(prog)
        prog.append((_RET_K, 0, 0, ret))

    def offset(i: int, target: object) -> int:
        if isinstance(target, int):
            return target
        jump = labels[str(target)] - i - 1
        assert 0 <= jump < 256, "seccomp jump out of range"
        return jump

    return b"".join(struct.pack("=HBBI", code, offset(i, jt), offset(i, jf), k)
                    for i, (code, jt, jf, k) in enumerate(prog))
