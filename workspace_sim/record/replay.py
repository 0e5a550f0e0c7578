"""Replaying an episode record: re-execute its events on a fresh workspace and compare what they did.

The simulator is deterministic, so re-running a record's events (tool calls, conversation messages,
world changes, the close of each working day, with the clock moved to each event's recorded time)
on the environment's start state reproduces the record: each call's outcome, the state hash after
every step, each step's predicate vector, the final verdict. Any difference is reported with the
event or step where it appeared; nothing here raises for a record that merely fails to reproduce,
except that `strict` replays raise `ReplayError` for an event that cannot be applied at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Protocol

from workspace_sim.core.diff import changes_from_diff
from workspace_sim.core.errors import SpecError
from workspace_sim.runtime.workspace import Workspace

from .episode import EpisodeRecord
from .lines import EventLine


class ReplayError(ValueError):
    """A record that cannot be replayed; the message says which event and why."""


class Replayable(Protocol):
    """An environment a record can be replayed on: its id, a fresh workspace, and its predicates."""

    @property
    def id(self) -> Any: ...  # noqa: D102

    def build_workspace(self) -> Workspace: ...  # noqa: D102

    def evaluate(self, workspace: Workspace, final_answer: str | None = None) -> Any: ...  # noqa: D102


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


def replay_event(ws: Workspace, ev: EventLine, report: ReplayReport, strict: bool = False) -> None:
    """Apply one recorded event to `ws`, noting in `report` where it does not do what the record says."""
    where = f"event {ev.index}"
    try:
        when: datetime | None = datetime.fromisoformat(ev.sim_time)
    except ValueError:
        when = None
        report.mismatches.append(f"{where}: sim_time {ev.sim_time!r} is not an ISO time")
    now = ws.state.now
    if when is not None and when > now:
        ws.advance_clock((when - now).total_seconds())
    elif when is not None and when < now:
        report.mismatches.append(f"{where}: recorded at {ev.sim_time}, but the replay is already at {now.isoformat()}")
    if ws.state.log_len != ev.index:
        report.mismatches.append(f"{where}: the replay's event log has {ws.state.log_len} entries before it")
    if ev.kind == "call":
        _replay_call(ws, ev, report, where)
    elif ev.kind == "message":
        ws.add_message(ev.role or "user", ev.content or "")
    elif ev.kind == "stage":  # a working day closed: its predicates are judged on the state here
        stage = ev.args.get("stage") if isinstance(ev.args, Mapping) else None
        if not isinstance(stage, str):
            _fail(report, f"{where}: a stage event needs args.stage, the id of the stage it closes", strict)
        else:
            ws.close_stage(stage)
    else:
        note = str(ev.args.get("note", "")) if isinstance(ev.args, Mapping) else ""
        try:
            agent = isinstance(ev.args, Mapping) and ev.args.get("agent") is True
            ws.apply_world_change(changes_from_diff(ev.diff), note=note, agent=agent, recorded=True)
        except (SpecError, KeyError, TypeError) as e:
            _fail(report, f"{where}: the recorded world change does not apply: {e}", strict)
    report.events_replayed += 1


def _replay_call(ws: Workspace, ev: EventLine, report: ReplayReport, where: str) -> None:
    got = ws.call(ev.tool or "", ev.args)
    if got.ok != ev.ok:
        report.mismatches.append(f"{where} ({ev.tool}): recorded ok={ev.ok}, replayed ok={got.ok} ({got.text[:200]})")
    elif got.ok and got.data != ev.result:
        report.mismatches.append(f"{where} ({ev.tool}): the replayed result differs from the recorded one")
    elif got.ok and ev.read is not None and got.event.read_json() != ev.read:
        report.mismatches.append(f"{where} ({ev.tool}): the replayed call read other records than the recorded one")
    elif not got.ok and ev.error is not None and got.error is not None and got.error.code != ev.error.code:
        report.mismatches.append(f"{where} ({ev.tool}): recorded error {ev.error.code}, replayed {got.error.code}")


def _fail(report: ReplayReport, message: str, strict: bool) -> None:
    if strict:
        raise ReplayError(f"episode {report.episode_id} {message}")
    report.mismatches.append(message)


def replay_events(ws: Workspace, events: Iterable[EventLine], report: ReplayReport, strict: bool = False) -> None:
    """Apply recorded events in log order (see `replay_event`)."""
    for ev in sorted(events, key=lambda e: e.index):
        replay_event(ws, ev, report, strict)


def replay_record(record: EpisodeRecord, env: Replayable, env_hash: str | None = None,
                  workspace: Workspace | None = None) -> ReplayReport:
    """Replay a record on `env` (a fresh `env.build_workspace()`, or `workspace`) and compare the start state,
    the state hash and predicates after every step, and the final verdict. `env_hash`, when given, is the
    environment's content hash now, compared with the header's (default: `env.content_hash()` where it has one)."""
    report = ReplayReport(record.episode_id, record.env_id)
    if env_hash is None and callable(getattr(env, "content_hash", None)):
        env_hash = env.content_hash()  # type: ignore[attr-defined]
    if str(env.id) != record.env_id:
        report.mismatches.append(f"the record is of environment {record.env_id!r}, not {str(env.id)!r}")
        return report
    h = record.header
    if env_hash is not None and h.env_hash and h.env_hash != env_hash:
        report.mismatches.append(f"the environment changed since recording (spec hash {h.env_hash} -> "
                                 f"{env_hash}); replaying anyway")
    ws = workspace if workspace is not None else env.build_workspace()
    if h.initial_state_hash and h.initial_state_hash != ws.content_hash:
        report.mismatches.append(f"start state differs: recorded {h.initial_state_hash}, rebuilt {ws.content_hash}")
    events = sorted(record.events, key=lambda e: e.index)
    last: dict[int, Any] = {s.turn: s for s in record.steps}  # readers use a turn's last step line
    final_answer = record.final.final_answer if record.final else None
    last_turn = max(last) if last else -1
    ei = 0
    for turn in sorted(last):
        while ei < len(events) and events[ei].turn <= turn:
            replay_event(ws, events[ei], report)
            ei += 1
        step = last[turn]
        if ws.content_hash != step.state_hash:
            report.mismatches.append(f"step {turn}: state hash {ws.content_hash}, recorded {step.state_hash}")
        vector = env.evaluate(ws, final_answer if turn == last_turn else None).vector()
        if vector != step.predicates:
            report.mismatches.append(f"step {turn}: predicates {_bits(vector)}, recorded {_bits(step.predicates)}")
        report.steps_checked += 1
    for ev in events[ei:]:
        replay_event(ws, ev, report)
    if record.final is not None:
        verdict = env.evaluate(ws, final_answer)
        if verdict.passed != record.final.evaluation.get("passed"):
            report.mismatches.append(f"final: passed={verdict.passed}, recorded {record.final.evaluation.get('passed')}")
    report.final_hash = ws.content_hash
    return report


def _bits(v: Sequence[bool]) -> str:
    return "".join("1" if b else "0" for b in v)


def replay_records(records: Sequence[EpisodeRecord], envs: Sequence[Replayable]) -> list[ReplayReport]:
    """Replay each record on the environment with its id (`replay_record`); a missing one is reported, not
    raised."""
    by_id = {str(e.id): e for e in envs}
    out = []
    for rec in records:
        env = by_id.get(rec.env_id)
        if env is None:
            report = ReplayReport(rec.episode_id, rec.env_id)
            report.mismatches.append(f"no spec with environment id {rec.env_id!r} was given")
            out.append(report)
            continue
        out.append(replay_record(rec, env))
    return out
