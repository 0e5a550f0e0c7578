"""The episode runner: teacher, noop and random policies, multi-turn with the scripted user, world events,
limits and stop reasons, records that validate and read back, and the direct path equal to the MCP path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synth import parse_spec, validate_spec
from synth.procedural import generate
from trainers.episodes.policies import make_policy
from trainers.episodes.prepared import EpisodeLimits, PreparedSpec
from trainers.episodes.runner import run_episode
from trainers.episodes.session import parse_arguments
from trainers.episodes.turns import AgentTurn, PolicyCall
from workspace_sim.record import parse_lines
from episode_helpers import LIST, Scripted, comparable, generated_specs, multi_turn_doc, multi_turn_spec


def test_the_multi_turn_fixture_is_a_valid_environment() -> None:
    report = validate_spec(multi_turn_spec())
    assert report.ok, report


@pytest.mark.parametrize("transport", ["direct", "mcp"])
def test_teacher_passes_a_multi_turn_episode_with_world_events(transport: str) -> None:
    rec = run_episode(multi_turn_spec(), make_policy("teacher"), seed=3, transport=transport)
    f = rec.final
    assert f is not None and f.stop_reason == "answered" and rec.passed and f.reward == 1.0
    assert f.final_answer == "Done: /reports/q3-final.md and a copy in /shared."
    roles = [m.role for m in f.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "tool", "assistant", "user", "assistant",
                     "tool", "assistant"]
    # the user answered the question (revealing the fact) and the announcement came with that reply
    assert f.messages[3].content == "Call it q3-final.md.\n\nFYI: I just put notes.md into /drafts."
    assert f.messages[7].content == "Thanks! Please also copy it to /shared."
    world = [e for e in rec.events if e.kind == "world"]
    assert [[d["key"] for d in e.diff] for e in world] == [["/drafts/notes.md"], ["/drafts/memo.md"]]
    assert world[1].sim_time >= "2026-02-02T10:00:00"  # fired once the follow-up moved the clock past 09:30
    assert [s.turn for s in rec.steps] == list(range(5))  # ask, move, report, write, answer
    assert rec.steps[-1].predicates == [True] * 4 and rec.steps[0].predicates == [False] * 4
    # after the move, the guard is credited too (a success predicate passes)
    assert rec.steps[1].predicates == [True, True, False, True]
    assert rec.header.initial_predicates == [False] * 4 and rec.header.initial_score == 0.0
    # every event names the turn it happened in, in log order
    assert [e.index for e in rec.events] == list(range(len(rec.events)))
    assert all(a.turn <= b.turn for a, b in zip(rec.events, rec.events[1:]))


def test_the_teacher_without_asking_would_fail_so_the_question_matters() -> None:
    spec = multi_turn_spec()
    doc = multi_turn_doc()
    doc["reference"]["steps"][0] = {"kind": "say", "text": "Starting now."}  # never asks for the name
    rec = run_episode(parse_spec(doc), make_policy("teacher"))
    assert rec.final.stop_reason == "answered" and not rec.passed
    assert any(e.kind == "call" and e.args.get("destination") == "/reports/report.md" for e in rec.events)
    assert spec.id == rec.env_id


def test_records_are_valid_jsonl_that_reads_back_identically() -> None:
    rec = run_episode(multi_turn_spec(), make_policy("teacher"))
    text = rec.to_jsonl()
    [back] = parse_lines(text.splitlines())
    assert back == rec
    lines = [json.loads(x) for x in text.splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "final"
    assert {t["function"]["name"] for t in lines[0]["tools"]} >= {"move_file", "write_file", "read_result_page"}
    assert lines[0]["policy"]["settings"]["user"] == {"kind": "scripted"}
    assert lines[0]["policy"]["settings"]["limits"]["max_turns"] == 30


@pytest.mark.parametrize("spec", generated_specs(), ids=lambda s: s.id)
def test_teacher_passes_and_noop_fails_generated_environments(spec: Any) -> None:
    prepared = PreparedSpec(spec)
    teacher = run_episode(prepared, make_policy("teacher"))
    assert teacher.passed and teacher.final.stop_reason == "answered", teacher.final.evaluation
    noop = run_episode(prepared, make_policy("noop"))
    assert not noop.passed and noop.final.reward == 0.0 and noop.final.stop_reason == "answered"
    assert not [e for e in noop.events if e.kind == "call"]


def test_teacher_grouping_makes_parallel_calls_in_one_turn() -> None:
    spec = generate("file_management", 1, template="archive_by_year")  # a single-day task of calls alone
    rec = run_episode(spec, make_policy("teacher", calls_per_turn=0))
    assert rec.passed
    first = rec.final.messages[2]
    assert first.role == "assistant" and len(first.tool_calls or []) == len(spec.reference.calls())
    assert len(rec.steps) == 2


@pytest.mark.parametrize("spec", [multi_turn_spec(), *generated_specs()[:3]], ids=lambda s: s.id)
@pytest.mark.parametrize("policy", ["teacher", "noop", "random"])
def test_direct_and_mcp_paths_give_identical_records(spec: Any, policy: str) -> None:
    direct = run_episode(spec, make_policy(policy), seed=5, transport="direct")
    mcp = run_episode(spec, make_policy(policy), seed=5, transport="mcp")
    assert comparable(direct) == comparable(mcp)


def test_same_seed_same_record_and_random_policy_depends_on_the_seed() -> None:
    spec = generate("file_management", 2)
    a = run_episode(spec, make_policy("random", calls=6), seed=1)
    b = run_episode(spec, make_policy("random", calls=6), seed=1)
    c = run_episode(spec, make_policy("random", calls=6), seed=2)
    assert comparable(a) == comparable(b)
    assert [e.args for e in a.events if e.kind == "call"] != [e.args for e in c.events if e.kind == "call"]
    assert len([e for e in a.events if e.kind == "call"]) == 6


def test_turn_limit_stops_with_max_turns() -> None:
    rec = run_episode(multi_turn_spec(), Scripted([AgentTurn(calls=[LIST])]), limits=EpisodeLimits(max_turns=3))
    assert rec.final.stop_reason == "max_turns" and "3" in rec.final.stop_detail
    assert len(rec.steps) == 3 and rec.final.final_answer is None


def test_tool_call_limit_stops_and_tells_the_agent() -> None:
    rec = run_episode(multi_turn_spec(), Scripted([AgentTurn(calls=[LIST, LIST, LIST])]),
                      limits=EpisodeLimits(max_tool_calls=4))
    assert rec.final.stop_reason == "max_tool_calls"
    assert len([e for e in rec.events if e.kind == "call"]) == 4
    assert rec.final.messages[-1].content.startswith("Error (limit)")


def test_wall_time_limit_stops_with_timeout() -> None:
    import time

    class Slow(Scripted):
        def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
            time.sleep(0.03)
            return AgentTurn(calls=[LIST])

    rec = run_episode(multi_turn_spec(), Slow([]), limits=EpisodeLimits(max_seconds=0.05))
    assert rec.final.stop_reason == "timeout" and 1 <= len(rec.steps) <= 3


def test_a_raising_policy_ends_with_policy_error_and_a_complete_record() -> None:
    class Broken(Scripted):
        def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
            raise RuntimeError("boom")

    rec = run_episode(multi_turn_spec(), Broken([]))
    assert rec.final.stop_reason == "policy_error" and "RuntimeError: boom" in rec.final.stop_detail
    assert rec.complete and not rec.passed


def test_malformed_arguments_and_unknown_tools_come_back_as_tool_errors() -> None:
    policy = Scripted([
        AgentTurn(calls=[PolicyCall("move_file", '{"source": "/drafts/report.md", ', "c1"),
                         PolicyCall("move_file", "[1, 2]", "c2"),
                         PolicyCall("move_fil", {"source": "a"}, "c3"),
                         PolicyCall("list_directory", '{"path": "/drafts"}', "c4")]),
        AgentTurn(content="Stopping here."),
    ])
    rec = run_episode(multi_turn_spec(), policy)
    tool_msgs = [m for m in rec.final.messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_msgs] == ["c1", "c2", "c3", "c4"]
    assert tool_msgs[0].content.startswith("Error (invalid_arguments)") and "not valid JSON" in tool_msgs[0].content
    assert "must be a JSON object" in tool_msgs[1].content
    assert tool_msgs[2].content.startswith("Error (unknown_tool)") and "move_file" in tool_msgs[2].content
    assert "report.md" in tool_msgs[3].content
    # the model saw its own errors before its next turn
    assert "Error (invalid_arguments)" in json.dumps(policy.seen[1])
    calls = [e for e in rec.events if e.kind == "call"]
    assert [c.tool for c in calls] == ["move_fil", "list_directory"]  # malformed calls never reached the workspace
    assert rec.final.stop_reason == "answered"


def test_scripted_user_replies_to_questions_and_ends_when_satisfied() -> None:
    policy = Scripted([AgentTurn(content="What name should the file be called?"),
                       AgentTurn(content="Shall I go on?"), AgentTurn(content="All done.")])
    rec = run_episode(multi_turn_spec(), policy)
    msgs = rec.final.messages
    assert msgs[3].content.startswith("Call it q3-final.md.")
    assert msgs[5].content == "Thanks! Please also copy it to /shared."  # the follow-up opens turn 2
    assert rec.final.final_answer == "All done." and rec.final.stop_reason == "answered"


def test_parse_arguments_accepts_objects_only() -> None:
    assert parse_arguments(PolicyCall("t", "{}")) == ({}, None)
    assert parse_arguments(PolicyCall("t", "  ")) == ({}, None)
    assert parse_arguments(PolicyCall("t", {"a": 1})) == ({"a": 1}, None)
    assert parse_arguments(PolicyCall("t", "null"))[0] is None
    assert parse_arguments(PolicyCall("t", "{bad"))[0] is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), calls=st.integers(0, 8))
def test_any_random_episode_is_a_complete_record_whose_steps_match_the_state(seed: int, calls: int) -> None:
    spec = _SPEC
    rec = run_episode(spec, make_policy("random", calls=calls), seed=seed, limits=EpisodeLimits(max_turns=20))
    assert rec.complete and rec.final.stop_reason == "answered"
    tool_msgs = [m for m in rec.final.messages if m.role == "tool"]
    assert len(tool_msgs) == calls  # pager calls answer without a workspace event, so count messages
    assert len([e for e in rec.events if e.kind == "call"]) == sum(m.name != "read_result_page" for m in tool_msgs)
    assert [s.turn for s in rec.steps] == list(range(calls + 1))
    assert 0.0 <= rec.final.evaluation["score"] <= 1.0
    assert parse_lines(rec.to_jsonl().splitlines()) == [rec]


_SPEC = PreparedSpec(multi_turn_spec())


def test_bad_limits_are_refused_with_the_setting_named() -> None:
    with pytest.raises(ValueError, match="max_turns"):
        EpisodeLimits(max_turns=0)
    with pytest.raises(ValueError, match="max_seconds"):
        EpisodeLimits(max_seconds=0)
