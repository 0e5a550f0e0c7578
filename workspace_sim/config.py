"""How a workspace is set up: who acts, when, with which services, rules and faults."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .faults import Fault
from .policies import Policy


class WorkspaceConfig(BaseModel):
    """The fixed settings of one workspace (not part of its mutable state)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    user: str = Field("user@example.com", description="Email of the person the agent acts for.")
    services: list[str] = Field(default_factory=lambda: ["files", "mail", "calendar", "contacts", "tickets"])
    now: datetime = Field(datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc), description="Simulated start time.")
    timezone: str = "UTC"
    tick_seconds: float = Field(1.0, ge=0, description="Simulated seconds each call advances the clock.")
    seed: int = 0
    policies: list[Policy] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    max_result_chars: int = Field(20000, ge=200)
    sandbox: dict[str, Any] = Field(default_factory=dict, description="Limits for execution tools.")

    @field_validator("user")
    @classmethod
    def _lower(cls, v: str) -> str:
        return v.strip().lower()

    @field_validator("now")
    @classmethod
    def _aware(cls, v: datetime) -> datetime:
        if v.tzinfo is None:
            raise ValueError("must include a time zone offset")
        return v

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except Exception:
            raise ValueError(f"unknown time zone {v!r}") from None
        return v
