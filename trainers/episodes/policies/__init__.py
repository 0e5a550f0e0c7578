"""Policies by name: `teacher`, its `stale` and `forgetful` baselines, the blind baselines (`spray`, `first_pick`,
`blind_writer`, `answer_only`), `noop`, `random`, `openai` and `hf`, built from picklable `PolicySpec`s."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..turns import Policy
from .baselines import NoopPolicy, RandomPolicy
from .blind import BLIND_POLICIES
from .teacher import ForgetfulPolicy, StalePolicy, TeacherPolicy

POLICY_NAMES = ("teacher", "stale", "forgetful", *BLIND_POLICIES, "noop", "random", "openai", "hf")


class PolicyConfigError(ValueError):
    """A policy name or setting that cannot be used; the message names it and what is accepted."""


@dataclass(frozen=True)
class PolicySpec:
    """A policy's name and settings: what a worker process (or Ray task) needs to build the policy."""

    name: str
    settings: dict[str, Any] = field(default_factory=dict)

    def build(self) -> Policy:
        """The policy; unknown names or bad settings raise PolicyConfigError."""
        return make_policy(self.name, **self.settings)


_ACCEPTS = {
    "teacher": {"calls_per_turn"},
    "stale": {"calls_per_turn"},
    "forgetful": {"calls_per_turn"},
    **{name: set() for name in BLIND_POLICIES},
    "noop": set(),
    "random": {"calls"},
    "openai": {"model", "base_url", "api_key", "temperature", "max_tokens", "seed", "timeout", "max_retries",
               "logprobs", "backoff", "images", "audio"},
    "hf": {"path", "max_new_tokens", "temperature"},
}


def make_policy(name: str, **settings: Any) -> Policy:
    """Build a policy by name; settings that are None count as not given."""
    settings = {k: v for k, v in settings.items() if v is not None}
    if name not in _ACCEPTS:
        raise PolicyConfigError(f"unknown policy {name!r}; choose one of {', '.join(POLICY_NAMES)}")
    extra = sorted(set(settings) - _ACCEPTS[name])
    if extra:
        raise PolicyConfigError(f"policy {name} has no setting(s) {', '.join(extra)}; it accepts "
                                f"{', '.join(sorted(_ACCEPTS[name])) or 'none'}")
    try:
        if name == "teacher":
            return TeacherPolicy(**settings)
        if name == "stale":
            return StalePolicy(**settings)
        if name == "forgetful":
            return ForgetfulPolicy(**settings)
        if name in BLIND_POLICIES:
            return BLIND_POLICIES[name]()
        if name == "noop":
            return NoopPolicy()
        if name == "random":
            return RandomPolicy(**settings)
        if name == "openai":
            from synth.llm.settings import LLMSettings, SettingsError

            from .openai_policy import OpenAIPolicy

            logprobs = bool(settings.pop("logprobs", False))
            backoff = float(settings.pop("backoff", 0.5))
            images = settings.pop("images", "user")
            audio = settings.pop("audio", "off")
            try:
                llm = LLMSettings.from_env(**settings)
            except SettingsError as e:
                raise PolicyConfigError(f"policy openai: {e}") from None
            try:
                return OpenAIPolicy(llm, logprobs=logprobs, backoff=backoff, images=images, audio=audio)
            except ValueError as e:
                raise PolicyConfigError(f"policy openai: {e}") from None
        from .hf import HFPolicy

        if "path" not in settings:
            raise PolicyConfigError("policy hf needs the path of a local model folder (--model PATH)")
        try:
            return HFPolicy(**settings)
        except (FileNotFoundError, OSError) as e:
            raise PolicyConfigError(f"policy hf: {e}") from None
    except (TypeError, ValueError) as e:
        if isinstance(e, PolicyConfigError):
            raise
        raise PolicyConfigError(f"policy {name}: {e}") from None


__all__ = ["POLICY_NAMES", "NoopPolicy", "PolicyConfigError", "PolicySpec", "RandomPolicy", "TeacherPolicy",
           "make_policy"]
