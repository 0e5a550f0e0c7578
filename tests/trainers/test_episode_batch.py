"""Batches: job order, workers giving the same records as one process, and the per-capability summary."""

from __future__ import annotations

import pytest
from episode_helpers import comparable, generated_specs, multi_turn_spec

from trainers.episodes.batch import BatchConfig, UserSpec, episode_id, run_local, summarize
from trainers.episodes.policies import PolicyConfigError, PolicySpec, make_policy


def test_batch_runs_every_environment_with_every_seed_in_job_order() -> None:
    specs = generated_specs()[:3]
    recs = run_local(specs, BatchConfig(PolicySpec("teacher"), episodes_per_env=2, seed=10))
    assert [r.episode_id for r in recs] == [episode_id(s.id, "teacher", k) for s in specs for k in (10, 11)]
    assert all(r.passed and r.group == r.env_id for r in recs)


def test_two_worker_processes_give_the_same_records_as_one() -> None:
    specs = [multi_turn_spec(), *generated_specs()[:3]]
    config = BatchConfig(PolicySpec("random", {"calls": 4}), episodes_per_env=2, seed=3)
    seen = []
    one = run_local(specs, config, workers=1)
    two = run_local(specs, config, workers=2, on_record=seen.append)
    assert [comparable(r) for r in one] == [comparable(r) for r in two]
    assert sorted(r.episode_id for r in seen) == sorted(r.episode_id for r in two)


def test_mcp_transport_in_a_batch_matches_direct() -> None:
    specs = [multi_turn_spec(), generated_specs()[0]]
    direct = run_local(specs, BatchConfig(PolicySpec("teacher"), episodes_per_env=2))
    mcp = run_local(specs, BatchConfig(PolicySpec("teacher"), episodes_per_env=2, transport="mcp"))
    assert [comparable(r) for r in direct] == [comparable(r) for r in mcp]


def test_summary_per_capability_counts_success_reward_violations_and_errors() -> None:
    specs = [multi_turn_spec(), *generated_specs()[:2]]
    teacher = run_local(specs, BatchConfig(PolicySpec("teacher")))
    noop = run_local(specs, BatchConfig(PolicySpec("noop")))
    rows = {r.capability: r for r in summarize(teacher + noop)}
    assert set(rows) == {"clarification", "dynamic_world", "file_management", "all"}
    assert rows["all"].episodes == 6 and rows["all"].passed == 3 and rows["all"].success_rate == 0.5
    assert rows["clarification"].episodes == 2 and rows["clarification"].mean_reward == 0.5
    assert rows["all"].errors == 0 and rows["all"].violations == 0
    assert rows["all"].to_json()["success_rate"] == 0.5


def test_bad_batch_settings_are_refused_clearly() -> None:
    with pytest.raises(ValueError, match="episodes_per_env"):
        BatchConfig(PolicySpec("teacher"), episodes_per_env=0)
    with pytest.raises(ValueError, match="transport"):
        BatchConfig(PolicySpec("teacher"), transport="carrier-pigeon")  # type: ignore[arg-type]
    with pytest.raises(PolicyConfigError, match="unknown policy 'gpt'"):
        make_policy("gpt")
    with pytest.raises(PolicyConfigError, match="has no setting"):
        make_policy("teacher", temperature=1.0)
    with pytest.raises(ValueError, match="scripted' or 'llm"):
        UserSpec("oracle").factory()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="workers"):
        run_local([], BatchConfig(PolicySpec("teacher")), workers=0)
