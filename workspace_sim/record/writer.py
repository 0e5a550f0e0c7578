"""Appending one live episode's record, line by line: `RecordWriter`, and `DeferredRecords` for servers.

Every line is written whole and flushed to the operating system the moment it is written (or, with
`DeferredRecords`, right after the answer it belongs to), so an interrupted run keeps every line
it wrote; an episode's end fsyncs its file (`sync_file`, `sync_files` in batches). `LaterLine`
builds a line only when it is written. The text of each line is `workspace_sim.record.encoding`'s.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any, Iterator

from workspace_sim.core.blobs import BlobStore

from .encoding import dump_line, line_texts, plain
from .lines import RecordError

_TOOLS_KEPT = 64
_TOOLS_TEXT: dict[tuple[str, ...], tuple[list[Any], str, bool]] = {}  # tool names -> (tools, their dump, plain)
_TOOLS_LOCK = threading.Lock()
_FOLDERS_MADE: set[Path] = set()  # record folders this process has made sure exist


RECORD_LATER_ENV = "COWORKENV_RECORD_AFTER_ANSWER"
FALLBACK_S = 0.05
SYNC_BATCH_S = 0.2  # ended records are fsynced together, at most this long after their end
SYNCFS_FROM = 4  # a batch with this many records in one folder syncs them by one syncfs (`sync_files`)
log = logging.getLogger("coworkenv.mcp.recording")  # the name operators filter on


def record_after_answer() -> bool:
    """Whether an HTTP server writes its records' lines after the answers (`COWORKENV_RECORD_AFTER_ANSWER`, on
    unless 0/false/no; off, every line is written and flushed before its request is answered)."""
    return os.environ.get(RECORD_LATER_ENV, "1").strip().lower() not in ("0", "false", "no")


class DeferredRecords:
    """The records of one server, written after the answers: a request's answer does not wait for its lines.

    A `RecordWriter` given this queues its lines. Those queued on the event loop are written by `flush_due`,
    which the HTTP app calls when a request's answer has gone to the socket (`http.FlushRecords`), before
    the loop reads the next request (and a timer `FALLBACK_S` later, for lines queued outside a request);
    a line queued on a worker thread (a tool call run off the loop) is written by that thread at once,
    queued ones first. A writer's queue is only emptied under its lock, so each record's lines stay in
    order, and an episode's end (`RecordWriter.close`) and the record readers flush it first: an end is
    answered only once its record is complete with the operating system. The fsync of an ended episode's record runs on a thread of its own (`sync_later`), in
    batches (`SYNC_BATCH_S`: an fsync holds the file system's journal, which a record being opened waits for).
    `close` writes whatever is still queued, does every fsync owed and stops that thread; a server stopped
    by SIGINT or SIGTERM gets there (its hub ends every episode, then closes this). A process killed
    outright (SIGKILL) can lose only the lines of an answer sent and not yet followed by its flush
    (microseconds); `COWORKENV_RECORD_AFTER_ANSWER=0` writes every line before its request is answered.
    """

    def __init__(self) -> None:
        self._syncs: deque[Path] = deque()  # closed records owed an fsync (appended on the loop, taken by the thread)
        self._wake = threading.Event()  # set when a batch starts (the first record owed), not once per record
        self._stopping = threading.Event()
        self._syncer: threading.Thread | None = None
        self._start = threading.Lock()
        self._due: dict[RecordWriter, bool] = {}  # writers with lines queued on the loop, in order of waking
        self._armed: Any = None  # the loop whose fallback timer is pending (one at a time, not one per request)

    def wake(self, writer: "RecordWriter") -> None:
        """Have `writer`'s queued lines written: after the current answer on the event loop, at once elsewhere."""
        import asyncio  # here: a stdio server's first answer comes before any event loop (~13 ms of imports)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a worker thread (or no loop at all): it may write now
            self._flush(writer)
            return
        if self._armed is not loop:  # a line queued outside any request is written within FALLBACK_S all the same
            self._armed = loop
            loop.call_later(FALLBACK_S, self._fallback)
        self._due[writer] = True

    def _fallback(self) -> None:
        self._armed = None
        self.flush_due()

    def flush_due(self) -> None:
        """Write the lines queued on the event loop (the HTTP app calls this once each answer has been sent)."""
        while self._due:
            try:
                writer = next(iter(self._due))
            except (StopIteration, RuntimeError):  # emptied or changed meanwhile (a close off the loop)
                continue
            if self._due.pop(writer, False):
                self._flush(writer)

    @staticmethod
    def _flush(writer: "RecordWriter") -> None:
        try:
            writer.flush()
        except Exception as e:  # the lines stay with the writer: its next flush or its close tries again
            log.error("could not write the record %s: %s", writer.path, e)

    def sync_later(self, path: Path) -> None:
        """fsync a closed record on the sync thread (started on first use; a failure is logged). Only the first
        record of a batch wakes the thread: a thread woken per record takes the interpreter lock from the event
        loop at the next request's first system call (~20 us each time, measured on a create after an end)."""
        if self._syncer is None:
            with self._start:
                if self._syncer is None:
                    self._syncer = threading.Thread(target=self._run, name="coworkenv-record-sync", daemon=True)
                    self._syncer.start()
        self._syncs.append(path)
        if not self._wake.is_set():  # after the append: the thread clears the event before it takes a batch
            self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            # an fsync holds the file system's journal, and every record being created waits for it: a batch at
            # a time, not one per end
            self._stopping.wait(SYNC_BATCH_S)
            self._wake.clear()  # before taking the batch: a record owed after the last one taken sets it again
            batch: list[Path] = []
            while True:
                try:
                    batch.append(self._syncs.popleft())
                except IndexError:
                    break
            sync_files(batch)
            if self._stopping.is_set():
                return

    def close(self) -> None:
        """Write every queued line, do every fsync owed and stop the sync thread (idempotent; blocks)."""
        self.flush_due()
        thread = self._syncer
        if thread is not None:
            self._stopping.set()
            self._wake.set()
            thread.join()
            self._syncer = None
            self._stopping.clear()


class RecordWriter:
    """One record file, opened for appending; every line is written whole and flushed.

    With `exclusive`, the file must not exist yet (FileExistsError otherwise): one episode id, one
    record, so a second episode can never add a second header to another's file. With `later` (a
    `DeferredRecords`), lines are queued and written soon after, in order (see there); `flush` writes the
    queued ones now, and `close` does so first. Without it, each line is written before `write` returns.
    With `open_later` too, the file itself is made by the first flush (for a fresh random episode id, whose
    record cannot exist: the create's answer does not wait for the file system); a failure is then raised
    by the next write or the close.
    """

    def __init__(self, path: str | Path, exclusive: bool = False, later: DeferredRecords | None = None,
                 open_later: bool = False) -> None:
        self.path = path if isinstance(path, Path) else Path(path)
        self._mode = "x" if exclusive else "a"
        self._fh: Any = None
        if not (open_later and later is not None):
            self._open()
        self._lock = threading.Lock()  # the file's: lines are written under it only
        self._blobs = BlobStore()  # the blobs this writer has put in the file
        self._later = later
        self._queued: list[tuple[bool, dict[str, Any]]] = []  # (is a header, line) not yet written
        self._queue_lock = threading.Lock()
        self._closing = False
        self._failed: BaseException | None = None  # the last write that failed (retried by the next flush)
        self._unbuilt: BaseException | None = None  # the first line that could not be built (`_texts`)

    def _open(self) -> None:
        if self.path.parent not in _FOLDERS_MADE:  # one mkdir per folder, not one per record
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _FOLDERS_MADE.add(self.path.parent)
        try:
            self._fh = self.path.open(self._mode, encoding="utf-8")
        except FileNotFoundError:  # the folder went away meanwhile: make it again
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open(self._mode, encoding="utf-8")

    def write(self, line: dict[str, Any]) -> None:
        """Append one line (large strings go once into blob lines); flushed to the operating system at once, or
        queued (`later`)."""
        self._put(False, line)

    def write_header(self, header: dict[str, Any]) -> None:
        """Append a `header` line, the same bytes as `write(header)`: its `tools` list, the largest part and the
        same for every episode of an environment, is dumped once per tool set (compared in full, so an edited
        tool is dumped anew); the rest is dumped as usual. Nothing is fsynced (see `close`)."""
        self._put(True, header)

    def _put(self, is_header: bool, line: dict[str, Any]) -> None:
        if self._later is None:
            with self._lock:
                self._check_open()
                self._fh.write(self._text(is_header, line))
                self._fh.flush()
            return
        with self._queue_lock:
            self._check_open()
            self._queued.append((is_header, line))
            first = len(self._queued) == 1
        if first:
            self._later.wake(self)

    def _check_open(self) -> None:
        if self._closing or (self._fh is not None and self._fh.closed):
            raise RecordError(f"{self.path}: record already closed")

    def flush(self) -> None:
        """Write and flush the queued lines now (nothing to do when lines are not deferred). A failure (a full
        disk, say) is raised and nothing is dropped: lines that never reached the file stay queued, and text
        the file's buffer holds is flushed again by the next flush or the close, so a failure that clears
        loses no line and repeats none (as writing before the answer does)."""
        with self._lock:
            with self._queue_lock:
                batch, self._queued = self._queued, []
            if (not batch and self._failed is None) or (self._fh is not None and self._fh.closed):
                return
            try:
                if self._fh is None:  # opened after the first answer (`open_later`)
                    try:
                        self._open()
                    except BaseException:
                        with self._queue_lock:
                            self._queued[:0] = batch
                        raise
                if batch:
                    self._fh.write("".join(self._texts(batch)))
                self._fh.flush()
            except Exception as e:
                self._failed = e
                raise
            self._failed = None

    def _texts(self, batch: list[tuple[bool, Any]]) -> Iterator[str]:
        """Each line's text; a line that cannot be built (a bug, not the disk) is left out and logged, and the
        writer's close then raises, so the others are written and the record says it is incomplete."""
        for is_header, line in batch:
            try:
                yield self._text(is_header, line)
            except Exception as e:
                log.exception("a line of the record %s could not be built; it is left out", self.path)
                self._unbuilt = self._unbuilt or e

    def _text(self, is_header: bool, line: dict[str, Any]) -> str:
        """The file text of one line (blob lines first where it needs them)."""
        if type(line) is LaterLine:
            line = line.get()
        if is_header:
            text = _header_text(line)
            if text is not None:
                return text
        return "".join(line_texts(line, self._blobs))

    def close(self, sync: bool = True) -> None:
        """Write what is queued and close the file (idempotent); with `sync`, first make it durable (fsync). A
        caller that passes False syncs later with `sync_file` (the lines are with the operating system either
        way). A queued line that could not be written is raised here."""
        with self._queue_lock:
            self._closing = True
        failed: BaseException | None = None
        try:
            self.flush()
        except Exception as e:
            failed = e
        with self._lock:
            try:
                if self._fh is None and failed is None:  # nothing was ever queued: the file exists all the same
                    self._open()
                if self._fh is not None and not self._fh.closed:
                    try:
                        self._fh.flush()
                        if sync:
                            os.fsync(self._fh.fileno())
                    finally:
                        self._fh.close()
            except Exception as e:
                failed = failed or e
        if failed is not None:
            raise RecordError(f"{self.path}: a line could not be written: {failed}")
        if self._unbuilt is not None:
            raise RecordError(f"{self.path}: a line could not be built and is missing: "
                                  f"{type(self._unbuilt).__name__}: {self._unbuilt}")

    @property
    def closed(self) -> bool:
        """Whether the file is closed."""
        return self._fh is not None and self._fh.closed


def _header_text(header: dict[str, Any]) -> str | None:
    """A header line's text with its `tools` dump reused (see `RecordWriter.write_header`); None where the general
    way must write it (no trailing tools list, or a long string to put in a blob line)."""
    tools = header.get("tools")
    if list(header)[-1:] != ["tools"] or len(header) < 2 or not isinstance(tools, list):
        return None
    key = tuple(str((t.get("function") or {}).get("name")) if isinstance(t, dict) else "" for t in tools)
    known = _TOOLS_TEXT.get(key)
    if known is None or known[0] != tools:
        text = dump_line(tools)
        known = (tools, text, plain(text))
        with _TOOLS_LOCK:  # record threads and the event loop share the cache
            if key not in _TOOLS_TEXT and len(_TOOLS_TEXT) >= _TOOLS_KEPT:
                _TOOLS_TEXT.pop(next(iter(_TOOLS_TEXT)), None)
            _TOOLS_TEXT[key] = known
    head = dump_line({k: v for k, v in header.items() if k != "tools"})
    if not (known[2] and plain(head)):
        return None
    return f'{head[:-1]},"tools":{known[1]}}}\n'  # the dump of the whole object: "tools" is its last key


def sync_files(paths: list[Path]) -> None:
    """Make closed files durable, a batch at a time: one `syncfs` per folder's file system where the platform has
    it (Linux), else one fsync per file; failures are logged. Each fsync is a system call, and between two of them
    the calling thread takes the interpreter lock back, from the event loop when a request is being answered: a
    batch of records synced one by one cost every request meanwhile a thread switch (~20 us)."""
    folders: dict[Path, list[Path]] = {}
    for path in paths:
        folders.setdefault(path.parent, []).append(path)
    for folder, files in folders.items():
        syncfs = _syncfs() if len(files) >= SYNCFS_FROM else None
        if syncfs is not None:
            try:
                fd = os.open(folder, os.O_RDONLY)
            except OSError:
                fd = -1
            if fd >= 0:
                try:
                    if syncfs(fd) == 0:
                        continue
                finally:
                    os.close(fd)
        for path in files:  # one at a time: no syncfs here, or it failed
            try:
                sync_file(path)
            except OSError as e:
                log.warning("could not sync the record %s to disk: %s", path, e)


_SYNCFS: list[Any] = []


def _syncfs() -> Any:
    """libc's `syncfs(fd)` on Linux 5.8 and later (before 5.8 it did not report write-back errors, which an fsync
    does), or None (looked up once, on the sync thread)."""
    if not _SYNCFS:
        found = None
        if sys.platform.startswith("linux") and _kernel_at_least(5, 8):
            try:
                import ctypes

                found = ctypes.CDLL(None, use_errno=True).syncfs
                found.argtypes, found.restype = [ctypes.c_int], ctypes.c_int
            except (OSError, AttributeError):
                found = None
        _SYNCFS.append(found)
    return _SYNCFS[0]


def _kernel_at_least(major: int, minor: int) -> bool:
    try:
        numbers = [int(p) for p in os.uname().release.split("-")[0].split(".")[:2]]
    except (ValueError, AttributeError):
        return False
    return len(numbers) == 2 and tuple(numbers) >= (major, minor)


def sync_file(path: str | Path) -> None:
    """Make a closed file durable (fsync through a fresh descriptor: the kernel syncs the file, whichever
    descriptor asks); a file that is gone by now is left alone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)




class LaterLine:
    """A record line made the first time it is asked for, and kept: an episode's event line is built after the
    call's answer (with the other deferred record work, `DeferredRecords`) instead of before it, the same dict
    then. `RecordWriter` takes one wherever it takes a line; the event it reads is not changed after its call
    (the fields `Event.to_json` reads are fixed when the call is logged)."""

    __slots__ = ("_make", "_args", "_line")

    def __init__(self, make: Any, *args: Any) -> None:
        self._make, self._args, self._line = make, args, None

    def get(self) -> dict[str, Any]:
        """The line (made on the first call)."""
        line = self._line
        if line is None:
            line = self._line = self._make(*self._args)
        return line

