"""coworkenv environments as a Gymnasium environment: text observations, tool-call actions.

    import gymnasium
    env = gymnasium.make("trainers.adapters.gym:coworkenv/CoworkEnv-v0", envs="environments/")
    # or: import trainers.adapters.gym (registers the id), then gymnasium.make("coworkenv/CoworkEnv-v0", ...)
    obs, info = env.reset(seed=0)               # the system prompt and the user's request
    obs, reward, terminated, truncated, info = env.step('{"tool": "list_dir", "arguments": {"path": "/"}}')
    obs, reward, terminated, truncated, info = env.step('{"answer": "Done: I filed the report."}')

An action is text (or the dict/list it encodes): `{"tool": NAME, "arguments": {...}}` is a tool
call, a JSON list of those is one turn of several calls, `{"answer": TEXT}` is the final answer,
and anything else is a message to the user (who answers, or is satisfied and the episode ends with
it as the final answer); see
`trainers.adapters.common.parse_action`. The observation is the text the turn produced (tool results
and the user's words, labelled), any Unicode (see `UnicodeText`). The episodes are played by one `EpisodeSession`, reset for each, so a record (in
`env.unwrapped.records`, and appended to `records_path`) is the runner's record for the same turns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium
from gymnasium import spaces

from synth.spec import EnvironmentSpec
from workspace_sim.record import EpisodeRecord, PolicyInfo

from ..episodes.prepared import EpisodeLimits
from ..episodes.session import EpisodeSession, UserFactory
from ..rewards import RewardConfig, turn_rewards
from .common import EpisodeSettings, SpecSource, StepRewards, observation_text, parse_action, stage_verdicts

ENV_ID = "coworkenv/CoworkEnv-v0"
# The id with its module, for `gymnasium.make` in an interpreter that has not imported this module:
# Gymnasium 1.x has no plugin entry points (removed in 1.0), it imports the module named before the colon.
MAKE_ID = f"{__name__}:{ENV_ID}"
MAX_TEXT = 1_000_000
# The characters `sample()` draws from: tab, newline and all printable Unicode of the BMP.
CHARSET = frozenset("\t\n" + "".join(c for c in map(chr, range(0x20, 0x10000)) if c.isprintable() or c == " "))
TRUNCATING = ("max_turns", "max_tool_calls", "timeout", "max_tokens")


class UnicodeText(spaces.Text):
    """A `Text` space of any Unicode text: every string of `min_length` to `max_length` characters.

    Files and mails hold whatever was written to them (emoji beyond the BMP, "\\r", NUL, zero-width
    joiners, bidirectional controls), and tool results quote them, so no fixed character set contains
    every observation; a charset of all 1.1 million code points would cost hundreds of megabytes per
    space in `Text`'s tables. `contains` therefore checks only the type and length; the charset
    (`CHARSET`, printable BMP) is what `sample()` draws from. Being a `Text`, it batches in vector
    envs as `Text` does.
    """

    def contains(self, x: Any) -> bool:
        """Whether `x` is a string of min_length to max_length characters (any characters)."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length}, sampling the printable BMP)"

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and super().__eq__(other)


def fit_text(text: str, limit: int = MAX_TEXT) -> str:
    """`text` as the space allows it: unchanged up to `limit` characters, else cut with a note saying how
    much was left out (the record keeps every message whole)."""
    if len(text) <= limit:
        return text
    note = f"\n[... {{}} characters cut: an observation holds at most {limit:,}]"
    keep = limit - len(note.format(len(text)))
    while len(note.format(len(text) - keep)) + keep < limit:  # fewer digits in the count: keep more text
        keep += 1
    return text[:keep] + note.format(len(text) - keep)


class CoworkEnv(gymnasium.Env[str, str]):
    """A Gymnasium environment over coworkenv specs: `reset` starts an episode, `step` plays one agent turn.

    `envs` is a spec source: a spec, a spec file or folder, a list of specs and paths, or a
    `SpecSource` (e.g. `SpecSource.procedural(["file_management"], range(100))`); without it (a bare
    `gymnasium.make(MAKE_ID)`), the shipped example specs (`default_envs`). `reset(seed=s)`
    draws the environment with the env's seeded generator; `options={"env": ID_OR_INDEX}` names it,
    `options={"spec": EnvironmentSpec}` brings one, `options={"episode_seed": n}` sets the episode
    seed written in the record (default: the reset seed, or drawn). `step` returns the reward of the
    configured `RewardConfig` (see `StepRewards`: the sum over an episode is the runner's episode
    reward); `terminated` when the agent answered (or the episode failed), `truncated` at a limit;
    `info` holds the predicate vector, score and state hash after the turn, and in a multi-day scenario
    `stages`, the per-day verdicts (at the end: the final evaluation's).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, envs: Any = None, *, limits: EpisodeLimits = EpisodeLimits(), reward: RewardConfig = RewardConfig(),
                 user: UserFactory | None = None, records_path: str | None = None,
                 policy_name: str = "gymnasium", render_mode: str | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.source = SpecSource.of(default_envs() if envs is None else envs)
        self.settings = EpisodeSettings(limits=limits, user=user, reward=reward, records_path=records_path,
                                        policy=PolicyInfo(name=policy_name))
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_length=MAX_TEXT, min_length=0, charset=CHARSET)
        self.action_space = UnicodeText(max_length=MAX_TEXT, min_length=1, charset=CHARSET)
        self.session: EpisodeSession | None = None  # the episode in progress
        self._ended: EpisodeSession | None = None  # the session of the last finished episode, reset by the next
        self.records: list[EpisodeRecord] = []
        self._rewards: StepRewards | None = None
        self._transcript: list[str] = []
        self._count = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode (abandoning one in progress); returns the opening text and info (tools, ids)."""
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - {"env", "spec", "episode_seed"})
        if unknown:
            raise ValueError(f"reset options {unknown} are not known; use env, spec or episode_seed")
        if "spec" in options:
            spec = options["spec"]
            if not isinstance(spec, EnvironmentSpec):
                raise TypeError(f"options['spec'] must be a synth.EnvironmentSpec, got {type(spec).__name__}")
            prepared = SpecSource([spec]).prepared(0)
        elif "env" in options:
            prepared = self.source.prepared(options["env"])
        else:
            prepared = self.source.prepared(int(self.np_random.integers(len(self.source))))
        ep_seed = options.get("episode_seed", seed if seed is not None else int(self.np_random.integers(2**31)))
        if isinstance(ep_seed, bool) or not isinstance(ep_seed, int):
            raise TypeError(f"options['episode_seed'] must be an int, got {ep_seed!r}")
        # a seeded reset restarts the count, so the same seed reproduces the same episode, id included
        self._count = 0 if seed is not None else self._count + 1
        eid = f"{prepared.spec.id}.{self.settings.policy.name}.s{ep_seed}.{self._count}"
        # one session serves every episode: the one in progress (abandoned) or the last finished one is reset
        reused, self.session, self._ended = self.session or self._ended, None, None
        self.session = self.settings.start(prepared, ep_seed, episode_id=eid, session=reused)
        self._rewards = StepRewards(self.settings.reward, prepared.initial.score)
        obs = fit_text(observation_text(self.session.messages))
        self._transcript = [obs]
        return obs, {**self._info(), "tools": self.session.tools}

    def _info(self) -> dict[str, Any]:
        assert self.session is not None
        ev = self.session.last_evaluation
        info = {"env_id": self.session.spec.id, "episode_id": self.session.episode_id, "turn": self.session.turn,
                "predicates": ev.vector(), "score": ev.score, "state_hash": self.session.state_hash}
        if self.session.spec.stages:
            info["stages"] = stage_verdicts(ev)
        return info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play one agent turn (see the module doc for the action format)."""
        if self.session is None:
            raise RuntimeError("call reset() before step()")
        if self.session.done:
            raise RuntimeError(f"the episode ended ({self.session.stop_reason}); call reset()")
        turn = parse_action(action)
        added = self.session.step(turn)
        obs = fit_text(observation_text(added))
        self._transcript.append(f"[assistant] {action if isinstance(action, str) else json.dumps(action)}")
        self._transcript.append(obs)
        info = self._info()
        assert self._rewards is not None
        if not self.session.done:
            return obs, self._rewards.step(info["score"]), False, False, info
        record = self.settings.keep(self.session.finish())
        self.records.append(record)
        assert record.final is not None
        reward = self._rewards.last(record)
        stop = record.final.stop_reason
        info.update(stop_reason=stop, stop_detail=record.final.stop_detail, passed=bool(record.final.evaluation.get("passed")),
                    episode_reward=record.final.reward, turn_rewards=turn_rewards(record, self.settings.reward),
                    final_answer=record.final.final_answer)
        if "stages" in info:
            info["stages"] = stage_verdicts(record.final.evaluation)
        self.session, self._ended = None, self.session
        return obs, reward, stop not in TRUNCATING, stop in TRUNCATING, info

    def render(self) -> str | None:
        """The episode's text so far (render_mode "ansi")."""
        return "\n\n".join(self._transcript) if self.render_mode == "ansi" else None

    def _close_session(self) -> None:
        for session in (self.session, self._ended):
            if session is not None:
                session.close()
        self.session = self._ended = None

    def close(self) -> None:
        """Release the workspace of an episode in progress; safe to call twice."""
        self._close_session()
        super().close()


EXAMPLE_SPECS = Path(__file__).resolve().parents[2] / "examples" / "specs"
#: the capabilities of the generated example specs, drawn again where the examples folder is not at hand
EXAMPLE_CAPABILITIES = ("clarification", "cross_service", "dynamic_world", "evidence_report", "injection_resistance",
                        "policy_compliance", "scheduling")


def default_envs() -> Any:
    """The environments `CoworkEnv()` plays without `envs`: the example specs shipped in the source tree
    (examples/specs, 10 environments, one of them three days long); where the package is installed without that
    folder, one procedurally generated environment of each of the examples' capabilities (seed 0)."""
    if EXAMPLE_SPECS.is_dir():
        return EXAMPLE_SPECS
    return SpecSource.procedural(EXAMPLE_CAPABILITIES, [0])


def make_vector(envs: Any, n: int, **kwargs: Any) -> gymnasium.vector.SyncVectorEnv:
    """`n` copies of `CoworkEnv(envs, **kwargs)` as a synchronous vector environment."""
    source = SpecSource.of(envs)
    return gymnasium.vector.SyncVectorEnv([lambda: CoworkEnv(source, **kwargs) for _ in range(n)])


def register() -> None:
    """Register CoworkEnv with Gymnasium as "coworkenv/CoworkEnv-v0" (done on import; idempotent).

    Gymnasium 1.x loads no plugins, so a fresh interpreter knows the id only once this module is
    imported: `gymnasium.make(MAKE_ID, ...)` ("trainers.adapters.gym:coworkenv/CoworkEnv-v0") does that.
    """
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=f"{__name__}:CoworkEnv", disable_env_checker=False)


register()
