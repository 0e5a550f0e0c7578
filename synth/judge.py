"""The model judge over any OpenAI-compatible endpoint: workspace_sim's `ModelJudge` asking through `ChatClient`.

Settings come from explicit values (the CLI's --judge-* options), else COWORKENV_JUDGE_MODEL,
COWORKENV_JUDGE_BASE_URL, COWORKENV_JUDGE_API_KEY (the key also from COWORKENV_OPENAI_API_KEY or
OPENAI_API_KEY), COWORKENV_JUDGE_TIMEOUT, COWORKENV_JUDGE_CACHE. No model configured means no model judge: `judged`
predicates use the deterministic key facts. Requests use temperature 0 and seed 0.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from workspace_sim.predicates.judge import VERDICT_SCHEMA, Judge, JudgeCache, ModelJudge

from .llm.client import ChatClient
from .llm.settings import LLMSettings, SettingsError

ENV = {"model": "COWORKENV_JUDGE_MODEL", "base_url": "COWORKENV_JUDGE_BASE_URL", "api_key": "COWORKENV_JUDGE_API_KEY",
       "timeout": "COWORKENV_JUDGE_TIMEOUT", "cache": "COWORKENV_JUDGE_CACHE"}


@dataclass(frozen=True)
class JudgeConfig:
    """How to build the judge (picklable, so batches ship it to worker processes); `model` None: key facts."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    max_retries: int = 2
    attempts: int = 2
    cache: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **explicit: Any) -> "JudgeConfig":
        """Explicit values (None: not given), else the COWORKENV_JUDGE_* variables; SettingsError names a bad one."""
        env = os.environ if env is None else env
        values = {k: v for k, v in explicit.items() if v is not None}
        for name, var in ENV.items():
            if name not in values and env.get(var):
                values[name] = env[var]
        if "api_key" not in values:
            key = env.get("COWORKENV_OPENAI_API_KEY") or env.get("OPENAI_API_KEY")
            if key:
                values["api_key"] = key
        if "timeout" in values:
            try:
                values["timeout"] = float(values["timeout"])
            except ValueError:
                raise SettingsError(f"judge timeout must be a number of seconds, got {values['timeout']!r} "
                                    f"(--judge-timeout or {ENV['timeout']})") from None
        config = cls(**values)
        if config.model is None and (config.base_url is not None or explicit.get("api_key") is not None):
            raise SettingsError(f"a judge endpoint was given but no model: pass --judge-model or set {ENV['model']}")
        if config.model is not None:
            config.settings()  # refuse bad values now, not at the first judgement
        return config

    def settings(self) -> LLMSettings:
        """The endpoint settings of the model judge (temperature 0, seed 0)."""
        try:
            return LLMSettings(model=self.model or "", base_url=self.base_url or "https://api.openai.com/v1",
                               api_key=self.api_key or "", timeout=self.timeout, max_retries=self.max_retries,
                               temperature=0.0, seed=0)
        except ValueError as e:
            raise SettingsError(f"bad judge settings: {e}") from None

    def build(self) -> Judge | None:
        """The model judge, or None when no model is configured (the key facts judge)."""
        if self.model is None:
            return None
        return openai_judge(self.settings(), attempts=self.attempts,
                            cache=JudgeCache(self.cache) if self.cache else JudgeCache())

    def describe(self) -> str:
        """A one-line description without the key."""
        return f"model {self.model} at {self.base_url or 'https://api.openai.com/v1'}" if self.model else "key facts"


def openai_judge(settings: LLMSettings, attempts: int = 2, cache: JudgeCache | None = None) -> ModelJudge:
    """A `ModelJudge` asking `settings`' endpoint for JSON verdicts; refusals and errors count as failed attempts."""
    client = ChatClient(settings)

    def ask(messages: list[dict[str, str]]) -> str:
        done = client.complete_json(messages, VERDICT_SCHEMA, "verdicts", seed=0)
        if done.refusal is not None or done.text is None:
            raise ValueError(f"the judge refused: {done.refusal}")
        return done.text

    return ModelJudge(settings.model, ask, attempts=attempts, cache=cache if cache is not None else JudgeCache(),
                      scope=settings.base_url)


__all__ = ["ENV", "JudgeConfig", "openai_judge"]
