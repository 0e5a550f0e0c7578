"""The typed results of the shell service (it keeps no tables: the files it changes are the files service's).

It also declares the service, `SERVICE`: the availability check (the files service, a reachable Docker
engine) and the start-data check (a well-formed `sandbox` section).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.core.registry import Service
from workspace_sim.sandboxes.settings import sandbox_settings


class FileChanges(BaseModel):
    """The workspace paths a sandboxed run changed, by kind of change."""

    model_config = ConfigDict(extra="forbid")
    written: list[str] = Field(default_factory=list, description="Files created or changed, sorted by path.")
    deleted: list[str] = Field(default_factory=list, description="Files deleted, sorted by path.")
    folders_created: list[str] = Field(default_factory=list, description="Folders created.")
    folders_deleted: list[str] = Field(default_factory=list, description="Folders deleted.")


class CommandResult(BaseModel):
    """What one shell command did: its exit, its output and the workspace files it changed."""

    model_config = ConfigDict(extra="forbid")
    command: str = Field(description="The command line as it was run.")
    exit_code: int | None = Field(description="The command's exit status; None when it was stopped before exiting.")
    timed_out: bool = Field(description="Whether the command ran past its time limit and was stopped.")
    stdout: str = Field(description="What the command wrote to standard output (long output shortened).")
    stderr: str = Field(description="What the command wrote to standard error (long output shortened).")
    files: FileChanges = Field(description="The workspace files and folders the command changed (saved back).")
    notes: list[str] = Field(description="Remarks on the run: limits hit, paths not saved back.")


def _available(config: Any) -> tuple[bool, str]:
    if "files" not in config.services:
        return False, "the shell service needs the files service (add 'files' to services)"
    from workspace_sim.sandboxes.engine import engine_status

    settings = sandbox_settings(config)
    return engine_status(settings.docker_host, settings.image)


def _prepare(tables: dict, config: Any) -> None:
    sandbox_settings(config)  # a malformed `sandbox` section fails at creation, naming the field


SERVICE = Service("shell", {}, title="Shell (Docker sandbox)", prepare=_prepare, availability=_available,
                  blocking=True)
