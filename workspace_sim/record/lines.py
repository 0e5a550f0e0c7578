"""The episode record's line types: `header`, `event`, `step`, `final` (and the chat messages inside).

Every line of a record file is one of these, validated on reading (unknown fields are errors, so a
typo never passes silently). The field order of each model is the order its line is written in; the
field descriptions are the format's reference (docs/episode-record.md lists them line by line).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

RECORD_VERSION = 1

# ----------------------------------------------------------------------------------------------
# Chat messages (Hugging Face format: tool call arguments are dicts)
# ----------------------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FunctionCall(_Strict):
    """The function part of a tool call: the tool's name and its arguments as a JSON object."""

    name: str = Field(min_length=1, description="The tool called.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The arguments, a JSON object (never a string).")


class ToolCall(_Strict):
    """One tool call of an assistant turn, `{"type": "function", "function": {...}}` (id optional)."""

    type: Literal["function"] = Field("function", description="Always 'function'.")
    function: FunctionCall = Field(description="The tool's name and arguments.")
    id: str | None = Field(None, description="The call's id, answered by a tool message's tool_call_id (optional).")


class ChatMessage(_Strict):
    """One message of the transcript in the Hugging Face chat format."""

    role: Literal["system", "user", "assistant", "tool"] = Field(description="Who speaks.")
    content: str | None = Field(None, description="The text (None for an assistant turn that only calls tools).")
    tool_calls: list[ToolCall] | None = Field(None, description="The tools an assistant turn calls.")
    tool_call_id: str | None = Field(None, description="The call a tool message answers.")
    name: str | None = Field(None, description="The tool a tool message comes from.")

    @model_validator(mode="after")
    def _shape(self) -> "ChatMessage":
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only assistant messages carry tool_calls, not {self.role}")
        if self.role == "tool" and self.content is None:
            raise ValueError("a tool message needs content (the tool's result text)")
        if self.role in ("system", "user") and self.content is None:
            raise ValueError(f"a {self.role} message needs content")
        return self

    def to_hf(self) -> dict[str, Any]:
        """The message as a plain dict, leaving out fields that are unset."""
        return self.model_dump(mode="json", exclude_none=True)


class PolicyInfo(_Strict):
    """Which policy (agent) produced the episode and with which settings."""

    name: str = Field(min_length=1, description="e.g. 'teacher', 'openai:gpt-4.1-mini', 'hf:/models/student'.")
    settings: dict[str, Any] = Field(default_factory=dict, description="temperature, max_turns, ...")


class HeaderLine(_Strict):
    """First line of an episode: what was run, by whom, with which tools."""

    type: Literal["header"] = Field("header", description="The line type.")
    record_version: int = Field(RECORD_VERSION, description="The format version; a reader refuses a newer one.")
    episode_id: str = Field(min_length=1, description="Unique across all files read together.")
    env_id: str = Field(min_length=1, description="The environment's id (the unit of train/validation splits).")
    env_hash: str = Field("", description="Content hash of the environment spec (detects edited environments).")
    initial_state_hash: str = Field("", description="Workspace.content_hash before the first step.")
    initial_predicates: list[bool] = Field(default_factory=list, description="Predicates on the initial state.")
    initial_score: float = Field(0.0, ge=0.0, le=1.0, description="Weighted predicate score of the initial state.")
    capabilities: list[str] = Field(default_factory=list, description="Capability tags of the environment.")
    policy: PolicyInfo = Field(description="Who acted, with which settings.")
    seed: int = Field(0, description="The episode's seed.")
    group: str | None = Field(None, description="Rollout group (default: the env id), for group normalisation.")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="OpenAI-format schemas from the registry.")

    @field_validator("record_version")
    @classmethod
    def _version(cls, v: int) -> int:
        if v > RECORD_VERSION:
            raise ValueError(f"record_version {v} is newer than this reader ({RECORD_VERSION}); upgrade coworkenv")
        return v

    @field_validator("tools")
    @classmethod
    def _tools(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for i, t in enumerate(v):
            fn = t.get("function") if isinstance(t, dict) else None
            if t.get("type") != "function" or not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise ValueError(f"tools[{i}] must be {{'type': 'function', 'function': {{'name': ...}}}}")
        return v


class ErrorLine(_Strict):
    """A failed call's stable error code and the message the agent saw."""

    code: str = Field(description="The stable error code (policy_violation, fault, not_found, ...).")
    message: str = Field(description="The message the agent saw.")


class EventLine(_Strict):
    """One workspace event (a tool call, a conversation message, a world change, or a stage's close)."""

    type: Literal["event"] = Field("event", description="The line type.")
    episode_id: str = Field(description="The episode the event belongs to.")
    index: int = Field(ge=0, description="Position in the workspace event log.")
    turn: int = Field(ge=0, description="The assistant turn (step) this event belongs to, from 0.")
    kind: Literal["call", "message", "world", "stage"] = Field(
        description="A tool call, a conversation message, a change from outside, or the close of a working day.")
    sim_time: str = Field(description="Simulated time of the event (ISO).")
    tool: str | None = Field(None, description="The tool called (calls only).")
    args: Any = Field(None, description="The call's arguments; a stage event's {stage: ID}; a world event's {note}, "
                                        "with agent: true when its changes stand in for the agent's.")
    ok: bool = Field(True, description="Whether the call succeeded.")
    result: Any = Field(None, description="The call's structured data (when ok).")
    error: ErrorLine | None = Field(None, description="Why the call failed (when not ok).")
    policy: str | None = Field(None, description="The policy a blocked call violated.")
    read: dict[str, list[str]] | None = Field(None, description="Records the call showed the agent: {table: [keys]}.")
    via: list[dict[str, Any]] | None = Field(None, description="Other tools the call ran through, as {tool, args} "
                                             "(a note shared by mail runs send_email).")
    diff: list[dict[str, Any]] = Field(default_factory=list, description="Diff.to_json() of the event.")
    role: str | None = Field(None, description="Who spoke (messages only).")
    content: str | None = Field(None, description="What was said (messages only).")

    @classmethod
    def from_event(cls, event: Any, episode_id: str, turn: int) -> "EventLine":
        """The line for a `workspace_sim.Event` (its `to_json()` plus episode and turn)."""
        return cls.model_validate({**event.to_json(), "type": "event", "episode_id": episode_id, "turn": turn})


class StepLine(_Strict):
    """The state after one step (an assistant turn and the calls it made): predicates and state hash."""

    type: Literal["step"] = Field("step", description="The line type.")
    episode_id: str = Field(description="The episode the step belongs to.")
    turn: int = Field(ge=0, description="The step (assistant turn), from 0.")
    predicates: list[bool] = Field(description="Pass/fail of each predicate, in the evaluation's order.")
    score: float = Field(ge=0.0, le=1.0, description="Weighted fraction of predicates passing.")
    state_hash: str = Field(description="Workspace.content_hash after the step (GiGPO step groups).")


class TurnTokens(_Strict):
    """Token ids (and optionally log-probs) the policy produced in one assistant turn."""

    turn: int = Field(ge=0, description="The assistant turn, from 0.")
    prompt_ids: list[int] | None = Field(None, description="The prompt's token ids, where the policy gives them.")
    completion_ids: list[int] = Field(description="The completion's token ids.")
    logprobs: list[float] | None = Field(None, description="One log-probability per completion token.")

    @model_validator(mode="after")
    def _lengths(self) -> "TurnTokens":
        if self.logprobs is not None and len(self.logprobs) != len(self.completion_ids):
            raise ValueError(f"logprobs has {len(self.logprobs)} entries for {len(self.completion_ids)} tokens")
        return self


class ViolationInfo(_Strict):
    """A call blocked by a workplace policy."""

    event_index: int = Field(description="The blocked call's event index.")
    tool: str = Field(description="The tool called.")
    policy: str = Field(description="The policy that blocked it.")
    message: str = Field(description="The message the agent saw.")


class FaultInfo(_Strict):
    """An injected fault the agent met; `handled` when a later call of the same tool succeeded."""

    event_index: int = Field(description="The failed call's event index.")
    tool: str = Field(description="The tool the fault hit.")
    message: str = Field(description="The message the agent saw.")
    handled: bool = Field(description="Whether a later call of the same tool succeeded.")


ERROR_STOPS = ("error", "policy_error")
StopReason = Literal["answered", "max_turns", "max_tokens", "max_tool_calls", "timeout", "policy_error", "user_ended",
                     "error"]


class FinalLine(_Strict):
    """Last line of an episode: transcript, evaluation, reward and bookkeeping."""

    type: Literal["final"] = Field("final", description="The line type.")
    episode_id: str = Field(description="The episode it ends.")
    messages: list[ChatMessage] = Field(description="The transcript in the Hugging Face chat format.")
    evaluation: dict[str, Any] = Field(description="workspace_sim.predicates Evaluation.to_json().")
    reward: float = Field(description="The reward the run computed.")
    stop_reason: StopReason = Field(description="Why the episode stopped.")
    stop_detail: str | None = Field(None, description="Why it stopped, in words (the limit hit, the error met).")
    final_answer: str | None = Field(None, description="The agent's last answer to the user.")
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds: total, policy, tools, ...")
    tokens: list[TurnTokens] = Field(default_factory=list, description="Token ids and log-probs per assistant turn.")
    policy_violations: list[ViolationInfo] = Field(default_factory=list, description="Each call a policy blocked.")
    fault_errors: list[FaultInfo] = Field(default_factory=list, description="Each injected fault the agent met.")

    @field_validator("evaluation")
    @classmethod
    def _evaluation(cls, v: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(v.get("passed"), bool):
            raise ValueError("evaluation needs a boolean 'passed'")
        if not isinstance(v.get("score"), (int, float)):
            raise ValueError("evaluation needs a numeric 'score'")
        return v


Line = Annotated[Union[HeaderLine, EventLine, StepLine, FinalLine], Field(discriminator="type")]
LINE_TYPES = ("header", "event", "step", "final")
LINE = TypeAdapter(Line)
"""Validates any one line (a dict) into its model."""


class RecordError(ValueError):
    """A malformed or unreadable episode record; the message names the file, line and field."""


RecordReadError = RecordError  # the name the MCP server's readers knew it by

