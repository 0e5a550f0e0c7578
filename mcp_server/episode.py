"""One episode: an environment's workspace, its paged results, its snapshots and its record.

The episode knows nothing of transports: the MCP server (stdio or HTTP) calls `call`, the admin
API calls `reset`, `snapshot`, `restore`, `fork`, `evaluate` and `end` (and, for a harness playing the
user and the world, `add_message`, `apply_world_change`, `advance_clock` and `close_stage`). Every workspace event is
written to the record as soon as it happens; `end` evaluates and appends the `final` line.
With control on (`ControlOptions`, see `mcp_server.control`) the agent itself can ask the user,
meets the world's events and ends the episode with `submit_answer`, so MCP alone is enough.
"""

from __future__ import annotations

import re
import secrets
import time
from pathlib import Path
from typing import Any, Callable

from workspace_sim import State, Workspace
from workspace_sim.core.errors import InvalidArgument, SpecError
from workspace_sim.core.limits import check_arguments
from workspace_sim.record import DeferredRecords, LaterLine, RecordWriter, event_line
from workspace_sim.record.build import now_iso

from .control import AGENT_STATUS_KEYS, CONTROL_TOOLS, SUBMIT_ANSWER, ControlError, ControlOptions, Conversation, \
    EpisodeControl, STATUS_URI, open_conversation, submit_reply
from .environment import EnvironmentSource, ServedEnvironment, environment_hash
from .record_lines import served_final, served_header
from .results import PAGER_TOOL, Answer, ResultPager

EPISODE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class EpisodeError(ValueError):
    """A request an episode cannot honour (unknown snapshot, episode already ended); the message says why."""


class RecordExistsError(EpisodeError):
    """The record folder already holds a record for this episode id (ids are unique per folder)."""


def new_episode_id() -> str:
    """A fresh, unguessable episode id."""
    return "ep-" + secrets.token_hex(8)


class Episode:
    """A live episode of one environment, recorded as it goes; `fresh` makes its start-state workspaces (at
    creation and on reset; by default `env.build_workspace`, the HTTP hub's pool forks a template)."""

    def __init__(
        self,
        env: ServedEnvironment,
        episode_id: str | None = None,
        *,
        source: EnvironmentSource | None = None,
        record_dir: str | Path | None = None,
        transport: str = "inprocess",
        workspace: Workspace | None = None,
        start: dict[str, Any] | None = None,
        env_hash: str | None = None,
        control: ControlOptions | None = None,
        conversation: Conversation | None = None,
        fresh: Callable[[], Workspace] | None = None,
        record_later: DeferredRecords | None = None,
        open_record_later: bool = False,
    ) -> None:
        episode_id = episode_id or new_episode_id()
        if not EPISODE_ID.match(episode_id):
            raise EpisodeError(f"episode id must be 1-64 letters, digits, '-' or '_' (starting with a letter or "
                               f"digit), got {episode_id!r}")
        self.id = episode_id
        self.env = env
        self.source = source
        self.transport = transport
        self.env_hash = env_hash if env_hash is not None else environment_hash(env)
        self._fresh = fresh or env.build_workspace  # a fresh start-state workspace (the hub's pool forks a template)
        self.workspace = workspace if workspace is not None else self._fresh()
        self.pager = ResultPager(self.workspace.config.max_result_chars)
        self.snapshots: dict[str, State] = {}
        self.ended = False
        self.evaluation: dict[str, Any] | None = None
        self.stop_reason: str | None = None
        self.control: EpisodeControl | None = None
        self._checkpoints: dict[str, Any] = {}
        if control is not None and control.enabled:
            fresh = conversation is None
            if fresh:
                conversation = open_conversation(env, self.workspace, control)
            self.control = EpisodeControl(control, conversation)
            if fresh and conversation is not None:
                conversation.start()  # the request opens turn 0, as in the direct runner
        self._record_later = record_later  # writes the record's lines after the answers (the HTTP hub's)
        self._open_later = open_record_later  # a fresh random id: its record file may be made after the answer
        self._writer = self._open_record(record_dir if isinstance(record_dir, Path) else Path(record_dir)) \
            if record_dir is not None else None
        self._segment = -1
        self._segment_events: list[LaterLine] = []
        self._started = time.perf_counter()
        self._tool_seconds = 0.0
        self._begin_segment(start or {"kind": "fresh"})

    def _open_record(self, record_dir: Path) -> RecordWriter:
        path = record_dir / f"{self.id}.jsonl"
        try:
            return RecordWriter(path, exclusive=True, later=self._record_later, open_later=self._open_later)
        except FileExistsError:
            self.workspace.close()
            raise RecordExistsError(f"episode id {self.id!r} already has a record ({path.name} in {record_dir}); "
                                    "episode ids are unique per record folder: choose another id or omit it") from None

    # --- identity ------------------------------------------------------------------------------

    @property
    def segment_id(self) -> str:
        """The id of the current record segment (`<episode>` first, then `<episode>.<n>`)."""
        return self.id if self._segment == 0 else f"{self.id}.{self._segment}"

    @property
    def record_path(self) -> Path | None:
        """The record file, or None when the episode is not recorded."""
        return self._writer.path if self._writer is not None else None

    def task_text(self) -> str:
        """The request as the user sees it."""
        return self.env.task_text()

    # --- acting --------------------------------------------------------------------------------

    def call(self, name: str, arguments: Any) -> Answer:
        """Run one tool call (or page through a long result, or a control call) and record it; never raises."""
        if self.ended:
            if self.control is not None and self.control.submitted:
                return Answer(f"Error (episode_ended): the answer was submitted and the episode has ended; no more "
                              f"calls are accepted ({name} did not run). The outcome is in {STATUS_URI}.", None, True)
            return Answer("Error (episode_ended): this episode has ended; no more calls are accepted.", None, True)
        if self.control is not None:
            if name in CONTROL_TOOLS:
                return self._control_call(name, arguments)
            failed = self._world_turn()
            if failed is not None:
                return failed
        if name == PAGER_TOOL:
            args = arguments if isinstance(arguments, dict) else {}
            extra = sorted(set(args) - {"result_id", "page"})
            try:  # the workspace's argument limits hold for the pager too: nothing oversized is echoed
                check_arguments(args, frozenset(), self.workspace.config.limits)
            except InvalidArgument as e:
                return Answer(f"Error (invalid_argument): {e.message}", None, True)
            if extra:
                return Answer(f"Error (invalid_argument): unexpected argument(s) {', '.join(extra)} for {PAGER_TOOL}; "
                              "give result_id and page", None, True)
            return self.pager.page(args.get("result_id"), args.get("page"))
        t0 = time.perf_counter()
        result = self.workspace.call(name, arguments)
        self._tool_seconds += time.perf_counter() - t0
        self._record(result.event)
        return self.pager.shape(result)

    # --- MCP alone: the control tools ------------------------------------------------------------

    def _world_turn(self) -> Answer | None:
        """Apply the world events due before a call; an event that does not apply ends the episode."""
        conv = self.control.conversation if self.control is not None else None
        if conv is None:
            return None
        try:
            conv.before_call()
        except Exception as e:  # a broken environment ends the episode, as it does in the runner
            return self._environment_failed(e)
        finally:
            self._sync_record()
        return None

    def _environment_failed(self, e: Exception) -> Answer:
        self._sync_record()
        self.end(None, "error")
        return Answer(f"Error (environment_failed): the environment failed and the episode has ended: {e}", None, True)

    def _control_call(self, name: str, arguments: Any) -> Answer:
        assert self.control is not None
        try:
            if name == SUBMIT_ANSWER.name:
                answer = self.control.submission(arguments)
                if answer is not None:
                    going_on = self._carry_on(answer)
                    if going_on is not None:
                        return going_on
                    self.workspace.add_message("assistant", answer)
                self.control.submitted, self.control.final_answer = True, answer
                self._sync_record()
                evaluation = self.end(answer, "answered")
                reveal = self.control.options.reveal_score
                structured: dict[str, Any] = {"ended": True}
                if reveal:
                    structured.update(score=evaluation.get("score"), passed=evaluation.get("passed"),
                                      checks=[bool(r.get("passed")) for r in evaluation.get("results") or []])
                return Answer(submit_reply(evaluation, reveal), structured, False)
            failed = self._world_turn()
            if failed is not None:
                return failed
            try:
                reply = self.control.ask(arguments)
            except ControlError:
                raise
            except SpecError as e:  # a world event of the new turn that does not apply
                return self._environment_failed(e)
            except Exception as e:  # the simulated user's model failed: the agent may try again
                self._sync_record()
                return Answer(f"Error (user_unavailable): the simulated user could not answer: {e}", None, True)
            self._sync_record()
            return Answer(reply, {"reply": reply}, False)
        except ControlError as e:
            return Answer(f"Error ({e.code}): {e.message}", None, True)

    def _carry_on(self, answer: str) -> Answer | None:
        """The user's next message when `answer` does not end the episode (a follow-up, the next working day),
        recorded; None when it is the final answer. A failing world event ends the episode; a failing user
        model is an error the agent may retry."""
        assert self.control is not None
        try:
            reply = self.control.carry_on(answer)
        except SpecError as e:  # a world event of the new turn or day that does not apply
            return self._environment_failed(e)
        except Exception as e:
            self._sync_record()
            return Answer(f"Error (user_unavailable): the simulated user could not answer: {e}", None, True)
        if reply is None:
            return None
        self._sync_record()
        conv = self.control.conversation.status() if self.control.conversation is not None else {}
        where = {k: conv[k] for k in AGENT_STATUS_KEYS if k in conv}
        return Answer(reply, {"reply": reply, "ended": False, **where}, False)

    def status(self) -> dict[str, Any]:
        """The episode as the agent may see it (`episode://status`): turn, calls, clock, the day of a multi-day
        scenario, ended, and the score once ended only when the server may reveal it (`reveal_score`); never
        anything that names the test (the environment id, stage ids), the predicates, hidden facts or state."""
        events = self.workspace.events()
        out: dict[str, Any] = {
            "episode_id": self.id, "segment": self.segment_id, "mcp_only": self.control is not None,
            "calls": sum(1 for e in events if e.kind == "call"), "sim_time": self.workspace.state.now.isoformat(),
            "ended": self.ended, "stop_reason": self.stop_reason,
        }
        if self.control is not None:
            out.update(self.control.status())
            out["final_answer"] = self.control.final_answer
        reveal = self.control is not None and self.control.options.reveal_score
        if reveal and self.ended and self.evaluation is not None:
            out["score"] = self.evaluation.get("score")
            out["passed"] = self.evaluation.get("passed")
        return out

    def _sync_record(self) -> None:
        """Record the workspace events not yet recorded (messages and world events the conversation logged)."""
        events = self.workspace.events()
        for event in events[len(self._segment_events):]:
            self._record(event)

    # --- the harness's side of the conversation (admin API; never offered to the agent) ---------

    def add_message(self, role: str, content: str) -> dict[str, Any]:
        """Log a conversation turn (the user's reply, the agent's answer) and record it; returns the event."""
        self._require_live()
        if role not in ("user", "assistant"):
            raise EpisodeError(f"message role must be 'user' or 'assistant', got {role!r}")
        event = self.workspace.add_message(role, content)
        self._record(event)
        return event.to_json()

    def apply_world_change(self, changes: list[Any], note: str = "") -> dict[str, Any]:
        """Apply a world event (changes from outside the agent) and record it; raises SpecError naming a bad change."""
        self._require_live()
        for i, change in enumerate(changes):
            if not isinstance(change, dict):
                raise SpecError(f"changes[{i}]", f"must be an object, got {type(change).__name__}")
        event = self.workspace.apply_world_change(changes, note=note)
        self._record(event)
        return event.to_json()

    def close_stage(self, stage: str) -> dict[str, Any]:
        """Close a stage (working day) of a multi-day scenario and record it; its predicates are judged on the
        state as it stands now. Returns the `stage` event; EpisodeError names a stage the environment lacks or
        one already closed."""
        self._require_live()
        if not isinstance(stage, str) or not stage:
            raise EpisodeError(f"stage must be a stage id (a non-empty string), got {stage!r}")
        known = [str(st.id) for st in getattr(self.env, "stages", None) or []]
        if not known:
            raise EpisodeError(f"environment {self.env.id} has no stages (it is not a multi-day scenario)")
        if stage not in known:
            raise EpisodeError(f"environment {self.env.id} has no stage {stage!r} (stages: {', '.join(known)})")
        closed = [e.args.get("stage") for e in self.workspace.events() if e.kind == "stage"]
        if stage in closed:
            raise EpisodeError(f"stage {stage!r} of episode {self.id} is already closed")
        event = self.workspace.close_stage(stage)
        self._record(event)
        return event.to_json()

    def advance_clock(self, seconds: float) -> str:
        """Move the simulated clock forward; returns the new time (ISO 8601)."""
        self._require_live()
        if not seconds >= 0:
            raise EpisodeError(f"seconds must be zero or more, got {seconds!r}")
        self.workspace.advance_clock(seconds)
        return self.workspace.state.now.isoformat()

    def events_since(self, start: int = 0) -> dict[str, Any]:
        """The workspace events from index `start` on (JSON), with the event count, clock and content hash."""
        events = self.workspace.events()
        return {"episode_id": self.id, "count": len(events), "now": self.workspace.state.now.isoformat(),
                "content_hash": self.workspace.content_hash,
                "events": [e.to_json() for e in events[max(start, 0):]]}

    # --- admin ---------------------------------------------------------------------------------

    def reset(self) -> None:
        """Finish the current segment and start again from a fresh workspace (the old one's resources are released)."""
        self._require_live()
        if self.workspace.holds_resources:  # judged before its sandbox goes
            self._finish_segment(None, "user_ended")
            self.workspace.close()
        else:  # nobody reads this evaluation now: the record's final line judges the old state after the answer
            self._finish_segment(None, "user_ended", later=True)
        self.workspace = self._fresh()
        self.pager = ResultPager(self.workspace.config.max_result_chars)
        self._checkpoints = {}
        if self.control is not None:
            options = self.control.options
            conversation = open_conversation(self.env, self.workspace, options)
            self.control = EpisodeControl(options, conversation)
            if conversation is not None:
                conversation.start()
        self._begin_segment({"kind": "reset"})

    def snapshot(self) -> str:
        """Remember the current state; returns the snapshot id for `restore`."""
        self._require_live()
        sid = f"s{len(self.snapshots) + 1}"
        self.snapshots[sid] = self.workspace.snapshot()
        if self.control is not None and self.control.conversation is not None:
            self._checkpoints[sid] = self.control.conversation.checkpoint()
        return sid

    def restore(self, snapshot_id: str) -> None:
        """Return to a snapshot; the record starts a new segment that begins with the snapshot's history."""
        self._require_live()
        if snapshot_id not in self.snapshots:
            known = ", ".join(self.snapshots) or "none"
            raise EpisodeError(f"episode {self.id} has no snapshot {snapshot_id!r} (snapshots: {known})")
        self._finish_segment(None, "user_ended")
        self.workspace.restore(self.snapshots[snapshot_id])
        if snapshot_id in self._checkpoints and self.control is not None and self.control.conversation is not None:
            self.control.conversation.resume(self._checkpoints[snapshot_id], self.workspace)
        self._begin_segment({"kind": "restore", "snapshot": snapshot_id})

    def fork(self, new_id: str | None = None, record_dir: str | Path | None = None) -> "Episode":
        """A new, independent episode starting from this one's current state (and history)."""
        self._require_live()
        rd = record_dir if record_dir is not None else (self._writer.path.parent if self._writer else None)
        workspace = self.workspace.fork()
        control = self.control.options if self.control is not None else None
        conv = self.control.conversation if self.control is not None else None
        return Episode(self.env, new_id, source=self.source, record_dir=rd, transport=self.transport,
                       workspace=workspace, start={"kind": "fork", "from": self.segment_id},
                       env_hash=self.env_hash, control=control,
                       conversation=conv.fork(workspace) if conv is not None else None, fresh=self._fresh,
                       record_later=self._record_later)

    def evaluate(self, final_answer: str | None = None, compact: bool = False) -> dict[str, Any]:
        """The evaluation of the current state (does not end the episode). `compact` gives only what a harness
        judging each step reads: `passed`, `score`, each result's `passed` and `weight`, the `stages` when there
        are any, and `"compact": true` (the descriptions, expected and observed values are left out)."""
        ev = self.env.evaluate(self.workspace, final_answer)
        if not compact:
            return ev.to_json()
        out: dict[str, Any] = {"passed": ev.passed, "score": round(ev.score, 6),
                               "results": [{"passed": r.passed, "weight": r.weight} for r in ev.results],
                               "compact": True}
        if getattr(ev, "stage_ids", None):
            out["stages"] = [st.to_json() for st in ev.stages()]
        return out

    def end(self, final_answer: str | None = None, reason: str | None = None, sync: bool = True) -> dict[str, Any]:
        """Evaluate, append the final line, close the record and release the workspace's live resources
        (e.g. its sandbox container); later calls return the same evaluation. With `sync` False the
        record is closed without an fsync, which the caller then owes (`recording.sync_file`)."""
        if self.ended:
            assert self.evaluation is not None
            return self.evaluation
        stop = reason or ("answered" if final_answer is not None else "user_ended")
        try:
            self.evaluation = self._finish_segment(final_answer, stop)
            self.ended, self.stop_reason = True, stop
            if self._writer is not None:
                self._writer.close(sync)
        finally:
            self.workspace.close()
        return self.evaluation

    def flush_record(self) -> None:
        """Write the record's queued lines now (a reader of the file sees every line recorded so far)."""
        if self._writer is not None:
            self._writer.flush()

    def holds_resources(self) -> bool:
        """Whether the workspace holds live resources (a sandbox container) that `end` must release; they are
        made on first use, so a workspace that never ran a sandboxed tool holds none."""
        return self.workspace.holds_resources

    def state_summary(self) -> dict[str, Any]:
        """The workspace's records and content hash (for harnesses; never served to the agent)."""
        return {"episode_id": self.id, "segment": self.segment_id, "content_hash": self.workspace.content_hash,
                "sim_time": self.workspace.state.now.isoformat(), "data": self.workspace.export_data()}

    # --- recording -----------------------------------------------------------------------------

    def _require_live(self) -> None:
        if self.ended:
            raise EpisodeError(f"episode {self.id} has ended")

    def _begin_segment(self, start: dict[str, Any]) -> None:
        self._segment += 1
        self._segment_events = []
        self._started = time.perf_counter()
        self._tool_seconds = 0.0
        if self._writer is not None:
            settings = {"transport": self.transport, "source": self.source.to_json() if self.source else None,
                        "episode": self.id, "segment": self._segment, "start": start, "started_at": now_iso()}
            if self.control is not None:
                conv = self.control.conversation
                settings["control"] = {**self.control.options.to_json(),
                                       "user": conv.describe() if conv is not None else None}
            control_tools = self.control.tool_names() if self.control is not None else []
            # built after the answer: what it reads of the workspace (its start state, seed, tools) stays as it is
            self._writer.write_header(LaterLine(_header, self.segment_id, self.env, self.env_hash, self.workspace,
                                                settings, control_tools))
        for event in self.workspace.events():  # the history a restore or fork starts from
            self._record(event)

    def _record(self, event: Any) -> None:
        line = LaterLine(event_line, event, self.segment_id, len(self._segment_events))  # built after the answer
        self._segment_events.append(line)
        if self._writer is not None:
            self._writer.write(line)

    def _finish_segment(self, final_answer: str | None, stop_reason: str, later: bool = False) -> dict[str, Any] | None:
        """Judge the segment and write its `final` line; with `later` the judging waits for the line to be
        written (after the answer, `DeferredRecords`) and nothing is returned: the workspace is left as it is."""
        timings = {"total": time.perf_counter() - self._started, "tools": self._tool_seconds}
        if later:
            if self._writer is not None:
                self._writer.write(LaterLine(_judged_final, self.env, self.workspace, self.segment_id,
                                             self._segment_events, final_answer, stop_reason, timings))
            return None
        evaluation = _judged(self.env, self.workspace, final_answer)
        if self._writer is not None:
            self._writer.write(_final(self.env, self.workspace, self.segment_id, self._segment_events, evaluation,
                                      stop_reason, final_answer, timings))
        return evaluation


def _header(segment_id: str, env: ServedEnvironment, env_hash: str, workspace: Workspace, settings: dict[str, Any],
            control_tools: list[str]) -> dict[str, Any]:
    header = served_header(segment_id, env, env_hash, workspace, settings)
    header["tools"] += [CONTROL_TOOLS[n].openai_schema() for n in control_tools]  # the control tools are offered too
    return header


def _judged(env: ServedEnvironment, workspace: Workspace, final_answer: str | None) -> dict[str, Any]:
    """The evaluation of a workspace as a record holds it (a broken predicate must not lose the record)."""
    try:
        return env.evaluate(workspace, final_answer).to_json()
    except Exception as e:
        return {"passed": False, "score": 0.0, "error": f"evaluation failed: {type(e).__name__}: {e}", "results": []}


def _final(env: ServedEnvironment, workspace: Workspace, segment_id: str, events: list[LaterLine],
           evaluation: dict[str, Any], stop_reason: str, final_answer: str | None,
           timings: dict[str, float]) -> dict[str, Any]:
    renders = {name: t.render for name, t in workspace.tools.items() if t.render}
    return served_final(segment_id, env.task_text(), [e.get() for e in events], renders, evaluation, stop_reason,
                      final_answer, timings)


def _judged_final(env: ServedEnvironment, workspace: Workspace, segment_id: str, events: list[LaterLine],
                  final_answer: str | None, stop_reason: str, timings: dict[str, float]) -> dict[str, Any]:
    """The `final` line of a segment left behind by a reset, judged when the line is written; a predicate that
    made a live resource on the way (a sandbox) has it released here, as the reset would have."""
    try:
        evaluation = _judged(env, workspace, final_answer)
        try:
            return _final(env, workspace, segment_id, events, evaluation, stop_reason, final_answer, timings)
        except Exception as e:  # the segment's events are in the record already: its end must not go missing
            failed = {**evaluation, "error": f"final line failed: {type(e).__name__}: {e}"}
            return served_final(segment_id, env.task_text(), [], {}, failed, stop_reason, final_answer, timings)
    finally:
        workspace.close()
