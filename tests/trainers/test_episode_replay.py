"""Record replay: re-executing a record's events on a fresh environment reproduces every step."""

from __future__ import annotations

from episode_helpers import generated_specs, multi_turn_spec

from trainers.episodes.policies import make_policy
from workspace_sim.record import replay_record, replay_records
from trainers.episodes.runner import run_episode
from workspace_sim.record import parse_lines


def test_replay_reproduces_a_multi_turn_episode_with_world_events_and_clock_moves() -> None:
    spec = multi_turn_spec()
    rec = run_episode(spec, make_policy("teacher"))
    [back] = parse_lines(rec.to_jsonl().splitlines())  # from the JSONL, as a reader would
    report = replay_record(back, spec)
    assert report.ok, report.mismatches
    assert report.steps_checked == len(rec.steps) == 5
    assert report.events_replayed == len(rec.events)
    assert report.final_hash == rec.steps[-1].state_hash


def test_replay_reproduces_random_episodes_with_errors() -> None:
    failed_calls = 0
    for spec in generated_specs()[:4]:
        for seed in range(3):
            rec = run_episode(spec, make_policy("random", calls=6), seed=seed)
            failed_calls += sum(1 for e in rec.events if e.kind == "call" and not e.ok)
            report = replay_record(rec, spec)
            assert report.ok, (spec.id, seed, report.mismatches)
    assert failed_calls > 0  # failed calls replay too


def test_a_tampered_record_is_caught_at_the_step_where_it_diverges() -> None:
    spec = multi_turn_spec()
    rec = run_episode(spec, make_policy("teacher"))
    move = next(e for e in rec.events if e.kind == "call" and e.tool == "move_file")
    move.args = {"source": "/drafts/keep.md", "destination": "/reports/q3-final.md"}
    report = replay_record(rec, spec)
    assert not report.ok
    assert any(m.startswith(f"event {move.index} (move_file): the replayed result differs") for m in report.mismatches)
    assert any(m.startswith(f"step {move.turn}: state hash") for m in report.mismatches)


def test_a_changed_environment_and_a_missing_one_are_reported_not_raised() -> None:
    spec = multi_turn_spec()
    rec = run_episode(spec, make_policy("teacher"))
    edited = multi_turn_spec(request="Something else entirely.")
    report = replay_record(rec, edited)
    assert any("environment changed since recording" in m for m in report.mismatches)
    other = replay_records([rec], [generated_specs()[0]])
    assert not other[0].ok and "no spec with environment id 'clarify-rename'" in other[0].mismatches[0]


def test_teacher_records_of_every_capability_replay_exactly() -> None:
    """World events that change a record field by field (dynamic_world) must rebuild from the record."""
    from synth.capabilities import CAPABILITIES
    from synth.procedural import generate

    for cap in CAPABILITIES:
        for seed in (0, 1):
            spec = generate(cap, seed)
            rec = run_episode(spec, make_policy("teacher"), seed=seed)
            [back] = parse_lines(rec.to_jsonl().splitlines())
            report = replay_record(back, spec)
            assert report.ok, (cap, seed, report.mismatches)
