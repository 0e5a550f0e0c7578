"""What an episode is run against: its limits, its spec prepared once for many episodes, the system prompt.

`EpisodeLimits` caps turns, tool calls and wall time (scaled to the environment's reference when
not given); `PreparedSpec` builds a spec's start workspace once (episodes fork it), takes its hash,
lists the offered tools and judges the start state; `system_prompt(spec)` is the agent's standing
instruction every face of the episode session gives by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_server.results import PAGER
from synth.spec import EnvironmentSpec
from workspace_sim import Workspace
from workspace_sim.predicates import Judge


@dataclass(frozen=True)
class EpisodeLimits:
    """When an episode is cut short: assistant turns, tool calls, and wall-clock seconds.

    A turn or call limit left as None is scaled to the environment (`for_spec`): three times what its
    reference solution needs, and never below 30 turns or 100 calls, so a five-day scenario of 100 calls
    is not cut off by limits sized for a single task.
    """

    max_turns: int | None = None
    max_tool_calls: int | None = None
    max_seconds: float = 600.0

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_tool_calls"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        if not self.max_seconds > 0:
            raise ValueError(f"max_seconds must be positive, got {self.max_seconds!r}")

    def for_spec(self, spec: EnvironmentSpec) -> "EpisodeLimits":
        """These limits with every unset one scaled to `spec`'s reference solution."""
        steps, calls = len(spec.reference.steps), len(spec.reference.calls())
        return EpisodeLimits(self.max_turns if self.max_turns is not None else max(30, 3 * (steps + 1)),
                             self.max_tool_calls if self.max_tool_calls is not None else max(100, 3 * calls),
                             self.max_seconds)

    def to_json(self) -> dict[str, Any]:
        """The limits as record settings."""
        return {"max_turns": self.max_turns, "max_tool_calls": self.max_tool_calls, "max_seconds": self.max_seconds}


class _SpecEnvironment:
    """The spec as the MCP episode sees it, with its content hash computed once."""

    def __init__(self, spec: EnvironmentSpec, env_hash: str, judge: Judge | None = None) -> None:
        self.spec, self.id, self.title, self.judge = spec, spec.id, spec.title, judge
        self.capabilities = list(spec.capabilities)
        self._hash = env_hash

    def task_text(self) -> str:
        return self.spec.task_text()

    def build_workspace(self) -> Workspace:
        return self.spec.build_workspace()

    def evaluate(self, workspace: Workspace, final_answer: str | None) -> Any:
        return self.spec.evaluate(workspace, final_answer, judge=self.judge)

    def content_hash(self) -> str:
        return self._hash


class PreparedSpec:
    """A spec ready for many episodes: its start workspace built once (episodes fork it), its hash, and the
    judge of its `judged` predicates (None: their key facts)."""

    def __init__(self, spec: EnvironmentSpec, judge: Judge | None = None) -> None:
        self.spec, self.judge = spec, judge
        self.env_hash = spec.content_hash()
        self.start = spec.build_workspace()
        self.env = _SpecEnvironment(spec, self.env_hash, judge)
        offered = [t.openai_schema() for t in self.start.tools.values()]
        offered.append(PAGER.openai_schema())
        self.tools = offered
        self.initial = spec.evaluate(self.start, None, judge=judge)

    def workspace(self) -> Workspace:
        """A fresh workspace at the start state."""
        return self.start.fork()


def system_prompt(spec: EnvironmentSpec) -> str:
    """The agent's standing instructions: whom it works for, when it is, how to ask and how to finish."""
    person = next((p for p in spec.world.people if p.email.lower() == spec.user.lower()), None)
    who = f"{person.name} <{spec.user}>" if person else spec.user
    now = spec.now.isoformat(timespec="minutes")
    return (f"You are an AI coworker acting for {who} at {spec.world.organisation.name}, in their workspace. "
            f"It is now {now} (their time zone: {spec.timezone}). Do what they ask using the tools, follow the "
            "workplace rules, and change nothing they did not ask for. If you need information only they have, "
            "ask them. When you are done, reply with a short summary of what you did.")
