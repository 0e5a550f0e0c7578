"""The episode record: lines built from a real workspace round-trip through JSONL; bad input is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workspace_sim.record import (
    ChatMessage,
    EpisodeRecord,
    EventLine,
    FinalLine,
    HeaderLine,
    PolicyInfo,
    RecordError,
    StepLine,
    TurnTokens,
    parse_lines,
    read_records,
    tool_schemas,
    violations_and_faults,
    write_records,
)
from workspace_sim import Fault, Workspace, WorkspaceConfig


def real_episode(episode_id: str = "ep-1", env_id: str = "env-a", faults: bool = False) -> EpisodeRecord:
    """An episode made from a real files workspace: one failing and one succeeding move."""
    config = WorkspaceConfig(services=["files"], faults=[Fault(tools=["move_file"], rate=1.0, max_consecutive=1)]
                             if faults else [])
    ws = Workspace.create(config, {"files": {"files": [{"path": "/q3.md", "content": "report"}],
                                             "folders": [{"path": "/archive"}]}})
    header = HeaderLine(episode_id=episode_id, env_id=env_id, initial_state_hash=ws.content_hash,
                        policy=PolicyInfo(name="teacher"), tools=tool_schemas(["move_file"]))
    rec = EpisodeRecord(header=header)
    args = {"source": "/q3.md", "destination": "/archive/q3.md"}
    r1 = ws.call("move_file", args)
    r2 = ws.call("move_file", args)
    for r in (r1, r2):
        rec.events.append(EventLine.from_event(r.event, episode_id, turn=0))
    rec.steps.append(StepLine(episode_id=episode_id, turn=0, predicates=[True], score=1.0, state_hash=ws.content_hash))
    violations, fault_errors = violations_and_faults(rec.events)
    call = {"type": "function", "id": "c0", "function": {"name": "move_file", "arguments": args}}
    rec.final = FinalLine(
        episode_id=episode_id,
        messages=[ChatMessage(role="user", content="archive the report"),
                  ChatMessage(role="assistant", tool_calls=[call]),
                  ChatMessage(role="tool", name="move_file", tool_call_id="c0", content=r2.text),
                  ChatMessage(role="assistant", content="Done.")],
        evaluation={"passed": True, "score": 1.0, "results": []}, reward=1.0, stop_reason="answered",
        tokens=[TurnTokens(turn=0, completion_ids=[1, 2, 3], logprobs=[-0.1, -0.2, -0.3])],
        policy_violations=violations, fault_errors=fault_errors,
    )
    return rec


def test_roundtrip_of_real_events(tmp_path: Path) -> None:
    rec = real_episode()
    path = rec.write(tmp_path / "one.jsonl")
    [back] = read_records(path)
    assert back == rec
    assert back.to_jsonl() == rec.to_jsonl()
    assert back.passed and back.complete
    ev = back.events[0]
    assert ev.tool == "move_file" and ev.ok and ev.diff[0]["table"] == "files.files"
    assert back.events[1].error is not None and back.events[1].error.code == "conflict"
    assert back.messages[1]["tool_calls"][0]["function"]["arguments"] == {"source": "/q3.md",
                                                                           "destination": "/archive/q3.md"}
    assert back.header.tools[0]["function"]["name"] == "move_file"
    kinds = [json.loads(line)["type"] for line in path.read_text().splitlines()]
    assert kinds == ["header", "event", "event", "step", "final"]


def test_many_episodes_per_file_interleaved_and_folders(tmp_path: Path) -> None:
    a, b = real_episode("a"), real_episode("b", env_id="env-b")
    la, lb = a.to_jsonl().splitlines(), b.to_jsonl().splitlines()
    mixed = [x for pair in zip(la, lb) for x in pair]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mixed.jsonl").write_text("\n".join(mixed) + "\n")
    write_records([real_episode("c")], tmp_path / "c.jsonl")
    got = read_records(tmp_path)
    assert sorted(r.episode_id for r in got) == ["a", "b", "c"]
    assert {r.episode_id: r for r in got}["b"] == b


def test_faults_and_violations_are_derived() -> None:
    rec = real_episode(faults=True)
    assert rec.final is not None
    [fault] = rec.final.fault_errors
    assert fault.tool == "move_file" and fault.handled  # the retry succeeded
    assert rec.final.policy_violations == []


def test_unfinished_episode(tmp_path: Path) -> None:
    rec = real_episode()
    rec.final = None
    path = rec.write(tmp_path / "x.jsonl")
    assert read_records(path)[0].complete is False
    assert read_records(path, complete_only=True) == []


@pytest.mark.parametrize("mutate, needle", [
    (lambda ls: ls.insert(1, "not json"), ":2: not valid JSON"),
    (lambda ls: ls.insert(1, "[1]"), ":2: each line must be a JSON object"),
    (lambda ls: ls.insert(1, '{"type": "banana", "episode_id": "ep-1"}'), "'type' must be header"),
    (lambda ls: ls.pop(0), ":1: event line for episode 'ep-1' before its header"),
    (lambda ls: ls.append(ls[0]), "second header"),
    (lambda ls: ls.append(ls[1]), "after its final line"),
    (lambda ls: ls.__setitem__(3, ls[3].replace('"score":1.0', '"score":2.0')), ":4: bad step line: score"),
    (lambda ls: ls.__setitem__(0, ls[0].replace('"seed":0', '"seed":0,"sneaky":1')), "sneaky"),
    (lambda ls: ls.__setitem__(0, ls[0].replace('"record_version":1', '"record_version":99')), "newer than"),
])
def test_malformed_lines_are_named(tmp_path: Path, mutate, needle: str) -> None:  # type: ignore[no-untyped-def]
    lines = real_episode().to_jsonl().splitlines()
    mutate(lines)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordError) as err:
        read_records(path)
    assert needle in str(err.value) and "bad.jsonl" in str(err.value)


def test_other_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="no such file"):
        read_records(tmp_path / "missing")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(RecordError, match="not UTF-8"):
        read_records(tmp_path / "bin.jsonl")
    (tmp_path / "bin.jsonl").unlink()
    real_episode().write(tmp_path / "a.jsonl")
    real_episode().write(tmp_path / "b.jsonl")
    with pytest.raises(RecordError, match="also appears in"):
        read_records(tmp_path)
    with pytest.raises(RecordError, match="unknown tool"):
        tool_schemas(["no_such_tool"])
    with pytest.raises(ValueError, match="arguments"):
        ChatMessage.model_validate({"role": "assistant", "tool_calls": [{"type": "function", "function": {
            "name": "x", "arguments": "{\"a\": 1}"}}]})
    with pytest.raises(ValueError, match="logprobs"):
        TurnTokens(turn=0, completion_ids=[1, 2], logprobs=[0.0])


json_values = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8),
                           lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids,
                                                                                     max_size=3), max_leaves=8)


@settings(max_examples=40, deadline=None)
@given(args=st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=4),
       content=st.text(max_size=30), preds=st.lists(st.booleans(), max_size=5),
       reward=st.floats(-5, 5, allow_nan=False))
def test_any_record_roundtrips(args: dict, content: str, preds: list[bool], reward: float) -> None:
    header = HeaderLine(episode_id="e", env_id="v", policy=PolicyInfo(name="p"))
    call = {"type": "function", "function": {"name": "t", "arguments": args}}
    rec = EpisodeRecord(
        header=header,
        events=[EventLine(episode_id="e", index=0, turn=0, kind="call", sim_time="2026-03-02T09:00:00+00:00",
                          tool="t", args=args, result={"echo": content})],
        steps=[StepLine(episode_id="e", turn=0, predicates=preds, score=0.5, state_hash="h")],
        final=FinalLine(episode_id="e", messages=[ChatMessage(role="user", content=content),
                                                  ChatMessage(role="assistant", tool_calls=[call])],
                        evaluation={"passed": False, "score": 0.5, "results": []}, reward=reward,
                        stop_reason="max_turns"),
    )
    [back] = parse_lines(rec.to_jsonl().splitlines())
    assert back == rec
