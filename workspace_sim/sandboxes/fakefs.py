"""The workspace's files inside a pyfakefs FakeFilesystem, and the changes made there brought back.

`mount_files` copies the files service's folders and files into a fake file system (the pytest
`fs` fixture) under `root`; `read_back` reads that tree again and applies what changed since the
mount to the workspace as one logged world change with a normal diff, marked as the agent's (`agent=True`: the
code under test made it, so the collateral-damage guards count it). This is for tests of code
that works on files; agents' snippets run in the bubblewrap sandbox (`python_sandbox.py`), not here.
"""

from __future__ import annotations

import posixpath
import weakref
from typing import Any

from workspace_sim.core.errors import InvalidArgument
from workspace_sim.text.paths import resolve
from workspace_sim.sandboxes.tree import FILES, Tree, delta, delta_writes, tree_from_state

# the tree each (fake file system, root) held right after mounting: read_back reports changes
# since then, so folders pyfakefs made by itself (such as /tmp) are not taken for new ones
_MOUNTED: weakref.WeakKeyDictionary[Any, dict[str, Tree]] = weakref.WeakKeyDictionary()


def _root(root: str) -> str:
    if not isinstance(root, str) or not root.startswith("/"):
        raise ValueError(f"root must be an absolute path such as '/' or '/workspace', got {root!r}")
    return posixpath.normpath(root) if root != "/" else "/"


def _fs_path(root: str, path: str) -> str:
    return path if root == "/" else root + path


def mount_tree(fs: Any, tree: Tree, root: str = "/") -> None:
    """Write a tree's folders and files into a FakeFilesystem under `root` (files replace files)."""
    root = _root(root)
    fs.makedirs(root, exist_ok=True)
    for d in sorted(tree.dirs):
        target = _fs_path(root, d)
        if fs.isfile(target):
            raise ValueError(f"cannot mount folder {d}: {target} is a file in the fake file system")
        fs.makedirs(target, exist_ok=True)
    for path, data in sorted(tree.files.items()):
        target = _fs_path(root, path)
        if fs.isdir(target):
            raise ValueError(f"cannot mount file {path}: {target} is a folder in the fake file system")
        if fs.exists(target) or fs.islink(target):
            fs.remove(target)
        fs.makedirs(posixpath.dirname(target), exist_ok=True)
        fs.create_file(target, contents=data)


def read_tree(fs: Any, root: str = "/", skip: frozenset[str] = frozenset()) -> tuple[Tree, list[str]]:
    """Read every folder and regular file under `root` of a FakeFilesystem into a Tree.

    Returns the tree (workspace paths) and the entries left out with why: symbolic links, and
    names that are not valid workspace paths. Fake-file-system paths in `skip` are not entered.
    """
    root = _root(root)
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    ignored: list[str] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        for name in sorted(fs.listdir(folder)):
            full = posixpath.join(folder, name)
            if full in skip:
                continue
            rel = full[len(root):] if root != "/" else full
            try:
                path = resolve(rel, "name", escapes=False)  # the file's own name, not an agent's escapes
            except InvalidArgument as e:
                ignored.append(f"{full!r} ({e.message})")
                continue
            if path != rel:
                ignored.append(f"{full!r} (not a plain path)")
            elif fs.islink(full):
                ignored.append(f"{path} (symbolic link; the workspace keeps only regular files and folders)")
            elif fs.isdir(full):
                dirs.add(path)
                stack.append(full)
            else:
                files[path] = fs.get_object(full).byte_contents or b""
    return Tree(files, frozenset(dirs)), ignored


def _files_service(workspace: Any) -> None:
    if "files" not in workspace.services:
        raise ValueError("the workspace has no files service; enable 'files' in WorkspaceConfig.services")


def mount_files(workspace: Any, fs: Any, root: str = "/") -> None:
    """Copy the workspace's folders and files into the FakeFilesystem `fs` under `root`.

    Workspace path '/reports/q1.csv' becomes `root + '/reports/q1.csv'`. What the fake file system
    holds afterwards under `root` is remembered, so `read_back` reports only later changes.
    """
    _files_service(workspace)
    root = _root(root)
    mount_tree(fs, tree_from_state(workspace.state), root)
    _MOUNTED.setdefault(fs, {})[root] = read_tree(fs, root)[0]


def read_back(workspace: Any, fs: Any, root: str = "/") -> Any:
    """Apply the files created, changed and deleted under `root` of `fs` to the workspace.

    Changes are measured against what `mount_files` left there (or, without a mount, against the
    workspace's files) and applied as one world event whose diff lists them; returns that event,
    or None when nothing changed. Calling it again applies only newer changes.
    """
    _files_service(workspace)
    root = _root(root)
    before = _MOUNTED.get(fs, {}).get(root)
    if before is None:
        before = tree_from_state(workspace.state)
    after, _ignored = read_tree(fs, root)
    d = delta(before, after)
    _MOUNTED.setdefault(fs, {})[root] = after
    if not d:
        return None
    state = workspace.state
    models = workspace.services["files"].tables  # the files service's record classes, read from the workspace
    writes = delta_writes(lambda t, k: state.table(t).get(k), d, state.now, models["files"], models["folders"])
    ops = [
        {"op": "delete", "table": t, "key": k} if rec is None
        else {"op": "put", "table": t, "record": rec.model_dump(mode="json")}
        for t, k, rec in writes
    ]
    n = sum(1 for t, _, _ in writes if t == FILES)
    return workspace.apply_world_change(ops, note=f"{n} file(s) changed in a fake file system under {root}",
                                        agent=True)  # the code under test made them: the guards count them
