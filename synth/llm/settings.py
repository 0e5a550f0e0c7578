"""Where the LLM generator's endpoint, model and key come from: explicit values, then the environment."""

from __future__ import annotations

import os
from typing import Mapping

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

ENV_PREFIX = "COWORKENV_OPENAI_"
_ENV_FIELDS = ("base_url", "model", "api_key", "timeout", "max_retries", "temperature", "seed", "max_tokens")


class SettingsError(ValueError):
    """Settings that cannot be used; the message names the setting and where it came from."""


class LLMSettings(BaseModel):
    """How to reach an OpenAI-compatible chat-completions endpoint.

    `max_retries` bounds the client's own retries of 408/409/429/5xx and dropped connections (with
    exponential backoff, honouring Retry-After); `timeout` is per request, in seconds.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = "https://api.openai.com/v1"
    model: str
    api_key: SecretStr = SecretStr("")
    timeout: float = Field(120.0, gt=0, le=3600)
    max_retries: int = Field(3, ge=0, le=10)
    temperature: float | None = Field(None, ge=0, le=2)
    seed: int | None = None
    max_tokens: int | None = Field(None, gt=0)

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base URL must start with http:// or https:// (got {value!r})")
        return value.rstrip("/")

    @field_validator("model")
    @classmethod
    def _model(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("model name is empty")
        return value.strip()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **explicit: object) -> "LLMSettings":
        """Settings from explicit values, else COWORKENV_OPENAI_<FIELD> (api key also OPENAI_API_KEY).

        Explicit values that are None count as not given. Raises SettingsError naming the setting
        (and the environment variable it was read from) when a value is missing or malformed.
        """
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        origin: dict[str, str] = {}
        for name in _ENV_FIELDS:
            if explicit.get(name) is not None:
                values[name], origin[name] = explicit[name], f"--{name.replace('_', '-')}"
                continue
            var = ENV_PREFIX + name.upper()
            if env.get(var):
                values[name], origin[name] = env[var], var
            elif name == "api_key" and env.get("OPENAI_API_KEY"):
                values[name], origin[name] = env["OPENAI_API_KEY"], "OPENAI_API_KEY"
        unknown = set(explicit) - set(_ENV_FIELDS)
        if unknown:
            raise SettingsError(f"unknown LLM setting(s): {', '.join(sorted(unknown))}")
        if "model" not in values:
            raise SettingsError(f"no model given: pass --model or set {ENV_PREFIX}MODEL")
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            lines = []
            for err in exc.errors():
                field = str(err["loc"][0]) if err.get("loc") else ""
                lines.append(f"{field} (from {origin.get(field, 'default')}): {err['msg']}")
            raise SettingsError("bad LLM settings: " + "; ".join(lines)) from None

    def sampling(self, seed: int | None = None) -> dict[str, object]:
        """The request's sampling options (temperature, seed, max_tokens) that are set; `seed` overrides."""
        out: dict[str, object] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if seed is not None or self.seed is not None:
            out["seed"] = seed if seed is not None else self.seed
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        return out

    def describe(self) -> str:
        """A one-line description without the key (safe to print)."""
        return f"model {self.model} at {self.base_url}"


__all__ = ["ENV_PREFIX", "LLMSettings", "SettingsError"]
