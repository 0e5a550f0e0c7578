"""Scripted episodes for the adapter tests: reference records from the direct runner, and their turns.

`reference_records(policy)` runs a batch with `run_batch` (what `coworkenv run` runs) over a multi-turn
environment (user, follow-up, world events) and two procedural ones; `assistant_turns(record)` reads
the agent's turns back out of a record as OpenAI-style assistant messages, so an adapter can be
driven with exactly the same turns and must give the same rewards and records.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from episode_helpers import generated_specs, multi_turn_spec

from synth import load_spec
from trainers.episodes.batch import BatchConfig
from trainers.episodes.execute import run_batch
from trainers.episodes.policies import PolicySpec, make_policy
from trainers.episodes.runner import run_episode
from trainers.episodes.turns import AgentTurn, EpisodeContext
from workspace_sim.record import EpisodeRecord, PolicyInfo
from trainers.rewards import RewardConfig

REWARD = RewardConfig(terminal="partial", shaping=True, gamma=0.9)
POLICIES = {"teacher": PolicySpec("teacher"), "broken": PolicySpec("random", {"calls": 3})}


def specs() -> list[Any]:
    return [multi_turn_spec(), *generated_specs()[:2]]


def reference_records(policy: str, reward: RewardConfig = REWARD) -> list[EpisodeRecord]:
    return run_batch(specs(), BatchConfig(POLICIES[policy], seed=5, reward=reward))


def assistant_turns(record: EpisodeRecord) -> list[dict[str, Any]]:
    """The agent's turns of a record as OpenAI-style assistant messages, each with `closes_day`: True for a
    report that closed a working day (the user's next message opened the next day)."""
    assert record.final is not None
    out = []
    messages = record.final.messages
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        calls = [{"id": c.id, "type": "function", "function": {"name": c.function.name,
                                                               "arguments": json.dumps(c.function.arguments)}}
                 for c in (m.tool_calls or [])]
        after = messages[i + 1] if i + 1 < len(messages) else None
        # a message the next working day followed closed the day: an adapter sends it as an answer
        closes_day = not calls and after is not None and after.role == "user" and \
            (after.content or "").startswith("[Day ")
        out.append({"role": "assistant", "content": m.content, "tool_calls": calls or None,
                    "closes_day": closes_day})
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


# --- a three-day scenario played by the teacher, for the adapters' multi-day tests -------------------------------

MULTIDAY = Path(__file__).resolve().parents[1] / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml"
STAGE_REWARD = RewardConfig(terminal="partial", per_stage=True)


class _Taping:
    """The teacher, with every turn it plays kept (so an adapter can be sent the very same turns)."""

    def __init__(self) -> None:
        self.teacher = make_policy("teacher")
        self.turns: list[AgentTurn] = []

    def info(self) -> PolicyInfo:
        return self.teacher.info()

    def start(self, context: EpisodeContext) -> None:
        self.teacher.start(context)

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        turn = self.teacher.act(messages, tools)
        self.turns.append(turn)
        return turn


def scenario_reference(seed: int = 5) -> tuple[Any, EpisodeRecord, list[AgentTurn]]:
    """The three-day example, the runner's record of the teacher playing it, and the teacher's turns."""
    spec = load_spec(MULTIDAY)
    tape = _Taping()
    record = run_episode(spec, tape, seed=seed, group=spec.id, reward=STAGE_REWARD)
    assert record.final is not None and record.final.evaluation["passed"]
    return spec, record, tape.turns


def stage_verdicts(record: EpisodeRecord) -> list[tuple[str, bool, float, bool]]:
    """(id, passed, score, reached) of every stage of a record's final evaluation."""
    assert record.final is not None
    return [(s["id"], s["passed"], s["score"], s["reached"]) for s in record.final.evaluation["stages"]]


def day_headers(texts: list[str]) -> list[str]:
    """The day headers ("[Day 2 of 3, ...]") found in a list of texts, in order."""
    return [m for t in texts for m in re.findall(r"\[Day \d+ of \d+[^\]]*\]", t)]
