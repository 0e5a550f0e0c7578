"""The episode record: typed JSONL lines (header, event, step, final) and the in-memory whole.

One episode is written as one `header` line, then for every step its `event` lines (tool calls,
conversation turns and world changes, as the workspace logged them) and a `step` line (the
predicate vector and state hash after the step), then one `final` line (the chat transcript in the
Hugging Face format, the evaluation, the reward, why it stopped, timings, optional tokens and
log-probs, policy violations and fault errors). A file may hold one episode or many; every line
names its `episode_id`, so lines of episodes written in parallel may even interleave. The format
is documented line by line in docs/episode-record.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Iterable, Iterator, Literal, Mapping, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from workspace_sim.core.blobs import BlobError, BlobReader, BlobStore
from workspace_sim.text.jsontext import safe_dumps

RECORD_VERSION = 1

# ----------------------------------------------------------------------------------------------
# Chat messages (Hugging Face format: tool call arguments are dicts)
# ----------------------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FunctionCall(_Strict):
    """The function part of a tool call: the tool's name and its arguments as a JSON object."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolCall(_Strict):
    """One tool call of an assistant turn, `{"type": "function", "function": {...}}` (id optional)."""

    type: Literal["function"] = "function"
    function: FunctionCall
    id: str | None = None


class ChatMessage(_Strict):
    """One message of the transcript in the Hugging Face chat format."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None

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


# ----------------------------------------------------------------------------------------------
# The four line types
# ----------------------------------------------------------------------------------------------


class PolicyInfo(_Strict):
    """Which policy (agent) produced the episode and with which settings."""

    name: str = Field(min_length=1, description="e.g. 'teacher', 'openai:gpt-4.1-mini', 'hf:/models/student'.")
    settings: dict[str, Any] = Field(default_factory=dict, description="temperature, max_turns, ...")


class HeaderLine(_Strict):
    """First line of an episode: what was run, by whom, with which tools."""

    type: Literal["header"] = "header"
    record_version: int = RECORD_VERSION
    episode_id: str = Field(min_length=1)
    env_id: str = Field(min_length=1, description="The environment's id (the unit of train/validation splits).")
    env_hash: str = Field("", description="Content hash of the environment spec (detects edited environments).")
    initial_state_hash: str = Field("", description="Workspace.content_hash before the first step.")
    initial_predicates: list[bool] = Field(default_factory=list, description="Predicates on the initial state.")
    initial_score: float = Field(0.0, ge=0.0, le=1.0, description="Weighted predicate score of the initial state.")
    capabilities: list[str] = Field(default_factory=list)
    policy: PolicyInfo
    seed: int = 0
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

    code: str
    message: str


class EventLine(_Strict):
    """One workspace event (a tool call, a conversation message, a world change, or a stage's close)."""

    type: Literal["event"] = "event"
    episode_id: str
    index: int = Field(ge=0, description="Position in the workspace event log.")
    turn: int = Field(ge=0, description="The assistant turn (step) this event belongs to, from 0.")
    kind: Literal["call", "message", "world", "stage"]
    sim_time: str
    tool: str | None = None
    args: Any = None
    ok: bool = True
    result: Any = None
    error: ErrorLine | None = None
    policy: str | None = Field(None, description="The policy a blocked call violated.")
    read: dict[str, list[str]] | None = Field(None, description="Records the call showed the agent: {table: [keys]}.")
    via: list[dict[str, Any]] | None = Field(None, description="Other tools the call ran through, as {tool, args} "
                                             "(a note shared by mail runs send_email).")
    diff: list[dict[str, Any]] = Field(default_factory=list, description="Diff.to_json() of the event.")
    role: str | None = None
    content: str | None = None

    @classmethod
    def from_event(cls, event: Any, episode_id: str, turn: int) -> "EventLine":
        """The line for a `workspace_sim.Event` (its `to_json()` plus episode and turn)."""
        return cls.model_validate({**event.to_json(), "type": "event", "episode_id": episode_id, "turn": turn})


class StepLine(_Strict):
    """The state after one step (an assistant turn and the calls it made): predicates and state hash."""

    type: Literal["step"] = "step"
    episode_id: str
    turn: int = Field(ge=0)
    predicates: list[bool] = Field(description="Pass/fail of each predicate, in the evaluation's order.")
    score: float = Field(ge=0.0, le=1.0, description="Weighted fraction of predicates passing.")
    state_hash: str = Field(description="Workspace.content_hash after the step (GiGPO step groups).")


class TurnTokens(_Strict):
    """Token ids (and optionally log-probs) the policy produced in one assistant turn."""

    turn: int = Field(ge=0)
    prompt_ids: list[int] | None = None
    completion_ids: list[int]
    logprobs: list[float] | None = None

    @model_validator(mode="after")
    def _lengths(self) -> "TurnTokens":
        if self.logprobs is not None and len(self.logprobs) != len(self.completion_ids):
            raise ValueError(f"logprobs has {len(self.logprobs)} entries for {len(self.completion_ids)} tokens")
        return self


class ViolationInfo(_Strict):
    """A call blocked by a workplace policy."""

    event_index: int
    tool: str
    policy: str
    message: str


class FaultInfo(_Strict):
    """An injected fault the agent met; `handled` when a later call of the same tool succeeded."""

    event_index: int
    tool: str
    message: str
    handled: bool


ERROR_STOPS = ("error", "policy_error")
StopReason = Literal["answered", "max_turns", "max_tokens", "max_tool_calls", "timeout", "policy_error", "user_ended",
                     "error"]


class FinalLine(_Strict):
    """Last line of an episode: transcript, evaluation, reward and bookkeeping."""

    type: Literal["final"] = "final"
    episode_id: str
    messages: list[ChatMessage]
    evaluation: dict[str, Any] = Field(description="workspace_sim.predicates Evaluation.to_json().")
    reward: float
    stop_reason: StopReason
    stop_detail: str | None = Field(None, description="Why it stopped, in words (the limit hit, the error met).")
    final_answer: str | None = None
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds: total, policy, tools, ...")
    tokens: list[TurnTokens] = Field(default_factory=list)
    policy_violations: list[ViolationInfo] = Field(default_factory=list)
    fault_errors: list[FaultInfo] = Field(default_factory=list)

    @field_validator("evaluation")
    @classmethod
    def _evaluation(cls, v: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(v.get("passed"), bool):
            raise ValueError("evaluation needs a boolean 'passed'")
        if not isinstance(v.get("score"), (int, float)):
            raise ValueError("evaluation needs a numeric 'score'")
        return v


Line = Annotated[Union[HeaderLine, EventLine, StepLine, FinalLine], Field(discriminator="type")]
_LINE = TypeAdapter(Line)


class RecordError(ValueError):
    """A malformed episode record; the message names the file, line and field."""


# ----------------------------------------------------------------------------------------------
# The whole episode
# ----------------------------------------------------------------------------------------------


class EpisodeRecord(BaseModel):
    """One episode in memory: header, events, steps and (once finished) the final line."""

    model_config = ConfigDict(extra="forbid")
    header: HeaderLine
    events: list[EventLine] = Field(default_factory=list)
    steps: list[StepLine] = Field(default_factory=list)
    final: FinalLine | None = None

    @property
    def episode_id(self) -> str:
        """The episode's id."""
        return self.header.episode_id

    @property
    def env_id(self) -> str:
        """The environment the episode ran in."""
        return self.header.env_id

    @property
    def group(self) -> str:
        """The rollout group (explicit group or the environment id)."""
        return self.header.group or self.header.env_id

    @property
    def complete(self) -> bool:
        """Whether the final line was written."""
        return self.final is not None

    @property
    def passed(self) -> bool:
        """Whether every predicate passed (False for an unfinished episode)."""
        return self.final is not None and bool(self.final.evaluation.get("passed"))

    @property
    def errored(self) -> bool:
        """Whether the episode stopped on an error (of the environment, the user simulator or the policy)
        rather than by answering or reaching a limit; such episodes are not evidence about the policy."""
        return self.final is not None and self.final.stop_reason in ERROR_STOPS

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The transcript as plain Hugging Face chat dicts (empty before the final line)."""
        return [m.to_hf() for m in self.final.messages] if self.final else []

    def lines(self) -> Iterator[BaseModel]:
        """The lines in writing order: header, then each turn's events and step, then final."""
        yield self.header
        steps = sorted(self.steps, key=lambda s: s.turn)
        events = sorted(self.events, key=lambda e: e.index)
        ei = 0
        for step in steps:
            while ei < len(events) and events[ei].turn <= step.turn:
                yield events[ei]
                ei += 1
            yield step
        yield from events[ei:]
        if self.final is not None:
            yield self.final

    def to_jsonl(self, blobs: BlobStore | None = None) -> str:
        """The episode as JSONL text (one JSON object per line, trailing newline).

        Strings of 4,096 characters or more are written once, as `blob` lines, and referred to by
        hash (see workspace_sim.core.blobs); pass one `BlobStore` for every episode of a file to share
        blobs across them.
        """
        store = blobs if blobs is not None else BlobStore()
        out = []
        for line in self.lines():
            obj, new = store.externalize(line.model_dump(mode="json"))
            out.extend(_dump_obj(b) + "\n" for b in new)
            out.append(_dump_obj(obj) + "\n")
        return "".join(out)

    def write(self, path: str | Path, append: bool = True) -> Path:
        """Write (by default append) the episode to a JSONL file, creating folders as needed."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("a" if append else "w", encoding="utf-8") as f:
            f.write(self.to_jsonl())
        return p


_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _dump(line: BaseModel) -> str:
    return _dump_obj(line.model_dump(mode="json"))


def _dump_obj(obj: Any) -> str:
    # Characters that str.splitlines() treats as line ends are escaped, so any line splitter is safe;
    # a lone surrogate is written escaped and NaN/Infinity as strings (`safe_dumps`), so a line never fails.
    return safe_dumps(obj, separators=(",", ":")).translate(_LINE_BREAKS)


def write_records(records: Iterable[EpisodeRecord], path: str | Path) -> Path:
    """Write many episodes into one JSONL file, replacing it whole once every line is encoded (written to a
    temporary file beside it, then renamed, so a reader never sees half a batch)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    store = BlobStore()  # each large string once per file
    tmp = p.with_name(p.name + ".part")
    with tmp.open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(rec.to_jsonl(store))
    os.replace(tmp, p)
    return p


class RecordStream:
    """Appends each episode to a JSONL file as it finishes (flushed line by line), so a batch that stops half
    way, or one record that misbehaves, never takes the others' records with it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")
        self._store = BlobStore()

    def add(self, record: EpisodeRecord) -> None:
        """Write one finished episode now."""
        self._file.write(record.to_jsonl(self._store))
        self._file.flush()

    def close(self) -> None:
        """Close the file (what was added stays)."""
        self._file.close()


def _record_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*.jsonl") if p.is_file())
    if path.is_file():
        return [path]
    raise RecordError(f"{path}: no such file or folder of episode records")


def _validation_message(e: ValidationError) -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()) if x not in ("header", "event", "step", "final"))
        parts.append(f"{loc or '(line)'}: {err.get('msg')}")
    return "; ".join(parts)


def parse_lines(text_lines: Iterable[str], source: str = "<records>") -> list[EpisodeRecord]:
    """Group typed JSONL lines into episodes; malformed input raises RecordError naming the line.

    `blob` lines (large strings stored once) are collected and their references resolved, so the
    episodes read back exactly as they were before writing.
    """
    episodes: dict[str, EpisodeRecord] = {}
    blobs = BlobReader()
    for n, raw in enumerate(text_lines, start=1):
        where = f"{source}:{n}"
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            raise RecordError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(obj, dict):
            raise RecordError(f"{where}: each line must be a JSON object, got {type(obj).__name__}")
        kind = obj.get("type")
        try:
            obj = blobs.take(obj, raw)
        except BlobError as e:
            raise RecordError(f"{where}: {e}") from None
        if obj is None:
            continue
        if kind not in ("header", "event", "step", "final"):
            raise RecordError(f"{where}: 'type' must be header, event, step, final or blob, got {kind!r}")
        try:
            line = _LINE.validate_python(obj)
        except ValidationError as e:
            raise RecordError(f"{where}: bad {kind} line: {_validation_message(e)}") from None
        eid = line.episode_id
        if isinstance(line, HeaderLine):
            if eid in episodes:
                raise RecordError(f"{where}: second header for episode {eid!r}")
            episodes[eid] = EpisodeRecord(header=line)
            continue
        ep = episodes.get(eid)
        if ep is None:
            raise RecordError(f"{where}: {kind} line for episode {eid!r} before its header")
        if ep.final is not None:
            raise RecordError(f"{where}: {kind} line for episode {eid!r} after its final line")
        if isinstance(line, EventLine):
            ep.events.append(line)
        elif isinstance(line, StepLine):
            ep.steps.append(line)
        else:
            ep.final = line
    return list(episodes.values())


def read_records(path: str | Path, complete_only: bool = False) -> list[EpisodeRecord]:
    """Read every episode from a JSONL file or from all `*.jsonl` files under a folder (sorted).

    With `complete_only`, episodes without a final line (a crashed or still-running writer) are
    dropped; otherwise they are returned with `final=None`.
    """
    out: list[EpisodeRecord] = []
    seen: dict[str, str] = {}
    for f in _record_files(Path(path)):
        try:
            with f.open(encoding="utf-8") as fh:
                episodes = parse_lines(fh, source=str(f))
        except UnicodeDecodeError as e:
            raise RecordError(f"{f}: not UTF-8 text ({e.reason})") from None
        for ep in episodes:
            if ep.episode_id in seen:
                raise RecordError(f"{f}: episode {ep.episode_id!r} also appears in {seen[ep.episode_id]}")
            seen[ep.episode_id] = str(f)
            if complete_only and not ep.complete:
                continue
            out.append(ep)
    return out


# ----------------------------------------------------------------------------------------------
# Helpers for writers (the episode runner)
# ----------------------------------------------------------------------------------------------


def tool_schemas(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """OpenAI-format schemas from the one tool registry, for all tools or the named ones (in order)."""
    from workspace_sim import all_tools

    tools = all_tools()
    if names is None:
        return [tools[n].openai_schema() for n in sorted(tools)]
    missing = [n for n in names if n not in tools]
    if missing:
        raise RecordError(f"unknown tool(s) {missing}; the registry has {', '.join(sorted(tools))}")
    return [tools[n].openai_schema() for n in names]


def violations_and_faults(events: Iterable[Any]) -> tuple[list[ViolationInfo], list[FaultInfo]]:
    """Policy violations and injected faults among an episode's events (EventLines or workspace Events).

    A fault counts as handled when a later call of the same tool succeeded (the agent retried);
    otherwise it is unhandled, which rewards penalise.
    """
    evs = [e if isinstance(e, EventLine) else EventLine.from_event(e, episode_id="-", turn=0) for e in events]
    violations: list[ViolationInfo] = []
    faults: list[FaultInfo] = []
    for i, e in enumerate(evs):
        if e.kind != "call" or e.ok or e.error is None:
            continue
        if e.error.code == "policy_violation":
            violations.append(ViolationInfo(event_index=e.index, tool=e.tool or "", policy=e.policy or "",
                                            message=e.error.message))
        elif e.error.code == "fault":
            handled = any(later.kind == "call" and later.tool == e.tool and later.ok for later in evs[i + 1:])
            faults.append(FaultInfo(event_index=e.index, tool=e.tool or "", message=e.error.message, handled=handled))
    return violations, faults


def stage_verdicts(evaluation: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The per-stage verdicts of an evaluation (`[{id, passed, score, reached, ...}]`); empty for a single day."""
    stages = (evaluation or {}).get("stages")
    return [s for s in stages if isinstance(s, dict)] if isinstance(stages, list) else []


def stage_summary(evaluation: Mapping[str, Any] | None) -> str:
    """Each working day's verdict in one short text, e.g. 'mon ✓1.00  tue ✗0.40  wed -' (a day never reached is
    '-'); '' for a single-day evaluation. What `episodes`, `run`, `eval` and the report show per day."""
    parts = []
    for s in stage_verdicts(evaluation):
        mark = "-" if not s.get("reached", True) else ("✓" if s.get("passed") else "✗") + f"{float(s.get('score', 0)):.2f}"
        parts.append(f"{s.get('id', '?')} {mark}")
    return "  ".join(parts)
