"""Our environments inside TRL's GRPOTrainer, through its `environment_factory` hook.

TRL builds one environment instance per rollout, calls `reset(**dataset_row)` before generating,
exposes the instance's public methods as tools (their schemas come from the methods' signatures
and Google-style docstrings), runs the tool calls the model makes, and passes the instances to the
reward functions. `TRLAdapter` makes such a class from our tool registry: one method per tool,
whose signature and docstring are derived from the registry's JSON schema (the one source of tool
schemas; nested object types are shown as `object`, since TRL reads Python type hints), and whose
body runs the call in the episode's real workspace. Every rollout is recorded as an episode
record; the reward function scores it from the environment's predicates (`trainers.rewards`).

An environment spec is played with the spec's turn semantics (`EpisodeRecorder` over the runner's
`EpisodeSession`), and since TRL's loop ends a rollout at the first completion without a tool call,
its class also offers the pager for long results (`read_result_page`, as every runner channel has) and
the control tools of MCP alone (`mcp_server.control`): `ask_user(question)`
returns the simulated user's reply, and `submit_answer(answer)` closes the working day (the next
day's instructions and world changes come back as its result) or ends the episode. A rollout's
closing text without a call is taken as `submit_answer`. The record is the runner's for the same
turns: questions and reports are messages, not tool calls, in it.

Environments with different tools (the normal case for a folder of mixed tasks) use TRL's
multi-environment mode: one generated class per distinct tool set, `environment_factory` is then a
`{toolset name: factory}` dict and every dataset row carries its `environment`, so TRL renders and
runs only the tools of the row's own environment.

    adapter = TRLAdapter(environments, RewardConfig(terminal="partial"))
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=config,
                          train_dataset=adapter.dataset(), environment_factory=adapter.environment_factory,
                          reward_funcs=[adapter.reward_func])
"""

from __future__ import annotations

import inspect
import itertools
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

from mcp_server.control import CONTROL_TOOLS
from mcp_server.results import PAGER, PAGER_TOOL
from workspace_sim import all_tools
from workspace_sim.record import EpisodeRecord, PolicyInfo

from ..episodes.prepared import EpisodeLimits
from ..rewards import RewardConfig, episode_reward
from .episode import EpisodeRecorder, TrainingEnvironment, plays_scenario

DEFAULT_SYSTEM_PROMPT = "You act for the user in their workspace. Use the tools, then answer."
SPEC_OR_DEFAULT = "default"  # the adapter's system prompt when none is given: see TRLAdapter.prompt_for
_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


def _hint(schema: dict[str, Any]) -> Any:
    """A Python type hint that transformers' get_json_schema renders as (close to) this JSON schema."""
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]  # type: ignore[misc]
    if "anyOf" in schema:
        subs = [s for s in schema["anyOf"] if s.get("type") != "null"]
        inner = _hint(subs[0]) if len(subs) == 1 else Any
        nullable = len(subs) < len(schema["anyOf"])
        return (inner | None) if nullable and inner is not Any else inner
    t = schema.get("type")
    if t == "array":
        return list[_hint(schema.get("items", {}))]  # type: ignore[misc]
    if "$ref" in schema or t is None:
        return dict
    return _JSON_TYPES.get(t, dict)


def _tool_method(name: str) -> Callable[..., str]:
    """A method that runs tool `name` in the episode's workspace (a control tool: talks to the simulated user),
    with the registry's signature and docs."""
    tool = CONTROL_TOOLS[name] if name in CONTROL_TOOLS else PAGER if name == PAGER_TOOL else all_tools()[name]
    schema = tool.input_schema
    required = set(schema.get("required", []))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    doc_args = []
    for arg, prop in schema.get("properties", {}).items():
        hint = _hint(prop)
        annotations[arg] = hint
        default = inspect.Parameter.empty if arg in required else prop.get("default")
        params.append(inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
        doc_args.append(f"    {arg}: {' '.join(str(prop.get('description', arg)).split())}")
    annotations["return"] = str

    def method(self: "_AdapterEnv", **kwargs: Any) -> str:
        return self._call(name, kwargs)

    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    method.__doc__ = tool.description + ("\n\nArgs:\n" + "\n".join(doc_args) if doc_args else "") + \
        "\n\nReturns:\n    The tool's result as text, or an error message saying what to do instead."
    return method


class _AdapterEnv:
    """Base of the generated environment classes: one episode in one of the adapter's environments."""

    _adapter: "TRLAdapter"

    _toolset: str
    _tool_names: list[str]

    def __init__(self) -> None:
        self._recorder: EpisodeRecorder | None = None
        self._serial = next(self._adapter._serials)
        self._episodes = 0

    def reset(self, env_id: str | None = None, **_: Any) -> None:
        """Start a fresh episode in environment `env_id` (the dataset row's env_id column)."""
        adapter = self._adapter
        envs = adapter.envs
        if env_id is None and len(envs) == 1:
            env_id = next(iter(envs))
        if env_id not in envs:
            raise ValueError(f"unknown env_id {env_id!r}; the adapter has {', '.join(sorted(envs))}")
        if adapter.toolset_of[env_id] != self._toolset:
            raise ValueError(f"environment {env_id!r} has tool set {adapter.toolset_of[env_id]!r}, not this class's "
                             f"{self._toolset!r}; route the row with its `environment` column (adapter.dataset() does)")
        self._episodes += 1
        eid = f"trl-{env_id}-{self._serial}-{self._episodes}"
        if self._recorder is not None:
            self._recorder.close()
        env = envs[env_id]
        names = [n for n in self._tool_names if n not in CONTROL_TOOLS and n != PAGER_TOOL]
        restrict = names if (adapter.restricted or not plays_scenario(env)) else None  # a spec offers the runner's
        self._recorder = EpisodeRecorder(env, eid, PolicyInfo(name="trl-grpo"), tool_names=restrict, group=env_id,
                                         reward=adapter.rewards, user=adapter.user, limits=adapter.limits,
                                         system_prompt=adapter.prompt_for(env) if plays_scenario(env) else None)

    def _call(self, name: str, args: dict[str, Any]) -> str:
        rec = self._recorder
        if rec is None:
            raise RuntimeError("reset() must be called before a tool")
        if rec.done:
            return (f"Error (episode_ended): the episode has ended ({rec.session.stop_reason if rec.session else ''}); "
                    "no tool works afterwards. Stop here.")
        if name in CONTROL_TOOLS:
            text = str(args.get("question" if name == "ask_user" else "answer") or "")
            if name == "ask_user" and not text.strip():
                return "Error (invalid_arguments): ask_user needs a question (a non-empty text)."
            rec.turn(text, expects_reply=name == "ask_user")
            if rec.reply is not None:
                return rec.reply
            return "The episode has ended: your answer was the final one. Stop here."
        [result] = rec.turn(None, [(name, args)])
        return result

    def _finish(self, final_answer: str | None) -> EpisodeRecord:
        """Close the episode (answer turn included) and return its record.

        In a spec the closing text is submitted (it ends the episode on the last day); an episode that still
        goes on when TRL's rollout ended stops as "max_turns", saying so.
        """
        rec = self._recorder
        if rec is None:
            raise RuntimeError("reset() must be called before the episode ends")
        if final_answer and not rec.done:
            rec.turn(final_answer, expects_reply=False if rec.session is not None else None)
        if rec.session is not None:  # an episode still going on was cut short by TRL's own limits
            record = rec.finish("max_turns", detail="TRL's rollout ended before the episode did")
        else:
            record = rec.finish("answered" if final_answer else "max_turns")
        self._recorder = None
        return record


def _final_answer(completion: Any) -> str | None:
    if isinstance(completion, str):
        return completion.strip() or None
    for m in reversed(completion or []):
        if isinstance(m, dict) and m.get("role") == "assistant" and not m.get("tool_calls"):
            content = m.get("content")
            if isinstance(content, list):
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            return (content or "").strip() or None
    return None


class TRLAdapter:
    """Plugs a set of our environments into TRL's GRPOTrainer (dataset, environment factory, reward).

    Each environment offers its own tools: its `tool_names` (or every tool its workspace enables), or,
    when `tool_names` is given, those of them its workspace enables. Environments that offer the same
    tools share one generated class; `toolsets` maps each class's name ("toolset-0", ...) to its
    tool names and `toolset_of` each environment id to its class's name. With one tool set,
    `environment_factory` is a plain factory; with several it is TRL's `{name: factory}` dict and `dataset()` rows carry the `environment` column that routes
    them, so every rollout sees and calls only its own environment's tools.
    """

    def __init__(self, envs: Sequence[TrainingEnvironment], rewards: RewardConfig | None = None,
                 tool_names: Sequence[str] | None = None, records_path: str | Path | None = None,
                 system_prompt: str | None = SPEC_OR_DEFAULT,
                 user: Callable[[Any, int], Any] | None = None, limits: EpisodeLimits | None = None) -> None:
        if not envs:
            raise ValueError("TRLAdapter needs at least one environment")
        self.envs = {e.id: e for e in envs}
        if len(self.envs) != len(envs):
            raise ValueError("environment ids must be unique")
        self.rewards = rewards or RewardConfig()
        self.system_prompt = system_prompt
        self.user = user  # a spec's simulated user factory (default: its scripted user)
        self.limits = limits  # a spec episode's limits (default: the runner's)
        self.restricted = bool(tool_names)
        if tool_names:
            unknown = [n for n in tool_names if n not in all_tools() and n not in CONTROL_TOOLS and n != PAGER_TOOL]
            if unknown:
                raise ValueError(f"tool(s) {unknown} are not in the tool registry")
        per_env: dict[str, tuple[str, ...]] = {}
        for e in envs:
            if tool_names:  # the named tools this environment's workspace enables
                enabled = e.build_workspace().tools
                per_env[e.id] = tuple(n for n in tool_names if n in enabled)
            else:  # the tools it offers by default
                per_env[e.id] = tuple(self._env_tools(e))
            if plays_scenario(e):  # a spec's pager for long results, and its conversation (questions, reports)
                per_env[e.id] += tuple(n for n in (PAGER_TOOL, *CONTROL_TOOLS) if n not in per_env[e.id])
        if tool_names:
            offered = {n for v in per_env.values() for n in v}
            nowhere = [n for n in tool_names if n not in offered and n not in CONTROL_TOOLS and n != PAGER_TOOL]
            if nowhere:
                raise ValueError(f"tool(s) {nowhere} are enabled in none of the environments' workspaces")
        self.toolsets: dict[str, list[str]] = {}
        self.toolset_of: dict[str, str] = {}
        name_of: dict[tuple[str, ...], str] = {}
        for env_id, names in per_env.items():
            if names not in name_of:
                name_of[names] = f"toolset-{len(name_of)}"
                self.toolsets[name_of[names]] = list(names)
            self.toolset_of[env_id] = name_of[names]
        self.tool_names = list(tool_names) if tool_names else sorted({n for v in per_env.values() for n in v})
        self.tool_names += [n for n in (PAGER_TOOL, *CONTROL_TOOLS) if n not in self.tool_names and
                            any(n in v for v in per_env.values())]
        self.records: list[EpisodeRecord] = []
        self.records_path = Path(records_path) if records_path else None
        self._serials = itertools.count()
        self.environment_classes: dict[str, type[_AdapterEnv]] = {}
        for i, (toolset, names) in enumerate(self.toolsets.items()):
            cls_name = "CoworkEnvironment" if len(self.toolsets) == 1 else f"CoworkEnvironment{i}"
            self.environment_classes[toolset] = type(cls_name, (_AdapterEnv,), {
                "_adapter": self, "_toolset": toolset, "_tool_names": list(names),
                **{n: _tool_method(n) for n in names}})

    def prompt_for(self, env: Any) -> str | None:
        """The system message of `env`'s rollouts: the one given, else the runner's for a spec (as in SFT data and
        `coworkenv run`) and DEFAULT_SYSTEM_PROMPT for other environments."""
        if self.system_prompt != SPEC_OR_DEFAULT:
            return self.system_prompt
        if plays_scenario(env):
            from ..episodes.prepared import system_prompt

            return system_prompt(getattr(env, "spec", env))
        return DEFAULT_SYSTEM_PROMPT

    @staticmethod
    def _env_tools(env: TrainingEnvironment) -> list[str]:
        names = getattr(env, "tool_names", None)
        return list(names) if names else sorted(env.build_workspace().tools)

    @property
    def multi_environment(self) -> bool:
        """Whether the environments have more than one tool set (TRL's multi-environment mode)."""
        return len(self.toolsets) > 1

    @property
    def environment_class(self) -> type[_AdapterEnv]:
        """The generated environment class when every environment has the same tools (ValueError otherwise)."""
        if self.multi_environment:
            raise ValueError(f"the environments have {len(self.toolsets)} tool sets, so there is a class per tool "
                             "set: use environment_classes or environment_for(env_id)")
        return next(iter(self.environment_classes.values()))

    @property
    def environment_factory(self) -> Callable[[], _AdapterEnv] | dict[str, Callable[[], _AdapterEnv]]:
        """What GRPOTrainer's `environment_factory` takes: a factory (one tool set) or `{toolset: factory}`."""
        if not self.multi_environment:
            return self.environment_class
        return dict(self.environment_classes)

    def environment_for(self, env_id: str) -> _AdapterEnv:
        """A fresh instance of the class that serves environment `env_id` (its tools are its public methods)."""
        return self.environment_classes[self.toolset_of[self._known(env_id)]]()

    def tool_names_of(self, env_id: str) -> list[str]:
        """The tools environment `env_id` offers (the ones its rollouts see), in order."""
        return list(self.toolsets[self.toolset_of[self._known(env_id)]])

    def _known(self, env_id: str) -> str:
        if env_id not in self.envs:
            raise ValueError(f"unknown env_id {env_id!r}; the adapter has {', '.join(sorted(self.envs))}")
        return env_id

    def dataset(self, repeats: int = 1) -> Any:
        """A datasets.Dataset of prompts: one row per environment (times `repeats`) with its env_id and, when
        there are several tool sets, the `environment` column TRL routes the row by."""
        from datasets import Dataset

        rows = []
        for _ in range(repeats):
            for env in self.envs.values():
                prompt = [{"role": "user", "content": env.task_text()}]
                system = self.prompt_for(env)
                if system:
                    prompt.insert(0, {"role": "system", "content": system})
                row: dict[str, Any] = {"prompt": prompt, "env_id": env.id}
                if self.multi_environment:
                    row["environment"] = self.toolset_of[env.id]
                rows.append(row)
        return Dataset.from_list(rows)

    def reward_func(self, completions: list[Any], environments: list[_AdapterEnv] | None = None,
                    **_: Any) -> list[float]:
        """Score each rollout from its environment's predicates (closing and recording the episode)."""
        if environments is None:
            raise ValueError("reward_func needs the environments; pass environment_factory to GRPOTrainer")
        out = []
        for completion, env in zip(completions, environments, strict=True):
            record = env._finish(_final_answer(completion))
            reward = episode_reward(record, self.rewards)
            assert record.final is not None
            record.final.reward = reward
            self.records.append(record)
            if self.records_path is not None:
                record.write(self.records_path)
            out.append(reward)
        return out
