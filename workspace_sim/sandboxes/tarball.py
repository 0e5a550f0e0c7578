"""Tar archives to and from the container: what goes in is ours, what comes out is read, never extracted.

The archive coming back from a sandbox is untrusted: it is parsed in memory only, its names are
checked with the same rules as agent paths, links, devices and pipes are reported as ignored, and
the total size is bounded.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from workspace_sim.core.errors import InvalidArgument
from workspace_sim.text.paths import resolve
from workspace_sim.sandboxes.tree import Tree


class ArchiveTooLarge(Exception):
    """The files read back exceed the allowed size."""


def pack(files: Mapping[str, bytes], dirs: Iterable[str], uid: int, gid: int, mtime: float) -> bytes:
    """A tar of folders and files (workspace paths, written relative to the extraction folder)."""
    buf = io.BytesIO()
    # GNU long names rather than PAX headers: busybox tar, the default image's, reads them
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT, encoding="utf-8") as tar:
        for d in sorted(dirs):
            info = tarfile.TarInfo("." + d)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            info.uid, info.gid, info.mtime = uid, gid, mtime
            tar.addfile(info)
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo("." + path)
            info.size, info.mode = len(data), 0o644
            info.uid, info.gid, info.mtime = uid, gid, mtime
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@dataclass
class Unpacked:
    """A tree read from an archive, the entries left out (with why), and their names in the archive."""

    tree: Tree
    ignored: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)


def unpack(data: bytes, max_bytes: int) -> Unpacked:
    """Read a tar of a folder (as `tar -cf - -C DIR .` writes it) into a Tree, without touching disk.

    Regular files (hard links read as copies) and folders are kept; symbolic links, devices, pipes
    and names that are not valid workspace paths are listed in `ignored`. More than `max_bytes` of
    file content raises ArchiveTooLarge.
    """
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    ignored: list[str] = []
    foreign: list[str] = []
    total = 0
    foreign_dirs: list[str] = []  # a refused folder goes as a whole: nothing inside it is listed again
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            name = member.name
            if name in (".", "./", ""):
                continue
            if foreign_dirs and any(name.startswith(d + "/") for d in foreign_dirs):
                continue
            try:
                path = resolve(name if name.startswith("/") else "/" + name.removeprefix("./"), "name", escapes=False)
            except InvalidArgument as e:
                shown = repr(name) if len(name) <= 200 else f"{name[:200]!r}... ({len(name):,} characters)"
                ignored.append(f"{shown} ({e.message}" + ("; with everything inside it)" if member.isdir() else ")"))
                foreign.append(name)
                if member.isdir():
                    foreign_dirs.append(name.rstrip("/"))
                continue
            if path == "/":
                continue
            if member.isdir():
                dirs.add(path)
            elif member.isreg() or member.islnk():  # a hard link is one more name for the same bytes
                fobj = tar.extractfile(member)
                content = fobj.read(max_bytes - total + 1) if fobj is not None else b""
                total += len(content)
                if total > max_bytes:
                    raise ArchiveTooLarge(f"more than {max_bytes} bytes of files")
                files[path] = content
            else:
                kind = "symbolic link" if member.issym() else "special file"
                ignored.append(f"{path} ({kind}; the workspace keeps only regular files and folders)")
                foreign.append(name)
    return Unpacked(Tree(files, frozenset(dirs)), ignored, foreign)
