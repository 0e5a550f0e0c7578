"""The limits of the execution tools, read from `WorkspaceConfig.sandbox` with clear errors."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from workspace_sim.core.errors import SpecError, pydantic_error_message

DEFAULT_IMAGE = "coworkenv-sandbox:latest"
_USER = re.compile(r"^(\d+)(?::(\d+))?$")


class SandboxSettings(BaseModel):
    """Limits and choices for `run_command` (Docker) and `run_python` (bubblewrap).

    Every field has a safe default, so `WorkspaceConfig(sandbox={})` is a working sandbox. The
    container never has a network; that is not a setting.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    image: str = Field(DEFAULT_IMAGE, min_length=1, description="Docker image run_command runs in.")
    docker_host: str | None = Field(None, description="Engine URL; default: DOCKER_HOST or the local socket.")
    user: str = Field("1000:1000", description="Numeric uid:gid commands run as; never root.")
    timeout_s: float = Field(10.0, gt=0, le=600, description="Wall time a command may run before it is killed.")
    cpus: float = Field(1.0, gt=0, le=64, description="CPU share of the container.")
    memory_mb: int = Field(256, ge=16, le=65536, description="Memory of the container (no swap).")
    pids: int = Field(64, ge=8, le=4096, description="Most processes and threads in the container.")
    work_mb: int = Field(64, ge=1, le=4096, description="Size of /work (the workspace files) and of /tmp.")
    output_bytes: int = Field(8000, ge=200, le=1_000_000, description="Bytes of stdout and of stderr kept.")
    python_timeout_s: float = Field(10.0, gt=0, le=600, description="Wall time of one run_python call.")
    python_memory_mb: int = Field(512, ge=64, le=65536, description="Address-space limit of run_python.")
    python_tasks: int = Field(256, ge=8, le=4096,
                              description="Most threads (and processes) alive at once in one run_python sandbox.")
    shm_mb: int = Field(8, ge=1, le=1024, description="Size of /dev/shm in run_python's sandbox.")
    bwrap: str = Field("bwrap", min_length=1, max_length=4096,
                       description="bubblewrap executable of run_python's sandbox: a name on PATH or an absolute path.")

    @field_validator("user")
    @classmethod
    def _not_root(cls, v: str) -> str:
        m = _USER.match(v)
        if m is None:
            raise ValueError("must be a numeric 'uid' or 'uid:gid', e.g. '1000:1000'")
        if int(m.group(1)) == 0 or (m.group(2) is not None and int(m.group(2)) == 0):
            raise ValueError("commands must not run as root (uid or gid 0)")
        if int(m.group(1)) == 65534:
            raise ValueError("uid 65534 is the container's own idle process; choose another")
        return v if m.group(2) is not None else f"{v}:{v}"

    @field_validator("bwrap")
    @classmethod
    def _executable(cls, v: str) -> str:
        if any(c.isspace() or ord(c) < 32 for c in v):
            raise ValueError("must be a program name or an absolute path, without spaces or control characters")
        if "/" in v and not v.startswith("/"):
            raise ValueError("a path must be absolute, e.g. '/usr/bin/bwrap'")
        return v

    @property
    def uid(self) -> int:
        """The numeric user id commands run as."""
        return int(self.user.split(":")[0])

    @property
    def gid(self) -> int:
        """The numeric group id commands run as."""
        return int(self.user.split(":")[1])


def sandbox_settings(config: Any) -> SandboxSettings:
    """The sandbox settings of a workspace config; a malformed `sandbox` raises SpecError naming the field."""
    raw = getattr(config, "sandbox", None) or {}
    try:
        return SandboxSettings.model_validate(raw)
    except ValidationError as e:
        raise SpecError("sandbox", pydantic_error_message(e)) from None
