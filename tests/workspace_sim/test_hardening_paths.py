"""Issue 24 item 7: no path past 1,024 characters on any entry, and a deep chain made in a sandbox costs nothing.

A move of a deep folder made paths past the limit (answered `internal_error` by the record check), a
relative path of 1,024 characters became 1,025 once absolute, and after a 2,000-deep folder chain in
`run_command` the next call failed with "argument list too long": every name in the chain that the
workspace refused was listed and passed to `rm` on one command line. Now the path limit is checked on
every entry with a clear error, a refused folder is refused whole (its contents are not listed again),
and the names to remove are passed in bounded batches.
"""

from __future__ import annotations

import io
import tarfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import call_error, need

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.text.paths import MAX_PATH
from workspace_sim.sandboxes.container import ARGV_BATCH_BYTES, _argv_batches
from workspace_sim.sandboxes.tarball import unpack

CHAIN = "/" + "/".join(["d"] * 2000)  # 4,000 characters


def files_ws(data: dict | None = None) -> Workspace:
    return Workspace.create(WorkspaceConfig(services=["files"]), {"files": data or {}})


def longest_path(ws: Workspace) -> int:
    return max((len(p) for t in ("files.files", "files.folders") for p in ws.table(t)), default=0)


def test_moving_a_deep_folder_past_the_limit_is_refused_clearly_and_changes_nothing() -> None:
    ws = files_ws()
    deep = CHAIN[:1000]
    assert ws.call("create_directory", {"path": deep}).ok and ws.call("create_directory", {"path": "/x"}).ok
    assert ws.call("write_file", {"path": deep + "/f.md", "content": "x"}).ok
    before = ws.content_hash
    message = call_error(ws, "move_file", {"source": "/d", "destination": "/x/" + "e" * 900})
    assert message.startswith("invalid_argument") and "1,906 characters" in message and str(MAX_PATH) in message
    assert ws.content_hash == before and longest_path(ws) <= MAX_PATH
    assert ws.call("move_file", {"source": "/d", "destination": "/x/e"}).ok  # within the limit it moves
    assert longest_path(ws) == 1007


def test_a_relative_path_is_measured_once_made_absolute() -> None:
    ws = files_ws()
    message = call_error(ws, "write_file", {"path": "a" * MAX_PATH, "content": "x"})
    assert message.startswith("invalid_argument") and "once made absolute" in message
    assert ws.call("write_file", {"path": "a" * (MAX_PATH - 1), "content": "x"}).ok


def test_initial_data_and_world_changes_refuse_over_long_paths_by_json_path() -> None:
    long = CHAIN + "/f.md"
    with pytest.raises(SpecError, match=r"data\.files\.files\[0\].*longer than 1024"):
        files_ws({"files": [{"path": long, "content": "x"}]})
    ws = files_ws({"files": [{"path": "/f.md", "content": "x"}]})
    for change in ({"op": "put", "table": "files.files", "record": {"path": long, "content": "x"}},
                   {"op": "patch", "table": "files.files", "key": "/f.md", "fields": {"path": long}},
                   {"op": "put", "table": "files.folders", "record": {"path": CHAIN}}):
        with pytest.raises(SpecError, match=r"changes\[0\].*longer than 1024"):
            ws.apply_world_change([change])
    assert longest_path(ws) == len("/f.md")


def chain_tar(depth: int) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        name = "."
        for _ in range(depth):
            name += "/d"
            tar.addfile(_dir(name))
        info = tarfile.TarInfo(name + "/f.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    return buf.getvalue()


def _dir(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info


def test_a_two_thousand_deep_chain_read_back_is_refused_as_one_folder() -> None:
    got = unpack(chain_tar(2000), 1 << 20)
    assert max(len(p) for p in got.tree.dirs) <= MAX_PATH and not got.tree.files
    (first,) = got.foreign  # the first folder past the limit; everything inside goes with it
    assert first.count("/d") == 513  # "/d" * 512 is 1,024 characters, the deepest the workspace holds
    (note,) = got.ignored
    assert "with everything inside it" in note and len(note) < 400


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=3000), max_size=200))
def test_names_to_remove_are_cut_into_bounded_batches_in_order(names: list[str]) -> None:
    batches = _argv_batches(names, most=8192)
    assert [n for b in batches for n in b] == names and all(batches)
    for b in batches:
        assert len(b) == 1 or sum(len(n.encode("utf-8", "surrogateescape")) + 1 for n in b) <= 8192
    assert ARGV_BATCH_BYTES <= 128 * 1024


def test_run_command_after_a_two_thousand_deep_chain_keeps_working() -> None:
    from workspace_sim.sandboxes.engine import engine_status
    from workspace_sim.sandboxes.settings import DEFAULT_IMAGE

    ok, reason = engine_status(None, DEFAULT_IMAGE)
    need(ok, f"Docker sandbox unavailable: {reason}")
    config = WorkspaceConfig(services=["files", "shell"], sandbox={"timeout_s": 20})
    with Workspace.create(config, {"files": {"files": [{"path": "/a.md", "content": "a"}]}}) as ws:
        made = ws.call("run_command", {"command": 'p=.; i=0; while [ $i -lt 1900 ]; do p=$p/d; i=$((i+1)); done; '
                                                  'mkdir -p "$p" && echo made'})
        assert made.ok and "made" in made.data["stdout"], made.text[:500]
        assert longest_path(ws) <= MAX_PATH and "with everything inside it" in made.text
        again = ws.call("run_command", {"command": "ls && echo fine"})
        assert again.ok and "fine" in again.data["stdout"] and "a.md" in again.data["stdout"], again.text[:500]
