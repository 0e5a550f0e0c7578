"""Baselines: `noop` (answers at once, does nothing) and `random` (seeded random tool calls, then answers)."""

from __future__ import annotations

import random
import re
from typing import Any

from workspace_sim.record import PolicyInfo
from ..turns import AgentTurn, EpisodeContext, PolicyCall

NOOP_ANSWER = "I have looked at your request but made no changes."


class NoopPolicy:
    """Never calls a tool; every turn is the same short answer."""

    def info(self) -> PolicyInfo:
        """`noop`."""
        return PolicyInfo(name="noop", settings={})

    def start(self, context: EpisodeContext) -> None:
        """Nothing to prepare."""

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """The fixed answer."""
        return AgentTurn(content=NOOP_ANSWER)


_WORD = re.compile(r"[/\w.@:-]{3,}")


class RandomPolicy:
    """Makes `calls` random tool calls (one per turn), then answers; reproducible for the episode's seed.

    Arguments follow each tool's JSON schema: strings are drawn from words seen in the transcript
    (paths, addresses, ids), so some calls hit real records; numbers, booleans, enums, arrays and
    objects are drawn from their declared types.
    """

    def __init__(self, calls: int = 5) -> None:
        if not isinstance(calls, int) or calls < 0:
            raise ValueError(f"calls must be a whole number >= 0, got {calls!r}")
        self.calls = calls
        self._rng = random.Random(0)
        self._made = 0

    def info(self) -> PolicyInfo:
        """`random` with its number of calls."""
        return PolicyInfo(name="random", settings={"calls": self.calls})

    def start(self, context: EpisodeContext) -> None:
        """Seed from the episode's seed and environment."""
        self._rng = random.Random(f"random-policy:{context.spec.id}:{context.seed}")
        self._made = 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """A random call while any remain, else the answer."""
        if self._made >= self.calls or not tools:
            return AgentTurn(content="Done.", expects_reply=False)
        self._made += 1
        words = sorted({w for m in messages for w in _WORD.findall(m.get("content") or "")}) or ["x"]
        fn = self._rng.choice(tools)["function"]
        return AgentTurn(calls=[PolicyCall(fn["name"], self._value(fn.get("parameters") or {}, words, 0))])

    def _value(self, schema: dict[str, Any], words: list[str], depth: int) -> Any:
        rng = self._rng
        if schema.get("enum"):
            return rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if schema.get(key):
                return self._value(rng.choice(schema[key]), words, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = rng.choice(kind)
        if kind == "object" or "properties" in schema:
            props = schema.get("properties") or {}
            required = set(schema.get("required") or [])
            return {k: self._value(v, words, depth + 1) for k, v in props.items()
                    if k in required or (depth < 2 and rng.random() < 0.3)}
        if kind == "array":
            return [self._value(schema.get("items") or {}, words, depth + 1) for _ in range(rng.randint(0, 2))]
        if kind == "integer":
            lo = int(schema.get("minimum", 0))
            return rng.randint(lo, max(lo, min(int(schema.get("maximum", lo + 10)), lo + 10)))
        if kind == "number":
            return round(rng.uniform(0, 10), 2)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "null":
            return None
        return rng.choice(words)
