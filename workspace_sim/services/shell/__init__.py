"""Shell: run a command in an isolated Docker container that holds the workspace's files in /work."""

from __future__ import annotations

from .records import SERVICE, FileChanges, CommandResult
from .tools import RESOURCE, MAX_COMMAND, SandboxFailure, run_command

SERVICE.add_tools(
    run_command,
)

__all__ = [
    "SERVICE", "RESOURCE", "MAX_COMMAND", "SandboxFailure", "run_command", "FileChanges", "CommandResult",
]
