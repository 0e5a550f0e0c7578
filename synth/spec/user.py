"""The scripted simulated user: reveals hidden facts when asked about them, and sends follow-ups."""

from __future__ import annotations

from functools import cached_property

import regex

from .parts import HiddenFact, UserSimulator


class ScriptedUser:
    """Answers the agent from a spec's UserSimulator, deterministically and without a model.

    A hidden fact is revealed when the agent's message contains one of its `reveal_keywords`
    (case-insensitive, whole words); a fact with a `vague` answer gets that first, and its precise
    answer only when the agent asks again (presses). The reply is the answers, then the scripted
    follow-up of the turn being opened; with neither, the simulator's default reply. What the user
    has been asked is the one piece of state (`asked`, saved by `snapshot` and put back by `restore`).
    """

    def __init__(self, sim: UserSimulator) -> None:
        self.sim = sim
        self.asked: dict[str, int] = {}  # fact name -> times the agent has asked about it

    @cached_property
    def _patterns(self) -> list[tuple[HiddenFact, regex.Pattern[str]]]:
        out = []
        for fact in self.sim.facts:
            alts = "|".join(regex.escape(k.strip()) for k in fact.reveal_keywords if k.strip())
            out.append((fact, regex.compile(rf"(?<!\w)(?:{alts})(?!\w)", regex.I)))
        return out

    def revealed_by(self, message: str) -> list[HiddenFact]:
        """The facts whose keywords appear in `message` (asked about, whether the answer is vague or precise)."""
        return [fact for fact, rx in self._patterns if rx.search(message)]

    def reply(self, message: str, opening_turn: int, withhold: bool = False) -> tuple[str, list[HiddenFact]]:
        """The user's reply to `message`, which opens turn `opening_turn`, and the facts it reveals precisely.

        With `withhold` the user reveals nothing (used to prove a task needs the user's answers).
        """
        asked = [] if withhold else self.revealed_by(message)
        parts, facts = [], []
        for f in asked:
            self.asked[f.name] = self.asked.get(f.name, 0) + 1
            if f.vague and self.asked[f.name] == 1:
                parts.append(f.vague)
            else:
                parts.append(f.answer)
                facts.append(f)
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

    def snapshot(self) -> tuple[tuple[str, int], ...]:
        """What the user has been asked so far, for a checkpoint."""
        return tuple(sorted(self.asked.items()))

    def restore(self, saved: tuple[tuple[str, int], ...]) -> None:
        """Return to a `snapshot`."""
        self.asked = dict(saved)
