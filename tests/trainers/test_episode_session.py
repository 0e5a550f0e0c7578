"""The episode protocol (trainers.episodes.session.EpisodeSession): reset reuses the session and reproduces records."""

from __future__ import annotations

from episode_helpers import comparable, generated_specs, multi_turn_spec

from trainers.episodes import make_policy
from trainers.episodes.prepared import PreparedSpec
from trainers.episodes.runner import run_episode
from trainers.episodes.session import EpisodeSession


def _play(session: EpisodeSession, policy_name: str) -> object:
    """Drive `session` with a fresh policy, as run_episode does, and return its record."""
    policy = make_policy(policy_name)
    policy.start(session.context())
    while not session.done:
        session.step(policy.act([dict(m) for m in session.messages], session.tools))
    return session.finish()


def test_a_reset_session_records_what_a_fresh_run_records() -> None:
    spec, other = multi_turn_spec(), generated_specs()[0]
    session = EpisodeSession(spec, make_policy("teacher").info(), seed=3)
    first = _play(session, "teacher")
    assert comparable(first) == comparable(run_episode(spec, make_policy("teacher"), seed=3))
    prepared = session.prepared
    session.reset(4, other)  # another environment and seed on the same session
    assert session.spec is other and session.turn == 0 and not session.done
    second = _play(session, "teacher")
    assert comparable(second) == comparable(run_episode(other, make_policy("teacher"), seed=4))
    assert second.final is not None and second.final.evaluation["passed"]
    session.reset(3, prepared)  # back to the first prepared spec: nothing rebuilt, the same record
    assert session.prepared is prepared
    assert comparable(_play(session, "teacher")) == comparable(first)


def test_reset_abandons_the_episode_in_progress_and_keeps_the_seed_and_spec() -> None:
    prepared = PreparedSpec(multi_turn_spec())
    session = EpisodeSession(prepared, make_policy("noop").info(), seed=7)
    policy = make_policy("teacher")
    policy.start(session.context())
    session.step(policy.act([dict(m) for m in session.messages], session.tools))
    assert session.turn == 1 and session.run.record.steps
    opening = session.reset()
    assert session.seed == 7 and session.prepared is prepared and session.turn == 0
    assert [m["role"] for m in opening] == ["system", "user"] and not session.run.record.steps
    assert session.episode_id == f"{prepared.spec.id}.s7"
    session.close()
    session.close()  # idempotent
