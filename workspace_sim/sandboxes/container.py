"""One Docker container per workspace: started on first use, kept in sync with the files, removed at the end.

The container runs as an unprivileged idle process with no network, all capabilities dropped,
a read-only root file system, and size-bounded tmpfs mounts for /work (the workspace files) and
/tmp. Each `run` makes /work equal to the workspace's files (sending only what changed since the
container last reported), runs the command as the sandbox user with a wall-time limit, kills
whatever the command left running, and reads /work back so the caller can apply the delta.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workspace_sim.sandboxes.engine import LABEL, OWNER_LABEL, client, owner_label, reap_once, short_error
from workspace_sim.sandboxes.output import BoundedOutput
from workspace_sim.sandboxes.settings import SandboxSettings
from workspace_sim.sandboxes.tarball import ArchiveTooLarge, pack, unpack
from workspace_sim.sandboxes.tree import Delta, Tree, delta

_log = logging.getLogger(__name__)

WORKDIR = "/work"
_IDLE_USER = "65534:65534"  # the container's own process; commands run as settings.user
_KILL_GRACE_S = 5.0
_ENV = {"HOME": "/tmp", "LANG": "C.UTF-8", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
# run the command with no stdin, then kill whatever it left running (every process of the sandbox
# user but this shell), so nothing changes /work between calls
_RUN = 'cd /work || exit 125; sh -c "$1" </dev/null; rc=$?; kill -9 -1 2>/dev/null; exit $rc'
_READ = "cd /work && chmod -R u+rwX . 2>/dev/null; tar -cf - ."


class SandboxError(RuntimeError):
    """The sandbox itself failed (engine, image, limits); the message is written for the model."""


@dataclass
class CommandOutcome:
    """What a command did: exit status, bounded output, and the file delta (None when unknown)."""

    exit_code: int | None
    stdout: str
    stderr: str
    output_truncated: bool
    timed_out: bool
    delta: Delta | None
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class ContainerSandbox:
    """The Docker sandbox of one workspace; thread-safe, one command at a time."""

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings
        self._container: Any = None
        self._synced: Tree = Tree()  # what /work holds now, as last read back
        self._foreign: list[str] = []  # names in /work the workspace cannot hold (links, odd names)
        self._lock = threading.Lock()

    @property
    def container_id(self) -> str | None:
        """The id of the running container, if one was started."""
        return self._container.id if self._container is not None else None

    # --- lifecycle -----------------------------------------------------------------------------

    def _start(self) -> Any:
        s = self.settings
        reap_once(s.docker_host)
        from docker.types import LogConfig

        tmpfs_opts = f"size={s.work_mb}m,exec"
        try:
            return client(s.docker_host).containers.run(
                s.image,
                ["sh", "-c", "while :; do sleep 3600; done"],
                detach=True, user=_IDLE_USER, network_mode="none", init=True,
                mem_limit=f"{s.memory_mb}m", memswap_limit=f"{s.memory_mb}m", nano_cpus=int(s.cpus * 1e9),
                pids_limit=s.pids, cap_drop=["ALL"], security_opt=["no-new-privileges"], read_only=True,
                tmpfs={WORKDIR: f"{tmpfs_opts},uid={s.uid},gid={s.gid},mode=0755", "/tmp": f"{tmpfs_opts},mode=1777"},
                environment=_ENV, working_dir=WORKDIR, log_config=LogConfig(type="none"),
                labels={LABEL: "1", OWNER_LABEL: owner_label()}, stop_signal="SIGKILL",
            )
        except Exception as e:
            raise SandboxError(
                f"could not start the sandbox container from image {s.image!r}: {short_error(e)}") from None

    def _ensure(self) -> Any:
        if self._container is None:
            self._container = self._start()
            self._synced, self._foreign = Tree(), []
        return self._container

    def _reset(self, why: str) -> None:
        """Throw the container away (the next call starts a fresh one)."""
        _log.info("resetting sandbox container: %s", why)
        container, self._container = self._container, None
        self._synced, self._foreign = Tree(), []
        if container is not None:
            try:
                container.remove(force=True)
            except Exception as e:  # gone already is fine
                _log.info("removing sandbox container %s: %s", container.short_id, short_error(e))

    def close(self) -> None:
        """Remove the container (idempotent)."""
        with self._lock:
            self._reset("workspace closed")

    # --- running -------------------------------------------------------------------------------

    def run(self, tree: Tree, command: str, mtime: float = 0.0) -> CommandOutcome:
        """Make /work equal `tree`, run `command` there, and return its outcome and file delta.

        Files copied in get modification time `mtime` (seconds since the epoch; the tool passes the
        simulated clock, so listings do not depend on when the episode ran).
        """
        with self._lock:
            try:
                return self._run(tree, command, mtime)
            except SandboxError:
                self._reset("sandbox error")
                raise
            except Exception as e:  # engine trouble mid-call: a clean container next time
                self._reset(f"unexpected {type(e).__name__}")
                raise SandboxError(f"the sandbox failed: {short_error(e)}; it was reset, try again") from None

    def _run(self, tree: Tree, command: str, mtime: float) -> CommandOutcome:
        s = self.settings
        container = self._ensure()
        self._sync(container, tree, mtime)
        out, err = BoundedOutput(s.output_bytes), BoundedOutput(s.output_bytes)
        code, pump = self._exec(container, ["sh", "-c", _RUN, "coworkenv-run", command], None,
                                s.timeout_s, out.write, err.write)
        finished = code is not None
        notes: list[str] = []
        if not finished:
            notes.append(f"killed: the command ran past the {s.timeout_s:g} s time limit")
            self._kill_all(container)
            pump.join(_KILL_GRACE_S)
            if pump.is_alive():  # e.g. the process limit leaves no room even for `kill`
                self._reset("could not stop a timed-out command")
                notes.append("the sandbox was reset; changes to files by this command were lost")
                return CommandOutcome(None, out.text(), err.text(), out.truncated or err.truncated, True, None,
                                      notes=notes)
        elif code == 137:
            notes.append(f"killed (signal 9): probably the memory limit ({s.memory_mb} MB) or the process "
                         f"limit ({s.pids})")
        if out.truncated or err.truncated:
            notes.append(f"output truncated to {s.output_bytes} bytes per stream")
        after, ignored, foreign = self._read_back(container)
        self._synced, self._foreign = after, foreign
        return CommandOutcome(code if finished else None, out.text(), err.text(), out.truncated or err.truncated,
                              not finished, delta(tree, after), ignored, notes)

    def _sync(self, container: Any, tree: Tree, mtime: float) -> None:
        d = delta(self._synced, tree)
        doomed = ["." + p for p in (*d.removed, *d.removed_dirs)] + self._foreign
        if not d and not doomed:
            return
        script = "cd /work || exit 125"
        data = None
        if d.put or d.new_dirs:
            data = pack(d.put, d.new_dirs, self.settings.uid, self.settings.gid, mtime)
            script += "; tar -xf - || exit 126"
        batches = _argv_batches(doomed)  # never one command line past the kernel's argument limit
        if batches:
            script += '; rm -rf -- "$@" || exit 127'
        err = BoundedOutput(2000)
        code, _ = self._exec(container, ["sh", "-c", script, "coworkenv-sync", *(batches[0] if batches else [])],
                             data, 60.0, lambda b: None, err.write)
        for batch in batches[1:]:
            if code != 0:
                break
            code, _ = self._exec(container, ["sh", "-c", 'cd /work && rm -rf -- "$@" || exit 127', "coworkenv-sync",
                                             *batch], None, 60.0, lambda b: None, err.write)
        if code != 0:
            problem = err.text().strip() or f"exit code {code}"
            if "space" in problem.lower():
                problem = f"the workspace files do not fit in /work ({self.settings.work_mb} MB): {problem}"
            raise SandboxError(f"could not copy the workspace files into the sandbox: {problem}")
        self._synced, self._foreign = tree, []

    def _read_back(self, container: Any) -> tuple[Tree, list[str], list[str]]:
        limit = self.settings.work_mb * (1 << 20) + (4 << 20)  # tar headers on top of a full /work
        buf = bytearray()
        err = BoundedOutput(2000)
        too_big = False

        def keep(chunk: bytes) -> None:
            nonlocal too_big
            if len(buf) + len(chunk) > limit:
                too_big = True
            else:
                buf.extend(chunk)

        code, _ = self._exec(container, ["sh", "-c", _READ], None, 60.0, keep, err.write)
        if too_big or code != 0:
            raise SandboxError(f"could not read the files back from the sandbox: {err.text().strip() or code}")
        try:
            unpacked = unpack(bytes(buf), self.settings.work_mb * (1 << 20))
        except ArchiveTooLarge as e:
            raise SandboxError(f"the files in /work are too large: {e}") from None
        except Exception as e:
            raise SandboxError(f"the files read back from the sandbox are unreadable: {short_error(e)}") from None
        return unpacked.tree, unpacked.ignored, unpacked.foreign

    def _kill_all(self, container: Any) -> None:
        """Kill every process of the sandbox user (best effort; the caller checks the result)."""
        try:
            self._exec(container, ["sh", "-c", "kill -9 -1; exit 0"], None, _KILL_GRACE_S,
                       lambda b: None, lambda b: None)
        except Exception as e:
            _log.info("kill in sandbox failed: %s", short_error(e))

    def _exec(
        self, container: Any, cmd: list[str], stdin: bytes | None, timeout_s: float,
        on_out: Callable[[bytes], None], on_err: Callable[[bytes], None],
    ) -> tuple[int | None, threading.Thread]:
        """Run `cmd` as the sandbox user; returns its exit code (None if it is still running when
        the time runs out) and the thread pumping its output, which ends when the process does.

        Output is passed to the callbacks as it arrives.
        """
        from docker.utils.socket import frames_iter

        api = container.client.api
        eid = api.exec_create(container.id, cmd, stdin=stdin is not None, user=self.settings.user,
                              workdir=WORKDIR, environment=_ENV)["Id"]
        sock = api.exec_start(eid, socket=True)
        raw = getattr(sock, "_sock", sock)
        failure: list[BaseException] = []

        def pump() -> None:
            try:
                if stdin is not None:
                    raw.sendall(stdin)
                    raw.shutdown(socket.SHUT_WR)
                for stream, data in frames_iter(sock, tty=False):
                    (on_out if stream == 1 else on_err)(data)
            except BaseException as e:  # reported below unless the time ran out first
                failure.append(e)
            finally:
                try:
                    sock.close()
                except Exception:
                    pass

        thread = threading.Thread(target=pump, name="sandbox-exec", daemon=True)
        thread.start()
        thread.join(timeout_s)
        if thread.is_alive():
            return None, thread
        if failure:
            raise SandboxError(f"lost the connection to the sandbox: {short_error(failure[0])}")
        for _ in range(50):  # the stream can close a moment before the engine records the exit
            info = api.exec_inspect(eid)
            if not info.get("Running") and info.get("ExitCode") is not None:
                return info["ExitCode"], thread
            time.sleep(0.01)
        raise SandboxError("the sandbox did not report how the command ended")


ARGV_BATCH_BYTES = 64 * 1024  # well under Linux's 128 KiB per string and 2 MiB per command line


def _argv_batches(names: list[str], most: int = ARGV_BATCH_BYTES) -> list[list[str]]:
    """`names` cut into consecutive batches whose encoded size stays under `most` bytes each (a longer
    name goes alone), so removing thousands of names never fails with "argument list too long"."""
    batches: list[list[str]] = []
    size = most
    for n in names:
        cost = len(n.encode("utf-8", "surrogateescape")) + 1
        if size + cost > most:
            batches.append([])
            size = 0
        batches[-1].append(n)
        size += cost
    return batches
