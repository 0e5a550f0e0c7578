"""Injected faults, declared as data: seeded transient errors on chosen tools at a chosen rate."""

from __future__ import annotations

import fnmatch
import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.core.errors import InjectedFault

_MESSAGES = {
    "rate_limit": "429 Too Many Requests: rate limit exceeded for {tool}; wait and retry",
    "server_error": "503 Service Unavailable: {tool} failed on the server side; retry may succeed",
    "timeout": "504 Gateway Timeout: {tool} did not answer in time; nothing was changed, retry",
}


class Fault(BaseModel):
    """Transient errors on tools matching `tools` (glob patterns), with probability `rate` per call."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tools: list[str] = Field(min_length=1, description="Tool names or glob patterns the fault applies to.")
    kind: Literal["rate_limit", "server_error", "timeout"] = "server_error"
    rate: float = Field(0.5, ge=0.0, le=1.0, description="Probability that a call fails.")
    seed: int = 0
    max_consecutive: int = Field(2, ge=1, description="At most this many failures in a row, so retries succeed.")
    description: str = ""

    def applies_to(self, tool: str) -> bool:
        """Whether a tool name matches this fault."""
        return any(fnmatch.fnmatchcase(tool, p) for p in self.tools)


def fault_for_call(faults: list[Fault], tool: str, counters: dict[str, int]) -> InjectedFault | None:
    """Decide, deterministically, whether this call of `tool` fails; updates `counters` in place.

    `counters` holds, per fault and tool, how many calls were seen and the current failure streak,
    so the same call sequence always fails at the same places and a retry eventually succeeds.
    """
    for i, fault in enumerate(faults):
        if not fault.applies_to(tool):
            continue
        seen_key, streak_key = f"fault:{i}:{tool}:n", f"fault:{i}:{tool}:streak"
        n = counters.get(seen_key, 0)
        counters[seen_key] = n + 1
        h = hashlib.blake2b(f"{fault.seed}:{i}:{tool}:{n}".encode(), digest_size=8).digest()
        draw = int.from_bytes(h, "big") / 2**64
        streak = counters.get(streak_key, 0)
        if draw < fault.rate and streak < fault.max_consecutive:
            counters[streak_key] = streak + 1
            err = InjectedFault(_MESSAGES[fault.kind].format(tool=tool), kind=fault.kind)
            return err
        counters[streak_key] = 0
    return None
