"""The typed results of the python service (it keeps no tables: the files it changes are the files service's).

It also declares the service, `SERVICE`: the availability check (the files service, a working bubblewrap
sandbox) and the start-data check (a well-formed `sandbox` section).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.core.registry import Service
from workspace_sim.sandboxes.settings import sandbox_settings

RunStatus = Literal["ok", "error", "timeout", "killed"]


class FileChanges(BaseModel):
    """The workspace paths the snippet changed, by kind of change."""

    model_config = ConfigDict(extra="forbid")
    written: list[str] = Field(default_factory=list, description="Files created or changed, sorted by path.")
    deleted: list[str] = Field(default_factory=list, description="Files deleted, sorted by path.")
    folders_created: list[str] = Field(default_factory=list, description="Folders created.")
    folders_deleted: list[str] = Field(default_factory=list, description="Folders deleted.")


class PythonRun(BaseModel):
    """What one Python snippet did: how it ended, its output and the workspace files it changed."""

    model_config = ConfigDict(extra="forbid")
    status: RunStatus = Field(description="How the run ended: ok (exited), error (an exception), timeout (stopped "
                                          "at the time limit) or killed (by a resource limit).")
    exit_code: int | None = Field(description="The process's exit status; None when it did not exit by itself.")
    error: str | None = Field(description="The exception or the reason it was killed; None when it ran cleanly.")
    stdout: str = Field(description="What the snippet printed to standard output (long output truncated).")
    stderr: str = Field(description="What the snippet wrote to standard error (long output truncated).")
    files: FileChanges = Field(description="The workspace files and folders the snippet changed (saved back).")
    notes: list[str] = Field(description="Remarks on the run: limits hit, paths not saved or not visible.")


def _available(config: Any) -> tuple[bool, str]:
    if "files" not in config.services:
        return False, "the python service needs the files service (add 'files' to services)"
    from workspace_sim.sandboxes.python_sandbox import isolation_status

    return isolation_status(sandbox_settings(config))


def _prepare(tables: dict, config: Any) -> None:
    sandbox_settings(config)  # a malformed `sandbox` section fails at creation, naming the field


SERVICE = Service("python", {}, title="Python (bubblewrap sandbox)", prepare=_prepare, availability=_available,
                  blocking=True)
