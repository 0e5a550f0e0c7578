"""Structured validation feedback: what is wrong, where (a field path), and how to fix it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Check = Literal[
    "schema", "references", "predicates", "reference", "do_nothing", "mutants", "multi_turn", "stale", "forgetful",
    "blind", "capability", "coherence",
]


@dataclass(frozen=True)
class Feedback:
    """One validation failure: the check that found it, the spec field path, the problem, a hint."""

    check: Check
    path: str
    problem: str
    hint: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    def line(self) -> str:
        """One line for logs and repair prompts."""
        return f"[{self.check}] {self.path or '(root)'}: {self.problem} -- hint: {self.hint}"


@dataclass
class ValidationReport:
    """The verdict on one spec: feedback items (empty when valid) and figures from the execution."""

    spec_id: str | None
    feedback: list[Feedback] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the spec passed every check."""
        return not self.feedback

    def add(self, check: Check, path: str, problem: str, hint: str) -> None:
        """Record one failure."""
        self.feedback.append(Feedback(check, path, problem, hint))

    def checks_failed(self) -> list[str]:
        """The distinct checks that failed, in order of first failure."""
        return list(dict.fromkeys(f.check for f in self.feedback))

    def text(self) -> str:
        """Every failure on its own line (for a repair prompt), or 'valid'."""
        return "\n".join(f.line() for f in self.feedback) if self.feedback else "valid"

    def to_json(self) -> dict[str, Any]:
        return {"spec_id": self.spec_id, "ok": self.ok, "feedback": [f.to_json() for f in self.feedback],
                "stats": self.stats}
