"""The Gymnasium adapter through gymnasium's own entry points: make, the env checker, scripted episodes
giving the runner's rewards and records, and clear errors for bad actions and options."""

from __future__ import annotations

import json

import gymnasium
import pytest
from adapter_scripts import REWARD, assistant_turns, comparable, reference_records, specs
from gymnasium.utils.env_checker import check_env

from trainers.adapters.common import ActionError, SpecSource, parse_action
from trainers.adapters.gym import ENV_ID, CoworkEnv
from trainers.episodes.replay import replay_record
from trainers.episodes.runner import EpisodeLimits


def gym_action(message: dict, last: bool) -> str:
    """An assistant message as the adapter's text action (the last message of an answered episode is the answer)."""
    if message["tool_calls"]:
        return json.dumps([{"tool": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                           for c in message["tool_calls"]])
    return json.dumps({"answer": message["content"]}) if last else message["content"]


@pytest.mark.parametrize("policy", ["teacher", "broken"])
def test_scripted_episodes_give_the_runners_rewards_and_records(policy: str) -> None:
    refs = reference_records(policy)
    env = gymnasium.make(ENV_ID, envs=specs(), reward=REWARD)
    for ref in refs:
        obs, info = env.reset(seed=5, options={"env": ref.env_id})
        assert "[user]" in obs and info["predicates"] == ref.header.initial_predicates
        total, done = 0.0, False
        turns = assistant_turns(ref)
        for i, message in enumerate(turns):
            assert not done
            last = i == len(turns) - 1 and ref.final.stop_reason == "answered"
            obs, reward, terminated, truncated, info = env.step(gym_action(message, last))
            total += reward
            done = terminated or truncated
        assert done and info["stop_reason"] == ref.final.stop_reason
        assert total == pytest.approx(ref.final.reward, abs=1e-9)
        assert info["episode_reward"] == ref.final.reward
        record = env.unwrapped.records[-1]
        assert comparable(record) == comparable(ref)
        assert info["state_hash"] == ref.steps[-1].state_hash
        assert replay_record(record, next(s for s in specs() if s.id == ref.env_id)).ok


def test_the_gymnasium_env_checker_passes() -> None:
    env = gymnasium.make(ENV_ID, envs=specs()[1:], limits=EpisodeLimits(max_turns=3), render_mode="ansi")
    check_env(env.unwrapped)
    env.close()
    env.close()


def test_reset_is_deterministic_and_options_pick_the_environment() -> None:
    env = CoworkEnv(SpecSource(specs()))
    a = env.reset(seed=11)
    b = env.reset(seed=11)
    assert a[0] == b[0] and a[1]["env_id"] == b[1]["env_id"]
    assert env.reset(options={"env": 0})[1]["env_id"] == "clarify-rename"
    assert env.reset(options={"spec": specs()[2]})[1]["env_id"] == specs()[2].id
    with pytest.raises(ValueError, match="unknown environment 'nope'"):
        env.reset(options={"env": "nope"})
    with pytest.raises(ValueError, match="reset options \\['colour'\\]"):
        env.reset(options={"colour": 1})


def test_limits_truncate_and_bad_actions_are_refused_without_a_turn() -> None:
    env = CoworkEnv(specs()[1], limits=EpisodeLimits(max_turns=2))
    env.reset(seed=0)
    with pytest.raises(ActionError, match="unknown key"):
        env.step('{"tool": "list_directory", "args": {}}')
    assert env.unwrapped.session.turn == 0
    env.step('{"tool": "list_directory", "arguments": {"path": "/"}}')
    obs, reward, terminated, truncated, info = env.step({"tool": "list_directory", "arguments": {"path": 7}})
    assert "invalid_arguments" in obs or "Error" in obs
    assert truncated and not terminated and info["stop_reason"] == "max_turns"
    with pytest.raises(RuntimeError, match="call reset"):
        env.step("hello")


def test_action_format() -> None:
    assert parse_action("All done").content == "All done"
    assert parse_action("{not json").content == "{not json"
    assert parse_action('{"message": "Which name?"}').expects_reply is None
    assert parse_action('{"answer": "Done"}').expects_reply is False
    turn = parse_action('[{"tool": "a", "arguments": {"x": 1}}, {"tool": "b"}]')
    assert [(c.name, c.arguments) for c in turn.calls] == [("a", {"x": 1}), ("b", {})]
    for bad, match in [("[]", "empty list"), ('{"message": 1}', "message action"), ('{"answer": "a", "x": 1}', "answer action"), ("[1]", "action\\[0\\]"),
                       ('{"tool": ""}', "must name a tool"), (3, "JSON text, a dict or a list")]:
        with pytest.raises(ActionError, match=match):
            parse_action(bad)
