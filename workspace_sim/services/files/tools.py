"""The text tools of the files service: read, write, edit, list, move, delete and search files and folders.

Each function is marked with `tool(...)`; the package registers them (`workspace_sim.services.files`).
"""

from __future__ import annotations

import difflib
import unicodedata
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import Conflict, InvalidArgument, NotFound
from workspace_sim.core.memos import remember
from workspace_sim.core.registry import tool
from workspace_sim.text.paths import check_moved, check_new_name, is_under, parent, resolve, shown
from workspace_sim.text.patterns import compile_glob, compile_regex
from workspace_sim.media.limits import media_class
from .records import FILES, FOLDERS, File, Folder

MAX_PATTERNS = 100  # exclude_patterns entries
MAX_TREE_DEPTH = 100  # levels directory_tree expands in one answer
# the tool that reads each kind of binary file (the media tools are in media_tools.py)
READERS = {"image": "read_media_file", "audio": "read_media_file", "pdf": "read_pdf", "sheet": "read_sheet",
           "document": "read_document"}


def is_dir(ctx: ToolContext, path: str) -> bool:
    return path == "/" or ctx.get(FOLDERS, path) is not None


def file_at(ctx: ToolContext, path: str) -> File:
    f = ctx.get(FILES, path)
    if f is None:
        if is_dir(ctx, path):
            raise InvalidArgument(f"{shown(path)} is a folder, not a file")
        raise NotFound(f"file {shown(path)} not found" + _suggest(ctx, path))
    return f


# (path asked for, every file path) -> the hint: a pure function of both, asked again and again for the same
# wrong paths (validation's mutants and blind agents replay them) and costly (difflib scores every path)
_SUGGESTED: dict[tuple[str, tuple[str, ...]], str] = {}


def _suggest(ctx: ToolContext, path: str) -> str:
    key = (path, tuple(ctx.keys(FILES)))
    hint = _SUGGESTED.get(key)
    if hint is None:
        names = difflib.get_close_matches(path, key[1], n=3, cutoff=0.6)
        hint = remember(_SUGGESTED, key, f"; did you mean {', '.join(map(shown, names))}?" if names else "", 1024)
    return hint


def _need_dir(ctx: ToolContext, path: str) -> None:
    if not is_dir(ctx, path):
        if ctx.get(FILES, path) is not None:
            raise InvalidArgument(f"{shown(path)} is a file, not a folder")
        raise NotFound(f"folder {shown(path)} not found")


def _text(f: File) -> str:
    if not f.is_text:
        how = READERS.get(media_class(f.mime_type))
        raise InvalidArgument(f"{f.path} is a binary file ({f.mime_type}, {f.size:,} bytes); it has no text to read"
                              + (f"; read it with {how}" if how else ""))
    return f.content


def _children(ctx: ToolContext, folder: str) -> tuple[list[Folder], list[File]]:
    dirs = [d for d in ctx.values(FOLDERS) if parent(d.path) == folder and d.path != folder]
    files = [f for f in ctx.values(FILES) if parent(f.path) == folder]
    return dirs, files


def _render_listing(data: dict) -> str:
    lines = [f"{'[DIR]' if e['type'] == 'directory' else '[FILE]'} {e['name']}" for e in data["entries"]]
    return "\n".join(lines) or f"{data['path']} is empty"


@tool(read_only=True, render=lambda d: d["content"])
def read_text_file(ctx: ToolContext, path: str, head: int | None = None, tail: int | None = None) -> dict:
    """Read a text file, optionally only its first or last lines.

    Args:
        path: Path of the file, e.g. /reports/q1.csv.
        head: If given, return only the first N lines.
        tail: If given, return only the last N lines.
    """
    if head is not None and tail is not None:
        raise InvalidArgument("give head or tail, not both")
    if (head is not None and head < 0) or (tail is not None and tail < 0):
        raise InvalidArgument("head and tail must be zero or positive")
    f = file_at(ctx, resolve(path))
    text = _text(f)
    if head is not None or tail is not None:
        lines = text.splitlines(keepends=True)
        text = "".join(lines[:head] if head is not None else (lines[-tail:] if tail else []))
    return {"path": shown(f.path), "content": text}


@tool(read_only=True)
def read_multiple_files(ctx: ToolContext, paths: list[str]) -> dict:
    """Read several text files at once; a file that cannot be read gets an error entry, not a failure.

    Args:
        paths: Paths of the files to read.
    """
    if not paths:
        raise InvalidArgument("paths is empty")
    out = []
    for p in paths:
        try:
            f = file_at(ctx, resolve(p))
            out.append({"path": shown(f.path), "content": _text(f)})
        except (NotFound, InvalidArgument) as e:
            out.append({"path": p, "error": e.message})
    return {"files": out}


@tool()
def write_file(ctx: ToolContext, path: str, content: str) -> dict:
    """Create a new text file or overwrite an existing one with the given content. Its folder must exist.

    Args:
        path: Path of the file to write.
        content: The full new text of the file.
    """
    p = resolve(path)
    if p == "/" or is_dir(ctx, p):
        raise InvalidArgument(f"{p} is a folder; give a file path")
    folder = parent(p)
    need_dir_for_write(ctx, folder)
    old = ctx.get(FILES, p)
    if old is None:
        need_new_name(ctx, p)
    rec = File(path=p, content=content, created=old.created if old else ctx.now, modified=ctx.now)
    ctx.put(FILES, rec)
    return {"path": p, "size": rec.size, "created": old is None}


def need_dir_for_write(ctx: ToolContext, folder: str) -> None:
    if not is_dir(ctx, folder):
        if ctx.get(FILES, folder) is not None:
            raise InvalidArgument(f"{shown(folder)} is a file, not a folder")
        raise NotFound(f"folder {shown(folder)} does not exist; create it first with create_directory")


def need_new_name(ctx: ToolContext, path: str, what: str = "path", moving: str | None = None) -> None:
    """Refuse making `path` when its name would not show as itself in a listing (`check_new_name`: the character
    as U+XXXX and its position) or when it is the NFC twin of a file or folder already there (other than the one
    `moving` there: renaming a name to its other form is allowed)."""
    check_new_name(path, what)
    twin = nfc_twin(ctx, path)
    if twin is not None and twin == moving:
        twin = None
    if twin is not None:
        raise Conflict(f"{what}: {shown(path)} and the existing {shown(twin)} are the same name written in two "
                       "Unicode forms (NFC and NFD): they would list alike; use the existing one or another name")


_WIDE: list[Any] = [None, None]  # (a files or folders table, its non-ASCII keys by NFC form): one table at a time


def nfc_twin(ctx: ToolContext, path: str) -> str | None:
    """An existing file or folder whose path differs from `path` but has the same NFC form, or None. Only a
    non-ASCII path has a twin other than its own NFC form, so those are indexed (once per table version)."""
    key = unicodedata.normalize("NFC", path)
    for table in (FILES, FOLDERS):
        if key != path and ctx.get(table, key) is not None:
            return key
        pending = [k for (t, k), r in ctx.writes.items() if t == table and r is not None and not k.isascii()]
        base = ctx.state.tables.get(table)
        if base is not None:
            if _WIDE[0] is not base:
                wide: dict[str, list[str]] = {}
                for k in base.keys():
                    if not k.isascii():
                        wide.setdefault(unicodedata.normalize("NFC", k), []).append(k)
                _WIDE[0], _WIDE[1] = base, wide
            pending += _WIDE[1].get(key, [])
        for k in pending:
            if k != path and unicodedata.normalize("NFC", k) == key and ctx.get(table, k) is not None:
                return k
    return None


class Edit(BaseModel):
    """One exact-text replacement."""

    model_config = ConfigDict(extra="forbid")
    old_text: str = Field(min_length=1, description="Text to find; must occur exactly once.")
    new_text: str = Field(description="Text to put in its place.")


@tool(render=lambda d: d["diff"] or "no changes")
def edit_file(ctx: ToolContext, path: str, edits: list[Edit], dry_run: bool = False) -> dict:
    """Apply exact-text replacements to a text file and return a unified diff of the change.

    Args:
        path: Path of the file to edit.
        edits: Replacements applied in order; each old_text must occur exactly once.
        dry_run: If true, only show the diff and change nothing.
    """
    p = resolve(path)
    f = file_at(ctx, p)
    text = original = _text(f)
    if not edits:
        raise InvalidArgument("edits is empty")
    for i, e in enumerate(edits):
        n = text.count(e.old_text)
        if n == 0:
            raise NotFound(f"edits[{i}].old_text not found in {p}; read the file and copy the text exactly")
        if n > 1:
            raise Conflict(f"edits[{i}].old_text occurs {n} times in {p}; include more context to make it unique")
        text = text.replace(e.old_text, e.new_text, 1)
    diff = "".join(difflib.unified_diff(original.splitlines(True), text.splitlines(True), f"a{p}", f"b{p}"))
    if not dry_run and text != original:
        ctx.put(FILES, f.evolve(content=text, modified=ctx.now))
    return {"path": p, "diff": diff, "dry_run": dry_run}


@tool(idempotent=True)
def create_directory(ctx: ToolContext, path: str) -> dict:
    """Create a folder and any missing parent folders; succeeds quietly if it already exists.

    Args:
        path: Path of the folder to create.
    """
    p = resolve(path)
    created = []
    walk = p
    chain = []
    while walk != "/" and not is_dir(ctx, walk):
        if ctx.get(FILES, walk) is not None:
            raise Conflict(f"{walk} is a file; cannot create a folder there")
        chain.append(walk)
        walk = parent(walk)
    for d in reversed(chain):
        need_new_name(ctx, d)
    for d in reversed(chain):
        ctx.put(FOLDERS, Folder(path=d, created=ctx.now))
        created.append(d)
    return {"path": p, "created": created}


@tool(read_only=True, render=_render_listing)
def list_directory(ctx: ToolContext, path: str = "/") -> dict:
    """List the files and folders directly inside a folder.

    Args:
        path: Folder to list; the root '/' by default.
    """
    p = resolve(path)
    _need_dir(ctx, p)
    dirs, files = _children(ctx, p)
    entries = [{"name": shown(d.path.rsplit("/", 1)[-1]), "type": "directory"} for d in dirs]
    entries += [{"name": shown(f.path.rsplit("/", 1)[-1]), "type": "file", "size": f.size} for f in files]
    entries.sort(key=lambda e: e["name"])
    return {"path": shown(p), "entries": entries}


@tool(read_only=True)
def directory_tree(ctx: ToolContext, path: str = "/", exclude_patterns: list[str] = []) -> dict:
    """A recursive tree of a folder: each entry has a name, a type and, for folders, children (100 levels at most; deeper folders are marked truncated).

    Args:
        path: Folder at the top of the tree.
        exclude_patterns: Glob patterns of names or paths to leave out (at most 100, each at most 1,000 characters).
    """
    p = resolve(path)
    excluded = _exclusions(exclude_patterns)
    _need_dir(ctx, p)
    # children per folder, built in one pass and without recursion: trees may be deeper than Python's stack
    kids: dict[str, list[tuple[int, str, str]]] = {}
    for d in ctx.values(FOLDERS):
        if d.path != p and is_under(d.path, p):
            kids.setdefault(parent(d.path), []).append((0, d.path, "directory"))
    for f in ctx.values(FILES):
        if is_under(f.path, p):
            kids.setdefault(parent(f.path), []).append((1, f.path, "file"))
    tree: list[dict] = []
    stack: list[tuple[str, list[dict], int]] = [(p, tree, 1)]
    cut: list[str] = []
    while stack:
        ctx.check_deadline()
        folder, out, depth = stack.pop()
        for _, q, kind in sorted(kids.get(folder, ())):
            if excluded(q):
                continue
            entry: dict = {"name": shown(q.rsplit("/", 1)[-1]), "type": kind}
            if kind == "directory":
                if depth >= MAX_TREE_DEPTH and kids.get(q):
                    entry["truncated"] = True  # JSON nesting must stay shallow enough for every client
                    cut.append(q)
                else:
                    entry["children"] = []
                    stack.append((q, entry["children"], depth + 1))
            out.append(entry)
    result: dict = {"path": shown(p), "tree": tree}
    if cut:
        result["note"] = (f"folders deeper than {MAX_TREE_DEPTH} levels are not expanded (marked truncated); "
                          f"call directory_tree on one of them, e.g. {shown(min(cut))}, to see inside")
    return result


def _exclusions(patterns: list[str]) -> Callable[[str], bool]:
    """Whether a path, or its name, matches one of the agent's exclude globs (each compiled once)."""
    if len(patterns) > MAX_PATTERNS:
        raise InvalidArgument(f"exclude_patterns has {len(patterns)} entries; the limit is {MAX_PATTERNS}")
    matchers = [compile_glob(x, f"exclude_patterns[{i}]") for i, x in enumerate(patterns)]
    if not matchers:
        return lambda q: False
    return lambda q: any(m(q) or m(q.rsplit("/", 1)[-1]) for m in matchers)


@tool(destructive=True)
def move_file(ctx: ToolContext, source: str, destination: str) -> dict:
    """Move or rename a file or folder; fails if the destination already exists.

    Args:
        source: Current path.
        destination: New path; its folder must exist.
    """
    src, dst = resolve(source, "source"), resolve(destination, "destination")
    if src == "/":
        raise InvalidArgument("the root folder cannot be moved")
    if ctx.get(FILES, dst) is not None or is_dir(ctx, dst):
        raise Conflict(f"destination {shown(dst)} already exists")
    need_dir_for_write(ctx, parent(dst))
    need_new_name(ctx, dst, "destination", moving=src)
    f = ctx.get(FILES, src)
    if f is not None:
        ctx.delete(FILES, src)
        ctx.put(FILES, f.evolve(path=dst, modified=ctx.now))
        return {"source": shown(src), "destination": shown(dst), "moved": 1}
    if not is_dir(ctx, src):
        raise NotFound(f"{shown(src)} not found" + _suggest(ctx, src))
    if is_under(dst, src):
        raise InvalidArgument(f"cannot move {src} into itself")
    inside = [d for d in ctx.values(FOLDERS) if is_under(d.path, src)]
    files = [f for f in ctx.values(FILES) if is_under(f.path, src)]
    check_moved(src, dst, max((len(r.path) for r in (*inside, *files)), default=len(src)))
    moved = 0
    for d in inside:
        ctx.delete(FOLDERS, d.path)
        ctx.put(FOLDERS, d.evolve(path=dst + d.path[len(src):]))
    for f in files:
        ctx.delete(FILES, f.path)
        ctx.put(FILES, f.evolve(path=dst + f.path[len(src):]))
        moved += 1
    return {"source": shown(src), "destination": shown(dst), "moved": moved}


@tool(destructive=True)
def delete_file(ctx: ToolContext, path: str) -> dict:
    """Delete a file, or an empty folder.

    Args:
        path: Path of the file or empty folder to delete.
    """
    p = resolve(path)
    if ctx.get(FILES, p) is not None:
        ctx.delete(FILES, p)
        return {"deleted": p}
    if p == "/":
        raise InvalidArgument("the root folder cannot be deleted")
    if is_dir(ctx, p):
        dirs, files = _children(ctx, p)
        if dirs or files:
            raise Conflict(f"folder {p} is not empty ({len(dirs) + len(files)} entries); delete its contents first")
        ctx.delete(FOLDERS, p)
        return {"deleted": p}
    raise NotFound(f"{shown(p)} not found" + _suggest(ctx, p))


@tool(read_only=True)
def search_files(ctx: ToolContext, pattern: str, path: str = "/", exclude_patterns: list[str] = []) -> dict:
    """Find files and folders under a folder whose name or relative path matches a glob pattern.

    Args:
        pattern: Glob such as '*.csv' (matched against names) or 'reports/**/*.md' (against paths); '*' any characters, '?' one, '[abc]' or '[!abc]' a class; with '**' a '*' stays inside one folder name. At most 1,000 characters.
        path: Folder to search in.
        exclude_patterns: Glob patterns to leave out (at most 100, each at most 1,000 characters).
    """
    matches = _glob(pattern, "pattern")
    excluders = _globs(exclude_patterns)
    root = resolve(path)
    _need_dir(ctx, root)
    plain = pattern.lower() if not _has_magic(pattern) else None
    hits = []
    for q in [*(d.path for d in ctx.values(FOLDERS)), *(f.path for f in ctx.values(FILES))]:
        if q == root or not is_under(q, root):
            continue
        rel = q[len(root):].lstrip("/")
        name = q.rsplit("/", 1)[-1]
        if matches(rel) or matches(name) or plain is not None and plain in name.lower():
            if not _excluded(rel, excluders):
                hits.append(q)
    return {"path": shown(root), "pattern": pattern, "matches": [shown(h) for h in sorted(hits)]}


def _excluded(rel: str, patterns: list[Callable[[str], bool]]) -> bool:
    """Whether a relative path, or any folder above it, matches an exclude pattern."""
    if not patterns:
        return False
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        prefix, name = "/".join(parts[:i]), parts[i - 1]
        if any(x(prefix) or x(name) for x in patterns):
            return True
    return False


def _has_magic(p: str) -> bool:
    return any(c in p for c in "*?[")


def _glob(pattern: str, argument: str) -> Callable[[str], bool]:
    """A glob matcher: fnmatch rules, or path rules when the pattern has '**'."""
    return compile_glob(pattern, argument, paths=isinstance(pattern, str) and "**" in pattern)


def _globs(patterns: list[str]) -> list[Callable[[str], bool]]:
    if len(patterns) > MAX_PATTERNS:
        raise InvalidArgument(f"exclude_patterns has {len(patterns)} entries; the limit is {MAX_PATTERNS}")
    return [_glob(x, f"exclude_patterns[{i}]") for i, x in enumerate(patterns)]


@tool(read_only=True)
def grep(
    ctx: ToolContext, pattern: str, path: str = "/", include: str = "*", ignore_case: bool = False,
    fixed_string: bool = False, max_results: int = 100,
) -> dict:
    """Search the text of files for a regular expression (or fixed string); returns matching lines.

    Args:
        pattern: Regular expression in RE2 syntax (Python's re syntax without backreferences, lookahead or lookbehind; \\d, \\w, \\b are ASCII), or plain text with fixed_string. At most 1,000 characters.
        path: File or folder to search.
        include: Glob on file names to search, e.g. '*.md'.
        ignore_case: Match regardless of case.
        fixed_string: Treat the pattern as plain text.
        max_results: Stop after this many matching lines.
    """
    if max_results < 1:
        raise InvalidArgument("max_results must be at least 1")
    rx = compile_regex(pattern, "pattern", ignore_case=ignore_case, literal=fixed_string)
    included = compile_glob(include, "include")
    root = resolve(path)
    targets = [ctx.get(FILES, root)] if ctx.get(FILES, root) is not None else None
    if targets is None:
        _need_dir(ctx, root)
        targets = [f for f in ctx.values(FILES) if is_under(f.path, root) and included(f.path.rsplit("/", 1)[-1])]
    hits: list[dict] = []
    truncated = False
    search = rx.search
    for f in targets:
        if not f.is_text:
            continue
        ctx.check_deadline()
        if fixed_string and search(f.content) is None:
            continue  # plain text absent from the whole file is absent from each of its lines
        for n, line in enumerate(f.content.splitlines(), 1):
            if n & 1023 == 0:
                ctx.check_deadline()
            if search(line) is not None:
                if len(hits) >= max_results:
                    truncated = True
                    break
                hits.append({"path": shown(f.path), "line": n, "text": line[:500]})
        if truncated:
            break
    return {"pattern": pattern, "matches": hits, "truncated": truncated}


@tool(read_only=True)
def get_file_info(ctx: ToolContext, path: str) -> dict:
    """Metadata of a file or folder: type, size, MIME type, created and modified times.

    Args:
        path: Path of the file or folder.
    """
    p = resolve(path)
    f = ctx.get(FILES, p)
    if f is not None:
        return {"path": shown(p), "type": "file", "size": f.size, "mime_type": f.mime_type, "encoding": f.encoding,
                "created": f.created.isoformat() if f.created else None,
                "modified": f.modified.isoformat() if f.modified else None}
    if is_dir(ctx, p):
        d = ctx.get(FOLDERS, p)
        dirs, files = _children(ctx, p)
        return {"path": shown(p), "type": "directory", "entries": len(dirs) + len(files),
                "created": d.created.isoformat() if d is not None and d.created else None}
    raise NotFound(f"{shown(p)} not found" + _suggest(ctx, p))
