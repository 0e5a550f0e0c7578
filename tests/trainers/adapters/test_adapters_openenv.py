"""The OpenEnv adapter through OpenEnv's own server (create_app, served by uvicorn) and EnvClient over its
WebSocket session: scripted episodes give the runner's rewards and records; bad actions are refused."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from adapter_scripts import (REWARD, STAGE_REWARD, assistant_turns, comparable, day_headers, reference_records,
                             scenario_reference, specs, stage_verdicts)

from trainers.adapters.openenv import (CoworkAction, CoworkEnvClient, CoworkServerError, ToolCallAction,
                                       create_server_app)
from workspace_sim.record import read_records


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, object]]:
    records = tmp_path_factory.mktemp("openenv") / "records.jsonl"
    yield from _serve(create_server_app(specs(), reward=REWARD, records_path=str(records)), records)


def _serve(app: object, records: object) -> Iterator[tuple[str, object]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="websockets-sansio"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not srv.started:
        assert time.time() < deadline, "the OpenEnv server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", records
    srv.should_exit = True
    thread.join(10)


def action(message: dict, last: bool) -> CoworkAction:
    if message["tool_calls"]:
        return CoworkAction(calls=[ToolCallAction(tool=c["function"]["name"],
                                                  arguments=json.loads(c["function"]["arguments"]))
                                   for c in message["tool_calls"]])
    if last or message["closes_day"]:
        return CoworkAction(answer=message["content"])
    return CoworkAction(message=message["content"])


@pytest.mark.parametrize("policy", ["teacher", "broken"])
def test_scripted_episodes_over_openenv_give_the_runners_rewards_and_records(server, policy: str) -> None:
    base, records_path = server
    refs = reference_records(policy)
    with CoworkEnvClient(base_url=base).sync() as env:
        for ref in refs:
            result = env.reset(env=ref.env_id, seed=5)
            assert result.observation.predicates == ref.header.initial_predicates and result.observation.tools
            total = 0.0
            turns = assistant_turns(ref)
            for i, message in enumerate(turns):
                assert not result.done
                result = env.step(action(message, i == len(turns) - 1 and ref.final.stop_reason == "answered"))
                total += result.reward
            assert result.done and result.observation.stop_reason == ref.final.stop_reason
            assert total == pytest.approx(ref.final.reward, abs=1e-9)
            assert result.observation.episode_reward == ref.final.reward
            state = env.state()
            assert state.state_hash == ref.steps[-1].state_hash and state.env_id == ref.env_id
    written = [r for r in read_records(records_path) if r.header.policy.name == "openenv"][-len(refs):]
    assert [comparable(r) for r in written] == [comparable(r) for r in refs]


def test_bad_actions_and_resets_are_refused(server) -> None:
    base, _ = server
    with pytest.raises(ValueError, match="exactly one of"):
        CoworkAction(message="hi", answer="bye")
    with pytest.raises(ValueError, match="exactly one of"):
        CoworkAction()
    with CoworkEnvClient(base_url=base).sync() as env:
        with pytest.raises(Exception, match="unknown environment 'nope'"):
            env.reset(env="nope")
        result = env.reset(env=1)
        result = env.step(CoworkAction(calls=[ToolCallAction(tool="no_such_tool")]))
        assert "unknown tool" in result.observation.text and not result.done


MALFORMED = [({"calls": [], "message": None}, "this one has none \\(calls is empty, message is null, no answer\\)"),
             ({"message": "x", "answer": "y"}, "this one has message and answer"),
             ({}, "this one has none"),
             ({"calls": [{"tool": "list_directory", "arguments": "/"}]},
              "calls.0.arguments: Input should be a valid dictionary"),
             ({"say": "hi"}, "say: Extra inputs are not permitted")]


def test_malformed_actions_over_the_websocket_are_validation_errors_and_the_episode_goes_on(server) -> None:
    # issue 19 item 6: a malformed action was "Unable to serialize unknown type: ValueError (SESSION_ERROR)",
    # the socket closed and the episode left no record
    from openenv.core import GenericEnvClient

    base, records_path = server
    [ref] = [r for r in reference_records("teacher") if r.env_id == specs()[0].id]
    turns = assistant_turns(ref)
    with GenericEnvClient(base_url=base).sync() as generic, CoworkEnvClient(base_url=base).sync() as typed:
        generic.reset(env=ref.env_id, seed=5)
        typed.reset(env=ref.env_id, seed=5)
        for i, message in enumerate(turns):
            bad, says = MALFORMED[i % len(MALFORMED)]
            with pytest.raises(RuntimeError, match="code: VALIDATION_ERROR"):  # OpenEnv's own client
                generic.step(bad)
            with pytest.raises(CoworkServerError, match=says) as err:  # ours spells the errors out
                typed.step(bad)
            assert err.value.code == "VALIDATION_ERROR" and err.value.errors
            good = action(message, i == len(turns) - 1 and ref.final.stop_reason == "answered")
            a = generic.step(good.model_dump(exclude={"metadata"}, exclude_unset=True))
            b = typed.step(good)
            assert a.done == b.done and a.reward == pytest.approx(b.reward)
        assert b.done and b.observation.stop_reason == ref.final.stop_reason
        with pytest.raises(CoworkServerError, match="has ended .*call reset\\(\\) for a new one.*EXECUTION_ERROR"):
            typed.step(CoworkAction(message="more?"))
        assert typed.reset(env=ref.env_id, seed=5).observation.turn == 0  # the session is still alive
    written = [r for r in read_records(records_path) if r.header.policy.name == "openenv"][-2:]
    assert [comparable(r) for r in written] == [comparable(ref)] * 2  # the malformed steps left no trace


@pytest.mark.parametrize(("bad", "says"), [
    ({"calls": [], "answer": "Done."}, "this one has calls and answer \\(calls is empty\\)"),
    ({"calls": [], "message": "hi"}, "this one has calls and message \\(calls is empty\\)"),
    ({"calls": []}, "this one has none \\(calls is empty, no message, no answer\\)"),
    ({"calls": [], "message": None, "answer": None}, "this one has none"),
])
def test_an_action_with_an_empty_calls_beside_another_kind_or_alone_plays_no_turn(server, bad, says) -> None:
    # issue 38 item 5: `calls: []` beside an answer was accepted and played the answer's turn
    base, _ = server
    with pytest.raises(ValueError, match="exactly one of"):
        CoworkAction(calls=[], answer="Done.")
    with CoworkEnvClient(base_url=base).sync() as env:
        env.reset(env=specs()[0].id, seed=5)
        with pytest.raises(CoworkServerError, match=says) as err:
            env.step(bad)
        assert err.value.code == "VALIDATION_ERROR"
        state = env.state()
        assert state.step_count == 0 and state.stop_reason is None  # no turn played, the episode goes on
        result = env.step(CoworkAction(answer="Done."))  # the client sends the one kind it was given
        assert result.done and result.observation.stop_reason == "answered" and env.state().step_count == 1


def test_http_step_answers_readable_errors(server) -> None:
    # issue 19 item 6: over HTTP a malformed action was a 500, and /step after /reset a 500 too
    import httpx

    base, _ = server
    with httpx.Client(base_url=base, timeout=30) as http:
        assert http.post("/reset", json={"env": 1, "seed": 0}).status_code == 200
        for bad, says in MALFORMED[:3]:
            r = http.post("/step", json={"action": bad})
            assert r.status_code == 422, r.text
            [error] = r.json()["detail"]
            assert error["type"] == "action_kind" and "exactly one of: calls" in error["msg"]
        r = http.post("/step", json={"action": {"message": "hello"}})
        assert r.status_code == 409, r.text
        assert "no episode in progress" in r.json()["detail"] and "WebSocket session (/ws)" in r.json()["detail"]
        assert http.get("/health").status_code == 200


def test_an_episode_left_mid_way_is_recorded(server) -> None:
    base, records_path = server
    with CoworkEnvClient(base_url=base).sync() as env:
        eid = env.reset(env=1, seed=7, episode_id="left-mid-way").observation.episode_id
        env.step(CoworkAction(calls=[ToolCallAction(tool="list_directory", arguments={"path": "/"})]))
    deadline = time.time() + 20
    while not [r for r in read_records(records_path) if r.episode_id == eid]:
        assert time.time() < deadline, "the abandoned episode left no record"
        time.sleep(0.05)
    [rec] = [r for r in read_records(records_path) if r.episode_id == eid]
    assert rec.final.stop_reason == "error" and [e.tool for e in rec.events if e.kind == "call"] == ["list_directory"]


@pytest.fixture(scope="module")
def scenario_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, object]]:
    records = tmp_path_factory.mktemp("openenv-days") / "records.jsonl"
    spec, _, _ = scenario_reference()
    yield from _serve(create_server_app([spec], reward=STAGE_REWARD, records_path=str(records)), records)


def test_a_three_day_scenario_is_played_to_the_end_over_the_websocket_client(scenario_server) -> None:
    base, records_path = scenario_server
    spec, ref, turns = scenario_reference()
    texts, total = [], 0.0
    with CoworkEnvClient(base_url=base).sync() as env:
        result = env.reset(env=spec.id, seed=5)
        texts.append(result.observation.text)
        assert [s["id"] for s in result.observation.stages] == ["mon", "tue", "wed"]
        for turn in turns:
            assert not result.done
            if turn.calls:
                act = CoworkAction(calls=[ToolCallAction(tool=c.name, arguments=c.arguments) for c in turn.calls])
            elif turn.expects_reply is False:
                act = CoworkAction(answer=turn.content)  # a day's report, then the final answer
            else:
                act = CoworkAction(message=turn.content)
            result = env.step(act)
            texts.append(result.observation.text)
            total += result.reward
    assert result.done and result.observation.stop_reason == "answered"
    # the day-2 and day-3 instructions reach the agent as the observation of the step that closed the day before
    assert day_headers(texts) == ["[Day 2 of 3, Tuesday 3 March]", "[Day 3 of 3, Wednesday 4 March]"]
    assert [(s["id"], s["passed"], s["score"], s["reached"]) for s in result.observation.stages] == stage_verdicts(ref)
    assert total == pytest.approx(ref.final.reward, abs=1e-9) and result.observation.episode_reward == ref.final.reward
    [written] = [r for r in read_records(records_path) if r.env_id == spec.id]
    assert comparable(written) == comparable(ref)
