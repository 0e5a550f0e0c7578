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
from adapter_scripts import REWARD, assistant_turns, comparable, reference_records, specs

from trainers.adapters.openenv import CoworkAction, CoworkEnvClient, ToolCallAction, create_server_app
from trainers.record import read_records


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, object]]:
    records = tmp_path_factory.mktemp("openenv") / "records.jsonl"
    app = create_server_app(specs(), reward=REWARD, records_path=str(records))
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
    return CoworkAction(answer=message["content"]) if last else CoworkAction(message=message["content"])


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
