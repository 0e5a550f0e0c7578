"""Batch synthesis: generate, validate, keep only valid environments, and count per capability.

`plan` spreads a count over capabilities (a balanced round robin when none are named) and gives
each environment its own seed; `synthesize` runs a producer over the plan. The procedural producer
generates and validates; a discarded environment is one that failed to generate or to validate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from .capabilities import CAPABILITIES, capability
from .feedback import ValidationReport
from .procedural import TemplateError, generate
from .spec import EnvironmentSpec
from .validate import validate_spec


@dataclass
class CapabilityStats:
    """Per-capability counts for the summary table."""

    generated: int = 0
    valid: int = 0
    repaired: int = 0
    discarded: int = 0


@dataclass
class Attempt:
    """One environment attempt: the spec when valid, the validation report, and how it went."""

    capability: str
    seed: int
    spec: EnvironmentSpec | None
    report: ValidationReport | None = None
    repaired: bool = False
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.spec is not None


@dataclass
class SynthResult:
    """Valid specs in plan order, stats per capability, and every discarded attempt (with why)."""

    specs: list[EnvironmentSpec] = field(default_factory=list)
    stats: dict[str, CapabilityStats] = field(default_factory=dict)
    discarded: list[Attempt] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"stats": {k: asdict(v) for k, v in self.stats.items()},
                "valid": [s.id for s in self.specs],
                "discarded": [{"capability": a.capability, "seed": a.seed, "error": a.error,
                               "feedback": a.report.to_json()["feedback"] if a.report else []} for a in self.discarded]}


Producer = Callable[[str, int], Attempt]


def plan(capabilities: Sequence[str] | None, count: int, seed: int) -> list[tuple[str, int]]:
    """(capability, environment seed) pairs: round robin over the capabilities (all when None)."""
    if count < 1:
        raise ValueError(f"count must be at least 1 (got {count})")
    caps = [capability(c).id for c in capabilities] if capabilities else list(CAPABILITIES)
    return [(caps[i % len(caps)], seed + i // len(caps)) for i in range(count)]


def procedural_attempt(cap: str, seed: int) -> Attempt:
    """Generate one environment procedurally and validate it by execution."""
    try:
        spec = generate(cap, seed)
    except TemplateError as e:
        return Attempt(cap, seed, None, error=str(e))
    report = validate_spec(spec)
    if not report.ok:
        return Attempt(cap, seed, None, report, error=f"invalid: {report.feedback[0].line()}")
    return Attempt(cap, seed, spec, report)


def synthesize(capabilities: Sequence[str] | None, count: int, seed: int = 0, producer: Producer = procedural_attempt,
               on_attempt: Callable[[Attempt], None] | None = None) -> SynthResult:
    """Run `producer` over the plan; returns the valid specs and the per-capability statistics."""
    jobs = plan(capabilities, count, seed)
    result = SynthResult(stats={c: CapabilityStats() for c in dict.fromkeys(c for c, _ in jobs)})
    for cap, env_seed in jobs:
        attempt = producer(cap, env_seed)
        st = result.stats[cap]
        st.generated += 1
        if attempt.valid:
            st.valid += 1
            st.repaired += attempt.repaired
            result.specs.append(attempt.spec)  # type: ignore[arg-type]
        else:
            st.discarded += 1
            result.discarded.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)
    return result
