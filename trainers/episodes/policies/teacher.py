"""The teacher: replays the environment's reference solution, asking the user and filling in what they reveal."""

from __future__ import annotations

from typing import Any

from synth.spec import AskStep, CallStep, EndStageStep, SayStep

from workspace_sim.record import PolicyInfo
from ..turns import AgentTurn, EpisodeContext, PolicyCall


class TeacherPolicy:
    """Plays the reference solution turn by turn.

    Consecutive tool calls are grouped `calls_per_turn` to a turn (1: one call per turn, as an
    agent that reads each result; 0: every consecutive call in one turn, as parallel tool calls).
    Questions and progress reports are messages that await the user's reply; a day's closing report
    (end_stage) is a message that needs none, so the next working day opens; placeholders
    ({{fact:NAME}}) are filled when the step is played, i.e. after the user has answered.
    """

    def __init__(self, calls_per_turn: int = 1) -> None:
        if not isinstance(calls_per_turn, int) or calls_per_turn < 0:
            raise ValueError(f"calls_per_turn must be a whole number >= 0 (0: no limit), got {calls_per_turn!r}")
        self.calls_per_turn = calls_per_turn
        self._ctx: EpisodeContext | None = None
        self._next = 0
        self._done = False
        self._plan: list[Any] = []

    def info(self) -> PolicyInfo:
        """`teacher` with its grouping setting."""
        return PolicyInfo(name="teacher", settings={"calls_per_turn": self.calls_per_turn})

    def start(self, context: EpisodeContext) -> None:
        """Start again at the first reference step."""
        self._ctx, self._next, self._done = context, 0, False
        self._plan = self._steps(context.spec)

    def _steps(self, spec: Any) -> list[Any]:
        """The steps this policy plays: the reference's (variants change them)."""
        return list(spec.reference.steps)


    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """The next reference step(s) as a turn, then the reference's final answer."""
        if self._ctx is None:
            return AgentTurn(error="the teacher was asked to act before an episode started")
        steps = self._plan
        fill = self._ctx.fill
        if self._next >= len(steps):
            final = self._ctx.spec.reference.final_answer
            self._done = True
            return AgentTurn(content=fill(final) if final is not None else None, expects_reply=False)
        step = steps[self._next]
        if isinstance(step, (SayStep, AskStep)):
            self._next += 1
            return AgentTurn(content=fill(step.text), expects_reply=True)
        if isinstance(step, EndStageStep):
            self._next += 1
            return AgentTurn(content=fill(step.text), expects_reply=False)
        calls: list[PolicyCall] = []
        while self._next < len(steps) and isinstance(steps[self._next], CallStep):
            if self.calls_per_turn and len(calls) == self.calls_per_turn:
                break
            s = steps[self._next]
            assert isinstance(s, CallStep)
            calls.append(PolicyCall(s.tool, fill(dict(s.args))))
            self._next += 1
        return AgentTurn(calls=calls)


class StalePolicy(TeacherPolicy):
    """The reference played by an agent that never re-reads after a silent change: every step that has
    `stale_args` sends those instead (what it would send from what it read earlier). A multi-day
    environment whose silent change matters fails it; validation requires that."""

    def info(self) -> PolicyInfo:
        """`stale` with its grouping setting."""
        return PolicyInfo(name="stale", settings={"calls_per_turn": self.calls_per_turn})

    def _steps(self, spec: Any) -> list[Any]:
        return [s.model_copy(update={"args": s.stale_args}) if isinstance(s, CallStep) and s.stale_args is not None
                else s for s in spec.reference.steps]


class ForgetfulPolicy(TeacherPolicy):
    """The reference played by an agent that follows only the latest instruction: the steps marked
    `recalls` (they carry out an earlier turn's or day's instruction) are left out."""

    def info(self) -> PolicyInfo:
        """`forgetful` with its grouping setting."""
        return PolicyInfo(name="forgetful", settings={"calls_per_turn": self.calls_per_turn})

    def _steps(self, spec: Any) -> list[Any]:
        return [s for s in spec.reference.steps if not (isinstance(s, CallStep) and s.recalls)]
