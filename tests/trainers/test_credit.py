"""Credit assignment: GRPO, Dr.GRPO, RLOO, MT-GRPO turn level and GiGPO step groups, by hand-computed values."""

from __future__ import annotations

import statistics

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rewards import make_record

from trainers.credit import (
    CreditConfig,
    compute_advantages,
    group_advantages,
    returns_to_go,
    states_before_turns,
    step_group_advantages,
    turn_level_advantages,
)
from trainers.rewards import RewardConfig

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


def approx2(rows: list[list[float]]) -> list:
    """pytest.approx for a list of lists."""
    return [pytest.approx(r) for r in rows]


def test_group_normalisation_hand_values() -> None:
    s = 0.5 / math.sqrt(1 / 3)  # mean .5, sample std sqrt(1/3)
    assert group_advantages([1, 0, 0, 1], "grpo") == pytest.approx([s, -s, -s, s], rel=1e-5)
    assert group_advantages([1, 0, 0, 1], "drgrpo") == [0.5, -0.5, -0.5, 0.5]
    assert group_advantages([1, 0, 0, 1], "rloo") == pytest.approx([2 / 3, -2 / 3, -2 / 3, 2 / 3])
    assert group_advantages([3, 1, 2], "rloo") == [1.5, -1.5, 0.0]
    assert group_advantages([2, 2, 2], "grpo") == [0.0, 0.0, 0.0]
    assert group_advantages([5.0], "grpo") == [0.0]
    assert group_advantages([], "rloo") == []
    with pytest.raises(ValueError, match="method"):
        group_advantages([1, 2], "ppo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        group_advantages([1, float("nan")])


def test_returns_to_go() -> None:
    assert returns_to_go([0, 0, 1], 1.0) == [1, 1, 1]
    assert returns_to_go([1, 0, 2], 0.5) == [1.5, 1.0, 2.0]


def test_turn_level_hand_values() -> None:
    # A: turn rewards [.5, .5] (returns [1, .5]); B: [0, 0, 0]. Dr.GRPO, gamma 1.
    # episode: totals [1, 0] -> [.5, -.5]; turn 0 [1, 0] -> [.5, -.5]; turn 1 [.5, 0] -> [.25, -.25];
    # turn 2 only B -> 0.
    got = turn_level_advantages([[0.5, 0.5], [0.0, 0.0, 0.0]], "drgrpo", gamma=1.0, lam=1.0)
    assert got == approx2([[1.0, 0.75], [-1.0, -0.75, -0.5]])
    got = turn_level_advantages([[0.5, 0.5], [0.0, 0.0, 0.0]], "drgrpo", gamma=1.0, lam=0.5)
    assert got == approx2([[0.75, 0.5], [-0.75, -0.5, -0.25]])


def test_gigpo_hand_values() -> None:
    # r1 reaches s1 and succeeds; r2 detours through s2 then reaches s1 and fails; r3 reaches s1, fails.
    rewards = [[0, 1], [0, 0, 0], [0, 0]]
    states = [["s0", "s1"], ["s0", "s2", "s1"], ["s0", "s1"]]
    got = step_group_advantages(rewards, states, "drgrpo", gamma=1.0, omega=1.0)
    # episode: [2/3, -1/3, -1/3]; s0 group returns [1, 0, 0] -> same; s1 group [1, 0, 0] -> same; s2 alone -> 0
    assert got == approx2([[4 / 3, 4 / 3], [-2 / 3, -1 / 3, -2 / 3], [-2 / 3, -2 / 3]])
    got = step_group_advantages(rewards, states, "drgrpo", gamma=0.5, omega=1.0)
    # r1 returns [.5, 1]: s0 group [.5, 0, 0] -> 1/3 for r1; s1 group [1, 0, 0] -> 2/3 for r1
    assert got[0] == pytest.approx([2 / 3 + 1 / 3, 2 / 3 + 2 / 3])
    with pytest.raises(ValueError, match="rollout 0"):
        step_group_advantages([[0, 1]], [["s0"]])


def test_states_before_turns_from_record() -> None:
    rec = make_record([(0, 0.0, "h1"), (1, 0.0, "h2"), (2, 1.0, "h3")], initial_hash="h0")
    assert states_before_turns(rec) == ["h0", "h1", "h2"]


def test_compute_advantages_groups_by_environment() -> None:
    recs = [
        make_record([(0, 1.0, "a1")], passed=True, episode_id="a-ok", env_id="A"),
        make_record([(0, 0.0, "a0")], passed=False, episode_id="a-bad", env_id="A"),
        make_record([(0, 1.0, "b1")], passed=True, episode_id="b-ok", env_id="B"),
    ]
    out = compute_advantages(recs, RewardConfig(), CreditConfig(method="drgrpo"))
    assert out["a-ok"].advantage == 0.5 and out["a-bad"].advantage == -0.5
    assert out["b-ok"].advantage == 0.0 and out["b-ok"].group == "B"
    assert out["a-ok"].turn_advantages == [0.5]
    gig = compute_advantages(recs, RewardConfig(), CreditConfig(method="drgrpo", level="gigpo", omega=1.0))
    assert gig["a-ok"].turn_advantages == [1.0]  # both start from the same initial state: group = episode
    turn = compute_advantages(recs, RewardConfig(), CreditConfig(method="rloo", level="turn"))
    assert turn["a-ok"].turn_advantages == [2.0] and turn["a-ok"].to_json()["reward"] == 1.0


@settings(max_examples=80, deadline=None)
@given(st.lists(finite, min_size=2, max_size=10))
def test_group_advantage_invariants(rewards: list[float]) -> None:
    dr = group_advantages(rewards, "drgrpo")
    assert sum(dr) == pytest.approx(0.0, abs=1e-7)
    n = len(rewards)
    assert group_advantages(rewards, "rloo") == pytest.approx([n / (n - 1) * a for a in dr], abs=1e-7)
    shifted = group_advantages([r + 3.0 for r in rewards], "grpo")
    assert shifted == pytest.approx(group_advantages(rewards, "grpo"), abs=1e-4)
    g = group_advantages(rewards, "grpo")
    std = statistics.stdev(rewards)
    if std > 0:  # unit sample variance, but for the eps the std is divided by
        assert sum(a * a for a in g) / (n - 1) == pytest.approx((std / (std + 1e-6)) ** 2, rel=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(finite, min_size=1, max_size=4), min_size=1, max_size=5))
def test_distinct_states_reduce_gigpo_to_episode_advantages(rewards: list[list[float]]) -> None:
    states = [[f"{i}-{t}" for t in range(len(r))] for i, r in enumerate(rewards)]
    episode = group_advantages([sum(r) for r in rewards], "grpo")
    got = step_group_advantages(rewards, states, "grpo")
    assert got == approx2([[episode[i]] * len(r) for i, r in enumerate(rewards)])
