"""Blind baselines as runner policies: spray, first_pick, blind_writer and answer_only.

Each wraps the deterministic agent of the same name in `synth.blind_check` (where validation runs them too, without
a runner), so a policy's calls and answers are exactly the agent's: the same environment gives the same episode.
What each does is described there and in docs/predicates.md, *Blind baselines*.
"""

from __future__ import annotations

from typing import Any

from synth.blind_check import BLIND_AGENTS, BlindAgent

from workspace_sim.record import PolicyInfo
from ..turns import AgentTurn, EpisodeContext, PolicyCall


class _Blind:
    """A runner policy around one blind agent, started afresh for every episode."""

    name = "blind"

    def __init__(self) -> None:
        self._agent: BlindAgent | None = None

    def info(self) -> PolicyInfo:
        """The policy's name; it has no settings."""
        return PolicyInfo(name=self.name, settings={})

    def start(self, context: EpisodeContext) -> None:
        """Start the agent on the episode's spec and fact filler."""
        self._agent = BLIND_AGENTS[self.name](context.spec, context.fill)

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """The agent's next turn as an AgentTurn (calls, or a message with its reply hint)."""
        if self._agent is None:
            return AgentTurn(error=f"{self.name} was asked to act before an episode started")
        turn = self._agent.act(messages, tools)
        if turn.calls:
            return AgentTurn(calls=[PolicyCall(tool, args) for tool, args in turn.calls])
        return AgentTurn(content=turn.content, expects_reply=turn.expects_reply)


class SprayPolicy(_Blind):
    """Every listing once, then the kitchen sink mailed to every address seen, and answered."""

    name = "spray"


class FirstPickPolicy(_Blind):
    """The listings, then the reference's steps with every value replaced by the first of its type seen."""

    name = "first_pick"


class BlindWriterPolicy(_Blind):
    """The reference's writes and sends, no reads: values the request shows are kept, the rest made up."""

    name = "blind_writer"


class AnswerOnlyPolicy(_Blind):
    """Every listing once, then an answer naming every entity seen; no action."""

    name = "answer_only"


BLIND_POLICIES: dict[str, type[_Blind]] = {p.name: p for p in (SprayPolicy, FirstPickPolicy, BlindWriterPolicy,
                                                                 AnswerOnlyPolicy)}
assert set(BLIND_POLICIES) == set(BLIND_AGENTS)
