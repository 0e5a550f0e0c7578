"""The one episode-record package (`workspace_sim.record`): lines round-trip, builders match the line types,
old MCP-format records keep loading, and replaying a recorded episode reproduces its state byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_server import EnvironmentSource, Episode
from mcp_server.demo import environment
from workspace_sim.record import (EpisodeRecord, EventLine, FinalLine, HeaderLine, RecordError, RecordWriter,
                                  StepLine, event_line, final_line, header_line, read_record_file, read_records,
                                  replay_record, transcript, violations_and_faults)

_TEXT = st.text(max_size=12)
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), _TEXT,
                    st.floats(allow_nan=False, allow_infinity=False, width=32))
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(_TEXT, inner, max_size=3)), max_leaves=8)
_LONG = st.builds(lambda t, k: (t or "x") * (4096 // len(t or "x") + k), st.text(min_size=1, max_size=3), st.integers(0, 2))  # blob lines
_STR = st.one_of(_TEXT, _TEXT, _LONG, st.sampled_from(["\u2028", "a\x85b", "\u2029\n", "$blob", '{"$esc": 1}']))

_EVENT = st.fixed_dictionaries({
    "index": st.integers(0, 50), "turn": st.integers(0, 5), "kind": st.sampled_from(["call", "message", "world", "stage"]),
    "sim_time": st.just("2026-03-02T09:00:00+00:00"), "tool": st.one_of(st.none(), _TEXT), "args": _JSON,
    "ok": st.booleans(), "result": st.one_of(_JSON, _STR),
    "error": st.one_of(st.none(), st.fixed_dictionaries({"code": st.sampled_from(["fault", "policy_violation", "x"]),
                                                        "message": _STR})),
    "policy": st.one_of(st.none(), _TEXT), "role": st.one_of(st.none(), _TEXT), "content": st.one_of(st.none(), _STR),
})
_MESSAGE = st.one_of(
    st.builds(lambda c: {"role": "user", "content": c}, _STR),
    st.builds(lambda n, a: {"role": "assistant", "tool_calls": [{"function": {"name": n, "arguments": a}}]},
              st.text(min_size=1, max_size=8), st.dictionaries(_TEXT, _JSON, max_size=3)),
    st.builds(lambda c, n: {"role": "tool", "content": c, "name": n, "tool_call_id": "call_0"}, _STR, _TEXT),
)


@st.composite
def episodes(draw: Any) -> EpisodeRecord:
    eid = draw(st.text(min_size=1, max_size=8))
    header = HeaderLine(episode_id=eid, env_id=draw(st.text(min_size=1, max_size=8)), policy={"name": "teacher",
                        "settings": draw(st.dictionaries(_TEXT, _JSON, max_size=3))}, seed=draw(st.integers(0, 99)),
                        capabilities=draw(st.lists(_TEXT, max_size=3)), initial_score=draw(st.floats(0, 1)))
    events = [EventLine(episode_id=eid, **e) for e in draw(st.lists(_EVENT, max_size=4))]
    steps = [StepLine(episode_id=eid, turn=t, predicates=draw(st.lists(st.booleans(), max_size=3)),
                      score=draw(st.floats(0, 1)), state_hash=draw(_TEXT)) for t in sorted(set(e.turn for e in events))]
    final = None
    if draw(st.booleans()):
        final = FinalLine(episode_id=eid, messages=draw(st.lists(_MESSAGE, max_size=4)), stop_reason="answered",
                          evaluation={"passed": draw(st.booleans()), "score": draw(st.floats(0, 1)), "results": []},
                          reward=draw(st.floats(-1, 1)), final_answer=draw(st.one_of(st.none(), _STR)))
    return EpisodeRecord(header=header, events=events, steps=steps, final=final)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(st.lists(episodes(), min_size=1, max_size=3, unique_by=lambda r: r.episode_id))
def test_any_line_written_reads_back_the_same_through_both_writers(tmp_path: Path, records: list[EpisodeRecord]) -> None:
    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(r.to_jsonl() for r in records), encoding="utf-8")
    live = tmp_path / "live.jsonl"
    live.unlink(missing_ok=True)  # hypothesis runs every example in the same folder
    writer = RecordWriter(live)
    for rec in records:  # the live writer, a line at a time, as dicts
        for line in rec.lines():
            writer.write(line.model_dump(mode="json"))
    writer.close(sync=False)
    for path in (whole, live):
        back = read_records(path)
        assert [b.model_dump() for b in back] == [_in_order(r).model_dump() for r in records]
        as_written = read_record_file(path)
        assert [s.header for s in as_written.segments] == [r.header.model_dump(mode="json") for r in records]
    for line in whole.read_text(encoding="utf-8").split("\n"):  # one physical line per record line, however split
        assert line.splitlines() in ([], [line])


def _in_order(rec: EpisodeRecord) -> EpisodeRecord:
    """The record as a reader returns it: lines in writing order."""
    lines = list(rec.lines())
    return EpisodeRecord(header=lines[0], events=[x for x in lines if isinstance(x, EventLine)],
                         steps=[x for x in lines if isinstance(x, StepLine)],
                         final=next((x for x in lines if isinstance(x, FinalLine)), None))


@settings(max_examples=80, deadline=None)
@given(st.lists(_EVENT, max_size=5), _STR)
def test_the_builders_give_exactly_the_line_types_dumps(events: list[dict[str, Any]], task: str) -> None:
    lines = [dict(e, type="event", episode_id="e", diff=[], read=None, via=None) for e in events]
    for i, line in enumerate(lines):  # a call event's index is unique in a log
        line["index"] = i
    for line in lines:
        assert list(EventLine.model_validate(line).model_dump(mode="json")) == list(EventLine.model_fields)
    calls = [dict(line, kind="call", tool=line["tool"] or "t") for line in lines]
    final = final_line("e", transcript(task, calls, {}, "done"), {"passed": True, "score": 1.0}, 1.0, "answered",
                       "done", {"total": 0.5}, events=calls)
    assert json.dumps(FinalLine.model_validate(final).model_dump(mode="json")) == json.dumps(final)
    header = header_line("e", "env", policy="p", settings={"a": 1}, tools=[])
    assert json.dumps(HeaderLine.model_validate(header).model_dump(mode="json")) == json.dumps(header)
    typed = violations_and_faults([EventLine.model_validate(c) for c in calls])
    assert violations_and_faults(calls) == typed  # one rule, whatever form the events come in


def test_event_line_of_a_workspace_event_is_the_typed_dump(tmp_path: Path) -> None:
    ws = environment().build_workspace()
    results = [ws.call("read_text_file", {"path": "/reports/q1.csv"}), ws.call("read_text_file", {"path": "/nope"}),
               ws.call("write_file", {"path": "/reports/s.md", "content": "x"})]
    for n, r in enumerate(results):
        built = event_line(r.event, "e", n)
        assert json.dumps(built) == json.dumps(EventLine.from_event(r.event, "e", n).model_dump(mode="json"))


OLD_MCP = (  # a record as mcp_server/recording.py wrote it before the one format: sparse lines, its own key order
    '{"type":"header","record_version":1,"episode_id":"old","env_id":"demo","env_hash":"h","initial_state_hash":"",'
    '"capabilities":[],"policy":{"name":"mcp-client","settings":{"transport":"stdio"}},"seed":0,"group":null,"tools":[]}\n'
    '{"index":0,"kind":"call","sim_time":"2026-03-02T09:00:00+00:00","tool":"read_text_file","args":{"path":"/x"},'
    '"ok":false,"error":{"code":"not_found","message":"no /x"},"diff":[],"type":"event","episode_id":"old","turn":0}\n'
    '{"type":"final","episode_id":"old","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,'
    '"tool_calls":[{"type":"function","id":"call_0","function":{"name":"read_text_file","arguments":{"path":"/x"}}}]},'
    '{"role":"tool","name":"read_text_file","tool_call_id":"call_0","content":"Error (not_found): no /x"}],'
    '"evaluation":{"passed":false,"score":0.0,"results":[]},"reward":0.0,"stop_reason":"user_ended",'
    '"final_answer":null,"timings":{"total":0.1},"tokens":[],"policy_violations":[],"fault_errors":[]}\n'
)


def test_records_in_the_old_mcp_layout_keep_loading(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(OLD_MCP, encoding="utf-8")
    (rec,) = read_records(path)
    assert rec.complete and rec.events[0].error.code == "not_found" and rec.final.stop_reason == "user_ended"
    (seg,) = read_record_file(path).segments
    assert seg.events[0]["tool"] == "read_text_file"
    path.write_text(OLD_MCP.replace('"turn":0}', '"turn":0,"sneaky":1}'), encoding="utf-8")
    with pytest.raises(RecordError, match=r"old.jsonl:2: bad event line: sneaky"):
        read_records(path)


CALLS = [("read_text_file", {"path": "/reports/q1.csv"}), ("read_text_file", {"path": "/missing"}),
         ("write_file", {"path": "/reports/summary.md", "content": "Total: 1234\n"}),
         ("create_directory", {"path": "/reports/old"}),
         ("move_file", {"source": "/reports/q1.csv", "destination": "/reports/old/q1.csv"}),
         ("delete_file", {"path": "/drafts/notes.md"}), ("list_directory", {"path": "/reports"})]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(CALLS), max_size=6), st.integers(0, 10**6))
def test_replaying_a_recorded_episode_reproduces_its_state_bytes(tmp_path: Path, calls: list, n: int) -> None:
    eid = f"ep{n}"
    (tmp_path / f"{eid}.jsonl").unlink(missing_ok=True)
    ep = Episode(environment(), eid, source=EnvironmentSource.python("mcp_server.demo:environment"),
                 record_dir=tmp_path, transport="test")
    for tool, args in calls:
        ep.call(tool, args)
    live_hash, live_data = ep.workspace.content_hash, json.dumps(ep.workspace.export_data(), sort_keys=True)
    ep.end()
    (rec,) = read_records(tmp_path / f"{eid}.jsonl")
    env = environment()
    ws = env.build_workspace()
    report = replay_record(rec, env, workspace=ws)
    assert report.ok, report.mismatches
    assert report.final_hash == live_hash and json.dumps(ws.export_data(), sort_keys=True) == live_data
