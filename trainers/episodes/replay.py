"""Replaying episode records: re-execute the recorded events on a fresh environment and compare every step.

The simulator is deterministic, so re-running a record's events (tool calls, conversation
messages, world changes, with the clock moved to each event's recorded time) on the spec's start
state must reproduce the record: each call's outcome, the state hash after every step, and each
step's predicate vector. Any difference is reported with the event or step where it appeared;
nothing here raises for a record that merely fails to reproduce.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from synth.spec import EnvironmentSpec
from workspace_sim import Workspace
from workspace_sim.core.diff import changes_from_diff
from workspace_sim.core.errors import SpecError

from ..record import EpisodeRecord, EventLine


@dataclass
class ReplayReport:
    """The outcome of replaying one record: steps checked and every mismatch found."""

    episode_id: str
    env_id: str
    steps_checked: int = 0
    events_replayed: int = 0
    mismatches: list[str] = field(default_factory=list)
    final_hash: str = ""

    @property
    def ok(self) -> bool:
        """Whether the replay reproduced the record exactly."""
        return not self.mismatches

    def to_json(self) -> dict[str, Any]:
        """The report as JSON."""
        return {"episode_id": self.episode_id, "env_id": self.env_id, "ok": self.ok,
                "steps_checked": self.steps_checked, "events_replayed": self.events_replayed,
                "mismatches": list(self.mismatches), "final_hash": self.final_hash}


def _world_changes(ev: EventLine) -> list[dict[str, Any]]:
    """The world event's changes, rebuilt from its recorded diff (added records whole, changed ones by field)."""
    return changes_from_diff(ev.diff)


def _replay_event(ws: Workspace, ev: EventLine, report: ReplayReport) -> None:
    where = f"event {ev.index}"
    when = datetime.fromisoformat(ev.sim_time)
    now = ws.state.now
    if when > now:
        ws.advance_clock((when - now).total_seconds())
    elif when < now:
        report.mismatches.append(f"{where}: recorded at {ev.sim_time}, but the replay is already at {now.isoformat()}")
    if ws.state.log_len != ev.index:
        report.mismatches.append(f"{where}: the replay's event log has {ws.state.log_len} entries before it")
    if ev.kind == "call":
        got = ws.call(ev.tool or "", ev.args)
        if got.ok != ev.ok:
            report.mismatches.append(f"{where} ({ev.tool}): recorded ok={ev.ok}, replayed ok={got.ok} ({got.text[:200]})")
        elif got.ok and got.data != ev.result:
            report.mismatches.append(f"{where} ({ev.tool}): the replayed result differs from the recorded one")
        elif got.ok and ev.read is not None and got.event.read_json() != ev.read:
            report.mismatches.append(f"{where} ({ev.tool}): the replayed call read other records than the recorded one")
        elif not got.ok and ev.error is not None and got.error is not None and got.error.code != ev.error.code:
            report.mismatches.append(f"{where} ({ev.tool}): recorded error {ev.error.code}, replayed {got.error.code}")
    elif ev.kind == "message":
        ws.add_message(ev.role or "user", ev.content or "")
    elif ev.kind == "stage":
        stage = ev.args.get("stage") if isinstance(ev.args, Mapping) else None
        if not isinstance(stage, str):
            report.mismatches.append(f"{where}: a stage event without its stage id")
        else:
            ws.close_stage(stage)
    else:
        note = ev.args.get("note", "") if isinstance(ev.args, Mapping) else ""
        try:
            ws.apply_world_change(_world_changes(ev), note=note)
        except (SpecError, KeyError) as e:
            report.mismatches.append(f"{where}: the recorded world change does not apply: {e}")
    report.events_replayed += 1


def replay_record(record: EpisodeRecord, spec: EnvironmentSpec) -> ReplayReport:
    """Replay a record on `spec` and compare the state hash and predicates after every step."""
    report = ReplayReport(record.episode_id, record.env_id)
    if spec.id != record.env_id:
        report.mismatches.append(f"the record is of environment {record.env_id!r}, not {spec.id!r}")
        return report
    h = record.header
    if h.env_hash and h.env_hash != spec.content_hash():
        report.mismatches.append(f"the environment changed since recording (spec hash {h.env_hash} -> "
                                 f"{spec.content_hash()}); replaying anyway")
    ws = spec.build_workspace()
    if h.initial_state_hash and h.initial_state_hash != ws.content_hash:
        report.mismatches.append(f"start state differs: recorded {h.initial_state_hash}, rebuilt {ws.content_hash}")
    events = sorted(record.events, key=lambda e: e.index)
    last: dict[int, Any] = {s.turn: s for s in record.steps}  # readers use a turn's last step line
    final_answer = record.final.final_answer if record.final else None
    last_turn = max(last) if last else -1
    ei = 0
    for turn in sorted(last):
        while ei < len(events) and events[ei].turn <= turn:
            _replay_event(ws, events[ei], report)
            ei += 1
        step = last[turn]
        if ws.content_hash != step.state_hash:
            report.mismatches.append(f"step {turn}: state hash {ws.content_hash}, recorded {step.state_hash}")
        answer = final_answer if turn == last_turn else None
        vector = spec.evaluate(ws, answer).vector()
        if vector != step.predicates:
            report.mismatches.append(f"step {turn}: predicates {_bits(vector)}, recorded {_bits(step.predicates)}")
        report.steps_checked += 1
    for ev in events[ei:]:
        _replay_event(ws, ev, report)
    if record.final is not None:
        ev = spec.evaluate(ws, final_answer)
        if ev.passed != record.final.evaluation.get("passed"):
            report.mismatches.append(f"final: passed={ev.passed}, recorded {record.final.evaluation.get('passed')}")
    report.final_hash = ws.content_hash
    return report


def _bits(v: Sequence[bool]) -> str:
    return "".join("1" if b else "0" for b in v)


def replay_records(records: Sequence[EpisodeRecord], specs: Sequence[EnvironmentSpec]) -> list[ReplayReport]:
    """Replay each record on the spec with its environment id; a missing spec is reported, not raised."""
    by_id = {s.id: s for s in specs}
    out = []
    for rec in records:
        spec = by_id.get(rec.env_id)
        if spec is None:
            report = ReplayReport(rec.episode_id, rec.env_id)
            report.mismatches.append(f"no spec with environment id {rec.env_id!r} was given")
            out.append(report)
        else:
            out.append(replay_record(rec, spec))
    return out
