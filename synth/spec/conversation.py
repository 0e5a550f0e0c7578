"""A spec's conversation for an MCP-only episode: the `mcp_server.control.Conversation` of a spec.

The server routes the agent's `ask_user` calls and its tool calls here; the turn semantics (the
request opening turn 0, replies revealing hidden facts, follow-ups moving the clock, world events
at a turn or a simulated time, announcements delivered with the next reply) are `SpecDriver`'s,
the same code the validator and the episode runners use, so an MCP-only episode of a spec meets
exactly what a runner's episode meets.
"""

from __future__ import annotations

import copy
from typing import Any

from workspace_sim import Workspace

from .driver import Checkpoint, ScriptedSpec, SpecDriver


class SpecConversation:
    """One episode's conversation with a spec's simulated user and world, over a workspace.

    `user` replaces the spec's scripted user (anything with SpecDriver's `reply` and `followup`,
    e.g. an LLM user); it may add `describe()` for the record.
    """

    def __init__(self, spec: ScriptedSpec, workspace: Workspace, user: Any = None,
                 driver: SpecDriver | None = None) -> None:
        self.spec = spec
        self.driver = driver if driver is not None else SpecDriver(spec, workspace)
        if user is not None:
            self.driver.user = user

    def start(self) -> str:
        """Open turn 0: log the request and apply the world events due at the start."""
        return self.driver.start()

    def before_call(self) -> None:
        """Apply the timed world events due before the agent's next call."""
        self.driver.fire_due()

    def ask(self, message: str) -> str:
        """The agent's message to the user and the user's reply (which opens the next turn)."""
        return self.driver.message(message)

    def submit(self, answer: str) -> str | None:
        """The agent says it has done what it was asked (`answer`). Returns the user's next message when the
        episode goes on, else None: the episode is over and `answer` is its final answer, for the caller to
        log and evaluate. While working days remain, the answer is the day's report and closes the day (the
        next day's message comes back, with a follow-up due at the turn it opens, as `end_stage` gives it);
        on the last (or only) day the user replies while it has more to say (a scripted follow-up still to
        come, or, for a user that can judge it, `satisfied()` says no)."""
        d = self.driver
        if d.stages_left:  # a follow-up of a later turn stays due; it comes with the turn that reaches it
            return d.end_stage(answer)
        satisfied = getattr(d.user, "satisfied", None)
        if callable(satisfied):
            more = not satisfied(answer, d.turn + 1)
        else:
            more = any(f.turn > d.turn for f in self.spec.user_simulator.followups)
        return d.message(answer) if more else None

    def status(self) -> dict[str, Any]:
        """The turn the conversation is in (0 until the agent first asks), and in a multi-day scenario the
        day (1-based) and how many there are."""
        out: dict[str, Any] = {"turn": self.driver.turn}
        if self.spec.stages:
            out.update(day=self.driver.stage + 1, days=len(self.spec.stages),
                       stage=self.spec.stages[self.driver.stage].id)
        return out

    def describe(self) -> dict[str, Any]:
        """Who plays the user: the user's own `describe()`, else scripted."""
        describe = getattr(self.driver.user, "describe", None)
        return describe() if callable(describe) else {"kind": "scripted"}

    def checkpoint(self) -> Checkpoint:
        """The driver's checkpoint (workspace state, turn, revealed facts, fired events, notices)."""
        return self.driver.checkpoint()

    def resume(self, checkpoint: Checkpoint, workspace: Workspace) -> None:
        """Return to a checkpoint over `workspace`."""
        self.driver.ws = workspace
        self.driver.resume(checkpoint)

    def fork(self, workspace: Workspace) -> "SpecConversation":
        """An independent copy over a forked workspace; the user is copied with its own conversation history."""
        driver = SpecDriver(self.spec, workspace)
        user = copy.copy(self.driver.user)
        for name, value in vars(user).items():  # e.g. an LLM user's history: the copies must not share it
            if isinstance(value, (list, dict)):
                setattr(user, name, copy.copy(value))
        driver.user = user
        cp = self.driver.checkpoint()
        driver.turn, driver.revealed, driver.stage = cp.turn, dict(cp.revealed), cp.stage
        driver.fired, driver.notices = set(cp.fired), list(cp.notices)
        return SpecConversation(self.spec, workspace, driver=driver)
