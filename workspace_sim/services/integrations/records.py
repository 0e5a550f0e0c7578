"""The records of integrations: a connected service and the secrets it holds.

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`INTEGRATIONS`).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.validation import record_id, short_name

Status = Literal["active", "degraded", "error", "disabled"]
SecretKind = Literal["api_key", "webhook_url", "client_secret", "signing_secret", "token"]
MAX_NAME, MAX_NOTES, MAX_SECRET, MAX_SECRETS = 120, 5_000, 500, 10
_PRINTABLE = re.compile(r"^[\x21-\x7e]+$")


class Secret(BaseModel):
    """One credential of an integration: its kind, value, when it was issued and, once rotated, revoked."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: SecretKind = Field("api_key",
        description="What kind of credential: api_key, webhook_url, client_secret, signing_secret or token.")
    value: str = Field(description="The credential itself (a secret: never to be shown or sent on).")
    created: datetime | None = Field(None, description="When it was issued.")
    revoked: datetime | None = Field(None, description="When it was revoked (rotated out); None while it is live.")

    @field_validator("value")
    @classmethod
    def _value(cls, v: str) -> str:
        if not 8 <= len(v) <= MAX_SECRET or not _PRINTABLE.match(v):
            raise ValueError(f"secret value must be 8-{MAX_SECRET} printable characters without spaces")
        return v

    @property
    def live(self) -> bool:
        return self.revoked is None

    def masked(self) -> str:
        """The value as lists show it: its last four characters."""
        return f"...{self.value[-4:]}"


class Integration(Record):
    """A connected service: provider, health (status, error rate 0-1, monthly calls, last verified), owner, notes
    and secrets (at most one live secret of each kind; rotated ones stay, revoked)."""

    id: str = Field(description="The integration's id.")
    name: str = Field(description="The integration's name.")
    service: str = Field(description="The outside provider it connects to, e.g. Stripe.")
    status: Status = Field("active", description="active, degraded (some calls failing), error or disabled.")
    error_rate: float = Field(0.0, ge=0.0, le=1.0, description="The share of recent calls that failed, 0 to 1.")
    monthly_calls: int = Field(0, ge=0, le=10**12, description="Calls made in the last month.")
    last_verified: datetime | None = Field(None, description="When its connection was last checked.")
    owner: str | None = Field(None, description="The e-mail address of who looks after it.")
    notes: str = Field("", max_length=MAX_NOTES, description="Free-text notes.")
    secrets: list[Secret] = Field(default_factory=list, max_length=MAX_SECRETS * 10,
        description="Its credentials, rotated ones kept (revoked); at most one live per kind.")
    created: datetime | None = Field(None, description="When it was connected.")
    updated: datetime | None = Field(None, description="When it last changed.")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "integration id", "int-stripe")

    @field_validator("name", "service")
    @classmethod
    def _names(cls, v: str) -> str:
        return short_name(v, "integration name/service", MAX_NAME)

    @field_validator("owner", mode="before")
    @classmethod
    def _owner(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "integration owner")

    @model_validator(mode="after")
    def _check(self) -> "Integration":
        live = [s.kind for s in self.secrets if s.live]
        if len(set(live)) != len(live):
            raise ValueError(f"integration {self.id} has two live secrets of one kind; revoke the older one")
        values = [s.value for s in self.secrets]
        if len(set(values)) != len(values):
            raise ValueError(f"integration {self.id} lists the same secret value twice")
        return self

    def live_secret(self, kind: str) -> Secret | None:
        return next((s for s in self.secrets if s.live and s.kind == kind), None)

    def secret_values(self) -> list[tuple[str, str]]:
        """(label, value) of every secret, live or revoked: what `workspace_sim.rules.secrets` watches for."""
        return [(f"{s.kind}{'' if s.live else ' (rotated)'}", s.value) for s in self.secrets]


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Give integrations and their secrets times; a secret value held by two integrations is refused."""
    rows = tables.get(INTEGRATIONS)
    if rows is None:
        return
    seen: dict[str, str] = {}
    for key, r in list(rows.items()):
        assert isinstance(r, Integration)
        for s in r.secrets:
            if s.value in seen:
                raise SpecError(f"data.integrations.integrations[{key}].secrets",
                                f"the secret ending {s.masked()} is also held by {seen[s.value]}")
            seen[s.value] = key
        secrets = [s.model_copy(update={"created": s.created or config.now}) for s in r.secrets]
        rows[key] = r.evolve(secrets=secrets, created=r.created or config.now, updated=r.updated or config.now)


SERVICE = Service("integrations", {"integrations": Integration}, title="Integrations", prepare=_prepare)
INTEGRATIONS = SERVICE.table("integrations")
