"""The error raised when a spec document cannot be loaded: every problem with its field path."""

from __future__ import annotations

from workspace_sim.core.errors import SpecError


class SpecLoadError(SpecError):
    """A spec document that is unreadable or invalid; `problems` lists (field path, problem) pairs."""

    def __init__(self, problems: list[tuple[str, str]], source: str = "") -> None:
        self.problems = problems or [("", "invalid spec")]
        self.source = source
        path, problem = self.problems[0]
        super().__init__(path, problem)
        lines = [f"{p or '(root)'}: {msg}" for p, msg in self.problems]
        head = f"invalid environment spec{f' {source}' if source else ''}"
        self.args = (head + (": " + lines[0] if len(lines) == 1 else ":\n  " + "\n  ".join(lines)),)

    def __str__(self) -> str:
        return str(self.args[0])
