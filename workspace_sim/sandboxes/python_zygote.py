"""The run_python worker: a warm process that forks one child per snippet, run over pyfakefs.

Started as `python -m workspace_sim.sandboxes.python_zygote`; it speaks length-prefixed JSON on
its stdin/stdout (one request, one answer). For each request it forks a child that puts itself
under the memory and CPU limits, mounts the workspace's files in a fresh pyfakefs file system,
installs an audit hook refusing real-disk writes, processes and network use, runs the code and
sends back the delta of the files. This process enforces the wall time and kills the child on
excess. This guards against accidents, not against hostile code: the snippet runs in the host
interpreter, and code that wants out (ctypes, C extensions) can get out. Use run_command for
untrusted models.
"""

from __future__ import annotations

import base64
import json
import os
import resource
import select
import signal
import struct
import sys
import time
import traceback
from typing import Any, BinaryIO

from .fakefs import mount_tree, read_tree
from .output import BoundedOutput
from .tree import Tree, delta

# modules a snippet commonly uses, loaded before pyfakefs patches so importing them is free
_PRELOAD = ("csv", "json", "pathlib", "re", "math", "statistics", "datetime", "collections", "itertools",
            "functools", "io", "textwrap", "random", "decimal", "fractions", "string", "base64", "hashlib",
            "shutil", "glob", "fnmatch", "tempfile", "zipfile", "operator", "dataclasses", "typing", "calendar")

# audit events that only the real file system, processes or network raise (pyfakefs's fake `os`
# raises none); Python-level events such as "shutil.rmtree" fire for fake paths too, so are allowed
_BLOCKED = {
    "subprocess.Popen": "start processes", "os.system": "start processes", "os.exec": "start processes",
    "os.posix_spawn": "start processes", "os.spawn": "start processes", "os.fork": "start processes",
    "os.forkpty": "start processes", "os.kill": "signal processes", "os.killpg": "signal processes",
    "socket.connect": "use the network", "socket.bind": "use the network", "socket.sendto": "use the network",
    "socket.sendmsg": "use the network", "socket.getaddrinfo": "use the network",
    "socket.gethostbyname": "use the network", "ctypes.dlopen": "load native libraries",
    "os.remove": "change the real disk", "os.rename": "change the real disk", "os.rmdir": "change the real disk",
    "os.mkdir": "change the real disk", "os.chmod": "change the real disk", "os.chown": "change the real disk",
    "os.link": "change the real disk", "os.symlink": "change the real disk", "os.truncate": "change the real disk",
    "os.utime": "change the real disk", "os.chdir": "leave the workspace",
}
_HARD_GRACE_S = 2.0
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# pyfakefs replaces `os` and its functions in loaded modules, this one included; the real exit is
# kept where it does not look (inside a dict)
_REAL = {"exit": os._exit}


def _audit(event: str, args: tuple) -> None:
    what = _BLOCKED.get(event)
    if what is None and event == "open":
        mode, flags = args[1], args[2]
        writes = isinstance(mode, str) and any(c in mode for c in "wax+")
        if writes or (isinstance(flags, int) and flags & _WRITE_FLAGS):
            what = f"write to the real disk ({args[0]!r})"
    if what is not None:
        hint = "; use run_command to run programs" if "process" in what else ""
        raise PermissionError(f"run_python may not {what}: it works only on the workspace files under /{hint}")


class _TimeLimit(BaseException):
    """Raised in the snippet when its wall time is up (a BaseException, so `except Exception` passes it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _TimeLimit()


def _child(req: dict[str, Any], out_w: int, err_w: int, res_w: int) -> None:
    """Runs in the forked child; never returns."""
    os.setpgrp()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    sys.stdin = open(0, "r", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    answer_pipe = open(res_w, "wb", closefd=False)  # a real file object: pyfakefs leaves it alone
    # the limit is on memory the snippet adds to what this forked worker already maps
    cap = _vm_size() + req["memory_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    cpu = int(req["timeout_s"]) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    import random

    random.seed(req["seed"])
    from pyfakefs.fake_filesystem_unittest import Patcher

    tree = Tree({p: base64.b64decode(b) for p, b in req["files"].items()}, frozenset(req["dirs"]))
    patcher = Patcher(use_known_patches=False, allow_root_user=False)
    patcher.setUp()
    fs = patcher.fs
    fs.set_disk_usage(req["disk_bytes"])
    mount_tree(fs, tree, "/")
    os.chdir("/")
    before, _ = read_tree(fs, "/", frozenset() if "/tmp" in tree.dirs else frozenset({"/tmp"}))
    status, error, code = "ok", None, 0
    source = req["code"]
    import linecache

    linecache.cache["<run_python>"] = (len(source), None, source.splitlines(True), "<run_python>")
    sys.addaudithook(_audit)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, req["timeout_s"])
    try:
        compiled = compile(source, "<run_python>", "exec")
        exec(compiled, {"__name__": "__main__", "__builtins__": __builtins__})
        signal.setitimer(signal.ITIMER_REAL, 0)
    except _TimeLimit:
        status, code, error = "timeout", None, f"time limit of {req['timeout_s']:g} s reached"
    except SystemExit as e:
        signal.setitimer(signal.ITIMER_REAL, 0)
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except BaseException as e:  # the snippet's own error is a result, reported like Python does
        signal.setitimer(signal.ITIMER_REAL, 0)
        status, code = "error", 1
        error = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        if isinstance(e, MemoryError):
            error += f" (the memory limit is {req['memory_mb']} MB)"
        _print_user_traceback(e)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    _flush_open_files(fs)
    # /tmp is scratch space (pyfakefs makes it for tempfile); it comes back only if the workspace has it
    skip = frozenset() if "/tmp" in tree.dirs else frozenset({"/tmp"})
    after, ignored = read_tree(fs, "/", skip)
    answer = {"status": status, "exit_code": code, "error": error, "ignored": ignored,
              "delta": delta(before, after).to_json()}
    answer_pipe.write(json.dumps(answer).encode())
    answer_pipe.flush()
    _REAL["exit"](0)


def _flush_open_files(fs: Any) -> None:
    """Write out files the snippet left open (e.g. `json.dump(x, open(p, "w"))`), as exit would."""
    for wrappers in list(fs.open_files):
        for w in wrappers or ():
            try:
                w.flush()
            except Exception:
                pass


_INTERNAL = (os.path.dirname(os.path.abspath(__file__)),)


def _print_user_traceback(e: BaseException) -> None:
    """Print the snippet's exception without the frames of this worker, pyfakefs or the audit hook."""
    import pyfakefs

    internal = _INTERNAL + (os.path.dirname(os.path.abspath(pyfakefs.__file__)),)
    tb = traceback.TracebackException(type(e), e, e.__traceback__)
    tb.stack = traceback.StackSummary.from_list([f for f in tb.stack if not f.filename.startswith(internal)])
    sys.stderr.write("".join(tb.format()))


def _vm_size() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def run_one(req: dict[str, Any]) -> dict[str, Any]:
    """Fork a child for one request, enforce its wall time, and collect its output and answer."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            for fd in (out_r, err_r, res_r, _PROTO_IN, _PROTO_OUT):
                if fd >= 0:
                    os.close(fd)
            _child(req, out_w, err_w, res_w)
        except BaseException:  # a failure of ours (not the snippet's): say what, then exit
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(70)
    for fd in (out_w, err_w, res_w):
        os.close(fd)
    limit = req["output_bytes"]
    out, err, res = BoundedOutput(limit), BoundedOutput(limit), bytearray()
    res_cap = req["disk_bytes"] * 2 + (1 << 20)
    streams = {out_r: out, err_r: err, res_r: None}
    # the child stops itself at timeout_s and still reports its files; this is the hard stop
    deadline = time.monotonic() + req["timeout_s"] + _HARD_GRACE_S
    timed_out = too_big = False
    while streams:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(list(streams), [], [], left)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                del streams[fd]
                os.close(fd)
            elif streams[fd] is None:
                res += chunk
                too_big = too_big or len(res) > res_cap
            else:
                streams[fd].write(chunk)
        if too_big:
            break
    if streams:
        _kill(pid)
        for fd in streams:
            os.close(fd)
    _, wstatus = os.waitpid(pid, 0)
    answer: dict[str, Any] = {"stdout": out.text(), "stderr": err.text(),
                              "output_truncated": out.truncated or err.truncated}
    if timed_out:
        answer.update(status="timeout", exit_code=None, delta=None)
    elif too_big:
        answer.update(status="killed", exit_code=None, delta=None, error="the files written are too large")
    elif os.WIFSIGNALED(wstatus) or not res:
        sig = os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else None
        why = {signal.SIGXCPU: "CPU time limit", signal.SIGKILL: "killed (memory limit?)"}.get(sig, f"signal {sig}")
        answer.update(status="killed", exit_code=None, delta=None,
                      error=f"the process died: {why}" if sig else "the process exited without an answer")
    else:
        answer.update(json.loads(res))
    return answer


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


def _read_exact(f: BinaryIO, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


_PROTO_IN = _PROTO_OUT = -1


def serve() -> None:
    """Answer requests on stdin until it closes."""
    global _PROTO_IN, _PROTO_OUT
    _PROTO_IN, _PROTO_OUT = os.dup(0), os.dup(1)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # stray prints must never corrupt the protocol stream
    sys.stdout = sys.stderr
    for name in _PRELOAD:
        __import__(name)
    import pyfakefs.fake_filesystem_unittest  # noqa: F401 - warm the import for every child

    inp = os.fdopen(_PROTO_IN, "rb", buffering=0)
    outp = os.fdopen(_PROTO_OUT, "wb", buffering=0)
    while True:
        head = _read_exact(inp, 4)
        if head is None:
            return
        body = _read_exact(inp, struct.unpack(">I", head)[0])
        if body is None:
            return
        try:
            answer = run_one(json.loads(body))
        except Exception as e:  # a broken request is answered, never fatal to the worker
            answer = {"status": "killed", "exit_code": None, "delta": None, "stdout": "", "stderr": "",
                      "error": f"worker error: {type(e).__name__}: {e}"}
        data = json.dumps(answer).encode()
        outp.write(struct.pack(">I", len(data)) + data)


if __name__ == "__main__":
    serve()
