"""Driving a spec's episode: the request, tool calls, turns with the scripted user, world events, stages.

`SpecDriver` is the one implementation of the spec's turn semantics (docs/spec.md, "Turns"): turn
0 opens with the request; every message the agent sends the user gets a reply and opens the next
turn; a turn's follow-up may move the clock; world events fire when their turn opens, when their
stage opens or, for timed ones, before the first action at or after their time. In a multi-day
scenario the agent's report that closes a day (`end_stage`) marks the stage's end in the log (its
predicates are judged on that state), then the next day opens as a turn: the clock moves to its
morning, its world events apply, and the user's message is the day's instructions with what was
announced. `run_reference` executes a reference solution through it; the validator and episode
runners share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from workspace_sim import ToolResult, Workspace
from workspace_sim.core.errors import SpecError
from workspace_sim.core.state import State

from .parts import (
    FACT_PLACEHOLDER, AskStep, CallStep, EndStageStep, ReferenceSolution, SayStep, Stage, UserSimulator, WorldEvent,
)
from .user import ScriptedUser


DAY_HEADER = re.compile(r"^\[Day (\d+) of (\d+)(?:, [^\]\n]*)?\]")  # how a later stage's message opens


def day_header(day: int, days: int, title: str = "") -> str:
    """The line that opens a working day's message, e.g. '[Day 2 of 3, Tuesday 3 March]' (DAY_HEADER reads it)."""
    return f"[Day {day} of {days}" + (f", {title}" if title else "") + "]"


class ScriptedSpec(Protocol):
    """What the driver reads of a spec (an `EnvironmentSpec` is one): the request, the simulated user, the world
    events, the working days, the reference solution, and a fresh start-state workspace."""

    @property
    def request(self) -> str: ...
    @property
    def user_simulator(self) -> UserSimulator: ...
    @property
    def events(self) -> list[WorldEvent]: ...
    @property
    def stages(self) -> list[Stage]: ...
    @property
    def reference(self) -> ReferenceSolution: ...
    def build_workspace(self) -> Workspace: ...


@dataclass(frozen=True)
class Checkpoint:
    """Everything needed to resume a driver: workspace state, turn, stage, revealed facts, fired events, and
    what the scripted user has been asked."""

    state: State
    turn: int
    revealed: tuple[tuple[str, str], ...]
    fired: frozenset[str]
    notices: tuple[str, ...]
    stage: int = 0
    user: Any = None  # the user's own snapshot(), where it has one


class SpecDriver:
    """One episode of a spec, driven step by step (agent actions in, user replies and events out)."""

    def __init__(self, spec: ScriptedSpec, workspace: Workspace | None = None, withhold_answers: bool = False) -> None:
        self.spec = spec
        self.ws = workspace if workspace is not None else spec.build_workspace()
        self.user = ScriptedUser(spec.user_simulator)
        self.withhold = withhold_answers
        self.turn = 0
        self.stage = 0  # index of the open stage in spec.stages
        self.revealed: dict[str, str] = {}
        self.fired: set[str] = set()
        self.notices: list[str] = []  # announcements of timed events, delivered with the next reply
        self._timed = sorted((e for e in spec.events if e.at_time is not None), key=lambda e: (e.at_time, e.id))

    def start(self) -> str:
        """Open turn 0: log the user's request and return it."""
        self.ws.add_message("user", self.spec.request)
        self._fire_due()
        return self.spec.request

    def call(self, tool: str, args: Any) -> ToolResult:
        """Run an agent tool call, after any timed world events that are due."""
        self._fire_due()
        return self.ws.call(tool, args)

    def fire_due(self) -> None:
        """Apply the timed world events due now; for runners that route a call elsewhere (MCP) instead of `call`."""
        self._fire_due()

    def message(self, text: str) -> str:
        """The agent says `text` to the user; returns the user's reply, which opens the next turn."""
        self.ws.add_message("assistant", text)
        self.turn += 1
        reply, facts = self.user.reply(text, self.turn, self.withhold)
        for f in facts:
            self.revealed[f.name] = f.value
        self._open_turn()
        return self._deliver(reply)

    @property
    def stages_left(self) -> int:
        """How many stages (working days) are still to come after the open one."""
        return max(len(self.spec.stages) - 1 - self.stage, 0)

    def end_stage(self, report: str) -> str | None:
        """The agent closes the open stage with `report` (the day's summary to the user).

        Returns the next stage's opening message (a day header, the instructions, and what was announced),
        which opens the next turn; None when no stage is left (the report is then the final answer, which
        the caller logs).
        """
        if not self.stages_left:
            return None
        self.ws.add_message("assistant", report)
        self.ws.close_stage(self.spec.stages[self.stage].id)
        self.stage += 1
        self.turn += 1
        stage = self.spec.stages[self.stage]
        if stage.opens_at is not None and stage.opens_at > self.ws.state.now:
            self.ws.advance_clock((stage.opens_at - self.ws.state.now).total_seconds())
        for ev in self.spec.events:
            if ev.at_stage == stage.id and ev.id not in self.fired:
                self._apply(ev)
        follow = self.user.followup(self.turn)
        text = (f"{day_header(self.stage + 1, len(self.spec.stages), stage.title)}\n\n{stage.instructions}"
                + (f"\n\n{follow.text}" if follow is not None else ""))
        self._open_turn()
        return self._deliver(text)

    def _open_turn(self) -> None:
        follow = self.user.followup(self.turn)
        if follow is not None and follow.advance_to is not None and follow.advance_to > self.ws.state.now:
            self.ws.advance_clock((follow.advance_to - self.ws.state.now).total_seconds())
        for ev in self.spec.events:
            if ev.at_turn == self.turn and ev.id not in self.fired:
                self._apply(ev)
        self._fire_due()

    def _deliver(self, text: str) -> str:
        if self.notices:
            text = text + "\n\n" + "\n".join(self.notices)
            self.notices = []
        self.ws.add_message("user", text)
        return text

    def fill(self, value: Any) -> Any:
        """`value` with every {{fact:NAME}} replaced by the revealed fact, or its decoy if unrevealed."""
        if isinstance(value, str):
            if "{{" not in value:
                return value
            return FACT_PLACEHOLDER.sub(lambda m: self._fact(m.group(1)), value)
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        return value

    def _fact(self, name: str) -> str:
        if name in self.revealed:
            return self.revealed[name]
        for f in self.spec.user_simulator.facts:
            if f.name == name:
                return f.decoy
        return ""

    def checkpoint(self) -> Checkpoint:
        """A resumable handle on the episode so far."""
        saved = getattr(self.user, "snapshot", None)
        return Checkpoint(self.ws.snapshot(), self.turn, tuple(sorted(self.revealed.items())),
                          frozenset(self.fired), tuple(self.notices), self.stage,
                          saved() if callable(saved) else None)

    def resume(self, cp: Checkpoint) -> None:
        """Return the episode exactly to a checkpoint."""
        self.ws.restore(cp.state)
        self.turn = cp.turn
        self.stage = cp.stage
        if cp.user is not None and callable(getattr(self.user, "restore", None)):
            self.user.restore(cp.user)
        self.revealed = dict(cp.revealed)
        self.fired = set(cp.fired)
        self.notices = list(cp.notices)

    def _fire_due(self) -> None:
        now = self.ws.state.now
        for ev in self._timed:
            if ev.id not in self.fired and ev.at_time <= now:  # type: ignore[operator]
                self._apply(ev)
                if ev.announce:
                    self.notices.append(ev.announce)

    def _apply(self, ev: WorldEvent) -> None:
        self.fired.add(ev.id)
        try:
            self.ws.apply_world_change(ev.changes, note=ev.announce or ev.note or ev.id)
        except SpecError as e:
            index = next(i for i, e2 in enumerate(self.spec.events) if e2.id == ev.id)
            raise SpecError(f"events[{index}].{e.path}", e.problem) from None
        if ev.at_time is None and ev.announce:
            self.notices.append(ev.announce)


@dataclass
class StepOutcome:
    """What one reference step did: its tool result (calls) or the user's reply (messages)."""

    index: int
    result: ToolResult | None = None
    reply: str | None = None

    @property
    def changed_state(self) -> bool:
        """Whether the step was a call that changed records."""
        return self.result is not None and bool(self.result.diff)


@dataclass
class Run:
    """A finished run of (possibly altered) reference steps."""

    driver: SpecDriver
    final_answer: str | None
    outcomes: list[StepOutcome] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)

    @property
    def workspace(self) -> Workspace:
        return self.driver.ws


def run_steps(driver: SpecDriver, steps: Sequence[Any], final_answer: str | None, first_index: int = 0,
              keep_checkpoints: bool = False) -> Run:
    """Execute steps (call / say / ask) through a started driver; placeholders are filled as it goes."""
    run = Run(driver, None)
    for offset, step in enumerate(steps):
        if keep_checkpoints:
            run.checkpoints.append(driver.checkpoint())
        i = first_index + offset
        if isinstance(step, CallStep):
            run.outcomes.append(StepOutcome(i, result=driver.call(step.tool, driver.fill(step.args))))
        elif isinstance(step, (SayStep, AskStep)):
            run.outcomes.append(StepOutcome(i, reply=driver.message(driver.fill(step.text))))
        elif isinstance(step, EndStageStep):
            run.outcomes.append(StepOutcome(i, reply=driver.end_stage(driver.fill(step.text))))
        else:  # pragma: no cover - the spec model admits no other step
            raise TypeError(f"unknown step {step!r}")
    if keep_checkpoints:
        run.checkpoints.append(driver.checkpoint())
    run.final_answer = driver.fill(final_answer) if final_answer is not None else None
    if run.final_answer is not None:
        driver.ws.add_message("assistant", run.final_answer)
    return run


def run_reference(spec: ScriptedSpec, workspace: Workspace | None = None, withhold_answers: bool = False,
                  keep_checkpoints: bool = False, solution: ReferenceSolution | None = None) -> Run:
    """Run the spec's reference solution (or `solution`, e.g. one of its alternatives) from the start
    state (a fresh workspace unless given one).

    World-event changes that do not apply raise SpecError naming the event.
    """
    solution = solution if solution is not None else spec.reference
    driver = SpecDriver(spec, workspace, withhold_answers)
    driver.start()
    return run_steps(driver, solution.steps, solution.final_answer, keep_checkpoints=keep_checkpoints)
