"""The Gymnasium adapter through gymnasium's own entry points: make, the env checker, scripted episodes
giving the runner's rewards and records, and clear errors for bad actions and options."""

from __future__ import annotations

import json

import gymnasium
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from adapter_scripts import (REWARD, STAGE_REWARD, assistant_turns, comparable, day_headers, reference_records,
                             scenario_reference, specs, stage_verdicts)
from gymnasium.utils.env_checker import check_env

from trainers.adapters.common import ActionError, SpecSource, parse_action
from trainers.adapters.gym import CHARSET, ENV_ID, MAKE_ID, MAX_TEXT, CoworkEnv, fit_text
from workspace_sim.record import replay_record
from trainers.episodes.prepared import EpisodeLimits
from trainers.rewards import turn_rewards


def gym_action(message: dict, last: bool) -> str:
    """An assistant message as the adapter's text action (the last message of an answered episode is the answer)."""
    if message["tool_calls"]:
        return json.dumps([{"tool": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                           for c in message["tool_calls"]])
    return json.dumps({"answer": message["content"]}) if last or message["closes_day"] else message["content"]


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


def turn_action(turn) -> str:
    """A teacher's turn as the text action: its calls, a question or report as a message, a day's closing
    report or the final answer as {"answer": ...}."""
    if turn.calls:
        return json.dumps([{"tool": c.name, "arguments": c.arguments} for c in turn.calls])
    return json.dumps({"answer": turn.content}) if turn.expects_reply is False else turn.content


def test_a_three_day_scenario_is_played_to_the_end_through_gymnasium_make() -> None:
    spec, ref, turns = scenario_reference()
    env = gymnasium.make(MAKE_ID, envs=[spec], reward=STAGE_REWARD)
    obs, info = env.reset(seed=5, options={"env": spec.id})
    observations, rewards, done = [obs], [], False
    for turn in turns:
        assert not done
        obs, reward, terminated, truncated, info = env.step(turn_action(turn))
        observations.append(obs)
        rewards.append(reward)
        done = terminated or truncated
    assert done and terminated and info["stop_reason"] == "answered" and info["passed"]
    # the later days' instructions reach the agent as observations, each in the step that closed the day before
    assert day_headers(observations) == ["[Day 2 of 3, Tuesday 3 March]", "[Day 3 of 3, Wednesday 4 March]"]
    assert "Lee Park" in next(o for o in observations if "[Day 2 of 3" in o)
    record = env.unwrapped.records[-1]
    assert comparable(record) == comparable(ref) and stage_verdicts(record) == stage_verdicts(ref)
    assert info["turn_rewards"] == turn_rewards(ref, STAGE_REWARD) and sum(r > 0 for r in info["turn_rewards"]) == 3
    assert sum(rewards) == pytest.approx(ref.final.reward, abs=1e-9)
    assert replay_record(record, spec).ok


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


@pytest.mark.parametrize("text, says", [
    ('{"tool": "x", "arguments": ' * 5000 + "1" + "}" * 5000, "nested deeper than 64 levels"),
    ("[" * 100_000, "nested deeper than 64 levels"),
    ('{"tool": "a", "arguments": {"n": ' + "9" * 10_000 + "}}", "not acceptable JSON"),
    ('{"tool": "a", "arguments": {"x": "\\ud800"}}', "surrogate"),
    ('{"tool": "a", "arguments": [1, 2]}', "arguments must be a JSON object"),
])
def test_hostile_action_text_is_a_clear_action_error(text: str, says: str) -> None:
    # red team: deep nesting raised RecursionError and a 10,000-digit number a bare ValueError
    with pytest.raises(ActionError, match=says):
        parse_action(text)


def test_make_works_in_a_fresh_interpreter() -> None:
    # issue 19 item 8: gymnasium.make("coworkenv/CoworkEnv-v0") in a fresh interpreter raised NamespaceNotFound.
    # Gymnasium 1.x loads no plugin entry points, so the id names its module (MAKE_ID) and make imports it.
    import subprocess
    import sys
    from pathlib import Path

    spec_file = Path(__file__).resolve().parents[3] / "examples/specs/handwritten-archive-invoices.yaml"
    code = ("import sys, gymnasium\n"
            "assert 'trainers.adapters.gym' not in sys.modules\n"
            f"env = gymnasium.make({MAKE_ID!r}, envs={str(spec_file)!r})\n"
            "obs, info = env.reset(seed=0)\n"
            "assert env.observation_space.contains(obs)\n"
            "env2 = gymnasium.make('coworkenv/CoworkEnv-v0', envs=" + repr(str(spec_file)) + ")\n"
            "print(info['env_id'], type(env.unwrapped).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=Path(__file__).resolve().parents[3])
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["handwritten-archive-invoices", "CoworkEnv"]
    assert MAKE_ID == "trainers.adapters.gym:coworkenv/CoworkEnv-v0"


WRITE_READ = st.text(max_size=300) | st.sampled_from(["a😀b", "x\r\ny", "nul\x00end", "zw\u200dj", "rl\u202eo",
                                                       "\U0010ffff"])


@pytest.fixture(scope="module")
def files_env() -> CoworkEnv:
    return CoworkEnv(specs()[1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=WRITE_READ)
def test_every_file_content_read_back_is_in_the_observation_space(files_env: CoworkEnv, content: str) -> None:
    # issue 19 item 8: emoji, "\r", NUL, U+200D and U+202E in a file took observations out of the space
    env = files_env
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    obs, *_ = env.step({"tool": "write_file", "arguments": {"path": "/t.txt", "content": content}})
    assert env.observation_space.contains(obs)
    obs, *_ = env.step({"tool": "read_text_file", "arguments": {"path": "/t.txt"}})
    assert env.observation_space.contains(obs)
    assert obs == f"[tool read_text_file] {content}"  # the agent sees the text itself, not an encoding of it


def test_the_spaces_are_text_spaces_that_hold_any_unicode() -> None:
    env = CoworkEnv(specs()[1])
    space = env.observation_space
    assert isinstance(space, gymnasium.spaces.Text)
    assert space.contains("") and space.contains("😀\r\x00\u200d\u202e") and not space.contains(3)
    assert not space.contains("x" * (MAX_TEXT + 1)) and not env.action_space.contains("")
    assert space != gymnasium.spaces.Text(max_length=MAX_TEXT, min_length=0, charset=CHARSET)
    sample = env.action_space.sample()
    assert env.action_space.contains(sample)
    vec = gymnasium.vector.SyncVectorEnv([lambda: CoworkEnv(specs()[1]) for _ in range(2)])
    obs, _ = vec.reset(seed=0)
    assert vec.observation_space.contains(obs)
    vec.close()
    long = fit_text("y" * (MAX_TEXT + 5000))
    assert len(long) == MAX_TEXT and space.contains(long)
    assert long.endswith("characters cut: an observation holds at most 1,000,000]")
    assert str(MAX_TEXT + 5000 - long.index("\n[...")) in long
