"""The records of the CRM service: accounts, account contacts, deals and logged activities, and its declared tables.

Money is stored as integers of the currency's minor unit (`annual_revenue_minor`, `amount_minor`;
see `workspace_sim.text.money`, whose shared field types `MinorAmount` and `Currency` they use). Initial data
may give `annual_revenue` / `amount` in major units instead ("125000.50" or 125000.5), converted exactly once on load.
`prepare` completes and checks initial data across the tables (links to accounts and deals, directory contacts).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.folding import fold
from workspace_sim.text.money import Currency, MinorAmount, major_to_minor
from workspace_sim.text.people import PEOPLE, normalize_email
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


class Account(Record):
    """A customer or prospect organisation."""

    id: str = Field(description="The account's id, e.g. acc-0001.")
    name: str = Field(description="The organisation's name, one line; no two accounts share it (any case).")
    domain: str = Field("", description="Its internet domain in lower case, e.g. example.com; empty for none.")
    industry: str = Field("", description="Its industry, e.g. Logistics; empty for none.")
    tier: str = Field("", description="Its tier or segment, e.g. Enterprise; empty for none.")
    annual_revenue_minor: MinorAmount | None = Field(
        None, description="Annual revenue in minor units of currency (cents for USD); None when unknown. Initial "
                          "data may give annual_revenue in major units instead.")
    currency: Currency = Field("USD", description="ISO 4217 code of annual_revenue_minor, e.g. USD.")
    owner: str | None = Field(None, description="Address of the account owner, or None when unowned.")
    status: AccountStatus = Field("active", description="prospect, active, inactive, at_risk, renewal_due or churned.")
    renewal_date: date | None = Field(None, description="Contract renewal date, or None.")
    last_contact: datetime | None = Field(
        None, description="Last contact recorded by the initial data (history imported without activities), with "
                          "a time zone offset; the CRM shows the later of this and the latest logged contact.")
    description: str = Field("", max_length=MAX_DESCRIPTION, description="Free-text notes about the account.")
    created: datetime | None = Field(None, description="When the account was created; the workspace's start when "
                                                       "omitted.")
    updated: datetime | None = Field(None, description="When it last changed; its creation time when omitted.")

    @model_validator(mode="before")
    @classmethod
    def _money(cls, data: Any) -> Any:
        return major_to_minor(data, ("annual_revenue", "annual_revenue_minor"))

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

    @field_validator("owner", mode="before")
    @classmethod
    def _owner(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "owner")


class AccountContact(Record):
    """A person linked to an account with a role. Someone in the directory (`contacts.people`) is
    stored by address alone (name, title and phone come from the directory); an outside customer
    not in the directory carries their own name, title and phone here."""

    key_field = "email"
    email: str = Field(description="The contact's address, lower case; the record's key (one account per contact).")
    account_id: str = Field(description="Id of the account the contact belongs to.")
    role: str = Field("", description="Their role for the account, e.g. Economic buyer or Champion.")
    name: str = Field("", description="Full name, only for someone not in the directory (else from contacts.people).")
    title: str = Field("", description="Job title, only for someone not in the directory.")
    phone: str = Field("", description="Phone number, only for someone not in the directory.")
    created: datetime | None = Field(None, description="When the link was made; the workspace's start when omitted.")

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

    id: str = Field(description="The deal's id, e.g. deal-0001.")
    name: str = Field(description="The deal's name, one line, e.g. Acme 2026 renewal.")
    account_id: str = Field(description="Id of the account the deal may be won from.")
    amount_minor: MinorAmount = Field(0, description="Its value in minor units of currency (cents for USD); initial "
                                                     "data may give amount in major units instead.")
    currency: Currency = Field("USD", description="ISO 4217 code of amount_minor, e.g. USD.")
    stage: Stage = Field("prospecting", description="Sales stage: prospecting, qualification, proposal, negotiation, "
                                                    "closed_won or closed_lost.")
    probability: int | None = Field(None, ge=0, le=100, description="Percent; the stage's default when left out.")
    close_date: date | None = Field(None, description="Expected (or, once closed, actual) close date, or None.")
    owner: str | None = Field(None, description="Address of the deal owner, or None when unowned.")
    next_step: str = Field("", description="The next action, one line, e.g. Send revised quote by Friday.")
    created: datetime | None = Field(None, description="When the deal was created; the workspace's start when omitted.")
    updated: datetime | None = Field(None, description="When it last changed; its creation time when omitted.")

    @model_validator(mode="before")
    @classmethod
    def _money(cls, data: Any) -> Any:
        data = major_to_minor(data, ("amount", "amount_minor"))
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

    id: str = Field(description="The activity's id, e.g. act-0001.")
    type: ActivityType = Field("note", description="call, meeting, email, note or task.")
    subject: str = Field(description="One-line summary, e.g. Pricing call with procurement.")
    body: str = Field("", max_length=MAX_BODY, description="Notes, e.g. what was agreed.")
    account_id: str = Field("", description="Id of the account it concerns; taken from the deal when empty.")
    deal_id: str | None = Field(None, description="Id of the deal it concerns, or None.")
    contacts: list[str] = Field(default_factory=list, max_length=50, description="Addresses of the people involved.")
    author: str | None = Field(None, description="Address of who logged it, or None.")
    occurred: datetime | None = Field(None, description="When it happened (a task: when it is planned), with a time "
                                                        "zone offset; the workspace's start when omitted.")

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


def prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Complete initial data (times, an activity's account from its deal) and refuse links to accounts
    or deals that do not exist, and CRM contacts with neither a directory entry nor a name."""
    accounts, contacts, deals, acts = (tables.get(t) for t in (ACCOUNTS, CONTACTS, DEALS, ACTIVITIES))
    if accounts is None or contacts is None or deals is None or acts is None:
        return
    people = tables.get(PEOPLE)
    for key, a in list(accounts.items()):
        accounts[key] = a.evolve(created=a.created or config.now, updated=a.updated or a.created or config.now)
    for key, d in list(deals.items()):
        if d.account_id not in accounts:
            raise SpecError(f"data.crm.deals[{key}].account_id", f"account {d.account_id!r} does not exist")
        deals[key] = d.evolve(created=d.created or config.now, updated=d.updated or d.created or config.now)
    for key, c in list(contacts.items()):
        where = f"data.crm.contacts[{key}]"
        if c.account_id not in accounts:
            raise SpecError(f"{where}.account_id", f"account {c.account_id!r} does not exist")
        person = people.get(key) if people is not None else None
        if person is None and not c.name:
            raise SpecError(f"{where}.name", f"{key} is not in the directory, so the CRM contact needs a name")
        if person is not None and c.name and fold(c.name) != fold(person.name):
            raise SpecError(f"{where}.name", f"{key} is {person.name!r} in the directory; leave name empty "
                            "(directory people take their name from contacts.people)")
        contacts[key] = c.evolve(created=c.created or config.now)
    for key, act in list(acts.items()):
        where = f"data.crm.activities[{key}]"
        account_id = act.account_id
        if act.deal_id is not None:
            deal = deals.get(act.deal_id)
            if deal is None:
                raise SpecError(f"{where}.deal_id", f"deal {act.deal_id!r} does not exist")
            if account_id and account_id != deal.account_id:
                raise SpecError(f"{where}.account_id", f"deal {deal.id} belongs to account {deal.account_id}, "
                                f"not {account_id}")
            account_id = deal.account_id
        if account_id not in accounts:
            raise SpecError(f"{where}.account_id", f"account {account_id!r} does not exist")
        acts[key] = act.evolve(account_id=account_id, occurred=act.occurred or config.now)


SERVICE = Service("crm", {"accounts": Account, "contacts": AccountContact, "deals": Deal, "activities": Activity},
                  title="CRM", prepare=prepare)
ACCOUNTS, CONTACTS, DEALS, ACTIVITIES = (SERVICE.table(t) for t in ("accounts", "contacts", "deals", "activities"))
