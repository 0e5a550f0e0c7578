"""Recording an episode as it happens: turns of tool calls run in a real workspace, judged after each turn.

`EpisodeRecorder` is the small driver the RL rollouts (and tests) use: it builds the environment's
workspace, keeps the chat transcript, runs each turn's tool calls, writes the event and step lines
(predicate vector and state hash after every turn) and finishes with the final line. Any object
with `id`, `task_text()`, `build_workspace()` and `evaluate(workspace, final_answer)` is an
environment (a `synth.EnvironmentSpec` is one).
"""

from __future__ import annotations

import time
from typing import Any, Protocol, Sequence, runtime_checkable

from workspace_sim import ToolResult, Workspace

from ..record import (
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


class EpisodeRecorder:
    """Runs and records one episode in an environment, a turn at a time."""

    def __init__(self, env: TrainingEnvironment, episode_id: str, policy: PolicyInfo, seed: int = 0,
                 group: str | None = None, system_prompt: str | None = None,
                 tool_names: Sequence[str] | None = None) -> None:
        self.env = env
        self.workspace = env.build_workspace()
        self.started = time.perf_counter()
        first = env.evaluate(self.workspace, None)
        self.header = HeaderLine(
            episode_id=episode_id, env_id=env.id, env_hash=_env_hash(env),
            initial_state_hash=self.workspace.content_hash, initial_predicates=first.vector(),
            initial_score=first.score, capabilities=list(getattr(env, "capabilities", []) or []),
            policy=policy, seed=seed, group=group, tools=tool_schemas(self._offered(env, tool_names)),
        )
        self.messages: list[ChatMessage] = []
        if system_prompt:
            self.messages.append(ChatMessage(role="system", content=system_prompt))
        self.messages.append(ChatMessage(role="user", content=env.task_text()))
        self._logged = len(self.workspace.events())
        self.workspace.add_message("user", env.task_text())
        self.events: list[EventLine] = []
        self.steps: list[StepLine] = []
        self.tokens: list[TurnTokens] = []
        self.turns = 0
        self._calls = 0
        self.final_answer: str | None = None

    def _offered(self, env: Any, tool_names: Sequence[str] | None) -> list[str]:
        names = list(tool_names or getattr(env, "tool_names", None) or sorted(self.workspace.tools))
        missing = [n for n in names if n not in self.workspace.tools]
        if missing:
            raise ValueError(f"environment {env.id}: tool(s) {missing} are not enabled in its workspace")
        return names

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI-format schemas of the tools offered."""
        return self.header.tools

    def _take_events(self, turn: int) -> None:
        evs = self.workspace.events()
        for e in evs[self._logged:]:
            self.events.append(EventLine.from_event(e, self.header.episode_id, turn))
        self._logged = len(evs)

    def turn(self, content: str | None, calls: Sequence[tuple[str, dict[str, Any]]] = (),
             tokens: TurnTokens | None = None) -> list[ToolResult]:
        """One assistant turn: its text and tool calls; the calls run, then the state is judged.

        A turn without calls is an answer to the user: its text becomes the final answer.
        """
        t = self.turns
        call_dicts = []
        for name, args in calls:
            call_dicts.append({"type": "function", "id": f"call_{self._calls}", "function": {
                "name": name, "arguments": dict(args)}})
            self._calls += 1
        self.messages.append(ChatMessage(role="assistant", content=content, tool_calls=call_dicts or None))
        if content:
            self.workspace.add_message("assistant", content)
        results = []
        for call in call_dicts:
            fn = call["function"]
            r = self.workspace.call(fn["name"], fn["arguments"])
            results.append(r)
            self.messages.append(ChatMessage(role="tool", name=fn["name"], tool_call_id=call["id"], content=r.text))
        if not calls:
            self.final_answer = content
        self._take_events(t)
        ev = self.env.evaluate(self.workspace, self.final_answer)
        self.steps.append(StepLine(episode_id=self.header.episode_id, turn=t, predicates=ev.vector(),
                                   score=ev.score, state_hash=self.workspace.content_hash))
        if tokens is not None:
            self.tokens.append(tokens.model_copy(update={"turn": t}))
        self.turns += 1
        return results

    def finish(self, stop_reason: StopReason, reward: float | None = None) -> EpisodeRecord:
        """Judge the final state and return the whole record (reward defaults to 1.0 if passed else 0.0)."""
        self._take_events(max(self.turns - 1, 0))
        ev = self.env.evaluate(self.workspace, self.final_answer)
        violations, faults = violations_and_faults(self.events)
        final = FinalLine(
            episode_id=self.header.episode_id, messages=self.messages, evaluation=ev.to_json(),
            reward=(1.0 if ev.passed else 0.0) if reward is None else reward, stop_reason=stop_reason,
            final_answer=self.final_answer, timings={"total": round(time.perf_counter() - self.started, 6)},
            tokens=self.tokens, policy_violations=violations, fault_errors=faults,
        )
        return EpisodeRecord(header=self.header, events=self.events, steps=self.steps, final=final)
