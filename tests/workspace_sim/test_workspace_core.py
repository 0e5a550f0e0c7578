"""Workspace behaviour: call contract, snapshots, forks, diffs, hashing, determinism, persistence."""

from __future__ import annotations

import json

import pytest

from workspace_sim import SpecError, Workspace, WorkspaceConfig
from workspace_sim.core.registry import parse_docstring
from workspace_sim.services import all_tools

DATA = {"files": {"files": [{"path": "/a/x.txt", "content": "one\n"}, {"path": "/b.txt", "content": "two\n"}]}}


def make() -> Workspace:
    return Workspace.create(WorkspaceConfig(services=["files"], seed=7), DATA)


@pytest.mark.parametrize("tool,args,code", [
    ("nope", {}, "unknown_tool"), (None, {}, "unknown_tool"), (42, {}, "unknown_tool"),
    ("read_text_file", [1, 2], "invalid_argument"), ("read_text_file", "x", "invalid_argument"),
    ("read_text_file", {"path": 3}, "invalid_argument"), ("read_text_file", {"path": "/b.txt", "zzz": 1}, "invalid_argument"),
    ("read_text_file", {1: 2}, "invalid_argument"), ("read_text_file", {"path": "/b.txt", "head": "many"}, "invalid_argument"),
])
def test_malformed_calls_never_raise_and_change_nothing(tool, args, code) -> None:  # type: ignore[no-untyped-def]
    ws = make()
    h = ws.content_hash
    r = ws.call(tool, args)
    assert not r.ok and r.error.code == code and r.error.message
    assert ws.content_hash == h
    assert ws.events()[-1].ok is False


def test_invalid_argument_names_field_and_reason() -> None:
    r = make().call("read_text_file", {"path": "/b.txt", "head": "many"})
    assert "head" in r.error.message and "integer" in r.error.message


def test_unexpected_tool_bug_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make()
    tool = ws.tools["read_text_file"]
    monkeypatch.setattr(tool, "fn", lambda ctx, **kw: 1 / 0)
    r = ws.call("read_text_file", {"path": "/b.txt"})
    assert r.error.code == "internal_error" and "ZeroDivisionError" in r.error.message


def test_every_tool_is_documented_with_schema_and_hints() -> None:
    tools = all_tools()
    assert len(tools) >= 12
    for name, t in tools.items():
        assert t.description and len(t.description) > 20, name
        schema = t.input_schema
        assert schema["type"] == "object"
        for prop, spec in schema.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{prop}"
        oa = t.openai_schema()
        assert oa["function"]["name"] == name and oa["function"]["parameters"] == schema
        assert t.mcp_annotations()["openWorldHint"] is False
    assert tools["read_text_file"].hints.read_only and tools["delete_file"].hints.destructive


def test_docstring_parsing() -> None:
    desc, args = parse_docstring("""Do a thing
    over two lines.

    Args:
        a: First
            continued.
        b (int): Second.
    """)
    assert desc == "Do a thing over two lines." and args == {"a": "First continued.", "b": "Second."}


def test_snapshot_restore_is_exact() -> None:
    ws = make()
    snap = ws.snapshot()
    h = ws.content_hash
    ws.call("write_file", {"path": "/c.txt", "content": "3"})
    ws.call("delete_file", {"path": "/b.txt"})
    assert ws.content_hash != h
    ws.restore(snap)
    assert ws.content_hash == h and ws.state is snap and ws.events() == []
    assert not ws.diff()


def test_fork_is_isolated() -> None:
    ws = make()
    other = ws.fork()
    other.call("write_file", {"path": "/b.txt", "content": "changed"})
    assert ws.table("files.files")["/b.txt"].content == "two\n"
    assert other.table("files.files")["/b.txt"].content == "changed"
    ws.call("delete_file", {"path": "/a/x.txt"})
    assert "/a/x.txt" in other.table("files.files")


def test_diff_semantic_and_hash_equal_iff_equal() -> None:
    ws = make()
    s0 = ws.snapshot()
    ws.call("write_file", {"path": "/b.txt", "content": "two\nthree\n"})
    ws.call("write_file", {"path": "/new.txt", "content": "n"})
    d = ws.diff(s0)
    assert d.summary() == {"files.files": {"added": 1, "changed": 1}}
    changed = d.in_table("files.files")[0]
    assert changed.key == "/b.txt" and "+three" in changed.text_diff()
    ws.call("write_file", {"path": "/b.txt", "content": "two\n"})
    ws.call("delete_file", {"path": "/new.txt"})
    # content equal again except modified time of /b.txt
    d2 = ws.diff(s0)
    assert [c.key for c in d2] == ["/b.txt"] and set(d2.changes[0].fields) == {"modified"}


def test_hash_ignores_history() -> None:
    a, b = make(), make()
    a.call("write_file", {"path": "/z.txt", "content": "z"})
    a.call("delete_file", {"path": "/z.txt"})
    assert a.content_hash == b.content_hash


def test_clock_and_ids_are_deterministic() -> None:
    runs = []
    for _ in range(2):
        ws = make()
        for i in range(5):
            ws.call("write_file", {"path": f"/f{i}.txt", "content": str(i)})
            ws.call("read_text_file", {"path": "/nope"})
        runs.append(json.dumps([e.to_json() for e in ws.events()], sort_keys=True))
    assert runs[0] == runs[1]
    ws = make()
    t0 = ws.state.now
    ws.call("list_directory", {})
    assert (ws.state.now - t0).total_seconds() == 1.0


def test_json_round_trip() -> None:
    ws = make()
    ws.call("write_file", {"path": "/c.txt", "content": "3"})
    back = Workspace.from_json(ws.to_json())
    assert back.content_hash == ws.content_hash and back.to_json() == ws.to_json()


def test_world_change_and_messages_are_logged() -> None:
    ws = make()
    ev = ws.apply_world_change([{"op": "patch", "table": "files.files", "key": "/b.txt", "fields": {"content": "x"}}],
                               note="someone edited")
    assert ev.kind == "world" and ev.diff.changes[0].fields["content"] == ("two\n", "x")
    ws.add_message("user", "hi")
    assert [e.kind for e in ws.events()] == ["world", "message"]
    with pytest.raises(SpecError, match="unknown table"):
        ws.apply_world_change([{"op": "put", "table": "nope", "record": {}}])
    with pytest.raises(SpecError, match="no record"):
        ws.apply_world_change([{"op": "delete", "table": "files.files", "key": "/ghost"}])


@pytest.mark.parametrize("data,where", [
    ({"nope": {}}, "data.nope"), ({"files": {"bad": []}}, "data.files.bad"),
    ({"files": {"files": [{"path": "/x", "content": 3}]}}, "data.files.files[0]"),
    ({"files": {"files": [{"path": "/x"}, {"path": "/x"}]}}, "duplicate"),
    ({"files": {"files": [{"path": "../x"}]}}, "data.files.files[0]"),
])
def test_bad_initial_data_names_the_path(data, where) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError, match=where.replace("[", r"\[").replace("]", r"\]")):
        Workspace.create(WorkspaceConfig(services=["files"]), data)


def test_unknown_service_is_refused() -> None:
    with pytest.raises(SpecError, match="unknown service"):
        Workspace.create(WorkspaceConfig(services=["files", "fax"]))
