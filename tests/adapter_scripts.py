"""Scripted episodes for the adapter tests: reference records from the direct runner, and their turns.

`reference_records(policy)` runs a batch with `run_batch` (what `coworkenv run` runs) over a multi-turn
environment (user, follow-up, world events) and two procedural ones; `assistant_turns(record)` reads
the agent's turns back out of a record as OpenAI-style assistant messages, so an adapter can be
driven with exactly the same turns and must give the same rewards and records.
"""

from __future__ import annotations

import json
from typing import Any

from test_episode_runner import generated_specs, multi_turn_spec

from trainers.episodes.batch import BatchConfig, run_batch
from trainers.episodes.policies import PolicySpec
from trainers.record import EpisodeRecord
from trainers.rewards import RewardConfig

REWARD = RewardConfig(terminal="partial", shaping=True, gamma=0.9)
POLICIES = {"teacher": PolicySpec("teacher"), "broken": PolicySpec("random", {"calls": 3})}


def specs() -> list[Any]:
    return [multi_turn_spec(), *generated_specs()[:2]]


def reference_records(policy: str, reward: RewardConfig = REWARD) -> list[EpisodeRecord]:
    return run_batch(specs(), BatchConfig(POLICIES[policy], seed=5, reward=reward))


def assistant_turns(record: EpisodeRecord) -> list[dict[str, Any]]:
    assert record.final is not None
    out = []
    for m in record.final.messages:
        if m.role != "assistant":
            continue
        calls = [{"id": c.id, "type": "function", "function": {"name": c.function.name,
                                                               "arguments": json.dumps(c.function.arguments)}}
                 for c in (m.tool_calls or [])]
        out.append({"role": "assistant", "content": m.content, "tool_calls": calls or None})
    return out


def comparable(record: EpisodeRecord) -> list[dict[str, Any]]:
    """A record without what legitimately differs between the runner and an adapter (timings, ids, policy)."""
    doc = [json.loads(line) for line in record.to_jsonl().splitlines()]
    for line in doc:
        line.pop("episode_id", None)
        if line["type"] == "header":
            line.pop("policy")
        if line["type"] == "final":
            line.pop("timings")
    return doc
