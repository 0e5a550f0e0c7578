"""How a workspace is set up: who acts, when, with which services, rules and faults."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from workspace_sim.rules.faults import Fault
from workspace_sim.core.limits import WorkspaceLimits
from workspace_sim.rules.policies import Policy
from workspace_sim.text.validation import AwareTime, TimeZoneName


class WorkspaceConfig(BaseModel):
    """The fixed settings of one workspace (not part of its mutable state)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    user: str = Field("user@example.com", description="Email of the person the agent acts for.")
    services: list[str] = Field(default_factory=lambda: ["files", "mail", "calendar", "contacts", "tickets"])
    now: AwareTime = Field(datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc), description="Simulated start time.")
    timezone: TimeZoneName = "UTC"
    tick_seconds: float = Field(1.0, ge=0, description="Simulated seconds each call advances the clock.")
    seed: int = 0
    policies: list[Policy] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    max_result_chars: int = Field(20000, ge=200)
    sandbox: dict[str, Any] = Field(default_factory=dict, description="Limits for execution tools.")
    limits: WorkspaceLimits = Field(default_factory=WorkspaceLimits, description=(
        "Bounds on each call (time budget, argument sizes) and on the workspace's growth."))

    @field_validator("user")
    @classmethod
    def _lower(cls, v: str) -> str:
        return v.strip().lower()

