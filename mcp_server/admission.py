"""Server-wide admission of slow tool calls: a bounded pool of their own, and a retryable `busy` beyond it.

Tool calls run on worker threads. Left on one shared pool, calls that take seconds (the sandboxes:
`run_python`, `run_command`) of many episodes would hold every worker, and a cheap read of another
episode would wait behind them. Here slow calls run on their own thread limiter, bounded by
`max_slow` per server process (`COWORKENV_MAX_SLOW_CALLS`, default 8); a slow call that finds every
slot taken is not queued but answered at once with a `busy` tool error that says to retry (nothing
ran, nothing is recorded). Per episode at most one call runs at a time (the episode's lock), so one
episode holds at most one slot. Fast calls keep the default pool to themselves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

import anyio
import anyio.to_thread

SLOW_TOOLS = frozenset({"run_python", "run_command"})
MAX_SLOW_ENV = "COWORKENV_MAX_SLOW_CALLS"
DEFAULT_MAX_SLOW = 8


class Busy(Exception):
    """Every slow-call slot of the server is taken; the message says so and that a retry may succeed."""


def max_slow_from_env() -> int:
    """`COWORKENV_MAX_SLOW_CALLS` (1 to 1024), default 8; a bad value raises ValueError naming it."""
    raw = os.environ.get(MAX_SLOW_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_SLOW
    if not raw.isdigit() or not 1 <= int(raw) <= 1024:
        raise ValueError(f"{MAX_SLOW_ENV} must be a whole number from 1 to 1024, got {raw!r}")
    return int(raw)


@dataclass
class Admission:
    """The slow-call slots of one server process; `run` runs a call on the right pool or raises Busy."""

    max_slow: int = DEFAULT_MAX_SLOW
    slow_tools: frozenset[str] = SLOW_TOOLS
    _slots: Any = field(default=None, repr=False)
    _threads: Any = field(default=None, repr=False)

    def _ready(self) -> None:
        if self._slots is None:
            self._slots = anyio.Semaphore(self.max_slow)
            self._threads = anyio.CapacityLimiter(self.max_slow)

    @property
    def running_slow(self) -> int:
        """Slow calls running now."""
        return 0 if self._slots is None else self.max_slow - self._slots.value

    async def run(self, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run `fn(*args)` on a worker thread: a slow tool on its own bounded pool (Busy when it is full),
        any other on the default pool."""
        if name not in self.slow_tools:
            return await anyio.to_thread.run_sync(fn, *args)
        self._ready()
        try:
            self._slots.acquire_nowait()
        except anyio.WouldBlock:
            raise Busy(f"the server is running its maximum of {self.max_slow} slow calls ({', '.join(sorted(self.slow_tools))}) "
                       f"at once; {name} did not run: retry in a few seconds") from None
        try:
            return await anyio.to_thread.run_sync(fn, *args, limiter=self._threads)
        finally:
            self._slots.release()


_SHARED: Admission | None = None


def shared() -> Admission:
    """The process's admission (one per server process, so every hub and episode shares its bound)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = Admission(max_slow_from_env())
    return _SHARED
