"""The sandbox building blocks: trees and deltas, tar round trips, bounded output, settings, pyfakefs mounts."""

from __future__ import annotations

import base64
import io
import tarfile

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from workspace_sim import SpecError, Workspace, WorkspaceConfig
from workspace_sim.sandboxes import SandboxSettings, mount_files, read_back, sandbox_settings
from workspace_sim.sandboxes.fakefs import mount_tree, read_tree
from workspace_sim.sandboxes.output import BoundedOutput
from workspace_sim.sandboxes.tarball import ArchiveTooLarge, pack, unpack
from workspace_sim.sandboxes.tree import Delta, Tree, delta, delta_writes, tree_from_state
from workspace_sim.services.files import File, Folder

# --- strategies ------------------------------------------------------------------------------

_names = st.text(alphabet="abcdefgh_-.é0123", min_size=1, max_size=6).filter(lambda n: n not in (".", ".."))


@st.composite
def trees(draw: st.DrawFn) -> Tree:
    """Random consistent trees: folders, and files whose parent folders all exist."""
    dirs: set[str] = set()
    for parts in draw(st.lists(st.lists(_names, min_size=1, max_size=3), max_size=5)):
        for i in range(1, len(parts) + 1):
            dirs.add("/" + "/".join(parts[:i]))
    files: dict[str, bytes] = {}
    folders = sorted(dirs) or []
    for _ in range(draw(st.integers(0, 6))):
        base = draw(st.sampled_from(["/"] + folders))
        path = base.rstrip("/") + "/" + draw(_names)
        if path not in dirs:
            files[path] = draw(st.binary(max_size=40) | st.text(max_size=40).map(str.encode))
    # a file's name may not shadow a folder prefix of another entry
    dirs = {d for d in dirs if d not in files}
    files = {p: b for p, b in files.items() if not any(p.startswith(f + "/") for f in files)}
    return Tree(files, frozenset(dirs))


def _apply(before: Tree, d: Delta) -> Tree:
    files = {p: b for p, b in before.files.items() if p not in d.removed}
    files.update(d.put)
    dirs = (set(before.dirs) - set(d.removed_dirs)) | set(d.new_dirs)
    return Tree(files, frozenset(dirs))


# --- trees and deltas ------------------------------------------------------------------------

@given(trees(), trees())
@hsettings(max_examples=150, deadline=None)
def test_delta_applied_to_before_gives_after(a: Tree, b: Tree) -> None:
    d = delta(a, b)
    assert _apply(a, d) == b
    assert bool(d) == (a != b)
    assert Delta.from_json(d.to_json()) == d


@given(trees())
@hsettings(max_examples=80, deadline=None)
def test_tar_round_trip_keeps_every_file_and_folder(t: Tree) -> None:
    data = pack(t.files, t.dirs, 1000, 1000, 0)
    back = unpack(data, max_bytes=1 << 20)
    assert back.tree == t and back.ignored == []


@given(trees())
@hsettings(max_examples=60, deadline=None)
def test_workspace_records_round_trip_through_a_delta(t: Tree) -> None:
    ws = Workspace.create(WorkspaceConfig(services=["files"]))
    writes = delta_writes(lambda tb, k: ws.state.table(tb).get(k), delta(Tree(), t), ws.state.now, File, Folder)
    ops = [{"op": "put", "table": tb, "record": r.model_dump(mode="json")} for tb, _, r in writes]
    if ops:
        ws.apply_world_change(ops)
    assert tree_from_state(ws.state) == t


def test_binary_and_text_files_keep_their_encoding() -> None:
    blob = bytes(range(256))
    ws = Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": [
        {"path": "/b.bin", "content": base64.b64encode(b"ascii").decode(), "encoding": "base64"}]}})
    d = Delta({"/t.txt": "héllo\n".encode(), "/raw": blob, "/b.bin": b"still ascii"})
    writes = {k: r for _, k, r in delta_writes(lambda tb, k: ws.state.table(tb).get(k), d, ws.state.now, File, Folder)}
    assert writes["/t.txt"].encoding == "utf-8" and writes["/t.txt"].content == "héllo\n"
    assert writes["/raw"].encoding == "base64" and base64.b64decode(writes["/raw"].content) == blob
    assert writes["/b.bin"].encoding == "base64"  # a binary file stays binary


def test_unpack_reports_links_and_refuses_escaping_names() -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, kind, link in [("./ok.txt", tarfile.REGTYPE, ""), ("./ln", tarfile.SYMTYPE, "/etc/passwd"),
                                 ("../../escape", tarfile.REGTYPE, ""), ("./hard", tarfile.LNKTYPE, "./ok.txt"),
                                 ("./fifo", tarfile.FIFOTYPE, "")]:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, link
            data = b"data" if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    got = unpack(buf.getvalue(), 1000)
    assert got.tree.files == {"/ok.txt": b"data", "/hard": b"data"}
    assert any("symbolic link" in i for i in got.ignored)
    assert any("escapes the workspace root" in i for i in got.ignored)
    assert any("special file" in i for i in got.ignored)
    assert set(got.foreign) == {"./ln", "../../escape", "./fifo"}
    with pytest.raises(ArchiveTooLarge):
        unpack(buf.getvalue(), 5)


# --- bounded output --------------------------------------------------------------------------

@given(st.lists(st.binary(max_size=300), max_size=30), st.integers(200, 1000))
@hsettings(max_examples=150, deadline=None)
def test_bounded_output_keeps_head_and_tail(chunks: list[bytes], limit: int) -> None:
    out = BoundedOutput(limit)
    for c in chunks:
        out.write(c)
    whole = b"".join(chunks)
    assert out.total == len(whole) and out.truncated == (len(whole) > limit)
    if not out.truncated:
        assert out.text() == whole.decode("utf-8", "replace")
    else:
        head, tail = whole[: limit // 2], whole[len(whole) - (limit - limit // 2):]
        text = out.text()
        assert text.startswith(head.decode("utf-8", "replace"))
        assert text.endswith(tail.decode("utf-8", "replace"))
        assert f"{len(whole) - len(head) - len(tail)} bytes of output left out" in text


# --- settings --------------------------------------------------------------------------------

def test_settings_defaults_and_clear_errors() -> None:
    s = sandbox_settings(WorkspaceConfig())
    assert s == SandboxSettings() and s.uid == 1000 and s.gid == 1000
    assert SandboxSettings(user="1234").user == "1234:1234"
    for bad, field in [({"user": "0:0"}, "user"), ({"user": "root"}, "user"), ({"timeout_s": -1}, "timeout_s"),
                       ({"memory_mb": "lots"}, "memory_mb"), ({"network": "host"}, "network")]:
        with pytest.raises(SpecError) as e:
            sandbox_settings(WorkspaceConfig(sandbox=bad))
        assert field in str(e.value) and e.value.path == "sandbox"
    with pytest.raises(SpecError, match="user"):
        Workspace.create(WorkspaceConfig(services=["files", "python"], sandbox={"user": "0"}))


# --- pyfakefs mount and read back ------------------------------------------------------------

def _workspace() -> Workspace:
    return Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": [
        {"path": "/docs/a.txt", "content": "alpha\n"}, {"path": "/docs/b.txt", "content": "beta\n"},
        {"path": "/img.bin", "content": base64.b64encode(b"\x00\xff").decode(), "encoding": "base64"}],
        "folders": [{"path": "/empty"}]}})


def test_mount_files_and_read_back_with_the_fs_fixture(fs) -> None:  # type: ignore[no-untyped-def]
    import os
    import pathlib

    ws = _workspace()
    mount_files(ws, fs, "/")
    assert open("/docs/a.txt").read() == "alpha\n"
    assert pathlib.Path("/img.bin").read_bytes() == b"\x00\xff"
    assert os.path.isdir("/empty")
    assert read_back(ws, fs) is None  # nothing changed yet, including the fixture's own /tmp

    pathlib.Path("/docs/a.txt").write_text("ALPHA\n")
    os.remove("/docs/b.txt")
    os.makedirs("/out/x")
    with open("/out/x/r.json", "w") as f:
        f.write('{"n": 1}')
    os.rmdir("/empty")
    event = read_back(ws, fs)
    assert event is not None and event.kind == "world"
    summary = event.diff.summary()
    assert summary == {"files.files": {"changed": 1, "removed": 1, "added": 1},
                       "files.folders": {"added": 2, "removed": 1}}
    assert ws.table("files.files")["/docs/a.txt"].content == "ALPHA\n"
    assert ws.table("files.files")["/out/x/r.json"].content == '{"n": 1}'
    assert read_back(ws, fs) is None  # applied once, not again


def test_mount_under_a_root_folder(fs) -> None:  # type: ignore[no-untyped-def]
    ws = _workspace()
    fs.create_file("/ws/stale.txt", contents="left over")  # was there before the mount: not the workspace's
    mount_files(ws, fs, "/ws")
    assert open("/ws/docs/a.txt").read() == "alpha\n"
    with open("/ws/new.txt", "w") as f:
        f.write("new")
    with open("/elsewhere.txt", "w") as f:  # outside the root: not the workspace's business
        f.write("x")
    event = read_back(ws, fs, "/ws")
    assert [(c.table, c.key, c.kind) for c in event.diff] == [("files.files", "/new.txt", "added")]


def test_mount_refuses_bad_roots_and_conflicts(fs) -> None:  # type: ignore[no-untyped-def]
    ws = _workspace()
    with pytest.raises(ValueError, match="absolute"):
        mount_files(ws, fs, "relative")
    fs.create_file("/docs", contents="a file where a folder goes")
    with pytest.raises(ValueError, match="/docs"):
        mount_files(ws, fs, "/")
    with pytest.raises(ValueError, match="files service"):
        mount_files(Workspace.create(WorkspaceConfig(services=["mail"])), fs)


@given(trees())
@hsettings(max_examples=40, deadline=None)
def test_fake_fs_round_trip(t: Tree) -> None:
    from pyfakefs.fake_filesystem import FakeFilesystem

    fs = FakeFilesystem()
    mount_tree(fs, t, "/r")
    back, ignored = read_tree(fs, "/r")
    assert back == t and ignored == []
