"""The run_python program that runs inside the bubblewrap sandbox (standard library only).

The host starts `python -S -c <this file's source> ANSWER_FD` in the sandbox, whose root is an
empty, size-bounded tmpfs. It reads one JSON request from stdin (the workspace's folders and
files, the code, the limits), writes the files at their workspace paths, puts itself under the
memory and CPU limits, runs the code in this process with stdout and stderr going to fd 1 and 2,
then reads the tree back and writes the changes as JSON to ANSWER_FD. Nothing here is trusted by
the host: the snippet runs in this very process and may rewrite any of it, so the host checks
every path and size of the answer. What keeps the host safe is the sandbox around this process.
"""

import base64
import json
import os
import sys

# modules a snippet commonly uses, imported before the request comes
_PRELOAD = ("csv", "json", "pathlib", "re", "math", "statistics", "datetime", "collections", "itertools",
            "functools", "io", "textwrap", "random", "decimal", "fractions", "string", "base64", "hashlib",
            "shutil", "glob", "fnmatch", "tempfile", "zipfile", "operator", "dataclasses", "typing", "calendar",
            "linecache", "traceback", "resource", "signal")


class _TimeLimit(BaseException):
    """Raised in the snippet when its wall time is up (a BaseException, so `except Exception` passes it)."""


def _on_alarm(signum, frame):
    raise _TimeLimit()


def _write_tree(files, dirs):
    for d in sorted(dirs):
        os.makedirs(d, exist_ok=True)
    for path, data in sorted(files.items()):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def _read_tree(skip):
    """Every folder and regular file under / except the sandbox's own mounts; links etc. are listed as ignored."""
    files, dirs, ignored = {}, set(), []
    stack = ["/"]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as e:
            ignored.append(f"{folder} (cannot be listed: {e.strerror})")
            continue
        for entry in entries:
            full = entry.path if folder != "/" else "/" + entry.name
            if full in skip:
                continue
            if entry.is_symlink():
                ignored.append(f"{full} (symbolic link; the workspace keeps only regular files and folders)")
            elif entry.is_dir(follow_symlinks=False):
                dirs.add(full)
                stack.append(full)
            elif entry.is_file(follow_symlinks=False):
                try:
                    with open(full, "rb") as f:
                        files[full] = f.read()
                except OSError as e:
                    ignored.append(f"{full} (cannot be read: {e.strerror})")
            else:
                ignored.append(f"{full} (not a regular file)")
    return files, dirs, ignored


def _user_traceback(e):
    import traceback

    tb = traceback.TracebackException(type(e), e, e.__traceback__)
    tb.stack = traceback.StackSummary.from_list([f for f in tb.stack if f.filename != "<string>"])
    return "".join(tb.format())


def _vm_size():
    """The address space in use, where /proc exists (only in the host's probe); else None."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return None


def main(answer_fd):
    # everything slow happens before the request comes: a sandbox started ahead of need waits here warm
    for name in _PRELOAD:
        __import__(name)
    import linecache
    import random
    import resource
    import signal

    req = json.loads(sys.stdin.buffer.read())
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    answer = os.fdopen(answer_fd, "wb")
    files = {p: base64.b64decode(b) for p, b in req["files"].items()}
    _write_tree(files, req["dirs"])
    skip = set(req["mounts"])
    before_files, before_dirs, _ = _read_tree(skip)
    sys.stdin = open(0, "r", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    vm = _vm_size()
    # without /proc, the host's figure: the probe's interpreter plus room for this request's data
    cap = (vm if vm is not None else req["vm_base"]) + req["memory_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    # CPU time is a backstop for code that escapes the wall-time stop; it is longer than the host's
    # hard wall deadline, so a single busy thread is always stopped as a timeout, not killed for CPU.
    cpu = int(req["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # tasks of the sandbox's uid in its own user namespace: binding where the host user is not root
    # (the kernel exempts uid 0); the host's cgroup, where it has one, bounds them either way
    tasks = int(req["tasks"])
    resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))
    random.seed(req["seed"])
    os.chdir("/")
    source = req["code"]
    linecache.cache["<run_python>"] = (len(source), None, source.splitlines(True), "<run_python>")
    status, error, code = "ok", None, 0
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
        try:
            sys.stderr.write(_user_traceback(e))
        except Exception:
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    after_files, after_dirs, ignored = _read_tree(skip)
    out = {
        "status": status, "exit_code": code, "error": error, "ignored": ignored, "vm": vm,
        "put": {p: base64.b64encode(b).decode() for p, b in sorted(after_files.items()) if before_files.get(p) != b},
        "removed": sorted(p for p in before_files if p not in after_files),
        "new_dirs": sorted(after_dirs - before_dirs), "removed_dirs": sorted(before_dirs - after_dirs),
    }
    answer.write(json.dumps(out).encode())
    answer.flush()
    os._exit(0)


if __name__ == "__main__":
    main(int(sys.argv[1]))
