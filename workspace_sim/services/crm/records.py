"""The records of the CRM service: accounts, account contacts, deals and logged activities.

Money is stored as integers of the currency's minor unit (`annual_revenue_minor`, `amount_minor`;
see `workspace_sim.text.money`). Initial data may give `annual_revenue` / `amount` in major units
instead ("125000.50" or 125000.5), converted exactly once on load.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from workspace_sim.text.money import MAX_MINOR, currency_code, to_minor
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.text.validation import record_id

AccountStatus = Literal["prospect", "active", "inactive", "at_risk", "renewal_due", "churned"]
ACCOUNT_STATUSES: tuple[str, ...] = ("prospect", "active", "inactive", "at_risk", "renewal_due", "churned")
Stage = Literal["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"]
STAGES: tuple[str, ...] = ("prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost")
CLOSED: tuple[str, ...] = ("closed_won", "closed_lost")
STAGE_PROBABILITY: dict[str, int] = {"prospecting": 10, "qualification": 20, "proposal": 50, "negotiation": 75,
                                     "closed_won": 100, "closed_lost": 0}
ActivityType = Literal["call", "meeting", "email", "note", "task"]
ACTIVITY_TYPES: tuple[str, ...] = ("call", "meeting", "email", "note", "task")
CONTACT_TYPES: tuple[str, ...] = ("call", "meeting", "email")  # the activities that are a contact with the customer
MAX_NAME, MAX_SHORT, MAX_DESCRIPTION, MAX_BODY = 200, 100, 5_000, 20_000
_DOMAIN_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def domain_name(value: str) -> str:
    """A lower-case internet domain such as example.com; empty means none."""
    text = value.strip().lower()
    if not text:
        return ""
    labels = text.split(".")
    if len(text) > 253 or len(labels) < 2 or not all(_DOMAIN_LABEL.match(x) for x in labels) or labels[-1].isdigit():
        raise ValueError(f"domain {value!r} is not a domain name like example.com (no scheme, path or spaces)")
    return text


def short_text(value: str, what: str, limit: int, required: bool = False) -> str:
    """Stripped single-line text of at most `limit` characters."""
    text = " ".join(value.split())
    if required and not text:
        raise ValueError(f"{what} is empty")
    if len(text) > limit:
        raise ValueError(f"{what} is {len(text)} characters long; at most {limit} are allowed")
    return text


def _major_to_minor(data: Any, major: str, minor: str) -> Any:
    """Let initial data give an amount in major units under `major`; store it under `minor`."""
    if isinstance(data, dict) and major in data:
        data = dict(data)
        value = data.pop(major)
        if minor in data:
            raise ValueError(f"give {major} or {minor}, not both")
        data[minor] = None if value is None else to_minor(value, data.get("currency") or "USD", major)
    return data


class Account(Record):
    """A customer or prospect organisation."""

    id: str
    name: str
    domain: str = ""
    industry: str = ""
    tier: str = ""
    annual_revenue_minor: int | None = Field(None, ge=0, le=MAX_MINOR)
    currency: str = "USD"
    owner: str | None = None
    status: AccountStatus = "active"
    renewal_date: date | None = None
    last_contact: datetime | None = None
    description: str = Field("", max_length=MAX_DESCRIPTION)
    created: datetime | None = None
    updated: datetime | None = None

    @model_validator(mode="before")
    @classmethod
    def _money(cls, data: Any) -> Any:
        return _major_to_minor(data, "annual_revenue", "annual_revenue_minor")

    @field_validator("last_contact")
    @classmethod
    def _last_contact(cls, v: datetime | None) -> datetime | None:
        if v is not None and v.utcoffset() is None:
            raise ValueError("last_contact needs a time zone offset, e.g. 2026-02-20T15:00:00+00:00")
        return v

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "account id", "acc-0001")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return short_text(v, "account name", MAX_NAME, required=True)

    @field_validator("industry", "tier")
    @classmethod
    def _label(cls, v: str) -> str:
        return short_text(v, "industry/tier", MAX_SHORT)

    @field_validator("domain")
    @classmethod
    def _domain(cls, v: str) -> str:
        return domain_name(v)

    @field_validator("currency", mode="before")
    @classmethod
    def _currency(cls, v: object) -> str:
        return currency_code(v)

    @field_validator("owner", mode="before")
    @classmethod
    def _owner(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "owner")


class AccountContact(Record):
    """A person linked to an account with a role. Someone in the directory (`contacts.people`) is
    stored by address alone (name, title and phone come from the directory); an outside customer
    not in the directory carries their own name, title and phone here."""

    key_field = "email"
    email: str
    account_id: str
    role: str = ""
    name: str = ""
    title: str = ""
    phone: str = ""
    created: datetime | None = None

    @field_validator("email", mode="before")
    @classmethod
    def _email(cls, v: object) -> str:
        return normalize_email(v, "contact email")

    @field_validator("account_id")
    @classmethod
    def _account(cls, v: str) -> str:
        return record_id(v, "account_id", "acc-0001")

    @field_validator("role", "title", "phone")
    @classmethod
    def _short(cls, v: str) -> str:
        return short_text(v, "role/title/phone", MAX_SHORT)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return short_text(v, "contact name", MAX_NAME)


class Deal(Record):
    """An opportunity: an amount that may be won from an account, moving through the sales stages."""

    id: str
    name: str
    account_id: str
    amount_minor: int = Field(0, ge=0, le=MAX_MINOR)
    currency: str = "USD"
    stage: Stage = "prospecting"
    probability: int | None = Field(None, ge=0, le=100, description="Percent; the stage's default when left out.")
    close_date: date | None = None
    owner: str | None = None
    next_step: str = ""
    created: datetime | None = None
    updated: datetime | None = None

    @model_validator(mode="before")
    @classmethod
    def _money(cls, data: Any) -> Any:
        data = _major_to_minor(data, "amount", "amount_minor")
        if isinstance(data, dict) and data.get("amount_minor", 0) is None:
            raise ValueError("amount must not be null; give 0 for an unknown amount")
        return data

    @field_validator("id", "account_id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "deal id/account_id", "acc-0001")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return short_text(v, "deal name", MAX_NAME, required=True)

    @field_validator("next_step")
    @classmethod
    def _next(cls, v: str) -> str:
        return short_text(v, "next_step", 500)

    @field_validator("currency", mode="before")
    @classmethod
    def _currency(cls, v: object) -> str:
        return currency_code(v)

    @field_validator("owner", mode="before")
    @classmethod
    def _owner(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "owner")

    @model_validator(mode="after")
    def _check(self) -> "Deal":
        if self.probability is None:
            object.__setattr__(self, "probability", STAGE_PROBABILITY[self.stage])
        problem = probability_problem(self.stage, self.probability)
        if problem:
            raise ValueError(f"deal {self.id}: {problem}")
        return self

    @property
    def is_open(self) -> bool:
        """Whether the deal is still being worked (not won or lost)."""
        return self.stage not in CLOSED


def probability_problem(stage: str, probability: int) -> str | None:
    """Why a probability does not fit a stage (won is 100, lost is 0), or None."""
    if stage == "closed_won" and probability != 100:
        return f"a closed_won deal has probability 100, not {probability}"
    if stage == "closed_lost" and probability != 0:
        return f"a closed_lost deal has probability 0, not {probability}"
    return None


class Activity(Record):
    """A call, meeting, e-mail, note or task logged against an account and optionally one of its deals."""

    id: str
    type: ActivityType = "note"
    subject: str
    body: str = Field("", max_length=MAX_BODY)
    account_id: str = ""
    deal_id: str | None = None
    contacts: list[str] = Field(default_factory=list, max_length=50)
    author: str | None = None
    occurred: datetime | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "activity id", "acc-0001")

    @field_validator("subject")
    @classmethod
    def _subject(cls, v: str) -> str:
        return short_text(v, "subject", 300, required=True)

    @field_validator("contacts", mode="before")
    @classmethod
    def _contacts(cls, v: object) -> object:
        return [normalize_email(x, "activity contact") for x in v] if isinstance(v, list) else v

    @field_validator("author", mode="before")
    @classmethod
    def _author(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "author")

    @model_validator(mode="after")
    def _check(self) -> "Activity":
        if not self.account_id and not self.deal_id:
            raise ValueError(f"activity {self.id} needs an account_id or a deal_id")
        if self.occurred is not None and self.occurred.utcoffset() is None:
            raise ValueError(f"activity {self.id}: occurred needs a time zone offset")
        return self
