"""What every framework adapter shares: where specs come from, the episode settings, actions, step rewards.

An adapter is a thin face over `trainers.episodes.session.EpisodeSession` (the episode protocol:
reset, step, done, finish, close; the runner's turn semantics, the same record writer), so an episode played through Gymnasium, OpenEnv or verifiers
gives the same `EpisodeRecord` and reward as `coworkenv run` with the same turns, and replays the
same way. This module holds the parts the faces share:

- `SpecSource`: the environments to draw from (spec files or folders, specs, or a procedural
  capability sampler), picked by id, index or seed;
- `EpisodeSettings`: limits, simulated user, reward function, transport, where records go;
- `turn_from_message` / `parse_action`: an OpenAI-style assistant message, or the text action of
  the Gymnasium/OpenEnv faces (a JSON tool call, a list of them, or a message), as an `AgentTurn`;
- `StepRewards`: per-step rewards whose sum is exactly the episode reward of the reward function;
- `stage_verdicts`: a multi-day scenario's per-day verdicts, as the faces report them.

A multi-day scenario plays through every face with the runner's rules: a message the user is
satisfied with, or an explicit answer, closes the open working day while days remain, and the next
day's instructions and announced changes come back as the user's message of that turn.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_server.jsoncheck import MAX_DEPTH, JsonProblem, parse_client_json
from synth.spec import EnvironmentSpec
from workspace_sim.record import EpisodeRecord, PolicyInfo

from ..episodes.backends import Transport
from ..episodes.prepared import EpisodeLimits, PreparedSpec
from ..episodes.session import EpisodeSession, UserFactory
from ..episodes.sources import load_specs
from ..episodes.turns import AgentTurn, PolicyCall
from ..rewards import RewardConfig, episode_reward, shaping_rewards

class ActionError(ValueError):
    """An action the adapter cannot read; the message says what is wrong and what to send."""


class SpecSource:
    """The environments an adapter draws episodes from, each prepared once (start state built, hash taken).

    Build it from spec files or folders (`SpecSource.from_paths`), from specs (`SpecSource(specs)`),
    or from a procedural capability sampler (`SpecSource.procedural(capabilities, seeds)`, which
    generates `synth.procedural.generate(capability, seed)` for every pair, in that order).
    """

    def __init__(self, specs: Iterable[EnvironmentSpec]) -> None:
        self.specs = list(specs)
        if not self.specs:
            raise ValueError("a spec source needs at least one environment spec")
        for i, s in enumerate(self.specs):
            if not isinstance(s, EnvironmentSpec):
                raise TypeError(f"specs[{i}] is a {type(s).__name__}, not a synth.EnvironmentSpec")
        self.by_id: dict[str, int] = {}
        for i, s in enumerate(self.specs):
            if s.id in self.by_id:
                raise ValueError(f"specs[{i}] repeats the environment id {s.id!r} of specs[{self.by_id[s.id]}]")
            self.by_id[s.id] = i
        self._prepared: dict[int, PreparedSpec] = {}

    @classmethod
    def from_paths(cls, paths: Iterable[str | Path]) -> "SpecSource":
        """Spec files, or folders of them (SourceError names a path that is missing or a spec that fails)."""
        return cls(load_specs(paths))

    @classmethod
    def procedural(cls, capabilities: Sequence[str], seeds: Iterable[int]) -> "SpecSource":
        """Procedurally generated environments: every capability with every seed (ValueError for unknown ones)."""
        from synth.procedural import generate

        seeds = list(seeds)
        return cls(generate(c, s) for c in capabilities for s in seeds)

    @classmethod
    def of(cls, source: "SpecSource | EnvironmentSpec | str | Path | Iterable[Any]") -> "SpecSource":
        """Whatever names environments: a SpecSource, a spec, a path, or a list of specs and paths."""
        if isinstance(source, SpecSource):
            return source
        if isinstance(source, EnvironmentSpec):
            return cls([source])
        if isinstance(source, (str, Path)):
            return cls.from_paths([source])
        items = list(source)
        specs = [s for s in items if isinstance(s, EnvironmentSpec)]
        paths = [p for p in items if isinstance(p, (str, Path))]
        if len(specs) + len(paths) != len(items):
            bad = next(x for x in items if not isinstance(x, (EnvironmentSpec, str, Path)))
            raise TypeError(f"environments are specs or spec paths, got a {type(bad).__name__}")
        return cls(specs + (load_specs(paths) if paths else []))

    def __len__(self) -> int:
        return len(self.specs)

    @property
    def ids(self) -> list[str]:
        """The environment ids, in order."""
        return [s.id for s in self.specs]

    def index(self, env: str | int) -> int:
        """The position of environment `env` (an id or an index); ValueError names the known ones."""
        if isinstance(env, int) and not isinstance(env, bool):
            if not 0 <= env < len(self.specs):
                raise ValueError(f"environment index {env} is out of range (0..{len(self.specs) - 1})")
            return env
        if env not in self.by_id:
            known = ", ".join(self.ids[:10]) + (" ..." if len(self.specs) > 10 else "")
            raise ValueError(f"unknown environment {env!r}; this source has {known}")
        return self.by_id[env]

    def prepared(self, env: str | int) -> PreparedSpec:
        """Environment `env` prepared for episodes (built on first use, then reused)."""
        i = self.index(env)
        if i not in self._prepared:
            self._prepared[i] = PreparedSpec(self.specs[i])
        return self._prepared[i]


@dataclass(frozen=True)
class EpisodeSettings:
    """How an adapter's episodes run: limits, simulated user (default: the spec's scripted user), reward
    function, tool transport ("direct" or in-process "mcp"), the policy name written in records, and
    `records_path`, a JSONL file every finished episode's record is appended to (None: kept in memory only)."""

    limits: EpisodeLimits = EpisodeLimits()
    user: UserFactory | None = None
    reward: RewardConfig = RewardConfig()
    transport: Transport = "direct"
    policy: PolicyInfo = field(default_factory=lambda: PolicyInfo(name="adapter"))
    records_path: str | Path | None = None
    _serial: Any = field(default_factory=itertools.count, repr=False, compare=False)

    def start(self, prepared: PreparedSpec, seed: int, episode_id: str | None = None,
              group: str | None = None, session: EpisodeSession | None = None) -> EpisodeSession:
        """A new episode of `prepared` under these settings; its group defaults to the environment id, as in a
        batch, and its id to ENV.POLICY.sSEED.N, N counting the episodes started under these settings.

        Given the `session` of an earlier episode (started under these settings), that session is reset to the
        new episode (the one in progress abandoned without a record) instead of a new one being built."""
        episode_id = episode_id or f"{prepared.spec.id}.{self.policy.name}.s{seed}.{next(self._serial)}"
        group = group or prepared.spec.id
        if session is not None:
            session.reset(seed, prepared, episode_id=episode_id, group=group)
            return session
        return EpisodeSession(prepared, self.policy, seed=seed, episode_id=episode_id, limits=self.limits,
                              user=self.user, transport=self.transport, group=group, reward=self.reward)

    def keep(self, record: EpisodeRecord) -> EpisodeRecord:
        """Append a finished record to `records_path` (when set) and return it."""
        if self.records_path is not None:
            record.write(self.records_path)
        return record


def _call(obj: Any, where: str) -> PolicyCall:
    if not isinstance(obj, dict):
        raise ActionError(f"{where} must be a JSON object {{\"tool\": NAME, \"arguments\": {{...}}}}, "
                          f"got {type(obj).__name__}")
    unknown = sorted(set(obj) - {"tool", "name", "arguments", "id"})
    if unknown:
        raise ActionError(f"{where} has unknown key(s) {unknown}; use \"tool\" and \"arguments\"")
    name = obj.get("tool", obj.get("name"))
    if not isinstance(name, str) or not name:
        raise ActionError(f"{where}.tool must name a tool (a non-empty string)")
    args = obj.get("arguments", {})
    if not isinstance(args, (dict, str)):
        raise ActionError(f"{where}.arguments must be a JSON object, got {type(args).__name__}")
    cid = obj.get("id")
    return PolicyCall(name, args, cid if isinstance(cid, str) else None)


def parse_action(action: Any) -> AgentTurn:
    """The text action of the Gymnasium and OpenEnv faces as an agent turn.

    A JSON object `{"tool": NAME, "arguments": {...}}` is one tool call; a JSON list of such objects
    is a turn of several calls; `{"answer": TEXT}` is the final answer (the episode ends with it);
    `{"message": TEXT}` or any text that is not JSON is a message to the user, who answers it or, when
    satisfied, ends the episode with it as the final answer. A dict or list may be passed
    instead of its JSON text. JSON of the wrong shape raises ActionError naming the problem; a call's
    arguments that are not valid JSON text are passed on and answered by the episode's usual error.
    """
    if isinstance(action, str):
        text = action.strip()
        if not text.startswith(("{", "[")):
            return AgentTurn(content=action)
        try:
            action = json.loads(text)
        except json.JSONDecodeError:
            return AgentTurn(content=action)  # not JSON: words to the user, as a model's plain reply is
        except RecursionError:
            raise ActionError(f"the action is nested deeper than {MAX_DEPTH} levels") from None
        except ValueError as e:  # e.g. an integer longer than Python converts
            raise ActionError(f"the action is not acceptable JSON: {e}") from None
        if text.count("[") + text.count("{") > MAX_DEPTH or "\\u" in text:
            try:  # the same bounds as an MCP client's JSON: nesting and lone surrogates
                parse_client_json(text)
            except JsonProblem as e:
                raise ActionError(f"the action is {e}") from None
    for key, final in (("message", None), ("answer", False)):
        if isinstance(action, dict) and key in action:
            if set(action) != {key} or not isinstance(action[key], str):
                raise ActionError(f"a{'n' if key == 'answer' else ''} {key} action is {{\"{key}\": TEXT}} with nothing else")
            return AgentTurn(content=action[key], expects_reply=final)
    if isinstance(action, dict):
        return AgentTurn(calls=[_call(action, "the action")])
    if isinstance(action, list):
        if not action:
            raise ActionError("an empty list of tool calls is not an action; send at least one call or a message")
        return AgentTurn(calls=[_call(c, f"action[{i}]") for i, c in enumerate(action)])
    raise ActionError(f"an action is JSON text, a dict or a list, got {type(action).__name__}")


def turn_from_message(message: Any) -> AgentTurn:
    """An OpenAI-style assistant message (a dict or an object with `content` and `tool_calls`) as an agent turn.

    Tool-call arguments stay the raw JSON text the model sent, so malformed JSON is answered with the
    runner's usual `invalid_arguments` error.
    """
    get = message.get if isinstance(message, dict) else (lambda k, d=None: getattr(message, k, d))
    content = get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(getattr(p, "text", "")) for p in content)
    calls = []
    for c in get("tool_calls") or []:
        cget = c.get if isinstance(c, dict) else (lambda k, d=None, c=c: getattr(c, k, d))
        fn = cget("function")
        if fn is not None:  # OpenAI wire format: {"id", "function": {"name", "arguments"}}
            fget = fn.get if isinstance(fn, dict) else (lambda k, d=None, fn=fn: getattr(fn, k, d))
            name, args = fget("name"), fget("arguments")
        else:  # flat format (verifiers' ToolCall): {"id", "name", "arguments"}
            name, args = cget("name"), cget("arguments")
        calls.append(PolicyCall(str(name or ""), args if isinstance(args, (dict, str)) else "", cget("id")))
    return AgentTurn(content=content or None, calls=calls)


class StepRewards:
    """Per-step rewards for step-wise APIs, summing exactly to the episode's reward under `config`.

    A step that is not the last earns its shaping term (when shaping is on): shaping_coef * (gamma *
    phi_after - phi_before), phi the predicate score. The last step earns the rest: the episode
    reward (terminal reward, penalties, shaping) minus what earlier steps earned. Penalties land on
    the last step because whether an injected fault was handled is known only when the episode ends.
    """

    def __init__(self, config: RewardConfig, initial_score: float) -> None:
        self.config = config
        self.phi = initial_score
        self.paid = 0.0

    def step(self, score: float) -> float:
        """The reward of a step that left the predicate score at `score` (not the last step)."""
        r = 0.0
        if self.config.shaping:
            [f] = shaping_rewards([self.phi, score], self.config.gamma)
            r = self.config.shaping_coef * f
        self.phi = score
        self.paid += r
        return r

    def last(self, record: EpisodeRecord) -> float:
        """The reward of the last step: the episode reward minus what earlier steps earned."""
        return episode_reward(record, self.config) - self.paid


def observation_text(messages: Sequence[dict[str, Any]]) -> str:
    """The messages the agent has not seen yet as one text: tool results and the user's words, labelled."""
    parts = []
    for m in messages:
        role, content = m.get("role"), m.get("content") or ""
        if role == "tool":
            parts.append(f"[tool {m.get('name')}] {content}")
        elif role in ("user", "system"):
            parts.append(f"[{role}] {content}")
    return "\n\n".join(parts)


def stage_verdicts(evaluation: Any) -> list[dict[str, Any]]:
    """The per-stage verdicts (id, passed, strict, score, reached, predicates) of an Evaluation or of its JSON
    (a record's `final.evaluation`); [] for a single-day environment."""
    if isinstance(evaluation, dict):
        return list(evaluation.get("stages") or [])
    stages = getattr(evaluation, "stages", None)
    return [s.to_json() for s in stages()] if callable(stages) else []
