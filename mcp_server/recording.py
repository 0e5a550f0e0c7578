"""Append-only JSONL episode records for MCP episodes, in the project's record format.

Lines follow docs/episode-record.md (`header`, `event`, `final`; the MCP server writes no `step`
lines, since it never sees assistant turns): every tool call is one `event` line, written and
flushed the moment it is answered (stdio), or right after the answer by the HTTP server
(`DeferredRecords`: in order, and complete before an episode's end is answered), so a killed client
loses nothing already answered, nor does a server stopped by SIGINT or SIGTERM.
An episode's record file may hold several segments (each a complete episode in the format): a
reset or a restore ends the current segment and starts the next, named `<episode>.<n>`. Each
segment is replayable on its own from a fresh workspace: a restored segment begins with the events
that led to the snapshot. `header.policy.settings` says where the environment came from, so
`coworkenv eval` can rebuild and judge an unfinished record.

The reader here is lenient where a crash can leave damage (an incomplete last line is skipped and
reported) and strict elsewhere (a malformed line in the middle is an error naming file and line).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

from workspace_sim import Event, Workspace
from workspace_sim.core.blobs import BLOB_MIN_CHARS, BlobError, BlobReader, BlobStore
from workspace_sim.core.events import render_default

from .jsoncheck import safe_dumps


RECORD_VERSION = 1
POLICY_NAME = "mcp-client"


class RecordReadError(ValueError):
    """A record that cannot be read; the message names the file and line."""


def _dump(obj: dict[str, Any]) -> str:
    return safe_dumps(obj, separators=(",", ":"), default=str)


def _plain(text: str) -> bool:
    """Whether a dumped line can be written as it is: it holds no key that looks like a reference (which the
    store escapes) and no string long enough to become a blob. Without an escaped quote in the text, every
    string is one piece between two quotes, so a short piece bounds every string; with one, the slow path
    decides (a false "no" only costs time)."""
    if '"$blob"' in text or '"$esc"' in text:
        return False
    if len(text) < BLOB_MIN_CHARS:
        return True
    return '\\"' not in text and max(map(len, text.split('"'))) < BLOB_MIN_CHARS


_TOOLS_KEPT = 64
_TOOLS_TEXT: dict[tuple[str, ...], tuple[list[Any], str, bool]] = {}  # tool names -> (tools, their dump, plain)
_TOOLS_LOCK = threading.Lock()
_FOLDERS_MADE: set[Path] = set()  # record folders this process has made sure exist


RECORD_LATER_ENV = "COWORKENV_RECORD_AFTER_ANSWER"
FALLBACK_S = 0.05
SYNC_BATCH_S = 0.2  # ended records are fsynced together, at most this long after their end
SYNCFS_FROM = 4  # a batch with this many records in one folder syncs them by one syncfs (`sync_files`)
log = logging.getLogger("coworkenv.mcp.recording")


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
            raise RecordReadError(f"{self.path}: record already closed")

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
        text = _dump(line)
        if _plain(text):
            return text + "\n"
        obj, new = self._blobs.externalize(line)
        return "".join(_dump(b) + "\n" for b in new) + _dump(obj) + "\n"

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
            raise RecordReadError(f"{self.path}: a line could not be written: {failed}")
        if self._unbuilt is not None:
            raise RecordReadError(f"{self.path}: a line could not be built and is missing: "
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
        text = _dump(tools)
        known = (tools, text, _plain(text))
        with _TOOLS_LOCK:  # record threads and the event loop share the cache
            if key not in _TOOLS_TEXT and len(_TOOLS_TEXT) >= _TOOLS_KEPT:
                _TOOLS_TEXT.pop(next(iter(_TOOLS_TEXT)), None)
            _TOOLS_TEXT[key] = known
    head = _dump({k: v for k, v in header.items() if k != "tools"})
    if not (known[2] and _plain(head)):
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


def header_line(segment_id: str, env: Any, env_hash: str, workspace: Workspace, settings: dict[str, Any]) -> dict[str, Any]:
    """The `header` line of a segment: environment, start-state hash, offered tools, where it came from."""
    return {
        "type": "header", "record_version": RECORD_VERSION, "episode_id": segment_id, "env_id": str(env.id),
        "env_hash": env_hash, "initial_state_hash": workspace.initial.content_hash,
        "capabilities": list(getattr(env, "capabilities", []) or []),
        "policy": {"name": POLICY_NAME, "settings": settings}, "seed": workspace.config.seed, "group": None,
        "tools": [t.openai_schema() for t in workspace.tools.values()],
    }


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


def event_line(event: Event, segment_id: str, turn: int) -> dict[str, Any]:
    """The `event` line of a workspace event (its `to_json()` plus type, episode and turn)."""
    return {**event.to_json(), "type": "event", "episode_id": segment_id, "turn": turn}


def transcript(task: str, events: Iterable[dict[str, Any]], renders: dict[str, Any], final_answer: str | None) -> list[dict[str, Any]]:
    """The episode as a Hugging Face chat transcript: the task, each call and its result text, the answer."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for ev in events:
        if ev.get("kind") == "message":
            if len(messages) == 1 and ev.get("role") == "user" and ev.get("content") == task:
                continue  # the request, logged as turn 0 by an MCP-only episode: already the first message
            if ev.get("role") in ("user", "assistant") and ev.get("content") is not None:
                messages.append({"role": ev["role"], "content": ev["content"]})
            continue
        if ev.get("kind") != "call":
            continue
        call_id = f"call_{ev['index']}"
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "id": call_id, "function": {"name": ev["tool"], "arguments": args}}]})
        if ev.get("ok"):
            render = renders.get(ev["tool"]) or render_default
            try:
                text = render(ev.get("result"))
            except Exception:
                text = render_default(ev.get("result"))
        else:
            err = ev.get("error") or {}
            text = f"Error ({err.get('code')}): {err.get('message')}"
        messages.append({"role": "tool", "name": ev["tool"], "tool_call_id": call_id, "content": text})
    last = messages[-1]
    if final_answer is not None and not (last["role"] == "assistant" and last.get("content") == final_answer
                                         and not last.get("tool_calls")):
        messages.append({"role": "assistant", "content": final_answer})  # unless already logged as the last message
    return messages


def violations_and_faults(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Blocked calls and injected faults among the events, as the `final` line lists them."""
    calls = [e for e in events if e.get("kind") == "call"]
    violations = [{"event_index": e["index"], "tool": e["tool"], "policy": e["policy"],
                   "message": (e.get("error") or {}).get("message", "")} for e in calls if e.get("policy")]
    faults = []
    for i, e in enumerate(calls):
        if not e.get("ok") and (e.get("error") or {}).get("code") == "fault":
            handled = any(later.get("ok") and later.get("tool") == e["tool"] for later in calls[i + 1:])
            faults.append({"event_index": e["index"], "tool": e["tool"], "message": e["error"]["message"],
                           "handled": handled})
    return violations, faults


def final_line(
    segment_id: str, task: str, events: list[dict[str, Any]], renders: dict[str, Any], evaluation: dict[str, Any],
    stop_reason: str, final_answer: str | None, timings: dict[str, float],
) -> dict[str, Any]:
    """The `final` line: transcript, evaluation, reward (the score), why it stopped, timings."""
    violations, faults = violations_and_faults(events)
    return {
        "type": "final", "episode_id": segment_id,
        "messages": transcript(task, events, renders, final_answer),
        "evaluation": evaluation, "reward": float(evaluation.get("score", 0.0)), "stop_reason": stop_reason,
        "final_answer": final_answer, "timings": {k: round(v, 6) for k, v in timings.items()}, "tokens": [],
        "policy_violations": violations, "fault_errors": faults,
    }


def now_iso() -> str:
    """The wall-clock time, for record settings (not part of any workspace state)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


@dataclass
class RecordedSegment:
    """One segment (an episode in the record format) as read back: header, events, final line if any."""

    file: Path
    header: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] | None = None

    @property
    def segment_id(self) -> str:
        """The segment's id (`episode_id` in the lines)."""
        return str(self.header["episode_id"])

    @property
    def settings(self) -> dict[str, Any]:
        """The header's `policy.settings` (source, transport, episode, start)."""
        policy = self.header.get("policy") or {}
        return policy.get("settings") or {} if isinstance(policy, dict) else {}

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The tool-call events."""
        return [e for e in self.events if e.get("kind") == "call"]

    @property
    def evaluation(self) -> dict[str, Any] | None:
        """The evaluation of the final line, if the segment is finished."""
        return self.final.get("evaluation") if self.final else None


@dataclass
class RecordFile:
    """Every segment of one record file, and any damage the reader skipped (with its line number)."""

    path: Path
    segments: list[RecordedSegment]
    skipped: list[str] = field(default_factory=list)
    ends_cleanly: bool = True


def read_record_file(path: str | Path) -> RecordFile:
    """Read a record file; an incomplete last line is skipped and noted, any other damage is an error."""
    p = Path(path)
    if not p.is_file():
        raise RecordReadError(f"{p}: no such record file")
    try:
        raw = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise RecordReadError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    lines = raw.split("\n")
    ends_cleanly = lines[-1] == ""
    if ends_cleanly:
        lines.pop()
    out = RecordFile(p, [], ends_cleanly=ends_cleanly)
    by_id: dict[str, RecordedSegment] = {}
    blobs = BlobReader()
    for n, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        where = f"{p}:{n}"
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            if n == len(lines) and not ends_cleanly:
                out.skipped.append(f"{where}: incomplete last line ({len(text)} characters) ignored")
                continue
            raise RecordReadError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
        try:  # large strings are stored once, in blob lines (workspace_sim.core.blobs)
            obj = blobs.take(obj, text)
        except BlobError as e:
            raise RecordReadError(f"{where}: {e}") from None
        if obj is None:
            continue
        if not isinstance(obj, dict) or obj.get("type") not in ("header", "event", "step", "final"):
            raise RecordReadError(f"{where}: expected an object whose type is header, event, step or final")
        sid = obj.get("episode_id")
        if not isinstance(sid, str):
            raise RecordReadError(f"{where}: episode_id must be a string, got {sid!r}")
        if obj["type"] == "header":
            if sid in by_id:
                raise RecordReadError(f"{where}: second header for episode {sid!r}")
            by_id[sid] = RecordedSegment(p, obj)
            out.segments.append(by_id[sid])
            continue
        seg = by_id.get(sid)
        if seg is None:
            raise RecordReadError(f"{where}: {obj['type']} line for episode {sid!r} before its header")
        if obj["type"] == "event":
            if not isinstance(obj.get("index"), int) or obj.get("kind") not in ("call", "message", "world", "stage"):
                raise RecordReadError(f"{where}: event lines need an integer index and kind call, message, world or "
                                      "stage")
            seg.events.append(obj)
        elif obj["type"] == "final":
            seg.final = obj
    return out


def record_files(path: str | Path) -> list[Path]:
    """The record files at a path: the file itself, or every `*.jsonl` under a folder (sorted)."""
    p = Path(path)
    if p.is_dir():
        return sorted(f for f in p.rglob("*.jsonl") if f.is_file())
    if p.is_file():
        return [p]
    raise RecordReadError(f"{p}: no such file or folder of episode records")


def append_line(path: str | Path, line: dict[str, Any]) -> None:
    """Append one line to a record file, first cutting off an incomplete last line a crash left."""
    p = Path(path)
    data = p.read_bytes() if p.exists() else b""
    with p.open("r+b" if p.exists() else "wb") as fh:
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)
        fh.seek(0, os.SEEK_END)
        fh.write((_dump(line) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def replace_final_line(path: str | Path, segment_id: str, line: dict[str, Any]) -> None:
    """Replace the `final` line of one segment in a record file, atomically (a new file, synced, renamed over
    the old one); every other line stays byte for byte. RecordReadError when the segment has no final line."""
    p = Path(path)
    lines = p.read_bytes().decode("utf-8").split("\n")
    for i, text in enumerate(lines):
        if '"final"' not in text or segment_id not in text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "final" and obj.get("episode_id") == segment_id:
            lines[i] = _dump(line)
            break
    else:
        raise RecordReadError(f"{p}: episode {segment_id!r} has no final line to replace")
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            fh.write("\n".join(lines).encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    sync_file(p.parent)


def served_segment(segment: "RecordedSegment") -> bool:
    """Whether a segment was recorded by an MCP server (`mcp_server.Episode`), whose final line this package
    writes, rather than by an episode runner (whose final line holds its policy's messages and reward)."""
    settings = segment.settings
    return "transport" in settings and "started_at" in settings and "segment" in settings
