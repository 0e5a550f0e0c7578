"""Workspace files as a plain tree of bytes, the delta between two trees, and the records it writes.

Both sandboxes work the same way: the files service's records become a `Tree` (path -> bytes plus
the folder set), the code runs on a copy, the copy is read back as a second `Tree`, and `delta`
says what was created, changed and deleted. `delta_writes` turns that into File/Folder records,
which a tool applies through its ToolContext, so the change is an ordinary logged diff. The sandboxes import
no service: reading a tree only reads the records' fields, and the record classes a delta is written as are
given by the caller (the files service's `File` and `Folder`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from workspace_sim.text.paths import parent
from workspace_sim.core.records import Record

FILES, FOLDERS = "files.files", "files.folders"


@dataclass(frozen=True)
class Tree:
    """A folder tree: file path -> content bytes, and the set of folders ('/' is implicit)."""

    files: Mapping[str, bytes] = field(default_factory=dict)
    dirs: frozenset[str] = frozenset()

    def size(self) -> int:
        """Total bytes of file content."""
        return sum(len(b) for b in self.files.values())


@dataclass(frozen=True)
class Delta:
    """What changed from one tree to another; paths are sorted so a delta is deterministic."""

    put: Mapping[str, bytes] = field(default_factory=dict)  # files created or changed
    removed: tuple[str, ...] = ()  # files deleted
    new_dirs: tuple[str, ...] = ()
    removed_dirs: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.put or self.removed or self.new_dirs or self.removed_dirs)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form (contents in base64)."""
        return {
            "put": {p: base64.b64encode(b).decode() for p, b in sorted(self.put.items())},
            "removed": list(self.removed),
            "new_dirs": list(self.new_dirs),
            "removed_dirs": list(self.removed_dirs),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Delta:
        """The inverse of `to_json`."""
        return cls(
            {p: base64.b64decode(b) for p, b in doc["put"].items()},
            tuple(doc["removed"]), tuple(doc["new_dirs"]), tuple(doc["removed_dirs"]),
        )

    def summary(self) -> dict[str, list[str]]:
        """Paths by kind of change, for a tool's result."""
        return {"written": sorted(self.put), "deleted": sorted(self.removed),
                "folders_created": list(self.new_dirs), "folders_deleted": list(self.removed_dirs)}


def file_bytes(record: Any) -> bytes:
    """The raw content of a File record."""
    if record.encoding == "base64":
        return base64.b64decode(record.content)
    return record.content.encode("utf-8")


def tree_from_records(files: Iterable[Any], folders: Iterable[Any]) -> Tree:
    """A tree from File and Folder records; every folder above a file is included."""
    content = {f.path: file_bytes(f) for f in files}
    dirs = {d.path for d in folders if d.path != "/"}
    for path in content:
        p = parent(path)
        while p != "/" and p not in dirs:
            dirs.add(p)
            p = parent(p)
    return Tree(content, frozenset(dirs))


def tree_from_context(ctx: Any) -> Tree:
    """The files service's tree as a tool call sees it (including the call's own writes)."""
    return tree_from_records(ctx.values(FILES), ctx.values(FOLDERS))


def tree_from_state(state: Any) -> Tree:
    """The files service's tree in a workspace state."""
    return tree_from_records(state.table(FILES).values(), state.table(FOLDERS).values())


def delta(before: Tree, after: Tree) -> Delta:
    """The changes that turn `before` into `after`."""
    put = {p: b for p, b in sorted(after.files.items()) if before.files.get(p) != b}
    removed = tuple(sorted(p for p in before.files if p not in after.files))
    new_dirs = tuple(sorted(after.dirs - before.dirs))
    removed_dirs = tuple(sorted(before.dirs - after.dirs))
    return Delta(put, removed, new_dirs, removed_dirs)


def make_file(path: str, data: bytes, old: Any, now: datetime, file: type[Record]) -> Record:
    """A `file` record (the files service's File) holding `data`: text when it is UTF-8 (unless the old file was
    binary), else base64."""
    binary = old is not None and old.encoding == "base64"
    if not binary:
        try:
            content, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            binary = True
    if binary:
        content, encoding = base64.b64encode(data).decode(), "base64"
    if old is not None:
        return old.evolve(content=content, encoding=encoding, modified=now)
    return file(path=path, content=content, encoding=encoding, created=now, modified=now)


def delta_writes(
    get: Callable[[str, str], Any], d: Delta, now: datetime, file: type[Record], folder: type[Record]
) -> list[tuple[str, str, Record | None]]:
    """The record writes (table, key, record or None to delete) that apply `d` to a workspace.

    `get(table, key)` reads the workspace's current record; `file` and `folder` are the record classes to write
    (the files service's File and Folder). Deletions of records that are already gone and folders that already
    exist are skipped, so applying a delta is idempotent; every folder above a written file is created if missing.
    """
    writes: list[tuple[str, str, Record | None]] = []
    made: set[str] = set()
    for p in d.removed:
        if get(FILES, p) is not None:
            writes.append((FILES, p, None))
    for p in d.removed_dirs:
        if get(FOLDERS, p) is not None:
            writes.append((FOLDERS, p, None))
    removed_dirs = set(d.removed_dirs)

    def need_dir(p: str) -> None:
        if p == "/" or p in made or (get(FOLDERS, p) is not None and p not in removed_dirs):
            return
        made.add(p)
        need_dir(parent(p))
        writes.append((FOLDERS, p, folder(path=p, created=now)))

    for p in d.new_dirs:
        need_dir(p)
    for p, data in d.put.items():
        need_dir(parent(p))
        writes.append((FILES, p, make_file(p, data, get(FILES, p), now, file)))
    return writes


def apply_delta(ctx: Any, d: Delta, file: type[Record], folder: type[Record]) -> None:
    """Apply a delta to the workspace through a tool's ToolContext (becoming the call's diff), as `file` and
    `folder` records (the files service's File and Folder)."""
    for table, key, rec in delta_writes(ctx.get, d, ctx.now, file, folder):
        if rec is None:
            ctx.delete(table, key)
        else:
            ctx.put(table, rec)
