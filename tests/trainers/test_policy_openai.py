"""The `openai` policy over real HTTP against a local scripted OpenAI-compatible server."""

from __future__ import annotations

import json
from typing import Any

from scripted_openai import Disconnect, HTTPError, InvalidBody, Message, ScriptedOpenAI, ToolCall, ToolCalls
from episode_helpers import multi_turn_spec

from trainers.episodes.policies import PolicyConfigError, make_policy
from trainers.episodes.runner import run_episode


def policy(server: ScriptedOpenAI, **extra: Any) -> Any:
    return make_policy("openai", model="scripted-model", base_url=server.base_url, api_key="k", temperature=0.2,
                       max_retries=2, backoff=0.01, **extra)


def solve_script() -> list[Any]:
    return [
        Message("What should the final file be called?"),
        ToolCalls([ToolCall("move_file", json.dumps({"source": "/drafts/report.md",
                                                     "destination": "/reports/q3-final.md"}), "m1")]),
        Message("Moved it to /reports/q3-final.md."),
        ToolCalls([ToolCall("write_file", json.dumps({"path": "/shared/q3-final.md",
                                                      "content": "# Q3 report\nRevenue up.\n"}), "w1"),
                   ToolCall("list_directory", json.dumps({"path": "/shared"}), "l1")]),
        Message("Done: moved and copied."),
    ]


def test_openai_policy_solves_a_multi_turn_episode_over_http() -> None:
    with ScriptedOpenAI(solve_script(), api_key="k") as server:
        rec = run_episode(multi_turn_spec(), policy(server), seed=9)
        reqs = server.completion_requests
    assert rec.passed and rec.final.stop_reason == "answered", rec.final.evaluation
    assert rec.header.policy.name == "openai:scripted-model"
    assert "k" not in json.dumps(rec.header.policy.settings.get("api_key", ""))
    assert len(reqs) == 5
    first = reqs[0].body
    assert first["model"] == "scripted-model" and first["temperature"] == 0.2 and first["seed"] == 9
    assert first["parallel_tool_calls"] is True
    assert {t["function"]["name"] for t in first["tools"]} >= {"move_file", "write_file", "read_result_page"}
    assert first["messages"][0]["role"] == "system" and first["messages"][1]["content"].startswith("Please move")
    # the user's answer reached the model, and tool calls went back as JSON text with their ids
    assert reqs[1].messages[-1] == {"role": "user", "content": "Call it q3-final.md.\n\nFYI: I just put notes.md "
                                                                   "into /drafts."}
    sent_call = reqs[2].messages[-2]["tool_calls"][0]
    assert sent_call["id"] == "m1" and json.loads(sent_call["function"]["arguments"])["source"] == "/drafts/report.md"
    assert reqs[2].messages[-1]["role"] == "tool" and reqs[2].messages[-1]["tool_call_id"] == "m1"
    # two parallel calls in one turn: both ran, in order, in the same step
    parallel = [e for e in rec.events if e.kind == "call" and e.tool in ("write_file", "list_directory")]
    assert [e.tool for e in parallel] == ["write_file", "list_directory"] and parallel[0].turn == parallel[1].turn
    # the record keeps dict arguments (HF format), not JSON text
    assert rec.final.messages[4].tool_calls[0].function.arguments["destination"] == "/reports/q3-final.md"


def test_malformed_arguments_and_unknown_tools_go_back_to_the_model_as_tool_errors() -> None:
    script = [
        ToolCalls([ToolCall("move_file", '{"source": "/drafts/report.md", "destination": ', "bad"),
                   ToolCall("teleport_file", "{}", "unknown")]),
    ]
    with ScriptedOpenAI(script, default=Message("I could not do it.")) as server:
        rec = run_episode(multi_turn_spec(), policy(server))
        second = server.completion_requests[1].messages
    tool_msgs = {m["tool_call_id"]: m["content"] for m in second if m["role"] == "tool"}
    assert tool_msgs["bad"].startswith("Error (invalid_arguments)") and "not valid JSON" in tool_msgs["bad"]
    assert tool_msgs["unknown"].startswith("Error (unknown_tool)")
    assert rec.final.stop_reason == "answered" and not rec.passed


def test_server_errors_are_retried_with_backoff_then_the_episode_goes_on() -> None:
    script = [HTTPError(500, "overloaded", retry_after=0), HTTPError(503, retry_after=0), InvalidBody(),
              Disconnect()]
    with ScriptedOpenAI(script, default=Message("Nothing to do here.")) as server:
        rec = run_episode(multi_turn_spec(), make_policy(
            "openai", model="m", base_url=server.base_url, max_retries=3, backoff=0.01))
        assert server.remaining == 0
    assert rec.final.stop_reason == "answered" and rec.final.final_answer == "Nothing to do here."


def test_an_endpoint_that_stays_down_ends_the_episode_with_policy_error_not_a_crash() -> None:
    with ScriptedOpenAI(default=HTTPError(500, "down", retry_after=0)) as server:
        rec = run_episode(multi_turn_spec(), policy(server))
    assert rec.complete and rec.final.stop_reason == "policy_error"
    assert "HTTP 500" in rec.final.stop_detail and "down" in rec.final.stop_detail


def test_auth_errors_are_not_retried_and_say_so() -> None:
    with ScriptedOpenAI([Message("never")], api_key="right") as server:
        rec = run_episode(multi_turn_spec(), make_policy("openai", model="m", base_url=server.base_url,
                                                         api_key="wrong", max_retries=3))
        assert server.remaining == 1
    assert rec.final.stop_reason == "policy_error" and "rejected the API key" in rec.final.stop_detail


def test_output_cut_at_the_token_limit_stops_with_max_tokens() -> None:
    with ScriptedOpenAI([Message("I will now", finish_reason="length")]) as server:
        rec = run_episode(multi_turn_spec(), policy(server))
    assert rec.final.stop_reason == "max_tokens" and rec.final.final_answer == "I will now"


def test_token_ids_and_logprobs_are_recorded_when_the_server_gives_them() -> None:
    from scripted_openai import Body

    body = {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hi there"},
                         "logprobs": {"content": [{"token": "token_id:17", "logprob": -0.5, "bytes": None,
                                                   "top_logprobs": []},
                                                  {"token": "token_id:4", "logprob": -1.25, "bytes": None,
                                                   "top_logprobs": []}]}}]}
    with ScriptedOpenAI([Body(body)]) as server:
        rec = run_episode(multi_turn_spec(), policy(server, logprobs=True))
        assert server.completion_requests[0].body["logprobs"] is True
    [tok] = rec.final.tokens
    assert tok.turn == 0 and tok.completion_ids == [17, 4] and tok.logprobs == [-0.5, -1.25]


def test_missing_model_is_a_clear_configuration_error(monkeypatch: Any) -> None:
    monkeypatch.delenv("COWORKENV_OPENAI_MODEL", raising=False)
    try:
        make_policy("openai", base_url="http://127.0.0.1:9/v1")
    except PolicyConfigError as e:
        assert "no model given" in str(e)
    else:  # pragma: no cover
        raise AssertionError("expected PolicyConfigError")
