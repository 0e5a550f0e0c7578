"""Reading and writing record files (JSON Lines): one line scanner under two views, and the batch writers.

`scan(path)` streams a file's lines as JSON objects, resolving `blob` lines and checking that every
line is an object with a known `type` and a string `episode_id`; any damage is a `RecordError`
naming `file:line`; a reader that asks (`read_record_file`) has an unterminated last line that is
not JSON, which is what an interrupted writer leaves, skipped and reported instead. On it stand `read_records` (typed
`EpisodeRecord`s, every line validated by its model) and `read_record_file` (each episode's lines
as the dicts they were written as, for the MCP server's judging and listings). `write_records`
and `RecordStream` write whole episodes; `append_line` and `replace_final_line` edit a file in
place; `RecordWriter` (workspace_sim.record.writer) appends a live episode line by line.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from pydantic import ValidationError

from workspace_sim.core.blobs import BlobError, BlobReader, BlobStore

from .encoding import dump_line
from .episode import EpisodeRecord
from .lines import LINE, LINE_TYPES, EventLine, HeaderLine, RecordError, StepLine
from .writer import sync_file

def record_files(path: str | Path) -> list[Path]:
    """The record files at a path: the file itself, or every `*.jsonl` under a folder (sorted)."""
    p = Path(path)
    if p.is_dir():
        return sorted(f for f in p.rglob("*.jsonl") if f.is_file())
    if p.is_file():
        return [p]
    raise RecordError(f"{p}: no such file or folder of episode records")


def scan(text_lines: Iterable[str], source: str = "<records>",
         skipped: Callable[[str], None] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each line of a record as `(where, object)`, blob lines resolved and left out (see the module docstring).

    `where` is `source:line`. With `skipped`, an unterminated last line that is not JSON (what an
    interrupted writer leaves) is passed to it and left out; every other malformed line raises RecordError.
    """
    blobs = BlobReader()
    pending: tuple[int, str] | None = None  # the previous line: whether it is the last is known one line later
    for n, raw in enumerate(text_lines, start=1):
        if pending is not None:
            yield from _one(pending[0], pending[1], source, blobs, last=False, skipped=skipped)
        pending = (n, raw)
    if pending is not None:
        yield from _one(pending[0], pending[1], source, blobs, last=True, skipped=skipped)


def _one(n: int, raw: str, source: str, blobs: BlobReader, last: bool,
         skipped: Callable[[str], None] | None) -> Iterator[tuple[str, dict[str, Any]]]:
    where = f"{source}:{n}"
    if not raw.strip():
        return
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as e:
        if last and not raw.endswith("\n") and skipped is not None:
            skipped(f"{where}: incomplete last line ({len(raw)} characters) ignored")
            return
        raise RecordError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: each line must be a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    try:  # large strings are stored once, in blob lines (workspace_sim.core.blobs)
        obj = blobs.take(obj, raw)
    except BlobError as e:
        raise RecordError(f"{where}: {e}") from None
    if obj is None:
        return
    if kind not in LINE_TYPES:
        raise RecordError(f"{where}: 'type' must be header, event, step, final or blob, got {kind!r}")
    if not isinstance(obj.get("episode_id"), str):
        raise RecordError(f"{where}: episode_id must be a string, got {obj.get('episode_id')!r}")
    yield where, obj


def _lines_of(f: Path) -> Iterator[str]:
    """A file's lines, split at "\\n" only, streamed; bad UTF-8 is a RecordError naming the file."""
    try:
        with f.open(encoding="utf-8", newline="\n") as fh:
            yield from fh
    except UnicodeDecodeError as e:
        raise RecordError(f"{f}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def _validation_message(e: ValidationError) -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()) if x not in LINE_TYPES)
        parts.append(f"{loc or '(line)'}: {err.get('msg')}")
    return "; ".join(parts)


def parse_lines(text_lines: Iterable[str], source: str = "<records>") -> list[EpisodeRecord]:
    """Group typed JSONL lines into episodes; malformed input raises RecordError naming the line.

    `blob` lines (large strings stored once) are collected and their references resolved, so the
    episodes read back exactly as they were before writing.
    """
    episodes: dict[str, EpisodeRecord] = {}
    for where, obj in scan(text_lines, source):
        kind, eid = obj["type"], obj["episode_id"]
        ep = episodes.get(eid)
        if kind == "header" and ep is not None:
            raise RecordError(f"{where}: second header for episode {eid!r}")
        if kind != "header" and ep is None:
            raise RecordError(f"{where}: {kind} line for episode {eid!r} before its header")
        if ep is not None and ep.final is not None:
            raise RecordError(f"{where}: {kind} line for episode {eid!r} after its final line")
        try:
            line = LINE.validate_python(obj)
        except ValidationError as e:
            raise RecordError(f"{where}: bad {kind} line: {_validation_message(e)}") from None
        if isinstance(line, HeaderLine):
            episodes[eid] = EpisodeRecord(header=line)
        elif isinstance(line, EventLine):
            ep.events.append(line)  # type: ignore[union-attr]
        elif isinstance(line, StepLine):
            ep.steps.append(line)  # type: ignore[union-attr]
        else:
            ep.final = line  # type: ignore[union-attr]
    return list(episodes.values())


def read_records(path: str | Path, complete_only: bool = False) -> list[EpisodeRecord]:
    """Read every episode from a JSONL file or from all `*.jsonl` files under a folder (sorted).

    With `complete_only`, episodes without a final line (a crashed or still-running writer) are
    dropped; otherwise they are returned with `final=None`.
    """
    out: list[EpisodeRecord] = []
    seen: dict[str, str] = {}
    for f in record_files(path):
        for ep in parse_lines(_lines_of(f), source=str(f)):
            if ep.episode_id in seen:
                raise RecordError(f"{f}: episode {ep.episode_id!r} also appears in {seen[ep.episode_id]}")
            seen[ep.episode_id] = str(f)
            if complete_only and not ep.complete:
                continue
            out.append(ep)
    return out


# --------------------------------------------------------------------------------------------
# The lines as written (dicts), for judging and listing what an MCP server recorded
# --------------------------------------------------------------------------------------------


@dataclass
class RecordedSegment:
    """One segment (an episode in the record format) as read back: header, events, final line if any, each the
    dict it was written as."""

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
    """Read one record file as written (dicts); an incomplete last line is skipped and noted, any other damage
    is a RecordError naming file and line. Lines are checked for shape (type, episode, order, an event's index
    and kind), not validated field by field: `read_records` does that."""
    p = Path(path)
    if not p.is_file():
        raise RecordError(f"{p}: no such record file")
    out = RecordFile(p, [])
    by_id: dict[str, RecordedSegment] = {}
    for where, obj in scan(_tracking(_lines_of(p), out), str(p), skipped=out.skipped.append):
        sid = obj["episode_id"]
        if obj["type"] == "header":
            if sid in by_id:
                raise RecordError(f"{where}: second header for episode {sid!r}")
            by_id[sid] = RecordedSegment(p, obj)
            out.segments.append(by_id[sid])
            continue
        seg = by_id.get(sid)
        if seg is None:
            raise RecordError(f"{where}: {obj['type']} line for episode {sid!r} before its header")
        if obj["type"] == "event":
            if not isinstance(obj.get("index"), int) or obj.get("kind") not in ("call", "message", "world", "stage"):
                raise RecordError(f"{where}: event lines need an integer index and kind call, message, world or stage")
            seg.events.append(obj)
        elif obj["type"] == "final":
            seg.final = obj
    return out


def _tracking(lines: Iterator[str], out: RecordFile) -> Iterator[str]:
    """The lines, noting in `out.ends_cleanly` whether the last one ended with a newline."""
    for raw in lines:
        out.ends_cleanly = raw.endswith("\n")
        yield raw


# --------------------------------------------------------------------------------------------
# Writing whole episodes, editing a file in place
# --------------------------------------------------------------------------------------------


def write_records(records: Iterable[EpisodeRecord], path: str | Path) -> Path:
    """Write many episodes into one JSONL file, replacing it whole once every line is encoded (written to a
    temporary file beside it, then renamed, so a reader never sees half a batch)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    store = BlobStore()  # each large string once per file
    tmp = p.with_name(p.name + ".part")
    with tmp.open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(rec.to_jsonl(store))
    os.replace(tmp, p)
    return p


class RecordStream:
    """Appends each episode to a JSONL file as it finishes (flushed line by line), so a batch that stops half
    way, or one record that misbehaves, never takes the others' records with it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")
        self._store = BlobStore()

    def add(self, record: EpisodeRecord) -> None:
        """Write one finished episode now."""
        self._file.write(record.to_jsonl(self._store))
        self._file.flush()

    def close(self) -> None:
        """Close the file (what was added stays)."""
        self._file.close()


def append_line(path: str | Path, line: dict[str, Any]) -> None:
    """Append one line to a record file, first cutting off an incomplete last line a crash left."""
    p = Path(path)
    data = p.read_bytes() if p.exists() else b""
    with p.open("r+b" if p.exists() else "wb") as fh:
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)
        fh.seek(0, os.SEEK_END)
        fh.write((dump_line(line) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def replace_final_line(path: str | Path, segment_id: str, line: dict[str, Any]) -> None:
    """Replace the `final` line of one segment in a record file, atomically (a new file, synced, renamed over
    the old one); every other line stays byte for byte. RecordError when the segment has no final line."""
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
            lines[i] = dump_line(line)
            break
    else:
        raise RecordError(f"{p}: episode {segment_id!r} has no final line to replace")
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
