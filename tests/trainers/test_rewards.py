"""Rewards: outcome, partial credit, potential-based shaping and penalties, checked by hand-computed values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workspace_sim.record import (
    EpisodeRecord,
    EventLine,
    FaultInfo,
    FinalLine,
    HeaderLine,
    PolicyInfo,
    StepLine,
    ViolationInfo,
)
from trainers.rewards import (
    RewardConfig,
    episode_reward,
    outcome_reward,
    partial_credit,
    penalty,
    shaping_rewards,
    terminal_reward,
    turn_potentials,
    turn_rewards,
)


def make_record(
    steps: list[tuple[int, float, str]], passed: bool = True, score: float = 1.0, initial_score: float = 0.0,
    violations_at: list[int] = (), faults_at: list[tuple[int, bool]] = (), episode_id: str = "e", env_id: str = "env",
    initial_hash: str = "h0", results: list[dict] | None = None,
) -> EpisodeRecord:
    """A record with steps (turn, score, state hash), and violations/faults in events of given turns."""
    header = HeaderLine(episode_id=episode_id, env_id=env_id, policy=PolicyInfo(name="test"),
                        initial_score=initial_score, initial_state_hash=initial_hash)
    events, vio, flt = [], [], []
    for turn in violations_at:
        idx = len(events)
        events.append(EventLine(episode_id=episode_id, index=idx, turn=turn, kind="call", sim_time="t", tool="x",
                                ok=False, error={"code": "policy_violation", "message": "no"}, policy="p"))
        vio.append(ViolationInfo(event_index=idx, tool="x", policy="p", message="no"))
    for turn, handled in faults_at:
        idx = len(events)
        events.append(EventLine(episode_id=episode_id, index=idx, turn=turn, kind="call", sim_time="t", tool="y",
                                ok=False, error={"code": "fault", "message": "503"}))
        flt.append(FaultInfo(event_index=idx, tool="y", message="503", handled=handled))
    return EpisodeRecord(
        header=header, events=events,
        steps=[StepLine(episode_id=episode_id, turn=t, predicates=[], score=s, state_hash=h) for t, s, h in steps],
        final=FinalLine(episode_id=episode_id, messages=[], reward=0.0, stop_reason="answered",
                        evaluation={"passed": passed, "score": score, "results": results or []},
                        policy_violations=vio, fault_errors=flt),
    )


def test_outcome_and_partial_credit() -> None:
    assert outcome_reward({"passed": True}) == 1.0
    assert outcome_reward({"passed": False}) == 0.0
    assert outcome_reward({"passed": "yes"}) == 0.0  # only a real boolean counts
    results = [{"weight": 2, "passed": True}, {"weight": 1, "passed": False}, {"weight": 1, "passed": True}]
    assert partial_credit(results) == 0.75
    assert partial_credit([]) == 0.0
    assert terminal_reward({"passed": False, "score": 0.1, "results": results}, "partial") == 0.75
    assert terminal_reward({"passed": False, "score": 0.1, "results": []}, "partial") == 0.1
    with pytest.raises(ValueError, match=r"results\[0\].weight"):
        partial_credit([{"weight": -1, "passed": True}])
    with pytest.raises(ValueError, match="outcome"):
        terminal_reward({"passed": True}, "banana")


def test_shaping_hand_values() -> None:
    assert shaping_rewards([0.0, 0.5, 0.5, 1.0], gamma=1.0) == [0.5, 0.0, 0.5]
    assert shaping_rewards([0.0, 0.5, 0.5, 1.0], gamma=0.9) == pytest.approx([0.45, -0.05, 0.4])
    assert shaping_rewards([0.3]) == []
    with pytest.raises(ValueError, match="gamma"):
        shaping_rewards([0, 1], gamma=1.5)


def test_penalty_hand_values() -> None:
    cfg = RewardConfig(violation_penalty=0.5, fault_penalty=0.25)
    assert penalty(2, 1, cfg) == 1.25
    assert penalty(0, 0, cfg) == 0.0
    with pytest.raises(ValueError):
        penalty(-1, 0, cfg)


def test_turn_rewards_from_a_record() -> None:
    # turn 0: score 0.5; turn 1: no step (keeps 0.5) and a violation; turn 2: score 1.0, an unhandled
    # and a handled fault; the episode passes.
    rec = make_record([(0, 0.5, "h1"), (2, 1.0, "h3")], violations_at=[1], faults_at=[(2, False), (2, True)])
    assert turn_potentials(rec) == [0.0, 0.5, 0.5, 1.0]
    shaped = RewardConfig(shaping=True, gamma=1.0)
    assert turn_rewards(rec, shaped) == pytest.approx([0.5, -0.5, 1.25])  # [.5, 0-.5, .5-.25+1]
    assert episode_reward(rec, shaped) == pytest.approx(1.25)
    assert turn_rewards(rec, RewardConfig()) == pytest.approx([0.0, -0.5, 0.75])
    partial = RewardConfig(terminal="partial", violation_penalty=0, fault_penalty=0)
    failed = make_record([(0, 0.5, "h1")], passed=False, score=0.5,
                         results=[{"weight": 3, "passed": True}, {"weight": 1, "passed": False}])
    assert turn_rewards(failed, partial) == [0.75]


def test_unfinished_and_empty_episodes() -> None:
    rec = make_record([(0, 1.0, "h1")])
    rec.final = None
    assert turn_rewards(rec) == [0.0]
    empty = make_record([], passed=True)
    assert turn_rewards(empty) == [1.0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=8))
def test_shaping_telescopes(potentials: list[float]) -> None:
    # Ng et al.: with gamma = 1 the shaping terms sum to phi_T - phi_0, whatever happened between.
    assert sum(shaping_rewards(potentials, 1.0)) == pytest.approx(potentials[-1] - potentials[0], abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(scores=st.lists(st.floats(0, 1), min_size=1, max_size=6), initial=st.floats(0, 1), passed=st.booleans(),
       nv=st.integers(0, 3))
def test_episode_reward_is_terminal_minus_penalties_plus_potential_change(
    scores: list[float], initial: float, passed: bool, nv: int,
) -> None:
    rec = make_record([(t, s, f"h{t}") for t, s in enumerate(scores)], passed=passed, initial_score=initial,
                      violations_at=[0] * nv)
    cfg = RewardConfig(shaping=True, gamma=1.0)
    expected = (1.0 if passed else 0.0) - 0.5 * nv + scores[-1] - initial
    assert episode_reward(rec, cfg) == pytest.approx(expected, abs=1e-9)
    assert episode_reward(rec, RewardConfig()) == pytest.approx((1.0 if passed else 0.0) - 0.5 * nv)
