"""Judging recorded episodes: rebuild the environment, replay the recorded calls, evaluate, append.

A record segment says where its environment came from and starts from a fresh workspace, so
replaying its events (calls, messages, world events, the close of each working day, with the clock
moved to each event's recorded time) reproduces its final state exactly (the workspace is deterministic). Each
replayed call is checked against the recorded outcome; a difference (the environment was edited
since) is reported rather than hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workspace_sim import Workspace
from workspace_sim.predicates import Judge
from workspace_sim.record import (EventLine, RecordedSegment, ReplayError, ReplayReport, append_line,
                                  read_record_file, replace_final_line, replay_events)

from .environment import EnvironmentLoadError, EnvironmentSource, ServedEnvironment
from .record_lines import served_final, served_segment


@dataclass
class Verdict:
    """The evaluation of one segment, whether it was already recorded, and replay warnings."""

    segment: RecordedSegment
    evaluation: dict[str, Any]
    from_record: bool
    appended: bool = False
    warnings: list[str] = field(default_factory=list)
    stored: bool = False  # a finished segment recorded without an answer now holds the given one
    note: str | None = None  # why a judgement with a given answer was printed but not stored


def replay(segment: RecordedSegment, env: ServedEnvironment | None = None) -> tuple[ServedEnvironment, Workspace, list[str]]:
    """The environment and the workspace after replaying a segment's events, plus any divergence found."""
    if env is not None and segment.header.get("env_id") not in (None, str(env.id)):
        raise ReplayError(f"{segment.file}: episode {segment.segment_id} ran environment "
                          f"{segment.header.get('env_id')!r}, not {str(env.id)!r} (the one given)")
    if env is None:
        src = segment.settings.get("source")
        if src is None:
            raise ReplayError(f"{segment.file}: episode {segment.segment_id} does not say which environment it ran "
                              "(no policy.settings.source); pass the environment explicitly (--spec or --python)")
        try:
            env = EnvironmentSource.from_json(src).load()
        except EnvironmentLoadError as e:
            raise ReplayError(f"{segment.file}: episode {segment.segment_id}: {e}") from None
    ws = env.build_workspace()
    warnings: list[str] = []
    expected = segment.header.get("initial_state_hash")
    if expected and expected != ws.content_hash:
        warnings.append(f"the environment's start state changed since recording ({expected} -> {ws.content_hash})")
    report = ReplayReport(segment.segment_id, str(env.id))
    try:
        events = [EventLine.model_validate(ev) for ev in segment.events]
    except ValueError as e:
        raise ReplayError(f"{segment.file}: episode {segment.segment_id}: an event line is malformed: {e}") from None
    try:
        replay_events(ws, events, report, strict=True)
    except ReplayError as e:
        raise ReplayError(f"{segment.file}: {e}") from None
    return env, ws, warnings + report.mismatches


def judge_record(
    path: str | Path, final_answer: str | None = None, rescore: bool = False, append: bool = True,
    env: ServedEnvironment | None = None, segment_id: str | None = None, judge: Judge | None = None,
) -> list[Verdict]:
    """Evaluate every segment of a record file (or one); unfinished ones are replayed and get a final line.

    A finished segment shows its recorded evaluation, unless `rescore` or a `final_answer` asks for a
    new judgement. A rescore is printed, never written. A `final_answer` for a segment an MCP server
    recorded without one (plain stdio or HTTP, where the agent's reply never reaches the server) is
    stored with `append`: its final line is replaced by the judgement with that answer, so listings
    (`coworkenv episodes`) show it; otherwise the verdict's `note` says why it was not stored. `judge`
    decides `judged` predicates (default: the environment's own choice, their key facts).
    """
    rec = read_record_file(path)
    segments = [s for s in rec.segments if segment_id is None or s.segment_id == segment_id]
    if segment_id is not None and not segments:
        known = ", ".join(s.segment_id for s in rec.segments) or "none"
        raise ReplayError(f"{path}: no episode {segment_id!r} (episodes: {known})")
    still_open = [s.segment_id for s in rec.segments if s.final is None and s not in segments]
    verdicts = []
    for seg in segments:
        if seg.final is not None and not rescore and final_answer is None:
            verdicts.append(Verdict(seg, seg.final.get("evaluation") or {}, from_record=True))
            continue
        used_env, ws, warnings = replay(seg, env)
        answer = final_answer if final_answer is not None else (seg.final or {}).get("final_answer")
        evaluation = (used_env.evaluate(ws, answer, judge=judge) if judge is not None  # type: ignore[call-arg]
                      else used_env.evaluate(ws, answer)).to_json()
        verdict = Verdict(seg, evaluation, from_record=False, warnings=warnings)
        renders = {name: t.render for name, t in ws.tools.items() if t.render}
        if append and seg.final is None:
            stop = "answered" if answer is not None else "user_ended"
            append_line(seg.file, served_final(seg.segment_id, used_env.task_text(), seg.events, renders, evaluation,
                                             stop, answer, {}))
            verdict.appended = True
        elif seg.final is not None and final_answer is not None:
            verdict.note = _why_not_stored(seg, append, still_open)
            if verdict.note is None:
                replace_final_line(seg.file, seg.segment_id, served_final(
                    seg.segment_id, used_env.task_text(), seg.events, renders, evaluation,
                    str(seg.final.get("stop_reason") or "user_ended"), final_answer, seg.final.get("timings") or {}))
                verdict.stored = True
        verdicts.append(verdict)
    return verdicts


def _why_not_stored(seg: RecordedSegment, append: bool, still_open: list[str]) -> str | None:
    """Why a given answer is only printed for a finished segment (None: it is stored)."""
    if not append:
        return "not stored (--no-append)"
    if seg.final is not None and seg.final.get("final_answer") is not None:
        return "not stored: the record has its own final answer (this is what the given one would score)"
    if not served_segment(seg):
        return ("not stored: an episode runner wrote this record (its final line holds the policy's messages and "
                "reward); this is what the given answer would score")
    if still_open:
        return (f"not stored: the record file has episode(s) still open ({', '.join(still_open[:3])}), which a "
                f"live server may be writing")
    return None
