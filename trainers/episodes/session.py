"""The episode protocol: one session with reset / step / done / finish / close, which every face is a view of.

`EpisodeSession` is one episode of an environment spec driven a turn at a time by its caller:
`reset(seed, spec)` opens an episode (the system prompt and the user's request), `step(turn)`
plays one `AgentTurn`, `done` says whether it has stopped (answered, a limit, an error),
`finish()` judges it and returns its `EpisodeRecord` (workspace_sim.record), and `close()` releases
its workspace without a record. The turn semantics (request, user replies, follow-ups, clock
moves, world events, working days) are `synth.spec.SpecDriver`'s; the session adds the tool
channel (direct, in-process MCP, or a remote server: `trainers.episodes.backends`), the simulated
user's verdicts, a judgement after every turn and the limits. `run_episode` (the runner), the
Gymnasium, OpenEnv, verifiers and TRL adapters and the RL rollouts all drive this one session, so
their records are the same for the same turns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mcp_server.jsoncheck import JsonProblem, decode_arguments
from synth.spec import EnvironmentSpec, SpecDriver
from workspace_sim.core.errors import SpecError
from workspace_sim.predicates import Judge

from workspace_sim.record import (
    ChatMessage,
    EpisodeRecord,
    EventLine,
    FinalLine,
    HeaderLine,
    PolicyInfo,
    StepLine,
    StopReason,
    violations_and_faults,
)
from workspace_sim.record import TurnTokens as RecordTokens
from ..rewards import RewardConfig, episode_reward
from .backends import LocalBackend, RemoteBackend, Transport, open_backend
from .channels import ToolChannel
from .prepared import EpisodeLimits, PreparedSpec
from .prepared import system_prompt as default_system_prompt
from .remote import RemoteError, RemoteServers, RemoteTarget
from .turns import AgentTurn, EpisodeContext, PolicyCall
from .users import ScriptedUserSim, SimulatedUser, UserSimError

UserFactory = Callable[[EnvironmentSpec, int], SimulatedUser]


@dataclass
class _Run:
    """The bookkeeping of one episode in progress."""

    record: EpisodeRecord
    messages: list[dict[str, Any]]
    logged: int = 0
    calls: int = 0
    final_answer: str | None = None
    stop: StopReason | None = None
    detail: str | None = None
    tokens: list[RecordTokens] = field(default_factory=list)
    last_evaluation: Any = None
    timings: dict[str, float] = field(default_factory=lambda: {"policy": 0.0, "tools": 0.0, "user": 0.0,
                                                               "evaluate": 0.0})


def parse_arguments(call: PolicyCall) -> tuple[dict[str, Any] | None, str | None]:
    """The call's arguments as a dict, or None and the problem (malformed JSON, not an object)."""
    args: Any = call.arguments
    if isinstance(args, str):
        try:
            args = decode_arguments(args)  # the transports' own checks: surrogates, NaN, nesting
        except JsonProblem as e:
            return None, (f"the arguments of {call.name} are refused: {e.message}; "
                          "send a JSON object matching the tool's parameters")
    if not isinstance(args, dict):
        return None, f"the arguments of {call.name} must be a JSON object, got {type(args).__name__}"
    return args, None


class EpisodeSession:
    """One episode driven a turn at a time from outside: the caller hands in each `AgentTurn`.

    This is the runner's turn semantics with the loop turned inside out, for trainers that own the
    loop (Gymnasium's `step`, OpenEnv's `step`, verifiers' `env_response`): `messages` is the
    transcript the agent sees, `step(turn)` applies one turn (tool calls through the channel, a
    message answered by the simulated user or taken as the final answer, world events as the spec
    says, a judgement after the turn) and the limits, `done` says whether the episode has stopped,
    and `finish()` returns the `EpisodeRecord`, identical to `run_episode`'s for the same turns
    (timings aside; "policy" time is the time between steps). Problems stop the episode with a
    reason, never raise; `close()` releases the workspace of an episode abandoned before `finish`.
    `reset(seed, spec)` opens the next episode with the same settings (the same prepared spec unless
    given another), so one session serves a face's many episodes.
    `system_prompt` replaces the runner's own system message (`system_prompt(spec)`) when given.
    """

    def __init__(self, spec: EnvironmentSpec | PreparedSpec, policy: PolicyInfo, *, seed: int = 0,
                 episode_id: str | None = None, limits: EpisodeLimits = EpisodeLimits(),
                 user: UserFactory | None = None, transport: Transport = "direct",
                 group: str | None = None, reward: RewardConfig = RewardConfig(), portal: Any = None,
                 connect: RemoteTarget | RemoteServers | None = None, judge: Judge | None = None,
                 system_prompt: str | None = None) -> None:
        self.policy, self.user_factory, self.transport, self.group = policy, user, transport, group
        self.reward, self.portal, self.connect, self.judge = reward, portal, connect, judge
        self.given_limits, self.system_prompt = limits, system_prompt
        self.channel: ToolChannel | None = None
        self._closed = True
        self.reset(seed, spec, episode_id=episode_id)

    def reset(self, seed: int | None = None, spec: EnvironmentSpec | PreparedSpec | None = None, *,
              episode_id: str | None = None, group: str | None = None) -> list[dict[str, Any]]:
        """Open a new episode under this session's settings and return its opening messages (system prompt,
        request); the one in progress is abandoned without a record (`close`).

        `spec` None keeps the prepared spec (its start workspace is forked again, nothing rebuilt); `seed`
        None keeps the seed; `episode_id` None is ENV.sSEED; `group` None keeps the session's group.
        """
        self.close()
        self.started = time.perf_counter()
        if spec is not None:
            self.prepared = spec if isinstance(spec, PreparedSpec) else PreparedSpec(spec, self.judge)
        self.spec = spec = self.prepared.spec
        if seed is not None:
            self.seed = seed
        if group is not None:
            self.group = group
        self.limits = self.given_limits.for_spec(spec)
        eid = episode_id or f"{spec.id}.s{self.seed}"
        connect = self.connect.pick(eid) if isinstance(self.connect, RemoteServers) else self.connect
        self.backend = open_backend(self.prepared, self.transport, self.portal, connect, eid)
        self._closed = False
        self.driver = driver = SpecDriver(spec, self.backend.ws)
        driver.user = (self.user_factory(spec, self.seed) if self.user_factory is not None  # type: ignore[assignment]
                       else ScriptedUserSim(spec.user_simulator))
        self.run = _Run(EpisodeRecord(header=self._header(eid)), [{"role": "system", "content": (
            self.system_prompt if self.system_prompt is not None else default_system_prompt(spec))}])
        self.turn = 0
        with self.guard():
            self.channel = self.backend.open()
            driver.ws = self.backend.ws
            self.run.messages.append({"role": "user", "content": driver.start()})
        self._check_limits()
        self._asked = time.perf_counter()
        return self.run.messages

    def _header(self, eid: str) -> HeaderLine:
        prepared, spec = self.prepared, self.spec
        settings = {**self.policy.settings, "limits": self.limits.to_json(),
                    "user": self.driver.user.describe(),  # type: ignore[attr-defined]
                    **self.backend.settings(), **({"judge": prepared.judge.name} if prepared.judge is not None else {})}
        return HeaderLine(
            episode_id=eid, env_id=spec.id, env_hash=prepared.env_hash,
            initial_state_hash=prepared.start.content_hash, initial_predicates=prepared.initial.vector(),
            initial_score=prepared.initial.score, capabilities=list(spec.capabilities),
            policy=self.policy.model_copy(update={"settings": settings}), seed=self.seed, group=self.group,
            tools=prepared.tools,
        )

    @property
    def episode_id(self) -> str:
        """The episode's id, as in its record."""
        return self.run.record.header.episode_id

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The transcript so far (Hugging Face chat dicts): system prompt, request, turns, replies."""
        return self.run.messages

    def messages_with_images(self) -> list[dict[str, Any]]:
        """The transcript with each image a tool result showed as an image part holding its data URL (what a
        policy that `sees_images` is shown; `trainers.media_parts.policy_view`)."""
        return self.messages_with_media(("image",))

    def messages_with_media(self, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
        """The transcript with each image or audio clip (of `kinds`) a tool result showed as a part holding its
        data URL (what a policy that `sees_images` or `hears_audio` is shown)."""
        from ..media_parts import policy_view

        return policy_view(self.run.messages, self.run.record.events, kinds)

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI-format schemas of the tools offered."""
        return self.prepared.tools

    @property
    def done(self) -> bool:
        """Whether the episode has stopped (answered, a limit, an error)."""
        return self.run.stop is not None

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the episode stopped, or None while it goes on."""
        return self.run.stop

    @property
    def last_evaluation(self) -> Any:
        """The judgement after the latest turn (an Evaluation), or the initial one before any turn."""
        return self.run.last_evaluation if self.run.last_evaluation is not None else self.prepared.initial

    @property
    def state_hash(self) -> str:
        """The workspace's content hash now."""
        return self.run.record.steps[-1].state_hash if self.run.record.steps else self.prepared.start.content_hash

    def context(self) -> EpisodeContext:
        """What a runner-style policy is told at the start (`Policy.start`)."""
        return EpisodeContext(self.episode_id, self.seed, self.spec, self.prepared.tools, self.driver.fill)

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Turn the failures an episode can meet (a world event that does not apply, a user simulator or remote
        server that fails) into a stop with the reason, as the runner does."""
        try:
            yield
        except SpecError as e:  # a world event of the spec that does not apply
            _stop(self.run, "error", f"the environment failed: {e}")
        except UserSimError as e:
            _stop(self.run, "error", str(e))
        except RemoteError as e:
            _stop(self.run, "error", f"the remote server failed: {e}")

    def _check_limits(self) -> None:
        if self.run.stop is not None:
            return
        if self.turn >= self.limits.max_turns:
            _stop(self.run, "max_turns", f"the turn limit ({self.limits.max_turns}) was reached")
        elif time.perf_counter() - self.started > self.limits.max_seconds:
            _stop(self.run, "timeout", f"the time limit ({self.limits.max_seconds:g}s) was reached")

    def step(self, action: AgentTurn) -> list[dict[str, Any]]:
        """Apply one agent turn and return the messages it added (the assistant turn, tool results, the user's
        reply); a finished episode refuses with RuntimeError."""
        if self.run.stop is not None:
            raise RuntimeError(f"episode {self.episode_id} has ended ({self.run.stop}); start a new one")
        run = self.run
        run.timings["policy"] += time.perf_counter() - self._asked
        before = len(run.messages)
        with self.guard():
            if action.error is not None:
                _stop(run, "policy_error", action.error)
            else:
                if action.tokens is not None:
                    tok = action.tokens
                    run.tokens.append(RecordTokens(turn=self.turn, prompt_ids=tok.prompt_ids,
                                                   completion_ids=tok.completion_ids, logprobs=tok.logprobs))
                if action.calls:
                    _tool_turn(run, self.driver, self.channel, action, self.limits)  # type: ignore[arg-type]
                else:
                    _message_turn(run, self.driver, action)
                _step(run, self.backend, self.driver, self.turn)
                if action.truncated and run.stop is None:
                    _stop(run, "max_tokens", "the model's output was cut off at its token limit")
                self.turn += 1
        self._check_limits()
        self._asked = time.perf_counter()
        return run.messages[before:]

    def stop(self, reason: StopReason, detail: str | None = None) -> None:
        """End the episode now with `reason` (for a caller whose own loop ended it, e.g. a trainer's turn budget);
        an episode that has already stopped keeps its reason."""
        _stop(self.run, reason, detail)

    def finish(self) -> EpisodeRecord:
        """Stop the episode if it goes on (stop reason "error" unless a limit applies), judge it, release its
        workspace and return its record with the reward under the session's `RewardConfig`."""
        if self._closed:
            raise RuntimeError(f"episode {self.episode_id} was already finished or closed")
        try:
            if self.channel is not None:
                self.channel.close()
                self.channel = None
            return _finish(self.run, self.backend, self.driver, self.reward, self.started)
        finally:
            self.close()

    def close(self) -> None:
        """Release the episode's workspace (or end the remote episode) without a record; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.channel is not None:
                self.channel.close()
                self.channel = None
        finally:
            self.backend.close()


def _stop(run: _Run, reason: StopReason, detail: str | None = None) -> None:
    if run.stop is None:
        run.stop, run.detail = reason, detail


def _tool_turn(run: _Run, driver: SpecDriver, channel: ToolChannel, action: AgentTurn, limits: EpisodeLimits) -> None:
    prepared_calls = []
    for call in action.calls:
        args, problem = parse_arguments(call)
        call_id = call.id or f"call_{run.calls + len(prepared_calls)}"
        prepared_calls.append((call, call_id, args, problem))
    run.messages.append({"role": "assistant", "content": action.content, "tool_calls": [
        {"type": "function", "id": cid, "function": {"name": c.name, "arguments": a if a is not None else {}}}
        for c, cid, a, _ in prepared_calls]})
    for call, call_id, args, problem in prepared_calls:
        if problem is not None:
            text = f"Error (invalid_arguments): {problem}"
        elif run.calls >= limits.max_tool_calls:
            text = f"Error (limit): the tool-call limit ({limits.max_tool_calls}) was reached; this call did not run"
            _stop(run, "max_tool_calls", f"the tool-call limit ({limits.max_tool_calls}) was reached")
        else:
            t0 = time.perf_counter()
            driver.fire_due()
            text, _ = channel.call(call.name, args)  # type: ignore[arg-type]
            run.timings["tools"] += time.perf_counter() - t0
            run.calls += 1
        run.messages.append({"role": "tool", "name": call.name, "tool_call_id": call_id, "content": text})


def _message_turn(run: _Run, driver: SpecDriver, action: AgentTurn) -> None:
    text = action.content or ""
    if not text.strip():
        return _stop(run, "answered", "the agent ended without a message")
    t0 = time.perf_counter()
    try:
        if action.truncated:
            wants_reply = False
        elif action.expects_reply is not None:
            wants_reply = action.expects_reply
        else:
            wants_reply = not driver.user.satisfied(text, driver.turn + 1,  # type: ignore[attr-defined]
                                                    final=not driver.stages_left)
        run.messages.append({"role": "assistant", "content": text})
        if wants_reply:
            run.messages.append({"role": "user", "content": driver.message(text)})
        elif driver.stages_left and not action.truncated:  # the day's report: the next working day opens
            run.messages.append({"role": "user", "content": driver.end_stage(text)})
        else:
            run.final_answer = text
            driver.ws.add_message("assistant", text)
            if action.truncated:
                _stop(run, "max_tokens", "the model's output was cut off at its token limit")
            _stop(run, "answered")
    finally:
        run.timings["user"] += time.perf_counter() - t0


def _step(run: _Run, backend: LocalBackend | RemoteBackend, driver: SpecDriver, turn: int) -> None:
    ws = driver.ws
    events = ws.events()
    eid = run.record.header.episode_id
    for e in events[run.logged:]:
        run.record.events.append(EventLine.from_event(e, eid, turn))
    run.logged = len(events)
    t0 = time.perf_counter()
    ev = backend.evaluate(run.final_answer)
    run.timings["evaluate"] += time.perf_counter() - t0
    run.last_evaluation = ev
    run.record.steps.append(StepLine(episode_id=eid, turn=turn, predicates=ev.vector(), score=ev.score,
                                     state_hash=ws.content_hash))


def _finish(run: _Run, backend: LocalBackend | RemoteBackend, driver: SpecDriver, reward: RewardConfig,
            started: float) -> EpisodeRecord:
    ws = driver.ws
    eid = run.record.header.episode_id
    last_turn = run.record.steps[-1].turn if run.record.steps else 0
    try:
        events = ws.events()
    except RemoteError as e:  # the server is gone: keep what was recorded so far
        _stop(run, "error", f"the remote server failed: {e}")
        events = []
    unchanged = run.last_evaluation is not None and run.logged == len(events)
    for e in events[run.logged:]:
        run.record.events.append(EventLine.from_event(e, eid, last_turn))
    try:
        final = backend.end(run.final_answer, run.stop or "error")
        if final is not None:
            evaluation = final
        else:
            # the last step judged this very state and answer unless something happened since
            ev = run.last_evaluation if unchanged else backend.evaluate(run.final_answer)
            evaluation = ev.to_json()
    except RemoteError as e:
        evaluation = {"passed": False, "score": 0.0, "results": [], "error": f"evaluation failed: {e}"}
        _stop(run, "error", f"the remote server failed: {e}")
    except Exception as e:  # a broken predicate must not lose the record
        evaluation = {"passed": False, "score": 0.0, "results": [], "error": f"evaluation failed: {e}"}
        _stop(run, "error", f"evaluation failed: {type(e).__name__}: {e}")
    violations, faults = violations_and_faults(run.record.events)
    timings = {k: round(v, 6) for k, v in run.timings.items()}
    timings["total"] = round(time.perf_counter() - started, 6)
    run.record.final = FinalLine(
        episode_id=eid, messages=[ChatMessage.model_validate(m) for m in run.messages], evaluation=evaluation,
        reward=0.0, stop_reason=run.stop or "error", stop_detail=run.detail, final_answer=run.final_answer,
        timings=timings, tokens=run.tokens, policy_violations=violations,
        fault_errors=faults,
    )
    run.record.final.reward = episode_reward(run.record, reward)
    return run.record
