"""Hardening of the simulator: linear-time patterns, argument and growth limits, the call budget,
deep trees and nested documents, records that store large content once, and bounded memory."""

from __future__ import annotations

import fnmatch
import gc
import json
import re
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import call_error
from workspace_sim import Workspace, WorkspaceConfig, WorkspaceLimits
from workspace_sim.core.errors import InvalidArgument, SpecError
from workspace_sim.text.patterns import compile_glob, compile_regex
from workspace_sim.predicates import parse_predicates

HOSTILE = ("a" * 26 + "!\n") * 200


def ws_with(limits: WorkspaceLimits | None = None, files: list[dict] | None = None) -> Workspace:
    config = WorkspaceConfig(limits=limits or WorkspaceLimits())
    return Workspace.create(config, {"files": {"files": files or [{"path": "/r.txt", "content": HOSTILE}]}})


# --- 1. agent patterns ------------------------------------------------------------------------

def test_catastrophic_pattern_answers_within_a_tight_budget() -> None:
    # `(a|aa)+$` took 46 s with a backtracking engine; under a 1 s budget it must simply answer
    ws = ws_with(WorkspaceLimits(call_seconds=1.0))
    r = ws.call("grep", {"pattern": "(a|aa)+$", "path": "/r.txt"})
    assert r.ok, r.text
    assert r.data["matches"] == []
    r = ws.call("grep", {"pattern": "(a|aa)+!$", "path": "/r.txt", "max_results": 5})
    assert r.ok and len(r.data["matches"]) == 5 and r.data["truncated"]


@pytest.mark.parametrize("pattern, why", [
    (r"(a)\1", "invalid escape sequence"),
    ("(?=a)b", "invalid perl operator"),
    ("(?<!a)b", "invalid perl operator"),
    ("a{1001}", "invalid repetition size"),
    ("(", "missing )"),
])
def test_unsupported_regex_is_a_clear_invalid_argument(pattern: str, why: str) -> None:
    msg = call_error(ws_with(), "grep", {"pattern": pattern})
    assert msg.startswith("invalid_argument: pattern is not a supported regular expression")
    assert why in msg and "no backreferences, lookahead/lookbehind" in msg


def test_fixed_string_and_ignore_case() -> None:
    ws = ws_with(files=[{"path": "/a.md", "content": "x (a+b) y\nA+B\n"}, {"path": "/b.txt", "content": "(a+b)"}])
    r = ws.call("grep", {"pattern": "(a+b)", "fixed_string": True, "include": "*.md"})
    assert [(m["path"], m["line"]) for m in r.data["matches"]] == [("/a.md", 1)]
    r = ws.call("grep", {"pattern": "^a\\+b$", "ignore_case": True})
    assert [(m["path"], m["line"]) for m in r.data["matches"]] == [("/a.md", 2)]


@pytest.mark.parametrize("tool, args", [
    ("grep", {"pattern": "x" * 10_000_000}),
    ("search_files", {"pattern": "x" * 10_000_000}),
    ("directory_tree", {"exclude_patterns": ["x" * 10_000_000]}),
])
def test_ten_megabyte_pattern_is_refused_at_once(tool: str, args: dict) -> None:
    ws = ws_with(WorkspaceLimits(call_seconds=1.0))
    msg = call_error(ws, tool, args)
    assert msg.startswith("invalid_argument: argument ")
    assert "10,000,000 characters long; the limit is 10,000 (limits.max_argument_chars)" in msg
    assert len(json.dumps(ws.events()[-1].to_json())) < 20_000  # the refused argument is not logged whole


@pytest.mark.parametrize("tool, args, name", [
    ("grep", {"pattern": "a" * 3000}, "pattern"),
    ("grep", {"pattern": "a", "include": "*" * 1001}, "include"),
    ("search_files", {"pattern": "?" * 1001}, "pattern"),
    ("search_files", {"pattern": "*", "exclude_patterns": ["a", "b" * 1001]}, "exclude_patterns[1]"),
    ("directory_tree", {"exclude_patterns": ["x"] * 101}, "exclude_patterns"),
    ("directory_tree", {"exclude_patterns": ["[z-a]"]}, "exclude_patterns[0]"),
])
def test_pattern_limits_name_the_argument(tool: str, args: dict, name: str) -> None:
    msg = call_error(ws_with(), tool, args)
    assert msg.startswith(f"invalid_argument: {name} "), msg


def test_globs_keep_their_meaning() -> None:
    files = [{"path": p, "content": "x"} for p in ("/reports/q1.md", "/reports/2026/q2.md", "/notes/a.txt", "/b[1].txt")]
    ws = ws_with(files=files)
    assert ws.call("search_files", {"pattern": "reports/**/*.md"}).data["matches"] == ["/reports/2026/q2.md", "/reports/q1.md"]
    assert ws.call("search_files", {"pattern": "*.md", "exclude_patterns": ["2026"]}).data["matches"] == ["/reports/q1.md"]
    assert ws.call("search_files", {"pattern": "[!q]*.txt"}).data["matches"] == ["/b[1].txt", "/notes/a.txt"]
    assert ws.call("search_files", {"pattern": "b[[]1]*"}).data["matches"] == ["/b[1].txt"]
    tree = ws.call("directory_tree", {"exclude_patterns": ["reports"]}).data["tree"]
    assert [e["name"] for e in tree] == ["notes", "b[1].txt"]


_ATOMS = st.sampled_from(["a", "b", "ab", ".", "[ab]", "[^a]", "\\d", "x", "(a|b)", "(ab|a)", "\\.", "[0-9]"])


@st.composite
def _regexes(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 5))):
        atom = draw(_ATOMS)
        q = draw(st.sampled_from(["", "", "*", "+", "?", "{1,2}", "*?"]))
        parts.append(atom + q if len(atom) == 1 or atom.startswith(("(", "[", "\\")) else f"(?:{atom}){q}")
    body = "".join(parts)
    if draw(st.booleans()):
        body = f"{body}|{draw(_ATOMS)}"
    return ("^" if draw(st.booleans()) else "") + body + ("$" if draw(st.booleans()) else "")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_regexes(), st.text(alphabet="ab.x19!", max_size=12), st.booleans())
def test_re2_agrees_with_re_where_both_accept(pattern: str, text: str, ignore_case: bool) -> None:
    try:
        ours = compile_regex(pattern, ignore_case=ignore_case)
    except InvalidArgument:
        return
    theirs = re.compile(pattern, re.I if ignore_case else 0)
    a, b = ours.search(text), theirs.search(text)
    assert (a is None) == (b is None), (pattern, text)
    if a is not None:
        assert a.span() == b.span(), (pattern, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab*?/.[]!-", max_size=8), st.text(alphabet="ab/.!-", max_size=8))
def test_globs_agree_with_fnmatch(pattern: str, text: str) -> None:
    try:
        ours = compile_glob(pattern)
    except InvalidArgument:
        return  # e.g. a reversed range, which fnmatch would quietly match nothing with
    assert ours(text) == fnmatch.fnmatchcase(text, pattern), (pattern, text)


def test_predicate_regexes_use_re2() -> None:
    with pytest.raises(SpecError, match="RE2 syntax"):
        parse_predicates([{"kind": "answer", "condition": {"regex": "(?=x)"}}])
    (p,) = parse_predicates([{"kind": "answer", "condition": {"regex": "(a|aa)+$", "ignore_case": True}}])
    assert p.condition.check("A" * 5000 + "a") and not p.condition.check("a" * 5000 + "!")


# --- 2. argument limits and the call budget ---------------------------------------------------

def test_argument_depth_and_count_are_bounded() -> None:
    ws = ws_with()
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    assert "nests deeper than 20 levels (limits.max_argument_depth)" in call_error(ws, "read_multiple_files", {"paths": deep})
    assert "more than 10,000 values (limits.max_argument_values)" in call_error(
        ws, "read_multiple_files", {"paths": ["/r.txt"] * 20_000})
    assert "argument names must be strings of at most 100 characters" in call_error(ws, "grep", {"p" * 5000: 1})
    # a long name after a list argument (the check's slow path) is refused as well, and not logged whole
    assert "argument names must be strings of at most 100 characters" in call_error(
        ws, "grep", {"exclude_patterns": ["x"], "p" * 1_000_000: 1})
    assert all(len(k) <= 100 for k in ws.events()[-1].args)
    msg = call_error(ws, "edit_file", {"path": "/r.txt", "edits": [{"old_text": "a", "new_text": "b" * 2_000_000}]})
    assert "argument edits[0].new_text is 2,000,000 characters long; the limit is 1,000,000 (limits.max_record_chars)" in msg


def test_a_tool_run_through_invoke_gets_the_same_argument_limits() -> None:
    # red team: ToolContext.invoke validated the other tool's arguments but skipped check_arguments
    from workspace_sim.core.context import ToolContext
    ws = ws_with(WorkspaceLimits(max_argument_values=10))
    ctx = ToolContext(ws.state, ws.config, None, ws.tools)
    with pytest.raises(InvalidArgument, match=r"more than 10 values \(limits.max_argument_values\)"):
        ctx.invoke("directory_tree", path="/", exclude_patterns=["x"] * 20)
    assert ctx.invoked == [] and ctx.writes == {}
    ctx = ToolContext(ws.state, ws.config, None, ws.tools, budget=1e-9)
    with pytest.raises(Exception, match="limits.call_seconds"):
        ctx.invoke("write_file", path="/n.txt", content="x")
    assert ctx.writes == {}

def test_timed_out_call_changes_nothing() -> None:
    ws = ws_with(WorkspaceLimits(call_seconds=1e-9))
    before, counters = ws.content_hash, dict(ws.state.counters)
    msg = call_error(ws, "send_email", {"to": ["bob@example.com"], "subject": "s", "body": "b"})
    assert msg.startswith("timeout: the call ran past its time budget of 1e-09 s (limits.call_seconds); nothing was changed")
    assert ws.content_hash == before and dict(ws.state.counters) == counters and ws.diff().changes == ()
    assert ws.events()[-1].error.code == "timeout"


def test_long_scan_stops_at_the_deadline() -> None:
    files = [{"path": f"/d/f{i:05d}.txt", "content": "line\n" * 50} for i in range(3000)]
    ws = ws_with(WorkspaceLimits(call_seconds=0.001), files=files)
    r = ws.call("grep", {"pattern": "nothing here"})
    assert r.error is not None and r.error.code == "timeout"


# --- 7. growth limits -------------------------------------------------------------------------

def test_fifty_megabyte_write_is_refused_with_the_limit() -> None:
    ws = ws_with()
    msg = call_error(ws, "write_file", {"path": "/big.txt", "content": "x" * 50_000_000})
    assert "50,000,000 characters long; the limit is 1,000,000 (limits.max_record_chars)" in msg


def test_growth_limits_are_checked_on_the_pending_changes() -> None:
    limits = WorkspaceLimits(max_record_chars=1_000, max_total_chars=10_000, max_records_per_table=12)
    ws = ws_with(limits, files=[{"path": "/a.txt", "content": "a" * 899 + "z"}])
    msg = call_error(ws, "edit_file", {"path": "/a.txt", "edits": [{"old_text": "z", "new_text": "b" * 191}]})
    assert msg == ("limit_exceeded: files.files record '/a.txt' would hold 1,111 characters; the limit is 1,000 "
                   "(limits.max_record_chars). Nothing was changed.")
    for i in range(9):
        assert ws.call("write_file", {"path": f"/f{i}.txt", "content": "c" * 970}).ok
    msg = call_error(ws, "write_file", {"path": "/g.txt", "content": "c" * 970})
    assert "the limit is 10,000 (limits.max_total_chars)" in msg
    assert ws.call("write_file", {"path": "/f0.txt", "content": "short"}).ok  # shrinking is always allowed
    assert ws.call("write_file", {"path": "/g.txt", "content": "c"}).ok
    ws.call("write_file", {"path": "/h.txt", "content": "c"})
    msg = call_error(ws, "write_file", {"path": "/i.txt", "content": "c"})
    assert "files.files would hold 13 records; the limit is 12 (limits.max_records_per_table)" in msg


def test_event_log_is_bounded() -> None:
    ws = ws_with(WorkspaceLimits(max_events=10))
    for _ in range(10):
        ws.call("list_directory", {})
    before = ws.snapshot()
    r = ws.call("list_directory", {})
    assert r.error is not None and r.error.code == "limit_exceeded" and "limits.max_events" in r.error.message
    assert ws.snapshot() is before  # not even logged


# --- 8. deep structures -----------------------------------------------------------------------

def test_four_hundred_deep_tree_answers() -> None:
    ws = ws_with()
    assert ws.call("create_directory", {"path": "/a" * 400}).ok
    r = ws.call("directory_tree", {})
    assert r.ok, r.text
    depth, node = 0, r.data["tree"]
    while node and node[0]["type"] == "directory" and "children" in node[0]:
        depth, node = depth + 1, node[0]["children"]
    assert depth == 99 and node[0].get("truncated") is True  # 100 levels of folders, the last one not expanded
    assert "deeper than 100 levels" in r.data["note"]
    json.dumps(r.data)  # every client can encode it
    deeper = ws.call("directory_tree", {"path": "/a" * 101})
    assert deeper.ok and deeper.data["tree"][0]["name"] == "a"


def test_deeply_nested_predicates_are_refused_by_path() -> None:
    doc: dict = {"kind": "answer", "condition": "x"}
    for _ in range(3000):
        doc = {"kind": "not", "predicate": doc}
    with pytest.raises(SpecError, match=r"nested deeper than 64 levels"):
        parse_predicates([doc])


# --- records: large content once ----------------------------------------------------------------

def test_mcp_record_stores_a_big_content_once(tmp_path) -> None:
    from workspace_sim.record import RecordWriter, read_record_file

    ws = ws_with()
    big = "line of text\n" * 70_000  # ~0.9 MB
    ev = ws.call("write_file", {"path": "/big.txt", "content": big}).event
    w = RecordWriter(tmp_path / "r.jsonl")
    w.write({"type": "header", "episode_id": "e1"})
    w.write({"type": "event", "episode_id": "e1", "turn": 0, **ev.to_json()})
    forged = {"type": "event", "episode_id": "e1", "turn": 1, "index": 99, "kind": "call",
              "args": {"x": {"$blob": "0" * 64}, "y": {"$esc": 1}}}
    w.write(forged)
    w.write({"type": "final", "episode_id": "e1", "messages": [{"role": "tool", "content": big}]})
    w.close()
    size = (tmp_path / "r.jsonl").stat().st_size
    assert len(big) < size < 1.1 * len(big)
    seg = read_record_file(tmp_path / "r.jsonl").segments[0]
    assert seg.events[0]["args"]["content"] == big and seg.events[0]["diff"][0]["after"]["content"] == big
    assert seg.events[1]["args"] == forged["args"]
    assert seg.final["messages"][0]["content"] == big


def test_episode_record_stores_a_big_content_once(tmp_path) -> None:
    from workspace_sim.record import EpisodeRecord, EventLine, FinalLine, HeaderLine, read_records, write_records

    ws = ws_with()
    big = "x" * 500_000
    ev = ws.call("write_file", {"path": "/big.txt", "content": big}).event
    header = HeaderLine.model_validate({
        "episode_id": "e1", "env_id": "env", "policy": {"name": "p"}, "tools": [],
        **{k: v for k, v in _header_defaults().items()}})
    rec = EpisodeRecord(header=header, events=[EventLine.from_event(ev, "e1", 0)], final=FinalLine(
        episode_id="e1", messages=[{"role": "user", "content": big}], evaluation={"passed": True, "score": 1.0},
        reward=1.0, stop_reason="answered"))
    rec2 = rec.model_copy(update={"header": header.model_copy(update={"episode_id": "e2"})})
    rec2.events = [e.model_copy(update={"episode_id": "e2"}) for e in rec.events]
    rec2.final = rec.final.model_copy(update={"episode_id": "e2"})
    path = write_records([rec, rec2], tmp_path / "r.jsonl")
    assert len(big) < path.stat().st_size < 1.1 * len(big)
    back = read_records(path)
    assert [r.model_dump() for r in back] == [rec.model_dump(), rec2.model_dump()]


def _header_defaults() -> dict:
    from workspace_sim.record import HeaderLine

    required = [n for n, f in HeaderLine.model_fields.items() if f.is_required()]
    values = {"spec_hash": "0" * 16, "seed": 0, "task": "t", "created": "2026-01-01T00:00:00+00:00"}
    return {k: values[k] for k in required if k in values}


# --- soak -------------------------------------------------------------------------------------

def test_create_call_close_cycles_keep_memory_bounded() -> None:
    def cycle(i: int) -> None:
        ws = Workspace.create(WorkspaceConfig(seed=i), {"files": {"files": [{"path": "/a.txt", "content": "hello"}]}})
        ws.call("write_file", {"path": "/b.txt", "content": f"x{i}"})
        ws.call("grep", {"pattern": f"h.l+o|{i}"})
        ws.call("search_files", {"pattern": f"*{i}*"})
        ws.call("directory_tree", {"exclude_patterns": [f"[{i % 10}]*"]})
        ws.close()

    for i in range(300):  # warm the bounded caches (compiled patterns, paths)
        cycle(i)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for i in range(300, 1300):
            cycle(i)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown / 1000 < 200, f"{grown / 1000:.0f} bytes kept per create/call/close cycle"


@pytest.mark.parametrize("value, shown", [(float("nan"), "NaN"), (float("inf"), "Infinity"),
                                          (float("-inf"), "-Infinity")])
def test_nan_and_infinity_arguments_are_refused_on_every_entry_and_never_logged_as_numbers(
        tmp_path: Path, value: float, shown: str) -> None:
    """Issue 24 item 7: 0cab290 refused NaN/Infinity in JSON text (transports, the runner's text arguments);
    a call given a Python float (a policy's dict arguments, a spec's reference, the library API, invoke)
    still reached the tool and left NaN in the event log, records and datasets. Now check_arguments refuses
    it, naming the argument, and the refused call's logged arguments hold it as text."""
    from episode_helpers import Scripted, multi_turn_spec

    from trainers.episodes.runner import run_episode
    from trainers.episodes.turns import AgentTurn, PolicyCall
    from workspace_sim.record import write_records

    ws = Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": [{"path": "/a.md", "content": "x"}]}})
    before = ws.content_hash
    for args, where in (({"path": "/", "depth": value}, "depth"),
                        ({"path": "/", "exclude_patterns": ["*.tmp"], "x": {"deep": [1, value]}}, "x.deep[1]")):
        r = ws.call("list_directory", args)
        assert r.error is not None and r.error.code == "invalid_argument"
        assert r.text == f"Error (invalid_argument): argument {where} is {shown}, which is not a JSON number; " \
                         "give a finite number"
        json.dumps(r.event.args, allow_nan=False)  # the log holds only JSON
    assert ws.content_hash == before
    # a Python policy's dict arguments take the same path, and its record is standard JSON
    policy = Scripted([AgentTurn(calls=[PolicyCall("list_directory", {"path": "/drafts", "depth": value}, "c1")]),
                       AgentTurn(content="Done.")])
    rec = run_episode(multi_turn_spec(), policy)
    (tool_msg,) = [m for m in rec.final.messages if m.role == "tool"]
    assert f"argument depth is {shown}" in tool_msg.content
    text = write_records([rec], tmp_path / "r.jsonl").read_text(encoding="utf-8")
    for line in text.splitlines():
        json.loads(line, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c} in the record"))
