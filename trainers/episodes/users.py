"""Simulated users: the scripted one from the spec, and one played by an LLM with a persona and hidden facts.

Both meet the interface `synth.SpecDriver` asks of its user (`reply`, `followup`), so the driver's
turn semantics (follow-ups, clock moves, world events, announcements) hold whoever plays the user.
They add `satisfied(message, opening_turn)`: whether the agent's message ends the conversation
(the user has nothing to answer and nothing left to ask), which the runner asks before replying.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from synth.spec import Followup, HiddenFact, UserSimulator
from synth.spec import ScriptedUser

from .llm import ChatEndpoint, LLMError, LLMSettings

DONE = "DONE"


class UserSimError(RuntimeError):
    """The simulated user could not answer (its endpoint failed); the message says why."""


@runtime_checkable
class SimulatedUser(Protocol):
    """What the runner needs from a user simulator (the first two are SpecDriver's interface)."""

    def reply(self, message: str, opening_turn: int, withhold: bool = False) -> tuple[str, list[HiddenFact]]:
        """The reply to the agent's message, which opens turn `opening_turn`, and the facts it reveals."""
        ...

    def followup(self, turn: int) -> Followup | None:
        """The scripted follow-up that opens `turn`, or None."""
        ...

    def satisfied(self, message: str, opening_turn: int, final: bool = True) -> bool:
        """Whether the conversation ends with this message (nothing to answer, nothing left to ask). With
        `final` False the message would only close a working day (days remain), so follow-ups still to come
        do not hold it open: they arrive with the turn they belong to."""
        ...

    def describe(self) -> dict[str, Any]:
        """Settings for the record (never the hidden facts)."""
        ...


def _more_followups(sim: UserSimulator, opening_turn: int) -> bool:
    return any(f.turn >= opening_turn for f in sim.followups)


class ScriptedUserSim(ScriptedUser):
    """The spec's scripted user: reveals a fact when asked about it; satisfied once nothing is revealed or left."""

    def satisfied(self, message: str, opening_turn: int, final: bool = True) -> bool:
        """True when the message reveals no hidden fact and (when `final`) no scripted follow-up remains."""
        return not self.revealed_by(message) and not (final and _more_followups(self.sim, opening_turn))

    def describe(self) -> dict[str, Any]:
        """`{"kind": "scripted"}`."""
        return {"kind": "scripted"}


def user_system_prompt(sim: UserSimulator, request: str, user_name: str) -> str:
    """The instructions for an LLM playing the user: persona, the original request, hidden facts, when to stop."""
    facts = "\n".join(f"- {f.name}: the first time you are asked, say only \"{f.vague}\"; when asked again, "
                      f"{f.answer}" if f.vague else f"- {f.name}: {f.answer}" for f in sim.facts) or "- (none)"
    persona = sim.persona or f"{user_name}, a busy colleague"
    return (
        f"You are {persona}. You asked an AI assistant, who works in your files, mail, calendar and tickets, "
        f"to do this:\n\n{request}\n\n"
        "Only you know the facts below. Never volunteer them: reveal a fact only when the assistant asks "
        "about it, and then answer with exactly what is written here (where a fact has a first, vague answer, "
        "give that until the assistant asks again).\n"
        f"{facts}\n\n"
        "Answer briefly, as this person would, in plain text. Do not do the work yourself and do not invent "
        f"facts. When the assistant reports that it has finished, or says something that needs no answer, "
        f"reply with exactly {DONE}."
    )


class LLMUserSim:
    """A user played by a model behind an OpenAI-compatible endpoint, told never to volunteer hidden facts.

    The model sees the conversation from the user's side (the agent's messages as `user`, its own
    as `assistant`). A fact counts as revealed when its value appears in the reply. Scripted
    follow-ups of the spec are appended to the reply of the turn they open, as with the scripted
    user, so both simulators keep the spec's turn semantics.
    """

    def __init__(self, sim: UserSimulator, request: str, user_name: str, settings: LLMSettings,
                 endpoint: ChatEndpoint | None = None, seed: int | None = None) -> None:
        self.sim = sim
        self.settings = settings
        self.endpoint = endpoint or ChatEndpoint(settings)
        self.seed = seed
        self.system = user_system_prompt(sim, request, user_name)
        self.history: list[dict[str, str]] = [{"role": "assistant", "content": request}]
        self._pending: tuple[str, int, str] | None = None  # (message, turn, model's answer) asked in satisfied()

    def describe(self) -> dict[str, Any]:
        """`{"kind": "llm", "model", "base_url"}` (no key, no facts)."""
        return {"kind": "llm", "model": self.settings.model, "base_url": self.settings.base_url}

    def followup(self, turn: int) -> Followup | None:
        """The scripted follow-up that opens `turn`, or None."""
        return next((f for f in self.sim.followups if f.turn == turn), None)

    def _ask(self, message: str, opening_turn: int) -> str:
        if self._pending is not None and self._pending[:2] == (message, opening_turn):
            return self._pending[2]
        messages = [{"role": "system", "content": self.system}, *self.history, {"role": "user", "content": message}]
        try:
            choice = self.endpoint.complete(messages, seed=self.seed)
        except LLMError as e:
            raise UserSimError(f"the simulated user's model failed: {e.message}") from None
        msg = choice.message
        text = (msg.content or getattr(msg, "refusal", None) or "").strip()
        self._pending = (message, opening_turn, text)
        return text

    def satisfied(self, message: str, opening_turn: int, final: bool = True) -> bool:
        """True when the model answers DONE and (when `final`) no scripted follow-up remains."""
        answer = self._ask(message, opening_turn)
        return _is_done(answer) and not (final and _more_followups(self.sim, opening_turn))

    def reply(self, message: str, opening_turn: int, withhold: bool = False) -> tuple[str, list[HiddenFact]]:
        """The model's reply (plus the follow-up of the opening turn) and the facts whose values it contains."""
        answer = "" if withhold else self._ask(message, opening_turn)
        self._pending = None
        if _is_done(answer):
            answer = ""
        follow = self.followup(opening_turn)
        parts = [p for p in (answer, follow.text if follow else "") if p]
        text = " ".join(parts) if parts else self.sim.default_reply
        self.history += [{"role": "user", "content": message}, {"role": "assistant", "content": text}]
        revealed = [f for f in self.sim.facts if f.value.casefold() in text.casefold()]
        return text, revealed


def _is_done(answer: str) -> bool:
    return answer.strip().strip(".!").upper() == DONE
