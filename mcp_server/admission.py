"""Server-wide admission of slow tool calls: a bounded pool of their own, and a paced, retryable `busy`.

Tool calls run on worker threads. Left on one shared pool, calls that take seconds (the sandboxes:
`run_python`, `run_command`; `transcribe_audio`, which may wait on a speech-to-text endpoint) of many episodes would hold every worker, and a cheap read of another
episode would wait behind them. Here slow calls run on their own thread limiter, bounded by
`max_slow` per server process (`COWORKENV_MAX_SLOW_CALLS`, default 8); a slow call that finds every
slot taken is not queued but answered at once, on the event loop and without a thread, with a
`busy` tool error (nothing ran, nothing is recorded). Per episode at most one call runs at a time
(the episode's lock), so one episode holds at most one slot. Fast calls keep the default pool to
themselves: they never wait for a slow call's slot or thread.

Point reads of the in-memory workspace (`INLINE_TOOLS`: one file's text, a listing, one record by id)
take tens of microseconds, less than the hop to a worker thread and back (~0.5 ms on a loaded
machine), so they run inline on the event loop, still one at a time per episode under its lock. Only
reads whose cost does not grow with what the agent asks for are there: searches, trees, greps, media
and document readers, queries and the sandboxes keep their threads. A name in `slow_tools` is never
inline. `COWORKENV_INLINE_READS=0` sends every call to a thread as before.

Busy answers carry `retry_after_s`, and clients wait that long before they ask again. The server
paces the retries: it counts the episodes it has recently told to wait and spreads them so that all
of them together retry about `RETRY_RATE` times a second (each delay jittered by +-50%, so they do
not come back in step). Fifty episodes told "retry in 0.5 s" came back as bursts of 42 requests
every half second; each burst held the event loop (and the GIL) long enough to add ~100 ms to a
cheap call of another episode that arrived with it.
"""

from __future__ import annotations

import os
import random
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

import anyio
import anyio.to_thread

SLOW_TOOLS = frozenset({"run_python", "run_command", "transcribe_audio"})
# Read-only point reads of in-memory state (tests/mcp_server/test_hardening_admission.py checks each is a registered read-only
# tool of a service without a sandbox); anything whose cost grows with the request stays off the loop.
INLINE_TOOLS = frozenset({
    "read_text_file", "list_directory", "get_file_info",
    "get_event", "get_contact", "get_account", "get_deal", "get_database", "get_transaction", "get_invoice",
    "get_integration", "get_product", "get_article", "get_note", "get_job", "get_ticket", "get_task",
    "list_mail_folders", "list_notebooks", "list_spaces", "list_task_lists", "list_databases", "list_feeds",
})
INLINE_ENV = "COWORKENV_INLINE_READS"
MAX_SLOW_ENV = "COWORKENV_MAX_SLOW_CALLS"
DEFAULT_MAX_SLOW = 8
RETRY_RATE = 20.0  # busy retries a second the server invites, from all waiting episodes together
RETRY_MIN_S, RETRY_MAX_S = 1.0, 30.0
JITTER = 0.5  # each delay is drawn from [1 - JITTER, 1 + JITTER] times the paced one


class Busy(Exception):
    """Every slow-call slot of the server is taken; the message says so and when to retry (`retry_after_s`)."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def max_slow_from_env() -> int:
    """`COWORKENV_MAX_SLOW_CALLS` (1 to 1024), default 8; a bad value raises ValueError naming it."""
    raw = os.environ.get(MAX_SLOW_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_SLOW
    if not raw.isdigit() or not 1 <= int(raw) <= 1024:
        raise ValueError(f"{MAX_SLOW_ENV} must be a whole number from 1 to 1024, got {raw!r}")
    return int(raw)


def inline_tools_from_env() -> frozenset[str]:
    """`INLINE_TOOLS`, or none when `COWORKENV_INLINE_READS` is 0 (every call on a worker thread); a value other
    than 0 or 1 raises ValueError naming it."""
    raw = os.environ.get(INLINE_ENV, "").strip()
    if raw not in ("", "0", "1"):
        raise ValueError(f"{INLINE_ENV} must be 0 or 1, got {raw!r}")
    return frozenset() if raw == "0" else INLINE_TOOLS


@dataclass
class Admission:
    """The slow-call slots of one server process; `run` runs a call on the right pool or raises Busy."""

    max_slow: int = DEFAULT_MAX_SLOW
    slow_tools: frozenset[str] = SLOW_TOOLS
    retry_rate: float = RETRY_RATE
    inline_tools: frozenset[str] = field(default_factory=lambda: inline_tools_from_env())
    rng: random.Random = field(default_factory=random.Random, repr=False)  # jitter only: never recorded
    _slots: Any = field(default=None, repr=False)
    _threads: Any = field(default=None, repr=False)
    # waiter -> when its wait is over (it has retried or given up by then); oldest first
    _waiting: "OrderedDict[Hashable, float]" = field(default_factory=OrderedDict, repr=False)

    def _ready(self) -> None:
        if self._slots is None:
            self._slots = anyio.Semaphore(self.max_slow)
            self._threads = anyio.CapacityLimiter(self.max_slow)

    @property
    def running_slow(self) -> int:
        """Slow calls running now."""
        return 0 if self._slots is None else self.max_slow - self._slots.value

    @property
    def waiting(self) -> int:
        """Callers told busy whose retry is still due (the count the retry delay is paced by)."""
        self._forget(time.monotonic())
        return len(self._waiting)

    def retry_after(self, waiter: Hashable) -> float:
        """The delay to give `waiter` with a busy answer: the waiting callers spread over `retry_rate`
        retries a second (at least RETRY_MIN_S, at most RETRY_MAX_S), jittered; the waiter is counted."""
        now = time.monotonic()
        self._forget(now)
        self._waiting.pop(waiter, None)
        paced = min(RETRY_MAX_S, max(RETRY_MIN_S, (len(self._waiting) + 1) / self.retry_rate))
        delay = round(paced * self.rng.uniform(1 - JITTER, 1 + JITTER), 2)
        self._waiting[waiter] = now + 2 * delay + RETRY_MIN_S  # grace for the round trip
        return delay

    def _forget(self, now: float) -> None:
        while self._waiting:
            key, due = next(iter(self._waiting.items()))
            if due > now:
                break
            del self._waiting[key]

    async def run(self, name: str, fn: Callable[..., Any], *args: Any, waiter: Hashable | None = None) -> Any:
        """Run `fn(*args)`: a point read (`inline_tools`) on the event loop itself, a slow tool on a worker thread
        of its own bounded pool (Busy at once when it is full; `waiter`, e.g. the episode's id, is who is told to
        wait), any other on a worker thread of the default pool."""
        if name in self.inline_tools and name not in self.slow_tools:
            return fn(*args)
        if name not in self.slow_tools:
            return await anyio.to_thread.run_sync(fn, *args)
        self._ready()
        try:
            self._slots.acquire_nowait()
        except anyio.WouldBlock:
            delay = self.retry_after(waiter if waiter is not None else object())
            tools = ", ".join(sorted(self.slow_tools))
            raise Busy(f"the server is running its maximum of {self.max_slow} slow calls ({tools}) at once; "
                       f"{name} did not run: retry in {delay:g} s", delay) from None
        self._waiting.pop(waiter, None)
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
