"""Small real environments for training smoke tests and examples: archive one file in a files workspace.

Each `ArchiveEnvironment` is a real workspace (the files service) with real predicates: the named
file must end up under /archive, nothing else may change. They need no synthesis step, so the
trainers can be exercised before any environment generator has run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.predicates import Evaluation, evaluate, parse_predicates


@dataclass
class ArchiveEnvironment:
    """Move `/inbox/<name>` to `/archive/<name>`; the other inbox files must stay where they are."""

    id: str
    name: str
    others: tuple[str, ...] = ("notes.txt",)
    capabilities: list[str] = field(default_factory=lambda: ["files.move"])
    tool_names: list[str] = field(default_factory=lambda: ["list_directory", "move_file"])

    def task_text(self) -> str:
        """The request."""
        return f"Please archive {self.name}: move it from /inbox to /archive."

    def build_workspace(self) -> Workspace:
        """The start state: the file and the others in /inbox, an empty /archive."""
        files = [{"path": f"/inbox/{n}", "content": f"contents of {n}\n"} for n in (self.name, *self.others)]
        return Workspace.create(WorkspaceConfig(services=["files"]),
                                {"files": {"files": files, "folders": [{"path": "/archive"}]}})

    def predicate_docs(self) -> list[dict[str, Any]]:
        """The predicates as JSON documents."""
        return [
            {"kind": "file", "path": f"/archive/{self.name}", "description": f"{self.name} is in /archive"},
            {"kind": "file", "path": f"/inbox/{self.name}", "exists": False, "description": "it left /inbox"},
            *({"kind": "file", "path": f"/inbox/{n}", "description": f"{n} stays in /inbox"} for n in self.others),
        ]

    def evaluate(self, workspace: Workspace, final_answer: str | None = None) -> Evaluation:
        """Judge the workspace with the predicates."""
        return evaluate(parse_predicates(self.predicate_docs()), workspace, final_answer)

    def solution(self) -> list[tuple[str, dict[str, Any]]]:
        """The calls that solve the task."""
        return [("move_file", {"source": f"/inbox/{self.name}", "destination": f"/archive/{self.name}"})]


def archive_environments(n: int, prefix: str = "archive") -> list[ArchiveEnvironment]:
    """`n` distinct archive environments (different file names)."""
    kinds = ["report", "invoice", "memo", "slides", "budget", "minutes", "plan", "draft"]
    return [ArchiveEnvironment(id=f"{prefix}-{i}", name=f"{kinds[i % len(kinds)]}-{i}.md") for i in range(n)]
