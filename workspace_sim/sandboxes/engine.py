"""The Docker engine: one client per engine URL, whether it can serve the shell tool, and the reaper.

Every sandbox container carries labels naming this coworkenv process (host, pid and the pid's
start time). Containers whose owner process is gone (it was killed before it could clean up) are
removed by `reap_orphans`, which runs before this process starts its first container.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import Any

_log = logging.getLogger(__name__)

LABEL = "coworkenv.sandbox"
OWNER_LABEL = "coworkenv.owner"
_OK_TTL_S = 30.0  # a positive check is reused this long; a negative one is never cached

_clients: dict[str | None, Any] = {}
_checked: dict[tuple[str | None, str], float] = {}
_reaped: set[str | None] = set()
_lock = threading.Lock()


def _forget_after_fork() -> None:
    # a forked child must not share the parent's HTTP connections, and reaps for itself
    global _lock
    _clients.clear()
    _checked.clear()
    _reaped.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


class EngineUnavailable(RuntimeError):
    """No Docker engine could be reached (the message says which and why)."""


def client(host: str | None = None) -> Any:
    """A Docker client for `host` (None: DOCKER_HOST or the local socket), shared in this process."""
    with _lock:
        c = _clients.get(host)
    if c is not None:
        return c
    try:
        import docker

        c = docker.DockerClient(base_url=host, timeout=60) if host else docker.from_env(timeout=60)
    except Exception as e:
        where = host or os.environ.get("DOCKER_HOST") or "the local socket"
        raise EngineUnavailable(f"no Docker engine reachable at {where}: {short_error(e)}") from None
    with _lock:
        return _clients.setdefault(host, c)


def short_error(e: BaseException) -> str:
    """An exception as one short line (type and last line of its message), for errors and logs."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[-1] if text else ''}"[:300]


def engine_status(host: str | None, image: str) -> tuple[bool, str]:
    """Whether the engine answers and holds `image`, with the reason when not (for the tool list)."""
    key = (host, image)
    if time.monotonic() - _checked.get(key, -1e9) < _OK_TTL_S:
        return True, ""
    try:
        c = client(host)
        c.ping()
    except EngineUnavailable as e:
        return False, str(e)
    except Exception as e:
        with _lock:
            _clients.pop(host, None)
        return False, f"the Docker engine does not answer: {short_error(e)}"
    try:
        c.images.get(image)
    except Exception as e:
        if type(e).__name__ == "ImageNotFound":
            return False, f"the sandbox image {image!r} is missing; build it with `coworkenv sandbox build-image`"
        return False, f"cannot inspect the sandbox image {image!r}: {short_error(e)}"
    _checked[key] = time.monotonic()
    return True, ""


def _start_ticks(pid: int) -> str | None:
    """The start time of a process in clock ticks since boot (tells a pid's reuse apart), if known."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def owner_label() -> str:
    """The owner label value of this process: 'host:pid:start'."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid) or '?'}"


def _owner_alive(owner: str) -> bool | None:
    """Whether the process an owner label names is still running; None if it is on another host."""
    try:
        host, pid_text, start = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != socket.gethostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    current = _start_ticks(pid)
    return start == "?" or current is None or current == start


def reap_orphans(host: str | None = None, everything: bool = False) -> list[str]:
    """Remove sandbox containers whose owning process on this host has died; returns their ids.

    With `everything`, remove every coworkenv sandbox container on the engine, live owners too.
    """
    c = client(host)
    removed = []
    for container in c.containers.list(all=True, filters={"label": LABEL}):
        owner = container.labels.get(OWNER_LABEL, "")
        if everything or _owner_alive(owner) is False:
            try:
                container.remove(force=True)
                removed.append(container.id)
            except Exception as e:  # already going away, or removed by another reaper
                _log.info("could not remove orphan sandbox %s: %s", container.short_id, short_error(e))
    if removed:
        _log.warning("removed %d orphaned sandbox container(s)", len(removed))
    return removed


def reap_once(host: str | None) -> None:
    """Reap orphans the first time this process starts a container on an engine."""
    with _lock:
        if host in _reaped:
            return
        _reaped.add(host)
    try:
        reap_orphans(host)
    except Exception as e:  # reaping is housekeeping; it must not stop the sandbox from starting
        _log.warning("could not look for orphaned sandbox containers: %s", short_error(e))
