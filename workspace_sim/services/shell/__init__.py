"""Shell: run a command in an isolated Docker container that holds the workspace's files in /work."""

from __future__ import annotations

from workspace_sim.services.shell.records import FileChanges, CommandResult
from workspace_sim.services.shell.tools import SERVICE, RESOURCE, MAX_COMMAND, SandboxFailure, run_command

__all__ = [
    "SERVICE", "RESOURCE", "MAX_COMMAND", "SandboxFailure", "run_command", "FileChanges", "CommandResult",
]
