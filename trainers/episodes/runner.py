"""Running one episode of an environment spec with a policy, and recording it.

The spec's turn semantics (request, user replies, follow-ups, clock moves, world events) are
`synth.SpecDriver`'s; the runner adds the agent loop around it: ask the policy for a turn, run its
tool calls through a channel (direct, in-process MCP, or MCP over HTTP to a remote server), let the
user simulator answer messages or end the conversation, judge the state after every turn, and stop
at the limits with a clear reason. The result is an `EpisodeRecord` in the format of
trainers/record.py. Whatever happens, the episode's workspace is closed at the end (its live
resources, such as a sandbox container, released), or the remote episode ended.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_server.episode import Episode
from mcp_server.jsoncheck import JsonProblem, decode_arguments
from mcp_server.results import PAGER
from synth.spec import SpecDriver
from synth.spec import EnvironmentSpec
from workspace_sim import Workspace
from workspace_sim.core.errors import SpecError
from workspace_sim.predicates import Judge

from ..record import (
    ChatMessage,
    PolicyInfo,
    EpisodeRecord,
    EventLine,
    FinalLine,
    HeaderLine,
    StepLine,
    StopReason,
    violations_and_faults,
)
from ..record import TurnTokens as RecordTokens
from ..rewards import RewardConfig, episode_reward
from .channels import DirectChannel, InProcessMCPChannel, ToolChannel
from .remote import RemoteError, RemoteServers, RemoteSession, RemoteTarget
from .turns import AgentTurn, EpisodeContext, Policy, PolicyCall, shown_media
from .users import ScriptedUserSim, SimulatedUser, UserSimError

Transport = Literal["direct", "mcp"]


@dataclass(frozen=True)
class EpisodeLimits:
    """When an episode is cut short: assistant turns, tool calls, and wall-clock seconds.

    A turn or call limit left as None is scaled to the environment (`for_spec`): three times what its
    reference solution needs, and never below 30 turns or 100 calls, so a five-day scenario of 100 calls
    is not cut off by limits sized for a single task.
    """

    max_turns: int | None = None
    max_tool_calls: int | None = None
    max_seconds: float = 600.0

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_tool_calls"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        if not self.max_seconds > 0:
            raise ValueError(f"max_seconds must be positive, got {self.max_seconds!r}")

    def for_spec(self, spec: EnvironmentSpec) -> "EpisodeLimits":
        """These limits with every unset one scaled to `spec`'s reference solution."""
        steps, calls = len(spec.reference.steps), len(spec.reference.calls())
        return EpisodeLimits(self.max_turns if self.max_turns is not None else max(30, 3 * (steps + 1)),
                             self.max_tool_calls if self.max_tool_calls is not None else max(100, 3 * calls),
                             self.max_seconds)

    def to_json(self) -> dict[str, Any]:
        """The limits as record settings."""
        return {"max_turns": self.max_turns, "max_tool_calls": self.max_tool_calls, "max_seconds": self.max_seconds}


class _SpecEnvironment:
    """The spec as the MCP episode sees it, with its content hash computed once."""

    def __init__(self, spec: EnvironmentSpec, env_hash: str, judge: Judge | None = None) -> None:
        self.spec, self.id, self.title, self.judge = spec, spec.id, spec.title, judge
        self.capabilities = list(spec.capabilities)
        self._hash = env_hash

    def task_text(self) -> str:
        return self.spec.task_text()

    def build_workspace(self) -> Workspace:
        return self.spec.build_workspace()

    def evaluate(self, workspace: Workspace, final_answer: str | None) -> Any:
        return self.spec.evaluate(workspace, final_answer, judge=self.judge)

    def content_hash(self) -> str:
        return self._hash


class PreparedSpec:
    """A spec ready for many episodes: its start workspace built once (episodes fork it), its hash, and the
    judge of its `judged` predicates (None: their key facts)."""

    def __init__(self, spec: EnvironmentSpec, judge: Judge | None = None) -> None:
        self.spec, self.judge = spec, judge
        self.env_hash = spec.content_hash()
        self.start = spec.build_workspace()
        self.env = _SpecEnvironment(spec, self.env_hash, judge)
        offered = [t.openai_schema() for t in self.start.tools.values()]
        offered.append(PAGER.openai_schema())
        self.tools = offered
        self.initial = spec.evaluate(self.start, None, judge=judge)

    def workspace(self) -> Workspace:
        """A fresh workspace at the start state."""
        return self.start.fork()


def system_prompt(spec: EnvironmentSpec) -> str:
    """The agent's standing instructions: whom it works for, when it is, how to ask and how to finish."""
    person = next((p for p in spec.world.people if p.email.lower() == spec.user.lower()), None)
    who = f"{person.name} <{spec.user}>" if person else spec.user
    now = spec.now.isoformat(timespec="minutes")
    return (f"You are an AI coworker acting for {who} at {spec.world.organisation.name}, in their workspace. "
            f"It is now {now} (their time zone: {spec.timezone}). Do what they ask using the tools, follow the "
            "workplace rules, and change nothing they did not ask for. If you need information only they have, "
            "ask them. When you are done, reply with a short summary of what you did.")


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


class _LocalBackend:
    """The episode's workspace in this process; calls go direct or through an in-process MCP client."""

    def __init__(self, prepared: PreparedSpec, transport: Transport, portal: Any) -> None:
        self.prepared, self.transport, self.portal = prepared, transport, portal
        self.ws: Any = prepared.workspace()

    def settings(self) -> dict[str, Any]:
        return {}

    def open(self) -> ToolChannel:
        episode = Episode(self.prepared.env, "runner", workspace=self.ws)
        return InProcessMCPChannel(episode, self.portal) if self.transport == "mcp" else DirectChannel(episode)

    def evaluate(self, final_answer: str | None) -> Any:
        return self.prepared.spec.evaluate(self.ws, final_answer, judge=self.prepared.judge)

    def end(self, final_answer: str | None, reason: str) -> dict[str, Any] | None:
        return None  # the runner's own last judgement is the final one

    def close(self) -> None:
        self.ws.close()


def remote_episode_id(episode_id: str) -> str:
    """A server-side episode id for a runner's episode: its id made URL-safe plus a random suffix (ids are
    never reused on a server, and many runners may share one)."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", episode_id).strip("-_")[:46] or "ep"
    return f"{safe}-{secrets.token_hex(8)}"


class _RemoteBackend:
    """The episode's workspace on a remote coworkenv server; the runner plays user and world through its admin API."""

    def __init__(self, prepared: PreparedSpec, target: RemoteTarget, episode_id: str, portal: Any) -> None:
        self.prepared, self.target, self.portal = prepared, target, portal
        self.remote_id = remote_episode_id(episode_id)
        self.session: RemoteSession | None = None
        self.ws: Any = _Unopened(target)

    def settings(self) -> dict[str, Any]:
        return {"remote": {"url": self.target.base, "episode_id": self.remote_id}}

    def open(self) -> ToolChannel:
        self.session = RemoteSession(self.target, self.prepared.spec.to_document(), self.remote_id,
                                     self.prepared.env_hash, self.prepared.start.content_hash, self.portal)
        self.ws = self.session.workspace
        assert self.session.channel is not None
        return self.session.channel

    def evaluate(self, final_answer: str | None) -> Any:
        assert self.session is not None
        return self.session.evaluate(final_answer)

    def end(self, final_answer: str | None, reason: str) -> dict[str, Any] | None:
        if self.session is None:
            raise RemoteError(f"no episode was created on {self.target.base}")
        return self.session.end(final_answer, reason)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()


class _Unopened:
    """The workspace of a remote episode that could not be created: nothing to read."""

    def __init__(self, target: RemoteTarget) -> None:
        self.target = target

    def events(self) -> list[Any]:
        raise RemoteError(f"no episode was created on {self.target.base}")


def _backend(prepared: PreparedSpec, transport: Transport, portal: Any, connect: RemoteTarget | None,
             eid: str) -> _LocalBackend | _RemoteBackend:
    return _RemoteBackend(prepared, connect, eid, portal) if connect is not None else _LocalBackend(prepared, transport, portal)


_system_prompt = system_prompt


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
    `system_prompt` replaces the runner's own system message (`system_prompt(spec)`) when given.
    """

    def __init__(self, spec: EnvironmentSpec | PreparedSpec, policy: PolicyInfo, *, seed: int = 0,
                 episode_id: str | None = None, limits: EpisodeLimits = EpisodeLimits(),
                 user: Callable[[EnvironmentSpec, int], SimulatedUser] | None = None, transport: Transport = "direct",
                 group: str | None = None, reward: RewardConfig = RewardConfig(), portal: Any = None,
                 connect: RemoteTarget | RemoteServers | None = None, judge: Judge | None = None,
                 system_prompt: str | None = None) -> None:
        self.started = time.perf_counter()
        self.prepared = spec if isinstance(spec, PreparedSpec) else PreparedSpec(spec, judge)
        self.spec = spec = self.prepared.spec
        self.seed, self.limits, self.reward = seed, limits.for_spec(spec), reward
        eid = episode_id or f"{spec.id}.s{seed}"
        if isinstance(connect, RemoteServers):  # several servers: the one this episode's id routes to
            connect = connect.pick(eid)
        self.backend = _backend(self.prepared, transport, portal, connect, eid)
        self.driver = driver = SpecDriver(spec, self.backend.ws)
        driver.user = user(spec, seed) if user is not None else ScriptedUserSim(spec.user_simulator)  # type: ignore[assignment]
        settings = {**policy.settings, "limits": self.limits.to_json(), "user": driver.user.describe(),  # type: ignore[attr-defined]
                    **self.backend.settings(),
                    **({"judge": self.prepared.judge.name} if self.prepared.judge is not None else {})}
        header = HeaderLine(
            episode_id=eid, env_id=spec.id, env_hash=self.prepared.env_hash,
            initial_state_hash=self.prepared.start.content_hash, initial_predicates=self.prepared.initial.vector(),
            initial_score=self.prepared.initial.score, capabilities=list(spec.capabilities),
            policy=policy.model_copy(update={"settings": settings}), seed=seed, group=group, tools=self.prepared.tools,
        )
        prompt = system_prompt if system_prompt is not None else _system_prompt(spec)
        self.run = _Run(EpisodeRecord(header=header), [{"role": "system", "content": prompt}])
        self.turn = 0
        self.channel: ToolChannel | None = None
        self._closed = False
        with self.guard():
            self.channel = self.backend.open()
            driver.ws = self.backend.ws
            self.run.messages.append({"role": "user", "content": driver.start()})
        self._check_limits()
        self._asked = time.perf_counter()

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


def run_episode(
    spec: EnvironmentSpec | PreparedSpec,
    policy: Policy,
    *,
    seed: int = 0,
    episode_id: str | None = None,
    limits: EpisodeLimits = EpisodeLimits(),
    user: Callable[[EnvironmentSpec, int], SimulatedUser] | None = None,
    transport: Transport = "direct",
    group: str | None = None,
    reward: RewardConfig = RewardConfig(),
    portal: Any = None,
    connect: RemoteTarget | RemoteServers | None = None,
    judge: Judge | None = None,
) -> EpisodeRecord:
    """Run one episode and return its record; problems end the episode with a stop reason, never raise.

    `user` builds the simulated user for (spec, seed) (default: the spec's scripted user);
    `transport` "mcp" sends every tool call through a real in-process MCP client, with records
    identical to the direct path. `connect` runs the episode on a remote coworkenv HTTP server
    (of several, `RemoteServers`, the one its id routes to) instead (tool calls over MCP, user and world through its admin API, judgements from it); its
    records equal the local ones apart from timings and the `remote` setting, and a server that
    cannot be reached or dies ends the episode with stop reason "error" saying so. The reward is
    `trainers.rewards.episode_reward` under `reward`. `judge` decides `judged` predicates of a spec
    not yet prepared (a PreparedSpec brings its own; a remote server judges with its own). The loop is
    `EpisodeSession`'s, driven by `policy`.
    """
    session = EpisodeSession(spec, policy.info(), seed=seed, episode_id=episode_id, limits=limits, user=user,
                             transport=transport, group=group, reward=reward, portal=portal, connect=connect,
                             judge=judge)
    try:
        if not session.done:
            with session.guard():
                policy.start(session.context())
        while not session.done:
            try:
                kinds = shown_media(policy)
                shown = session.messages_with_media(kinds) if kinds else [dict(m) for m in session.messages]
                action = policy.act(shown, session.tools)
            except Exception as e:  # a policy bug ends the episode, it does not end the batch
                action = AgentTurn(error=f"the policy raised {type(e).__name__}: {e}")
            session.step(action)
        return session.finish()
    finally:
        session.close()


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


def _step(run: _Run, backend: _LocalBackend | _RemoteBackend, driver: SpecDriver, turn: int) -> None:
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


def _finish(run: _Run, backend: _LocalBackend | _RemoteBackend, driver: SpecDriver, reward: RewardConfig,
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
