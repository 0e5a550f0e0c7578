"""Property tests: any sequence of calls keeps the workspace's invariants."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.state import build_state

NAMES = st.sampled_from(["/a.txt", "/d/b.txt", "/d", "/d/e", "/d/e/c.md", "../x", "/\x00", "d/b.txt", "/zz/q"])
TEXT = st.text(max_size=30)
JUNK = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))

CALL = st.one_of(
    st.tuples(st.just("write_file"), st.fixed_dictionaries({"path": NAMES, "content": TEXT})),
    st.tuples(st.just("read_text_file"), st.fixed_dictionaries({"path": NAMES})),
    st.tuples(st.just("create_directory"), st.fixed_dictionaries({"path": NAMES})),
    st.tuples(st.just("delete_file"), st.fixed_dictionaries({"path": NAMES})),
    st.tuples(st.just("move_file"), st.fixed_dictionaries({"source": NAMES, "destination": NAMES})),
    st.tuples(st.just("edit_file"), st.fixed_dictionaries({"path": NAMES, "edits": st.lists(
        st.fixed_dictionaries({"old_text": TEXT, "new_text": TEXT}), max_size=2)})),
    st.tuples(st.just("grep"), st.fixed_dictionaries({"pattern": st.text(max_size=6)})),
    st.tuples(st.sampled_from(["write_file", "list_directory", "nonexistent_tool", "search_files"]), JUNK),
)


def fresh() -> Workspace:
    return Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": [
        {"path": "/a.txt", "content": "hello\n"}, {"path": "/d/b.txt", "content": "b\n"}]}})


def recomputed_hash(ws: Workspace) -> str:
    tables = {name: dict(t.items()) for name, t in ws.state.tables.items()}
    return build_state(tables, ws.state.now).content_hash


def folders_consistent(ws: Workspace) -> bool:
    files, folders = ws.table("files.files"), ws.table("files.folders")
    for path in list(files) + list(folders):
        parent = path.rsplit("/", 1)[0] or "/"
        if parent != "/" and parent not in folders:
            return False
    return not (set(files) & set(folders))


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.lists(CALL, max_size=25))
def test_calls_never_raise_and_keep_invariants(calls) -> None:  # type: ignore[no-untyped-def]
    ws = fresh()
    for tool, args in calls:
        before = ws.snapshot()
        r = ws.call(tool, args)
        assert r.ok or r.error.message
        if not r.ok:
            assert ws.content_hash == before.content_hash and not ws.diff(before, ws.state)
        assert folders_consistent(ws)
    assert ws.content_hash == recomputed_hash(ws)
    assert len(ws.events()) == len(calls)


@SETTINGS
@given(st.lists(CALL, max_size=15), st.lists(CALL, max_size=15))
def test_snapshot_mutate_restore_is_identical(prefix, suffix) -> None:  # type: ignore[no-untyped-def]
    ws = fresh()
    for tool, args in prefix:
        ws.call(tool, args)
    snap, h, data = ws.snapshot(), ws.content_hash, ws.export_data()
    for tool, args in suffix:
        ws.call(tool, args)
    ws.restore(snap)
    assert ws.content_hash == h and ws.export_data() == data and not ws.diff(snap, ws.state)


@SETTINGS
@given(st.lists(CALL, max_size=15), st.lists(CALL, max_size=15))
def test_forks_are_isolated(a_calls, b_calls) -> None:  # type: ignore[no-untyped-def]
    a = fresh()
    b = a.fork()
    ref = fresh()
    for tool, args in a_calls:
        a.call(tool, args)
        ref.call(tool, args)
    for tool, args in b_calls:
        b.call(tool, args)
    assert a.export_data() == ref.export_data()


@SETTINGS
@given(st.lists(CALL, max_size=15), st.lists(CALL, max_size=15))
def test_diff_empty_exactly_when_states_equal(a_calls, b_calls) -> None:  # type: ignore[no-untyped-def]
    a, b = fresh(), fresh()
    for tool, args in a_calls:
        a.call(tool, args)
    for tool, args in b_calls:
        b.call(tool, args)
    equal = a.export_data() == b.export_data()
    assert (not a.diff(a.state, b.state)) == equal
    assert (a.content_hash == b.content_hash) == equal


@SETTINGS
@given(st.lists(CALL, max_size=20))
def test_state_survives_json_round_trip(calls) -> None:  # type: ignore[no-untyped-def]
    ws = fresh()
    for tool, args in calls:
        ws.call(tool, args)
    back = Workspace.from_json(ws.to_json())
    assert back.content_hash == ws.content_hash and back.export_data() == ws.export_data()
    assert back.state.now == ws.state.now
