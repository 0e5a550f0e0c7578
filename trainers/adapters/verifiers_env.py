"""coworkenv environments as a verifiers environment (the multi-turn stack prime-rl trains with).

    import verifiers as vf
    env = vf.load_environment("trainers.adapters.verifiers_env", envs="environments/", reward={"terminal": "partial"})
    results = env.evaluate_sync(client=vf.ClientConfig(api_base_url=URL, api_key_var="OPENAI_API_KEY"), model=MODEL)

`load_environment(envs=..., ...)` returns a `CoworkVerifiersEnv`, a verifiers `MultiTurnEnv`: each
dataset row is one coworkenv environment and seed (prompt: the system prompt and the user's request;
info: coworkenv_env and seed; verifiers keeps info["env_id"] for its own routing), the tools are the registry's tools of the environment (their schemas as
verifiers `Tool` definitions), and each rollout is an `EpisodeSession`: `env_response` plays the
model's turn (tool calls, or a message the simulated user answers or accepts as the final answer,
world events as the spec says) and the rollout ends when the session stops. The rubric's reward is
the episode reward of the configured `RewardConfig` (the runner's), with the predicate score, pass
and the fraction of working days passed as zero-weight metrics; records go to `records_path`. In a
multi-day scenario, a message the user accepts closes the day while days remain, and the next
day's instructions come back as the user's message of that turn.
"""

from __future__ import annotations

from typing import Any

import verifiers as vf
from datasets import Dataset
from workspace_sim.record import EpisodeRecord, PolicyInfo

from ..episodes.prepared import EpisodeLimits
from ..episodes.session import EpisodeSession, UserFactory
from ..rewards import RewardConfig
from .common import EpisodeSettings, SpecSource, stage_verdicts, turn_from_message

_KEY = "coworkenv_session"


def _wire(messages: list[dict[str, Any]]) -> vf.Messages:
    """Tool results and user words as verifiers' typed messages (`vf.ToolMessage`, `vf.UserMessage`): raw dicts
    made verifiers warn and re-validate the whole transcript on every turn."""
    out: vf.Messages = []
    for m in messages:
        if m["role"] == "tool":
            out.append(vf.ToolMessage(content=m["content"], tool_call_id=m["tool_call_id"]))
        elif m["role"] == "user":
            out.append(vf.UserMessage(content=m["content"]))
    return out


class CoworkVerifiersEnv(vf.MultiTurnEnv):
    """A verifiers MultiTurnEnv over coworkenv specs (see the module doc); `records` holds finished episodes."""

    def __init__(self, source: SpecSource, settings: EpisodeSettings, seeds: list[int], **kwargs: Any) -> None:
        self.source, self.settings = source, settings
        self.records: list[EpisodeRecord] = []
        rows, tools = [], {}
        opening: EpisodeSession | None = None  # one session opens every environment, for its prompt
        for i in range(len(source)):
            prepared = source.prepared(i)
            if opening is None:
                opening = EpisodeSession(prepared, settings.policy, limits=settings.limits, user=settings.user)
            else:
                opening.reset(0, prepared)
            prompt = [dict(m) for m in opening.messages]
            for t in prepared.tools:
                tools.setdefault(t["function"]["name"], t["function"])
            for seed in seeds:
                rows.append({"prompt": prompt, "answer": "",
                             "info": {"coworkenv_env": prepared.spec.id, "seed": seed}})
        if opening is not None:
            opening.close()
        tool_defs = [vf.Tool(name=f["name"], description=f.get("description", ""), parameters=f["parameters"])
                     for f in tools.values()]
        rubric = vf.Rubric(funcs=[self.coworkenv_reward, self.predicate_score, self.passed, self.stages_passed],
                           weights=[1.0, 0.0, 0.0, 0.0])
        # the session applies the turn limit itself (after running the last turn's calls), so verifiers' is off
        super().__init__(dataset=Dataset.from_list(rows), rubric=rubric, tool_defs=tool_defs, max_turns=-1, **kwargs)

    async def setup_state(self, state: vf.State) -> vf.State:
        """Start the rollout's episode (the environment and seed of its dataset row)."""
        info = state["info"]
        prepared = self.source.prepared(info["coworkenv_env"])
        state[_KEY] = self.settings.start(prepared, int(info.get("seed", 0)))
        return state

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        """Play the model's last turn; tool results and the user's reply come back; the end sets final_env_response."""
        session: EpisodeSession = state[_KEY]
        added = session.step(turn_from_message(messages[-1]))
        reply = _wire(added)
        if session.done:
            self._finish(state)
            state["final_env_response"] = reply
        return reply

    def _finish(self, state: vf.State) -> EpisodeRecord:
        if "coworkenv_record" not in state:
            session: EpisodeSession = state[_KEY]
            record = self.settings.keep(session.finish())
            self.records.append(record)
            state["coworkenv_record"] = record
        return state["coworkenv_record"]

    @vf.cleanup
    async def close_episode(self, state: vf.State) -> None:
        """Record an episode verifiers stopped early (its error, timeout or prompt length); stop reason "error"."""
        if _KEY in state:
            self._finish(state)

    async def coworkenv_reward(self, state: vf.State, **kwargs: Any) -> float:
        """The episode reward under the configured RewardConfig (the runner's)."""
        record = self._finish(state)
        assert record.final is not None
        return float(record.final.reward)

    async def predicate_score(self, state: vf.State, **kwargs: Any) -> float:
        """The weighted fraction of passing predicates at the end."""
        return float(self._finish(state).final.evaluation.get("score", 0.0))  # type: ignore[union-attr]

    async def passed(self, state: vf.State, **kwargs: Any) -> float:
        """1.0 when every predicate passed."""
        return 1.0 if self._finish(state).final.evaluation.get("passed") else 0.0  # type: ignore[union-attr]

    async def stages_passed(self, state: vf.State, **kwargs: Any) -> float:
        """The fraction of working days passed in a multi-day scenario (a single-day one: as `passed`)."""
        evaluation = self._finish(state).final.evaluation  # type: ignore[union-attr]
        stages = stage_verdicts(evaluation)
        if not stages:
            return 1.0 if evaluation.get("passed") else 0.0
        return sum(1.0 for st in stages if st.get("passed")) / len(stages)


def load_environment(envs: Any = "environments", seeds: Any = (0,), reward: RewardConfig | dict[str, Any] | None = None,
                     limits: EpisodeLimits | dict[str, Any] | None = None, user: UserFactory | None = None,
                     capabilities: list[str] | None = None, records_path: str | None = None,
                     **kwargs: Any) -> CoworkVerifiersEnv:
    """The verifiers entry point: coworkenv environments `envs` (a spec folder or file, a list of specs and
    paths, or a SpecSource), one dataset row per environment and seed in `seeds`, or, with `capabilities`,
    procedural environments of those capabilities for every seed. `reward` and `limits` take the
    objects or their fields as a dict (as `vf-eval --env-args` passes them); other keyword arguments go
    to verifiers' MultiTurnEnv."""
    seeds = [seeds] if isinstance(seeds, int) else list(seeds)
    source = SpecSource.procedural(capabilities, seeds) if capabilities else SpecSource.of(envs)
    if capabilities:
        seeds = [0]
    reward = reward if isinstance(reward, RewardConfig) else RewardConfig(**(reward or {}))
    limits = limits if isinstance(limits, EpisodeLimits) else EpisodeLimits(**(limits or {}))
    settings = EpisodeSettings(limits=limits, user=user, reward=reward, records_path=records_path,
                               policy=PolicyInfo(name="verifiers"))
    return CoworkVerifiersEnv(source, settings, seeds, **kwargs)
