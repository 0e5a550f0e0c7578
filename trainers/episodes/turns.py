"""What a policy and the runner exchange: the agent's turn, its tool calls, and what it knows of the episode.

A policy sees the transcript (Hugging Face chat dicts) and the offered tools (OpenAI format) and
answers with an `AgentTurn`: some text, zero or more tool calls, optionally the tokens it produced.
A turn with calls is acted on; a turn without calls is a message to the user, who may reply (the
conversation goes on) or be satisfied (the episode ends with that message as the final answer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from synth.spec import EnvironmentSpec

from workspace_sim.record import PolicyInfo


@dataclass(frozen=True)
class PolicyCall:
    """One tool call of a turn; `arguments` is a dict, or the raw text when the model sent malformed JSON."""

    name: str
    arguments: dict[str, Any] | str
    id: str | None = None


@dataclass
class TurnTokens:
    """The token ids (and optionally log-probs) a model produced for a turn."""

    completion_ids: list[int]
    prompt_ids: list[int] | None = None
    logprobs: list[float] | None = None


@dataclass
class AgentTurn:
    """One assistant turn.

    `expects_reply` is a hint from policies that know (the teacher): True for a question or a
    progress report, False for the final answer; None leaves it to the user simulator. `truncated`
    marks output cut off by the model's token limit. `error` means the policy failed for good
    (e.g. its endpoint stayed down after every retry); the runner stops with `policy_error`.
    """

    content: str | None = None
    calls: list[PolicyCall] = field(default_factory=list)
    tokens: TurnTokens | None = None
    expects_reply: bool | None = None
    truncated: bool = False
    error: str | None = None


@dataclass(frozen=True)
class EpisodeContext:
    """What a policy may know when an episode starts.

    `spec` is there for the teacher (which replays the reference solution); learned policies must
    use only the transcript and tools. `fill` replaces {{fact:NAME}} placeholders with what the
    user has revealed so far (or the decoy), as the spec's turn semantics define.
    """

    episode_id: str
    seed: int
    spec: EnvironmentSpec
    tools: list[dict[str, Any]]
    fill: Callable[[Any], Any]


@runtime_checkable
class Policy(Protocol):
    """An agent: told an episode starts, then asked for one turn at a time."""

    def info(self) -> PolicyInfo:
        """The policy's name and settings, as written into the record header."""
        ...

    def start(self, context: EpisodeContext) -> None:
        """Prepare for a new episode (reset plans, seed randomness)."""
        ...

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """The next turn, given the transcript so far and the tools on offer; never raises.

        A policy whose `sees_images` attribute is true is shown the images tool results returned: such a tool
        message's content is a list of parts, `{"type": "text", "text": ...}` and `{"type": "image", "image":
        "data:<mime>;base64,..."}` (`trainers.media_parts.policy_view`); one whose `hears_audio` is true is shown
        the audio clips as `{"type": "audio", "audio": "data:...", "text": <placeholder>}` parts; other policies see
        the text placeholders.
        """
        ...


def shown_media(policy: object) -> tuple[str, ...]:
    """The kinds of media parts `policy` is shown in tool results: "image" when it `sees_images`, "audio" when it
    `hears_audio` (both attributes optional, false when absent)."""
    return tuple(k for k, attr in (("image", "sees_images"), ("audio", "hears_audio")) if getattr(policy, attr, False))
