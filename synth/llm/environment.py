"""The LLM generator wired to coworkenv's own spec: EnvironmentSpec, its loader and the validator.

`generate_spec` is what callers use for one environment; `generate_with_repair` (repair.py) is the
spec-agnostic loop underneath. The validator adds one check of its own before synth's: a spec must
carry the capability it was asked for, so the capability's structural demands are enforced.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Callable

from synth.capabilities import Capability, capability as lookup_capability
from synth.feedback import Feedback
from synth.spec import EnvironmentSpec, parse_spec, spec_json_schema

from .client import ChatClient
from .repair import GenerationStats, Validator, feedback_items, generate_with_repair
from .settings import LLMSettings

GENERATOR = "llm"


@lru_cache(maxsize=1)
def _spec_schema() -> dict[str, Any]:
    return spec_json_schema(typed=False)  # the typed one is many times longer than a prompt should carry


def default_validator() -> Validator:
    """synth's execution-based validator (imported when first needed)."""
    from synth.validate import validate_spec

    return validate_spec


def requested_capability_check(cap_id: str, validator: Validator) -> Callable[[EnvironmentSpec], list[Any]]:
    """`validator`, preceded by a check that the spec is tagged with capability `cap_id`."""

    def check(spec: EnvironmentSpec) -> list[Any]:
        if cap_id not in spec.capabilities:
            return [Feedback("capability", "capabilities", f"the spec is not tagged with the requested capability "
                             f"{cap_id!r} (tags: {', '.join(spec.capabilities)})",
                             f"add {cap_id!r} to capabilities and meet what that capability requires")]
        return feedback_items(validator(spec))

    return check


def generate_spec(
    capability: str | Capability,
    requirement: str | None,
    settings: LLMSettings | ChatClient,
    max_repairs: int = 3,
    *,
    validator: Validator | None = None,
    variation: int | None = None,
    seed: int | None = None,
) -> tuple[EnvironmentSpec | None, GenerationStats]:
    """Write one validated EnvironmentSpec for `capability` with the model, repairing up to `max_repairs` times.

    `capability` is a taxonomy id or Capability (an unknown id raises ValueError before any
    request); `requirement` is the workflow to build, or None to let the model choose one. The
    returned spec (None when discarded) records its provenance in `metadata`.
    """
    cap = lookup_capability(capability) if isinstance(capability, str) else capability
    check = requested_capability_check(cap.id, validator or default_validator())
    spec, stats = generate_with_repair(cap, requirement, settings, check, max_repairs, spec_model=parse_spec,
                                       spec_schema=copy.deepcopy(_spec_schema()), variation=variation, seed=seed)
    if spec is None:
        return None, stats
    model = settings.settings.model if isinstance(settings, ChatClient) else settings.model
    provenance = {"generator": GENERATOR, "model": model, "rounds": stats.rounds,
                  "repaired": stats.repaired, "response_format": stats.response_format}
    if requirement:
        provenance["requirement"] = requirement
    return spec.model_copy(update={"metadata": {**spec.metadata, **provenance}}), stats
