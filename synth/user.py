"""The scripted simulated user: reveals hidden facts when asked about them, and sends follow-ups."""

from __future__ import annotations

from functools import cached_property

import regex

from .spec import HiddenFact, UserSimulator


class ScriptedUser:
    """Answers the agent from a spec's UserSimulator, deterministically and without a model.

    A hidden fact is revealed when the agent's message contains one of its `reveal_keywords`
    (case-insensitive, whole words). The reply is the revealed facts' answers, then the scripted
    follow-up of the turn being opened; with neither, the simulator's default reply.
    """

    def __init__(self, sim: UserSimulator) -> None:
        self.sim = sim

    @cached_property
    def _patterns(self) -> list[tuple[HiddenFact, regex.Pattern[str]]]:
        out = []
        for fact in self.sim.facts:
            alts = "|".join(regex.escape(k.strip()) for k in fact.reveal_keywords if k.strip())
            out.append((fact, regex.compile(rf"(?<!\w)(?:{alts})(?!\w)", regex.I)))
        return out

    def revealed_by(self, message: str) -> list[HiddenFact]:
        """The facts whose keywords appear in `message`."""
        return [fact for fact, rx in self._patterns if rx.search(message)]

    def reply(self, message: str, opening_turn: int, withhold: bool = False) -> tuple[str, list[HiddenFact]]:
        """The user's reply to `message`, which opens turn `opening_turn`, and the facts it reveals.

        With `withhold` the user reveals nothing (used to prove a task needs the user's answers).
        """
        facts = [] if withhold else self.revealed_by(message)
        parts = [f.answer for f in facts]
        follow = self.followup(opening_turn)
        if follow is not None:
            parts.append(follow.text)
        return (" ".join(parts) if parts else self.sim.default_reply), facts

    def followup(self, turn: int):  # type: ignore[no-untyped-def]
        """The scripted follow-up that opens `turn`, or None."""
        for f in self.sim.followups:
            if f.turn == turn:
                return f
        return None
