"""Recording an episode as it happens: turns of tool calls run in a real workspace, judged after each turn.

`EpisodeRecorder` is the small driver the RL rollouts, the TRL adapter and tests use: the caller
hands in each assistant turn (text, tool calls, tokens) and the recorder runs it and writes the
event and step lines (predicate vector and state hash after every turn) and the final line.

- An environment spec (`synth.EnvironmentSpec`, or a runner `PreparedSpec`) is played with the
  spec's turn semantics, through `trainers.episodes.session.EpisodeSession`: a message gets the
  scripted user's reply, or, when the user is satisfied, ends the day (`end_stage`: the next day's
  instructions and world changes arrive as the user's next message) or the episode; follow-ups,
  world events, limits and stop reasons are the runner's, so the record equals `run_episode`'s
  for the same turns.
- Any other object with `id`, `task_text()`, `build_workspace()` and `evaluate(workspace,
  final_answer)` (the toy environments of `trainers.training.toy`) is played plainly: a turn
  without tool calls is the final answer.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from synth.spec import EnvironmentSpec
from workspace_sim import Workspace
from workspace_sim.record import (
    ChatMessage,
    EpisodeRecord,
    EventLine,
    FinalLine,
    HeaderLine,
    PolicyInfo,
    StepLine,
    StopReason,
    TurnTokens,
    tool_schemas,
    violations_and_faults,
)

from ..episodes.prepared import EpisodeLimits, PreparedSpec
from ..episodes.session import EpisodeSession
from ..episodes.turns import AgentTurn, PolicyCall
from ..episodes.turns import TurnTokens as AgentTokens
from ..episodes.users import SimulatedUser
from ..rewards import RewardConfig


@runtime_checkable
class TrainingEnvironment(Protocol):
    """What a rollout needs from an environment (synth.EnvironmentSpec meets it)."""

    id: str

    def task_text(self) -> str:
        """The request the agent is given."""
        ...

    def build_workspace(self) -> Workspace:
        """A fresh workspace at the start state."""
        ...

    def evaluate(self, workspace: Workspace, final_answer: str | None = None) -> Any:
        """A workspace_sim.predicates.Evaluation of the workspace and the final answer."""
        ...


def _env_hash(env: Any) -> str:
    h = getattr(env, "content_hash", "")
    return h() if callable(h) else str(h or "")


def plays_scenario(env: Any) -> bool:
    """Whether `env` is played with the spec's turn semantics (an EnvironmentSpec or a PreparedSpec)."""
    return isinstance(env, (EnvironmentSpec, PreparedSpec))


class EpisodeRecorder:
    """Runs and records one episode in an environment, a turn at a time (see the module doc for the two paths).

    For a spec, `system_prompt` None means the runner's own system message (`trainers.episodes.prepared.system_prompt`),
    `limits` the runner's limits (the episode stops itself at them, `done` turns true), `user` the
    simulated user factory (default: the spec's scripted user) and `reward` the reward the record
    carries; for other environments `system_prompt` None means no system message and the rest is unused.
    """

    def __init__(self, env: TrainingEnvironment | PreparedSpec, episode_id: str, policy: PolicyInfo, seed: int = 0,
                 group: str | None = None, system_prompt: str | None = None,
                 tool_names: Sequence[str] | None = None, *, limits: EpisodeLimits | None = None,
                 user: Callable[[EnvironmentSpec, int], SimulatedUser] | None = None,
                 reward: RewardConfig = RewardConfig()) -> None:
        self.env = env
        self.started = time.perf_counter()
        self.session: EpisodeSession | None = None
        self.reply: str | None = None  # the user's message the latest turn drew (a spec's reply or next day)
        if plays_scenario(env):
            self.session = EpisodeSession(env, policy, seed=seed, episode_id=episode_id,  # type: ignore[arg-type]
                                          limits=limits or EpisodeLimits(), user=user, group=group, reward=reward,
                                          system_prompt=system_prompt)
            self.workspace = self.session.driver.ws
            if tool_names:
                self._offered(self.session.spec, tool_names)
                run = self.session.run
                run.record.header = run.record.header.model_copy(update={"tools": tool_schemas(list(tool_names))})
            return
        self.workspace = env.build_workspace()
        first = env.evaluate(self.workspace, None)
        self._header = HeaderLine(
            episode_id=episode_id, env_id=env.id, env_hash=_env_hash(env),
            initial_state_hash=self.workspace.content_hash, initial_predicates=first.vector(),
            initial_score=first.score, capabilities=list(getattr(env, "capabilities", []) or []),
            policy=policy, seed=seed, group=group, tools=tool_schemas(self._offered(env, tool_names)),
        )
        self._messages: list[ChatMessage] = []
        if system_prompt:
            self._messages.append(ChatMessage(role="system", content=system_prompt))
        self._messages.append(ChatMessage(role="user", content=env.task_text()))
        self._logged = len(self.workspace.events())
        self.workspace.add_message("user", env.task_text())
        self.events: list[EventLine] = []
        self.steps: list[StepLine] = []
        self.tokens: list[TurnTokens] = []
        self._turns = 0
        self._calls = 0
        self._final_answer: str | None = None
        self._answered = False

    def _offered(self, env: Any, tool_names: Sequence[str] | None) -> list[str]:
        names = list(tool_names or getattr(env, "tool_names", None) or sorted(self.workspace.tools))
        missing = [n for n in names if n not in self.workspace.tools]
        if missing:
            raise ValueError(f"environment {env.id}: tool(s) {missing} are not enabled in its workspace")
        return names

    @property
    def header(self) -> HeaderLine:
        """The record's header line."""
        return self.session.run.record.header if self.session is not None else self._header

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI-format schemas of the tools offered."""
        return self.header.tools

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The transcript so far as Hugging Face chat dicts (what the policy sees)."""
        if self.session is not None:
            return [dict(m) for m in self.session.messages]
        return [m.to_hf() for m in self._messages]

    @property
    def turns(self) -> int:
        """Assistant turns played so far."""
        return self.session.turn if self.session is not None else self._turns

    @property
    def final_answer(self) -> str | None:
        """The final answer, once given."""
        return self.session.run.final_answer if self.session is not None else self._final_answer

    @property
    def done(self) -> bool:
        """Whether the episode has ended: answered (or, for a spec, stopped at a limit or by an error)."""
        return self.session.done if self.session is not None else self._answered

    def _take_events(self, turn: int) -> None:
        evs = self.workspace.events()
        for e in evs[self._logged:]:
            self.events.append(EventLine.from_event(e, self.header.episode_id, turn))
        self._logged = len(evs)

    def turn(self, content: str | None, calls: Sequence[tuple[str, dict[str, Any]]] = (),
             tokens: TurnTokens | None = None, *, expects_reply: bool | None = None,
             truncated: bool = False) -> list[str]:
        """One assistant turn: its text and tool calls; the calls run, then the state is judged. Returns the
        texts of the tool results, in call order.

        A turn without calls is a message to the user. For a spec the user answers it, or, satisfied (or
        told so by `expects_reply=False`), the day closes and the next one opens, or the episode ends with
        it as the final answer; `truncated` marks output cut at the token limit (the runner's rules). For
        other environments it is the final answer. A finished episode refuses with RuntimeError.
        """
        if self.session is not None:
            agent_tokens = None if tokens is None else AgentTokens(
                completion_ids=list(tokens.completion_ids), prompt_ids=tokens.prompt_ids, logprobs=tokens.logprobs)
            added = self.session.step(AgentTurn(content=content, calls=[PolicyCall(n, dict(a)) for n, a in calls],
                                                tokens=agent_tokens, expects_reply=expects_reply, truncated=truncated))
            self.reply = next((m.get("content") for m in added if m.get("role") == "user"), None)
            return [m.get("content") or "" for m in added if m.get("role") == "tool"]
        if self._answered:
            raise RuntimeError(f"episode {self.header.episode_id} has ended (answered); start a new one")
        t = self._turns
        call_dicts = []
        for name, args in calls:
            call_dicts.append({"type": "function", "id": f"call_{self._calls}", "function": {
                "name": name, "arguments": dict(args)}})
            self._calls += 1
        self._messages.append(ChatMessage(role="assistant", content=content, tool_calls=call_dicts or None))
        if content:
            self.workspace.add_message("assistant", content)
        texts = []
        for call in call_dicts:
            fn = call["function"]
            r = self.workspace.call(fn["name"], fn["arguments"])
            texts.append(r.text)
            self._messages.append(ChatMessage(role="tool", name=fn["name"], tool_call_id=call["id"], content=r.text))
        if not calls:
            self._final_answer = content
            self._answered = True
        self._take_events(t)
        ev = self.env.evaluate(self.workspace, self._final_answer)  # type: ignore[union-attr]
        self.steps.append(StepLine(episode_id=self.header.episode_id, turn=t, predicates=ev.vector(),
                                   score=ev.score, state_hash=self.workspace.content_hash))
        if tokens is not None:
            self.tokens.append(tokens.model_copy(update={"turn": t}))
        self._turns += 1
        return texts

    def finish(self, stop_reason: StopReason, reward: float | None = None, detail: str | None = None) -> EpisodeRecord:
        """Judge the final state and return the whole record.

        For a spec, an episode still going on stops with `stop_reason` (one that stopped keeps its own) and
        the reward defaults to the recorder's `RewardConfig` (`detail` says why it stopped); otherwise it
        defaults to 1.0 if passed else 0.0.
        """
        if self.session is not None:
            self.session.stop(stop_reason, detail)
            record = self.session.finish()
            if reward is not None:
                record.final.reward = reward  # type: ignore[union-attr]
            return record
        self._take_events(max(self._turns - 1, 0))
        ev = self.env.evaluate(self.workspace, self._final_answer)  # type: ignore[union-attr]
        violations, faults = violations_and_faults(self.events)
        final = FinalLine(
            episode_id=self.header.episode_id, messages=self._messages, evaluation=ev.to_json(),
            reward=(1.0 if ev.passed else 0.0) if reward is None else reward, stop_reason=stop_reason,
            final_answer=self._final_answer, timings={"total": round(time.perf_counter() - self.started, 6)},
            tokens=self.tokens, policy_violations=violations, fault_errors=faults,
        )
        return EpisodeRecord(header=self._header, events=self.events, steps=self.steps, final=final)

    def close(self) -> None:
        """Release a spec episode's workspace without a record (an abandoned rollout); idempotent."""
        if self.session is not None:
            self.session.close()
