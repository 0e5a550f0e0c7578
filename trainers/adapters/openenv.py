"""coworkenv environments served the OpenEnv way, and the client that drives them.

OpenEnv (`openenv-core`) serves an `Environment` (reset/step/state with typed Action, Observation
and State models) over HTTP and a WebSocket session per client; trainers (TRL, torchforge) drive
episodes through an `EnvClient`. Here `CoworkOpenEnv` is that Environment over an
`EpisodeSession` (so records and rewards are the runner's), `create_server_app` builds the FastAPI
app with OpenEnv's `create_app`, and `CoworkEnvClient` is the typed client:

    app = create_server_app("environments/", records_path="runs/openenv.jsonl")
    # uvicorn.run(app, port=8000)
    with CoworkEnvClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(env="triage-7", seed=3)
        result = env.step(CoworkAction(calls=[ToolCallAction(tool="list_directory", arguments={"path": "/"})]))
        result = env.step(CoworkAction(message="Done: ..."))   # result.done, result.reward

OpenEnv's stateless HTTP /reset and /step make a fresh environment per request (its contract), so
a multi-turn episode goes through the WebSocket session, as `EnvClient` does; an HTTP /step is
answered 409 saying so. Errors are reported the framework's way: an action that does not fit the
schema is a pydantic validation error (WebSocket `VALIDATION_ERROR` with `errors`, HTTP 422 with
`detail`), a step the environment cannot take is an `EXECUTION_ERROR`; either way the session and
its episode go on. `CoworkEnvClient` raises `CoworkServerError` carrying the code and the errors.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.websockets import WebSocketDisconnect
from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError
from workspace_sim.record import EpisodeRecord, PolicyInfo

from ..episodes.prepared import EpisodeLimits
from ..episodes.session import EpisodeSession, UserFactory
from ..episodes.turns import AgentTurn, PolicyCall
from ..rewards import RewardConfig
from .common import EpisodeSettings, SpecSource, StepRewards, observation_text, stage_verdicts


class ToolCallAction(BaseModel):
    """One tool call: the tool's name and its arguments."""

    model_config = ConfigDict(extra="forbid")
    tool: str = Field(..., min_length=1, description="The tool's name, as listed in the reset observation's tools.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments.")


class CoworkAction(Action):
    """One agent turn: tool calls, or a message to the user (a question, or the final answer)."""

    calls: list[ToolCallAction] = Field(default_factory=list, description="Tool calls to run, in order.")
    message: str | None = Field(None, description="Words to the user; the final answer when they are satisfied.")
    answer: str | None = Field(None, description="The final answer: the episode ends with it (in a multi-day "
                                                  "scenario with days left, the day's report: the next day opens).")

    @model_validator(mode="after")
    def _one_kind(self) -> "CoworkAction":
        # `calls` counts as given when its key is there, empty or not: `{"calls": [], "answer": ...}` has two
        # kinds (refused, no turn played), `{"calls": []}` alone has an empty one (refused too)
        calls_given = bool(self.calls) or "calls" in self.model_fields_set
        given = [k for k, v in (("calls", calls_given), ("message", self.message is not None),
                                ("answer", self.answer is not None)) if v]
        if given == ["message"] or given == ["answer"] or (given == ["calls"] and self.calls):
            return self
        # A PydanticCustomError, not a ValueError: OpenEnv sends `errors()` to the client as JSON, and a
        # ValueError in an error's context cannot be serialized (the session died with SESSION_ERROR).
        if len(given) > 1:
            problem = f"this one has {' and '.join(given)}" + (" (calls is empty)" if not self.calls else "")
        else:
            empty = ["calls is empty" if "calls" in self.model_fields_set else "no calls",
                     "message is null" if "message" in self.model_fields_set else "no message",
                     "answer is null" if "answer" in self.model_fields_set else "no answer"]
            problem = f"this one has none ({', '.join(empty)})"
        raise PydanticCustomError(
            "action_kind", "an action has exactly one of: calls (at least one tool call), message, answer; {problem}",
            {"problem": problem, "fields": given or ["calls", "message", "answer"]})


class CoworkObservation(Observation):
    """What the turn produced, and the judgement of the state after it."""

    text: str = Field("", description="The new tool results and user words, labelled, as one text.")
    messages: list[dict[str, Any]] = Field(default_factory=list, description="The same as chat messages.")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="The tools' OpenAI schemas (at reset).")
    env_id: str = ""
    episode_id: str = ""
    turn: int = 0
    predicates: list[bool] = Field(default_factory=list, description="Each predicate's pass/fail after the turn.")
    score: float = Field(0.0, description="The weighted predicate score after the turn.")
    state_hash: str = ""
    stop_reason: str | None = None
    episode_reward: float | None = Field(None, description="The episode's reward (when it has ended).")
    stages: list[dict[str, Any]] = Field(default_factory=list, description=(
        "A multi-day scenario's per-day verdicts (id, passed, strict, score, reached, predicates) after the turn; "
        "once the episode has ended, the final evaluation's."))


class CoworkState(State):
    """The episode's place: environment, turn, score, state hash and stop reason."""

    env_id: str | None = None
    score: float = 0.0
    state_hash: str | None = None
    stop_reason: str | None = None


class NoEpisodeError(RuntimeError):
    """A step with no episode in progress (never reset, or the episode has ended)."""


class CoworkOpenEnv(Environment[CoworkAction, CoworkObservation, CoworkState]):
    """An OpenEnv Environment over coworkenv specs; each WebSocket session has its own instance and episode.

    `reset(env=ID_OR_INDEX, seed=n)` starts an episode (without `env`, the seed picks one: index
    seed mod the number of environments); `step(CoworkAction)` plays one turn and returns the
    observation with the step reward (`StepRewards`: the sum is the runner's episode reward).
    Finished records go to `records` and to the settings' `records_path`; so does an episode left
    after at least one turn (a reset to another episode, the client gone, the session closed), with
    stop reason "error". A step with no episode in progress raises `NoEpisodeError`.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, source: SpecSource, settings: EpisodeSettings) -> None:
        super().__init__()
        self.source, self.settings = source, settings
        self.session: EpisodeSession | None = None  # the episode in progress
        self._spare: EpisodeSession | None = None  # the session of the episode before, reset by the next
        self.records: list[EpisodeRecord] = []
        self._rewards: StepRewards | None = None
        self._state = CoworkState()

    def reset(self, seed: int | None = None, episode_id: str | None = None, env: str | int | None = None,
              **kwargs: Any) -> CoworkObservation:
        """Start an episode of environment `env` (or the seed's pick) with episode seed `seed` (default 0)."""
        if kwargs:
            raise ValueError(f"reset parameter(s) {sorted(kwargs)} are not known; use env, seed, episode_id")
        seed = 0 if seed is None else seed
        prepared = self.source.prepared(env if env is not None else seed % len(self.source))
        self._end_episode()
        spare, self._spare = self._spare, None
        self.session = self.settings.start(prepared, seed, episode_id=episode_id, session=spare)
        self._rewards = StepRewards(self.settings.reward, prepared.initial.score)
        return self._observe(self.session.messages, 0.0, tools=self.session.tools)

    def _observe(self, added: list[dict[str, Any]], reward: float, tools: list[dict[str, Any]] | None = None,
                 record: EpisodeRecord | None = None) -> CoworkObservation:
        s = self.session
        assert s is not None
        ev = s.last_evaluation
        self._state = CoworkState(episode_id=s.episode_id, step_count=s.turn, env_id=s.spec.id, score=ev.score,
                                  state_hash=s.state_hash, stop_reason=s.stop_reason)
        return CoworkObservation(
            text=observation_text(added), messages=[dict(m) for m in added], tools=tools or [], env_id=s.spec.id,
            episode_id=s.episode_id, turn=s.turn, predicates=ev.vector(), score=ev.score, state_hash=s.state_hash,
            stop_reason=s.stop_reason, done=s.done, reward=reward,
            episode_reward=record.final.reward if record is not None and record.final is not None else None,
            stages=stage_verdicts(record.final.evaluation if record is not None and record.final is not None else ev))

    def step(self, action: CoworkAction, timeout_s: float | None = None, **kwargs: Any) -> CoworkObservation:
        """Play one agent turn."""
        if self.session is None:
            raise NoEpisodeError("no episode in progress; call reset() first")
        if self.session.done:
            raise NoEpisodeError(f"episode {self.session.episode_id} has ended ({self.session.stop_reason}); "
                                 "call reset() for a new one")
        if action.answer is not None:
            turn = AgentTurn(content=action.answer, expects_reply=False)
        elif action.message is not None:
            turn = AgentTurn(content=action.message)
        else:
            turn = AgentTurn(calls=[PolicyCall(c.tool, c.arguments) for c in action.calls])
        added = self.session.step(turn)
        assert self._rewards is not None
        if not self.session.done:
            return self._observe(added, self._rewards.step(self.session.last_evaluation.score))
        record = self.settings.keep(self.session.finish())
        self.records.append(record)
        return self._observe(added, self._rewards.last(record), record=record)

    @property
    def state(self) -> CoworkState:
        """The episode's place (OpenEnv's /state)."""
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        """Name and description shown by OpenEnv's /metadata."""
        return EnvironmentMetadata(name="coworkenv", description=(
            f"Simulated workspaces for AI coworker agents ({len(self.source)} environments); act with tool calls, "
            "finish with a message to the user."))

    def close(self) -> None:
        """End the session's episode: one left after at least one turn is finished (stop reason "error") and
        recorded, one with no turn yet is released without a record (OpenEnv's HTTP /reset makes those)."""
        self._end_episode()
        if self._spare is not None:
            self._spare.close()  # idempotent
            self._spare = None

    def _end_episode(self) -> None:
        """End the episode in progress as `close` says, keeping its session to reset for the next one."""
        session, self.session = self.session, None
        if session is None:
            return
        self._spare = session
        if session.done or session.turn == 0:
            session.close()  # a finished episode was recorded when it ended; idempotent
            return
        record = self.settings.keep(session.finish())
        self.records.append(record)


def create_server_app(envs: Any, *, limits: EpisodeLimits = EpisodeLimits(), reward: RewardConfig = RewardConfig(),
                      user: UserFactory | None = None, records_path: str | None = None, max_sessions: int = 64,
                      policy_name: str = "openenv") -> Any:
    """The FastAPI app serving `envs` (any spec source `SpecSource.of` takes) the OpenEnv way."""
    source = SpecSource.of(envs)
    settings = EpisodeSettings(limits=limits, user=user, reward=reward, records_path=records_path,
                               policy=PolicyInfo(name=policy_name))
    app = create_app(lambda: CoworkOpenEnv(source, settings), CoworkAction, CoworkObservation,
                     env_name="coworkenv", max_concurrent_envs=max_sessions)
    app.add_exception_handler(NoEpisodeError, _http_no_episode)
    app.add_exception_handler(WebSocketDisconnect, _client_gone)
    return app


async def _client_gone(websocket: Any, exc: Exception) -> None:
    """A client that closed its WebSocket first: OpenEnv's session handler still closes it from its side, which
    Starlette answers with `WebSocketDisconnect` (uvicorn logged each as "Exception in ASGI application"). The
    session was destroyed before that close, so there is nothing left to do."""


async def _http_no_episode(request: Request, exc: Exception) -> JSONResponse:
    """HTTP 409 for a /step with no episode: OpenEnv's HTTP routes build a fresh environment per request."""
    return JSONResponse(status_code=409, content={"detail": (
        f"{exc}. OpenEnv's HTTP /reset and /step are stateless (a fresh environment per request), so an "
        "episode cannot be continued over HTTP; play it over the WebSocket session (/ws), as EnvClient does.")})


class CoworkServerError(RuntimeError):
    """An error the server answered (OpenEnv's error message): `code` (e.g. VALIDATION_ERROR) and the
    validation `errors`, each with its `loc` and `msg`; the session stays open."""

    def __init__(self, message: str, code: str, errors: list[dict[str, Any]] | None = None) -> None:
        self.code, self.errors = code, list(errors or [])
        details = "; ".join(f"{'.'.join(map(str, e.get('loc') or [])) or 'action'}: {e.get('msg')}"
                            for e in self.errors)
        super().__init__(f"Server error: {message}{': ' + details if details else ''} (code: {code})")


class CoworkEnvClient(EnvClient[CoworkAction, CoworkObservation, CoworkState]):
    """The typed OpenEnv client of a coworkenv server (async; `.sync()` for a blocking one).

    OpenEnv's `EnvClient` raises a server's error as a bare "Server error: Invalid message"; this
    client raises `CoworkServerError` with the validation errors spelled out (field and problem).
    """

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        await self._send(message)
        response = await self._receive()
        if response.get("type") == "error":
            data = response.get("data", {})
            raise CoworkServerError(str(data.get("message", "Unknown error")), str(data.get("code", "UNKNOWN")),
                                    data.get("errors"))
        return response

    def _step_payload(self, action: CoworkAction | dict[str, Any]) -> dict[str, Any]:
        if isinstance(action, dict):  # a raw payload, as GenericEnvClient sends; the server validates it
            return action
        return action.model_dump(exclude={"metadata"}, exclude_unset=True)  # the one kind the action was given

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CoworkObservation]:
        obs = CoworkObservation(**payload.get("observation", {}), done=payload.get("done", False),
                                reward=payload.get("reward"))
        return StepResult(observation=obs, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> CoworkState:
        return CoworkState(**payload)
