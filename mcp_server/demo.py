"""A small built-in environment to try the server without a spec: `coworkenv serve --python mcp_server.demo:environment`.

It uses the files service only: a CSV to add up, a summary to write, an archive not to touch, and a
large log file whose listing shows how long results are paged.
"""

from __future__ import annotations

from functools import lru_cache

from workspace_sim import Workspace, WorkspaceConfig

from .environment import PythonEnvironment

TASK = (
    "Please add up the amounts in /reports/q1.csv and write the total into a new file "
    "/reports/summary.md as one line 'Total: <number>'. Leave everything under /archive as it is."
)


@lru_cache(maxsize=4)
def _log_lines(n: int) -> str:
    """A deterministic, long log file (about 60 characters a line)."""
    return "".join(f"2025-12-{1 + i % 28:02d} 10:{i % 60:02d}:00 batch job {i:05d} finished in {i % 97} s\n"
                   for i in range(n))


def build_workspace() -> Workspace:
    """The demo's start state."""
    config = WorkspaceConfig(user="ana@example.com", services=["files"], seed=7)
    data = {"files": {"files": [
        {"path": "/reports/q1.csv", "content": "region,amount\nnorth,400\nsouth,350\neast,484\n"},
        {"path": "/reports/README.md", "content": "# Reports\nQuarterly figures live here, one CSV per quarter.\n"},
        {"path": "/archive/2025/batch.log", "content": _log_lines(800)},
        {"path": "/drafts/notes.md", "content": "- ask Bo about the Q2 template\n"},
    ]}}
    return Workspace.create(config, data)


def environment() -> PythonEnvironment:
    """The demo environment (a `module:function` factory for `--python`)."""
    return PythonEnvironment(
        id="demo-q1-total",
        title="Add up the Q1 figures",
        task=TASK,
        workspace_factory=build_workspace,
        predicates=[
            {"kind": "file", "path": "/reports/summary.md", "content": {"contains": "Total: 1234"},
             "description": "the summary states the Q1 total of 1234"},
            {"kind": "unchanged", "scope": "files:/archive/*", "description": "the archive is untouched"},
            {"kind": "only_changed", "scopes": ["files:/reports/*"], "description": "nothing outside /reports changed"},
        ],
        solution=[{"tool": "write_file", "args": {"path": "/reports/summary.md", "content": "Total: 1234\n"}}],
        hidden_facts={"format_preference": "Ana wants the figure without a currency sign (note QUOKKA-77)."},
    )
