"""Many LLM-written environments in one go: a balanced mix of capabilities, one client, one tally.

This is what `coworkenv synth --generator llm` calls. It stops early (saying why) when the
endpoint fails in a way every later request would repeat: a rejected key, an unknown model, an
unreachable server.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from synth.capabilities import CAPABILITIES, capability as lookup_capability
from synth.spec import EnvironmentSpec

from .client import ChatClient
from .environment import generate_spec
from .repair import GenerationStats, Validator
from .settings import LLMSettings


@dataclass
class Tally:
    """Counts for one capability (or all): attempts, outcomes, repair rounds and tokens."""

    generated: int = 0
    valid: int = 0
    first_pass_valid: int = 0
    repaired: int = 0
    discarded: int = 0
    rounds: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, stats: GenerationStats) -> None:
        """Count one generation."""
        self.generated += 1
        self.valid += stats.valid
        self.first_pass_valid += stats.first_pass_valid
        self.repaired += stats.repaired
        self.discarded += stats.discarded
        self.rounds += stats.rounds
        self.prompt_tokens += stats.prompt_tokens
        self.completion_tokens += stats.completion_tokens


@dataclass
class BatchResult:
    """The valid specs, every generation's statistics, per-capability tallies, and why it stopped early."""

    specs: list[EnvironmentSpec] = field(default_factory=list)
    stats: list[GenerationStats] = field(default_factory=list)
    by_capability: dict[str, Tally] = field(default_factory=dict)
    stopped: str | None = None

    def total(self) -> Tally:
        """The tallies summed over capabilities."""
        t = Tally()
        for s in self.stats:
            t.add(s)
        return t

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary (no specs): tallies, per-generation statistics, early stop."""
        return {"by_capability": {k: asdict(v) for k, v in self.by_capability.items()},
                "total": asdict(self.total()), "stopped": self.stopped,
                "generations": [s.to_json() for s in self.stats]}


def synthesize_llm(
    capabilities: Sequence[str] | None,
    count: int,
    settings: LLMSettings,
    *,
    requirement: str | None = None,
    max_repairs: int = 3,
    seed: int = 0,
    validator: Validator | None = None,
    on_result: Callable[[EnvironmentSpec | None, GenerationStats], None] | None = None,
) -> BatchResult:
    """Generate `count` environments with the model, cycling through `capabilities` (all when None).

    Generation i asks for variation i with request seed `seed + i`; specs whose id repeats an
    earlier one get "-i" appended. `on_result` is called after each generation (for a progress
    bar or to write the spec). Unknown capability ids raise ValueError before any request.
    """
    if count < 1:
        raise ValueError(f"count must be at least 1 (got {count})")
    caps = [lookup_capability(c) for c in (capabilities or list(CAPABILITIES))]
    result = BatchResult(by_capability={c.id: Tally() for c in caps})
    seen: set[str] = set()
    with ChatClient(settings) as client:
        for i in range(count):
            cap = caps[i % len(caps)]
            spec, stats = generate_spec(cap, requirement, client, max_repairs, validator=validator,
                                        variation=i, seed=seed + i)
            if spec is not None:
                if spec.id in seen:
                    spec = spec.model_copy(update={"id": f"{spec.id[:120]}-{i}"})
                seen.add(spec.id)
                result.specs.append(spec)
            result.stats.append(stats)
            result.by_capability[cap.id].add(stats)
            if on_result is not None:
                on_result(spec, stats)
            if stats.fatal:
                result.stopped = f"stopped after {i + 1} of {count}: {stats.error}"
                break
    return result
