"""CRM: accounts, their contacts, deals through the sales stages, an activity log, and CSV reports.

Modelled on Salesforce and HubSpot as people use them. A CRM contact *is* a directory person when
the address is in `contacts.people` (read by table name; this module imports no other service):
its name, title and phone come from the directory and the CRM stores only the link (account and
role). Outside customers who are not in the directory are CRM contacts too, and then carry their
own name, title and phone. Money is integer minor units plus an ISO 4217 code (`workspace_sim.text.money`);
amounts in different currencies are never converted, so revenue and amount ranges compare in each
record's own currency (add a currency filter to compare like with like). Deal stages run
prospecting -> qualification -> proposal -> negotiation -> closed_won / closed_lost; the probability
follows the stage unless given, and a closed deal reopens only with `reopen=true`. An account's last
contact is the latest logged call, meeting or e-mail with it that has happened, or the `last_contact`
its initial data gives when that is later (history imported without activities); it is derived, never
written back, so logging an activity changes the activity log alone.
"""

from __future__ import annotations

import csv
import difflib
import io
import types
import typing
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, NotFound, SpecError, Unavailable, pydantic_error_message
from workspace_sim.text.money import AmountInput, currency_code, format_minor, to_minor
from workspace_sim.text.folding import fold
from workspace_sim.text.people import PEOPLE, resolve_address, resolve_addresses
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.render import render_list
from workspace_sim.text.validation import as_argument, clean_text, iso_date
from workspace_sim.services.crm.views import (
    render_account, render_deal, account_summary, activity_json, activity_line, account_line,
    contact_card, deal_line, deal_summary, money_text,
)
from workspace_sim.services.crm.records import (
    CLOSED, CONTACT_TYPES, MAX_BODY, MAX_DESCRIPTION, MAX_NAME, MAX_SHORT, STAGE_PROBABILITY, STAGES, Account,
    AccountContact, AccountStatus, Activity, ActivityType, Deal, Stage, domain_name, probability_problem, short_text,
)

ACCOUNTS, CONTACTS, DEALS, ACTIVITIES = "crm.accounts", "crm.contacts", "crm.deals", "crm.activities"
MAX_QUERY, MAX_EXPORT_ROWS = 500, 10_000
DealStatus = Literal["open", "closed", "won", "lost"]


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
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
                  title="CRM", prepare=_prepare)


# --- lookups and argument checks ------------------------------------------------------------------


def _not_found(ctx: ToolContext, table: str, what: str, ref: str, search_tool: str) -> NotFound:
    """NotFound for an id, suggesting records whose id or name is close to what was given."""
    names = {r.id: r.name for r in ctx.values(table)}
    by_fold = {fold(n): i for i, n in names.items()}
    close = difflib.get_close_matches(ref.strip(), list(names), n=3, cutoff=0.6)
    close += [by_fold[n] for n in difflib.get_close_matches(fold(ref.strip()), list(by_fold), n=3, cutoff=0.6)]
    hints = [f"{i} ({names[i]})" for i in dict.fromkeys(close)]
    hint = f"; did you mean {', '.join(hints)}?" if hints else f"; use {search_tool} to find {what} ids"
    return NotFound(f"{what} {ref.strip()!r} not found{hint}")


def _account(ctx: ToolContext, ref: str) -> Account:
    """An account by id, or by its exact name (any case) when that names exactly one account."""
    a = ctx.get(ACCOUNTS, ref.strip())
    if a is not None:
        return a
    named = [x for x in ctx.values(ACCOUNTS) if fold(x.name) == fold(" ".join(ref.split()))]
    if len(named) == 1:
        return named[0]
    if named:
        raise InvalidArgument(f"{len(named)} accounts are named {ref.strip()!r}: "
                              f"{', '.join(x.id for x in named)}; give the account id")
    raise _not_found(ctx, ACCOUNTS, "account", ref, "search_accounts")


def _deal(ctx: ToolContext, ref: str) -> Deal:
    d = ctx.get(DEALS, ref.strip())
    if d is None:
        raise _not_found(ctx, DEALS, "deal", ref, "search_deals")
    return d


def _owner(ctx: ToolContext, value: str, what: str = "owner") -> str:
    """An owner's address: 'me', an address or a directory name; with contacts, someone in the directory."""
    if value.strip().lower() == "me":
        return ctx.user
    email = resolve_address(ctx, value, what)
    if ctx.has_service("contacts") and email != ctx.user and ctx.get(PEOPLE, email) is None:
        close = difflib.get_close_matches(email, ctx.keys(PEOPLE), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use search_contacts to find people"
        raise NotFound(f"{what} {email} is not in the directory{hint}")
    return email


def _owner_filter(ctx: ToolContext, owner: str | None) -> Callable[[str | None], bool]:
    """A test on a record's owner: anyone (None), unowned ('none'), or one person."""
    if owner is None:
        return lambda o: True
    if owner.strip().lower() == "none":
        return lambda o: o is None
    who = _owner(ctx, owner)
    return lambda o: o == who


def _date(value: str, what: str) -> date | None:
    """A date from YYYY-MM-DD text; empty text means none."""
    return iso_date(value, what, "2026-06-30")


def _moment(value: str, what: str) -> datetime:
    try:
        t = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgument(f"{what} {value!r} is not a date-time like 2026-03-02T14:00:00+00:00") from None
    if t.utcoffset() is None:
        raise InvalidArgument(f"{what} {value!r} needs a time zone offset, e.g. 2026-03-02T14:00:00+00:00")
    return t


def _page(limit: int, offset: int) -> None:
    if not 1 <= limit <= 100:
        raise InvalidArgument("limit must be between 1 and 100")
    if offset < 0:
        raise InvalidArgument("offset must be zero or positive")


def _query_words(query: str) -> list[str]:
    if len(query) > MAX_QUERY:
        raise InvalidArgument(f"query is longer than {MAX_QUERY} characters; use a few words")
    return fold(query).split()


def _major(minor: int | None, currency: str) -> Decimal | None:
    return None if minor is None else Decimal(format_minor(minor, currency))


def _bound(value: AmountInput | None, what: str) -> Decimal | None:
    """A range bound in major units (the currency only decides allowed decimals: 3 are accepted)."""
    if value is None:
        return None
    return Decimal(format_minor(as_argument(to_minor, value, "KWD", what), "KWD"))


def _sorter(sort: str, keys: dict[str, Callable[[Any], Any]], what: str) -> tuple[Callable[[Any], Any], bool]:
    """The key function and direction for a sort spec like 'name' or '-annual_revenue'."""
    field = sort.strip()
    descending = field.startswith("-")
    field = field.lstrip("-")
    if field not in keys:
        raise InvalidArgument(f"cannot sort {what} by {sort!r}; use one of {', '.join(keys)} "
                              "('-' first for descending)")
    key = keys[field]
    # Records without a value (None) sort last in either direction.
    return (lambda r: (key(r) is None, key(r) if key(r) is not None else 0)), descending


def _ordered(rows: list[Any], sort: str, keys: dict[str, Callable[[Any], Any]], what: str) -> list[Any]:
    keyfn, descending = _sorter(sort, keys, what)
    rows = sorted(rows, key=lambda r: r.id)
    present = [r for r in rows if not keyfn(r)[0]]
    missing = [r for r in rows if keyfn(r)[0]]
    return sorted(present, key=lambda r: keyfn(r)[1], reverse=descending) + missing


# --- accounts -------------------------------------------------------------------------------------

ACCOUNT_SORTS: dict[str, Callable[[Account], Any]] = {
    "name": lambda a: fold(a.name), "annual_revenue": lambda a: _major(a.annual_revenue_minor, a.currency),
    "renewal_date": lambda a: a.renewal_date, "tier": lambda a: fold(a.tier) or None, "status": lambda a: a.status,
    "industry": lambda a: fold(a.industry) or None, "owner": lambda a: a.owner, "id": lambda a: a.id,
    "updated": lambda a: a.updated,
}


def last_contacts(ctx: ToolContext) -> dict[str, datetime]:
    """Each account's last contact: the latest call, meeting or e-mail logged against it that is not in the
    future, or its recorded `last_contact` when that is later; accounts never contacted are left out."""
    out: dict[str, datetime] = {a.id: a.last_contact for a in ctx.values(ACCOUNTS) if a.last_contact is not None}
    for x in ctx.values(ACTIVITIES):
        when = _when(ctx, x)
        if x.type in CONTACT_TYPES and when <= ctx.now and (x.account_id not in out or when > out[x.account_id]):
            out[x.account_id] = when
    return out


def _open_deal_counts(ctx: ToolContext) -> dict[str, int]:
    counts: dict[str, int] = {}
    for d in ctx.values(DEALS):
        if d.is_open:
            counts[d.account_id] = counts.get(d.account_id, 0) + 1
    return counts


def find_accounts(
    ctx: ToolContext, query: str = "", tier: str | None = None, status: AccountStatus | None = None,
    owner: str | None = None, industry: str | None = None, currency: str | None = None,
    min_revenue: AmountInput | None = None, max_revenue: AmountInput | None = None,
    renewal_before: str | None = None, renewal_after: str | None = None, contacted_before: str | None = None,
    contacted_after: str | None = None, never_contacted: bool | None = None, sort: str = "name",
) -> list[Account]:
    """Every account matching the filters of `search_accounts`, in its sort order."""
    words = _query_words(query)
    owned = _owner_filter(ctx, owner)
    code = as_argument(currency_code, currency) if currency is not None else None
    lo, hi = _bound(min_revenue, "min_revenue"), _bound(max_revenue, "max_revenue")
    before = _date(renewal_before, "renewal_before") if renewal_before is not None else None
    after = _date(renewal_after, "renewal_after") if renewal_after is not None else None
    c_before = _moment(_day_start(contacted_before), "contacted_before") if contacted_before is not None else None
    c_after = _moment(_day_start(contacted_after), "contacted_after") if contacted_after is not None else None
    contact = last_contacts(ctx)
    for label, value, attr in (("tier", tier, "tier"), ("industry", industry, "industry")):
        if value is not None and value.strip():
            known = sorted({getattr(a, attr) for a in ctx.values(ACCOUNTS) if getattr(a, attr)}, key=fold)
            if fold(value.strip()) not in {fold(k) for k in known}:
                close = difflib.get_close_matches(value.strip(), known, n=3, cutoff=0.5)
                hint = (f"did you mean {', '.join(close)}?" if close
                        else f"{label} values in use: {', '.join(known) or 'none'}")
                raise NotFound(f"no account has {label} {value.strip()!r}; {hint}")
    hits = []
    for a in ctx.values(ACCOUNTS):
        if tier is not None and tier.strip() and fold(a.tier) != fold(tier.strip()):
            continue
        if industry is not None and industry.strip() and fold(a.industry) != fold(industry.strip()):
            continue
        if status is not None and a.status != status:
            continue
        if not owned(a.owner):
            continue
        if code is not None and a.currency != code:
            continue
        revenue = _major(a.annual_revenue_minor, a.currency)
        if (lo is not None or hi is not None) and revenue is None:
            continue
        if lo is not None and revenue < lo or hi is not None and revenue > hi:  # type: ignore[operator]
            continue
        if (before is not None or after is not None) and a.renewal_date is None:
            continue
        when = a.renewal_date
        if before is not None and not when < before or after is not None and not when > after:  # type: ignore[operator]
            continue
        last = contact.get(a.id)
        if never_contacted is not None and (last is None) != never_contacted:
            continue
        if (c_before is not None or c_after is not None) and last is None:
            continue
        if c_before is not None and not last < c_before or c_after is not None and not last >= c_after:  # type: ignore[operator]
            continue
        hay = fold(" ".join([a.id, a.name, a.domain, a.industry, a.tier, a.description]))
        if all(w in hay for w in words):
            hits.append(a)
    return _ordered(hits, sort, {**ACCOUNT_SORTS, "last_contact": lambda a: contact.get(a.id)}, "accounts")


@SERVICE.tool(read_only=True, render=render_list("accounts", account_line, "No accounts match."))
def search_accounts(
    ctx: ToolContext, query: str = "", tier: str | None = None, status: AccountStatus | None = None,
    owner: str | None = None, industry: str | None = None, currency: str | None = None,
    min_revenue: AmountInput | None = None, max_revenue: AmountInput | None = None,
    renewal_before: str | None = None, renewal_after: str | None = None, contacted_before: str | None = None,
    contacted_after: str | None = None, never_contacted: bool | None = None, sort: str = "name",
    limit: int = 20, offset: int = 0,
) -> dict:
    """Search CRM accounts by words (in name, domain, industry, tier, description) and filters, sorted as asked. Revenue
    bounds compare in each account's own currency (no exchange rates); add currency to compare like with like.

    Args:
        query: Words that must all appear, e.g. 'logistics emea'. Empty lists every account.
        tier: Only accounts of this tier (case-insensitive), e.g. Enterprise.
        status: Only accounts with this status: prospect, active, inactive, at_risk, renewal_due or churned.
        owner: Only accounts owned by this person (an address, a directory name, 'me', or 'none' for unowned).
        industry: Only accounts of this industry (case-insensitive).
        currency: Only accounts whose revenue is in this ISO 4217 currency, e.g. USD.
        min_revenue: Smallest annual revenue, in major units (e.g. 1000000 or "1,000,000.00").
        max_revenue: Largest annual revenue, in major units.
        renewal_before: Only accounts renewing before this date (YYYY-MM-DD).
        renewal_after: Only accounts renewing after this date (YYYY-MM-DD).
        contacted_before: Only accounts last contacted (call, meeting or e-mail) before this time (ISO 8601 with
            offset, or a date YYYY-MM-DD meaning its start in UTC); never-contacted ones are left out.
        contacted_after: Only accounts last contacted at or after this time (same forms).
        never_contacted: true for only accounts with no contact at all, false for only those with one.
        sort: Field to sort by: name, annual_revenue, renewal_date, tier, status, industry, owner, id, updated or
            last_contact (never-contacted last); prefix
            '-' for descending, e.g. -annual_revenue (revenue sorts by its number, whatever the currency).
        limit: Most accounts to return (1-100).
        offset: Matching accounts to skip (for paging).
    """
    _page(limit, offset)
    hits = find_accounts(ctx, query, tier, status, owner, industry, currency, min_revenue, max_revenue,
                         renewal_before, renewal_after, contacted_before, contacted_after, never_contacted, sort)
    counts, contact = _open_deal_counts(ctx), last_contacts(ctx)
    return {"total": len(hits), "offset": offset, "limit": limit,
            "accounts": [account_summary(a, counts.get(a.id, 0), contact.get(a.id))
                         for a in hits[offset:offset + limit]]}


def account_json(ctx: ToolContext, a: Account) -> dict[str, Any]:
    """An account with its contacts, open deals and ten most recent activities."""
    names = {a.id: a.name}
    deals = [d for d in ctx.values(DEALS) if d.account_id == a.id]
    acts = sorted((x for x in ctx.values(ACTIVITIES) if x.account_id == a.id),
                  key=lambda x: (_when(ctx, x), x.id), reverse=True)
    account = account_summary(a, sum(d.is_open for d in deals), last_contacts(ctx).get(a.id))
    account.update(description=a.description, annual_revenue_minor=a.annual_revenue_minor,
                   created=a.created.isoformat() if a.created else None,
                   updated=a.updated.isoformat() if a.updated else None)
    return {"account": account,
            "contacts": [contact_card(ctx, c) for c in ctx.values(CONTACTS) if c.account_id == a.id],
            "open_deals": [deal_summary(d, names[d.account_id]) for d in deals if d.is_open],
            "closed_deals": len([d for d in deals if not d.is_open]),
            "recent_activities": [activity_json(x) for x in acts[:10]]}


@SERVICE.tool(read_only=True, render=render_account)
def get_account(ctx: ToolContext, account_id: str) -> dict:
    """Get one account with all its fields, its contacts (with role), its open deals and its ten most recent activities.

    Args:
        account_id: The account id (e.g. acc-0001), or its exact name when only one account has it.
    """
    return account_json(ctx, _account(ctx, account_id))


def _revenue(value: AmountInput | None, code: str) -> int | None:
    return None if value is None else as_argument(to_minor, value, code, "annual_revenue")


def _text(value: str, what: str, limit: int, required: bool = False) -> str:
    """Single-line text (spaces collapsed) of at most `limit` characters, valid as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{what} contains characters that are not valid Unicode (lone surrogates)") from None
    return as_argument(short_text, value, what, limit, required)


@SERVICE.tool(render=render_account)
def create_account(
    ctx: ToolContext, name: str, domain: str = "", industry: str = "", tier: str = "",
    annual_revenue: AmountInput | None = None, currency: str = "USD", owner: str = "me",
    status: AccountStatus = "prospect", renewal_date: str = "", description: str = "",
) -> dict:
    """Create an account (a customer or prospect organisation); it gets a new id such as acc-0001abcd.

    Args:
        name: The organisation's name; must not repeat an existing account's name.
        domain: Its web domain, e.g. example.com.
        industry: Its industry, e.g. Logistics.
        tier: Its tier or segment, e.g. Enterprise.
        annual_revenue: Its annual revenue in major units of currency, e.g. 25000000 or "25,000,000.00".
        currency: ISO 4217 code of annual_revenue, e.g. USD.
        owner: The account owner: an address, a directory name, or 'me'.
        status: Status: prospect, active, inactive, at_risk, renewal_due or churned.
        renewal_date: Contract renewal date as YYYY-MM-DD; empty for none.
        description: Free-text notes about the account.
    """
    a_name = _text(name, "name", MAX_NAME, required=True)
    clash = [a for a in ctx.values(ACCOUNTS) if fold(a.name) == fold(a_name)]
    if clash:
        raise InvalidArgument(f"an account named {a_name!r} already exists ({clash[0].id}); update it instead")
    code = as_argument(currency_code, currency)
    a = Account(id=_new_id(ctx, ACCOUNTS, "acc"), name=a_name, domain=as_argument(domain_name, domain),
                industry=_text(industry, "industry", MAX_SHORT), tier=_text(tier, "tier", MAX_SHORT),
                annual_revenue_minor=_revenue(annual_revenue, code), currency=code, owner=_owner(ctx, owner),
                status=status, renewal_date=_date(renewal_date, "renewal_date"),
                description=clean_text(description, "description", MAX_DESCRIPTION), created=ctx.now, updated=ctx.now)
    ctx.put(ACCOUNTS, a)
    return account_json(ctx, a)


def _new_id(ctx: ToolContext, table: str, prefix: str) -> str:
    while True:  # seeded data may already use an id of the same shape
        key = ctx.new_id(prefix)
        if ctx.get(table, key) is None:
            return key


@SERVICE.tool(render=render_account)
def update_account(
    ctx: ToolContext, account_id: str, name: str | None = None, domain: str | None = None,
    industry: str | None = None, tier: str | None = None, annual_revenue: AmountInput | None = None,
    currency: str | None = None, owner: str | None = None, status: AccountStatus | None = None,
    renewal_date: str | None = None, description: str | None = None,
) -> dict:
    """Change an account's fields; only those given change, and the answer lists what changed.

    Args:
        account_id: The account id, or its exact name.
        name: New name.
        domain: New web domain; empty removes it.
        industry: New industry.
        tier: New tier or segment.
        annual_revenue: New annual revenue in major units (of currency if given, else the account's currency).
        currency: New ISO 4217 currency; changing it needs annual_revenue in the new currency too.
        owner: New owner: an address, a directory name, or 'me'.
        status: New status: prospect, active, inactive (a customer no longer buying, not lost), at_risk, renewal_due or
            churned.
        renewal_date: New renewal date as YYYY-MM-DD; empty removes it.
        description: New description (replaces the old text).
    """
    a = _account(ctx, account_id)
    given = {"name": name, "domain": domain, "industry": industry, "tier": tier, "annual_revenue": annual_revenue,
             "currency": currency, "owner": owner, "status": status, "renewal_date": renewal_date,
             "description": description}
    if all(v is None for v in given.values()):
        raise InvalidArgument("nothing to change; give at least one field such as status, owner or renewal_date")
    changes: dict[str, Any] = {}
    if name is not None:
        changes["name"] = _text(name, "name", MAX_NAME, required=True)
        clash = [x for x in ctx.values(ACCOUNTS) if x.id != a.id and fold(x.name) == fold(changes["name"])]
        if clash:
            raise InvalidArgument(f"another account is already named {changes['name']!r} ({clash[0].id})")
    if domain is not None:
        changes["domain"] = as_argument(domain_name, domain)
    if industry is not None:
        changes["industry"] = _text(industry, "industry", MAX_SHORT)
    if tier is not None:
        changes["tier"] = _text(tier, "tier", MAX_SHORT)
    code = as_argument(currency_code, currency) if currency is not None else a.currency
    if code != a.currency:
        if annual_revenue is None and a.annual_revenue_minor is not None:
            raise InvalidArgument(f"changing the currency from {a.currency} to {code} needs annual_revenue in {code} "
                                  "too (amounts are never converted)")
        changes["currency"] = code
    if annual_revenue is not None:
        changes["annual_revenue_minor"] = _revenue(annual_revenue, code)
    if owner is not None:
        changes["owner"] = _owner(ctx, owner)
    if status is not None:
        changes["status"] = status
    if renewal_date is not None:
        changes["renewal_date"] = _date(renewal_date, "renewal_date")
    if description is not None:
        changes["description"] = clean_text(description, "description", MAX_DESCRIPTION)
    a, changed = ctx.update(ACCOUNTS, a, changes, updated=ctx.now)
    return {**account_json(ctx, a), "changed": changed}


@SERVICE.tool(idempotent=True)
def add_account_contact(
    ctx: ToolContext, account_id: str, person: str, role: str = "", name: str = "", title: str = "", phone: str = "",
) -> dict:
    """Link a person to an account as one of its contacts with a role (or change the role of an existing link). Someone
    in the directory is linked by address and keeps the directory's name, title and phone; an outside customer not in
    the directory needs a name, and may have a title and phone.

    Args:
        account_id: The account id, or its exact name.
        person: The person's address, or their name as the directory knows it.
        role: Their role for this account, e.g. Economic buyer or Champion.
        name: Full name, only for someone who is not in the directory.
        title: Job title, only for someone who is not in the directory.
        phone: Phone number, only for someone who is not in the directory.
    """
    a = _account(ctx, account_id)
    email = resolve_address(ctx, person, "person")
    p = ctx.get(PEOPLE, email) if ctx.has_service("contacts") else None
    fields = {"name": _text(name, "name", MAX_NAME), "title": _text(title, "title", MAX_SHORT),
              "phone": _text(phone, "phone", MAX_SHORT)}
    if p is not None and any(fields.values()):
        raise InvalidArgument(f"{email} is in the directory as {p.name}; name, title and phone come from there, so "
                              "leave them empty")
    if p is None and not fields["name"]:
        raise InvalidArgument(f"{email} is not in the directory; give the outside contact's name")
    old = ctx.get(CONTACTS, email)
    if old is not None and old.account_id != a.id:
        raise InvalidArgument(f"{email} is already a contact of account {old.account_id}; a contact belongs to one "
                              "account")
    c = AccountContact(email=email, account_id=a.id, role=_text(role, "role", MAX_SHORT), **fields,
                       created=old.created if old is not None else ctx.now)
    if c != old:
        ctx.put(CONTACTS, c)
    return {"contact": contact_card(ctx, c), "created": old is None}


# --- deals ----------------------------------------------------------------------------------------

DEAL_SORTS: dict[str, Callable[[Deal], Any]] = {
    "close_date": lambda d: d.close_date, "amount": lambda d: _major(d.amount_minor, d.currency),
    "name": lambda d: fold(d.name), "stage": lambda d: STAGES.index(d.stage), "probability": lambda d: d.probability,
    "owner": lambda d: d.owner, "account_id": lambda d: d.account_id, "id": lambda d: d.id,
    "updated": lambda d: d.updated,
}


def find_deals(
    ctx: ToolContext, query: str = "", stage: Stage | None = None, status: DealStatus | None = None,
    account_id: str | None = None, owner: str | None = None, currency: str | None = None,
    min_amount: AmountInput | None = None, max_amount: AmountInput | None = None,
    closing_after: str | None = None, closing_before: str | None = None, sort: str = "close_date",
) -> list[Deal]:
    """Every deal matching the filters of `search_deals`, in its sort order."""
    words = _query_words(query)
    account = _account(ctx, account_id).id if account_id is not None else None
    owned = _owner_filter(ctx, owner)
    code = as_argument(currency_code, currency) if currency is not None else None
    lo, hi = _bound(min_amount, "min_amount"), _bound(max_amount, "max_amount")
    after = _date(closing_after, "closing_after") if closing_after is not None else None
    before = _date(closing_before, "closing_before") if closing_before is not None else None
    names = {a.id: a.name for a in ctx.values(ACCOUNTS)}
    hits = []
    for d in ctx.values(DEALS):
        if stage is not None and d.stage != stage or account is not None and d.account_id != account:
            continue
        if status is not None and not {"open": d.is_open, "closed": not d.is_open, "won": d.stage == "closed_won",
                                       "lost": d.stage == "closed_lost"}[status]:
            continue
        if not owned(d.owner):
            continue
        if code is not None and d.currency != code:
            continue
        amount = _major(d.amount_minor, d.currency)
        if lo is not None and amount < lo or hi is not None and amount > hi:  # type: ignore[operator]
            continue
        if (after is not None or before is not None) and d.close_date is None:
            continue
        when = d.close_date
        if after is not None and not when > after or before is not None and not when < before:  # type: ignore[operator]
            continue
        hay = fold(" ".join([d.id, d.name, names.get(d.account_id, ""), d.next_step]))
        if all(w in hay for w in words):
            hits.append(d)
    return _ordered(hits, sort, DEAL_SORTS, "deals")


@SERVICE.tool(read_only=True, render=render_list("deals", deal_line, "No deals match."))
def search_deals(
    ctx: ToolContext, query: str = "", stage: Stage | None = None, status: DealStatus | None = None,
    account_id: str | None = None, owner: str | None = None, currency: str | None = None,
    min_amount: AmountInput | None = None, max_amount: AmountInput | None = None,
    closing_after: str | None = None, closing_before: str | None = None, sort: str = "close_date",
    limit: int = 20, offset: int = 0,
) -> dict:
    """Search deals (opportunities) by words (in name, account name, next step) and filters, sorted as asked. Amount
    bounds compare in each deal's own currency (no exchange rates).

    Args:
        query: Words that must all appear, e.g. 'renewal'. Empty lists every deal.
        stage: Only deals in this stage: prospecting, qualification, proposal, negotiation, closed_won or closed_lost.
        status: Only open deals (not closed), closed ones, won ones or lost ones.
        account_id: Only deals of this account (id or exact name).
        owner: Only deals owned by this person (an address, a directory name, 'me', or 'none' for unowned).
        currency: Only deals in this ISO 4217 currency.
        min_amount: Smallest amount in major units, e.g. 50000.
        max_amount: Largest amount in major units.
        closing_after: Only deals whose close date is after this date (YYYY-MM-DD).
        closing_before: Only deals whose close date is before this date (YYYY-MM-DD).
        sort: Field to sort by: close_date, amount, name, stage, probability, owner, account_id, id or updated;
            prefix '-' for descending, e.g. -amount.
        limit: Most deals to return (1-100).
        offset: Matching deals to skip (for paging).
    """
    _page(limit, offset)
    hits = find_deals(ctx, query, stage, status, account_id, owner, currency, min_amount, max_amount,
                      closing_after, closing_before, sort)
    names = {a.id: a.name for a in ctx.values(ACCOUNTS)}
    return {"total": len(hits), "offset": offset, "limit": limit,
            "deals": [deal_summary(d, names.get(d.account_id, "")) for d in hits[offset:offset + limit]]}


def _deal_json(ctx: ToolContext, d: Deal) -> dict[str, Any]:
    a = ctx.get(ACCOUNTS, d.account_id)
    out = deal_summary(d, a.name if a is not None else "")
    out.update(created=d.created.isoformat() if d.created else None,
               updated=d.updated.isoformat() if d.updated else None)
    return out


@SERVICE.tool(read_only=True, render=render_deal)
def get_deal(ctx: ToolContext, deal_id: str) -> dict:
    """Get one deal with all its fields, its account's name and the activities logged against it (newest first).

    Args:
        deal_id: The deal id, e.g. deal-0001abcd.
    """
    d = _deal(ctx, deal_id)
    acts = sorted((x for x in ctx.values(ACTIVITIES) if x.deal_id == d.id),
                  key=lambda x: (_when(ctx, x), x.id), reverse=True)
    return {"deal": _deal_json(ctx, d), "activities": [activity_json(x) for x in acts]}


def _probability(value: int | None, stage: str) -> int:
    if value is None:
        return STAGE_PROBABILITY[stage]
    if not 0 <= value <= 100:
        raise InvalidArgument(f"probability {value} must be a percentage from 0 to 100")
    problem = probability_problem(stage, value)
    if problem:
        raise InvalidArgument(problem)
    return value


@SERVICE.tool(render=render_deal)
def create_deal(
    ctx: ToolContext, account_id: str, name: str, amount: AmountInput, currency: str | None = None,
    stage: Stage = "prospecting", probability: int | None = None, close_date: str = "", owner: str = "me",
    next_step: str = "",
) -> dict:
    """Create a deal (opportunity) for an account; it gets a new id such as deal-0001abcd. The probability follows the
    stage (prospecting 10, qualification 20, proposal 50, negotiation 75, closed_won 100, closed_lost 0) unless given.

    Args:
        account_id: The account id, or its exact name.
        name: The deal's name, e.g. 'Acme 2026 renewal'.
        amount: Its value in major units of currency, e.g. 120000 or "120,000.00".
        currency: ISO 4217 code of amount; the account's currency if omitted.
        stage: Sales stage: prospecting, qualification, proposal, negotiation, closed_won or closed_lost.
        probability: Win probability in percent (0-100); the stage's default if omitted.
        close_date: Expected close date as YYYY-MM-DD; for a deal created closed, today if empty.
        owner: The deal owner: an address, a directory name, or 'me'.
        next_step: The next action, e.g. 'Send revised quote by Friday'.
    """
    a = _account(ctx, account_id)
    code = as_argument(currency_code, currency) if currency is not None else a.currency
    closes = _date(close_date, "close_date")
    if closes is None and stage in CLOSED:
        closes = ctx.now.date()
    d = Deal(id=_new_id(ctx, DEALS, "deal"), name=_text(name, "name", MAX_NAME, required=True), account_id=a.id,
             amount_minor=as_argument(to_minor, amount, code, "amount"), currency=code, stage=stage,
             probability=_probability(probability, stage), close_date=closes, owner=_owner(ctx, owner),
             next_step=_text(next_step, "next_step", 500), created=ctx.now, updated=ctx.now)
    ctx.put(DEALS, d)
    return {"deal": _deal_json(ctx, d)}


@SERVICE.tool(render=render_deal)
def update_deal(
    ctx: ToolContext, deal_id: str, name: str | None = None, amount: AmountInput | None = None,
    currency: str | None = None, stage: Stage | None = None, probability: int | None = None,
    close_date: str | None = None, owner: str | None = None, next_step: str | None = None, reopen: bool = False,
) -> dict:
    """Change a deal; only the fields given change. Moving the stage resets the probability to the new stage's default
    unless probability is given; closing a deal sets its close date to today unless close_date is given. A closed deal
    (closed_won or closed_lost) moves back to an open stage only with reopen=true; won and lost may be swapped to
    correct a mistake.

    Args:
        deal_id: The deal id.
        name: New name.
        amount: New amount in major units (of currency if given, else the deal's currency).
        currency: New ISO 4217 currency; changing it needs amount in the new currency too.
        stage: New stage: prospecting, qualification, proposal, negotiation, closed_won or closed_lost.
        probability: New win probability in percent (0-100).
        close_date: New expected close date as YYYY-MM-DD; empty removes it.
        owner: New owner: an address, a directory name, or 'me'.
        next_step: New next action (replaces the old one).
        reopen: Set to true to move a closed deal back to an open stage.
    """
    d = _deal(ctx, deal_id)
    given = (name, amount, currency, stage, probability, close_date, owner, next_step)
    if all(v is None for v in given):
        raise InvalidArgument("nothing to change; give at least one field such as stage, amount or close_date")
    changes: dict[str, Any] = {}
    target = stage if stage is not None else d.stage
    if reopen and (d.is_open or stage is None or stage in CLOSED):
        raise InvalidArgument(f"reopen is for moving a closed deal to an open stage; deal {d.id} is {d.stage}"
                              + ("" if d.is_open else " and needs stage set to an open stage such as negotiation"))
    if target != d.stage:
        if not d.is_open and target not in CLOSED and not reopen:
            raise InvalidArgument(f"deal {d.id} is {d.stage}; closed deals reopen only explicitly: pass reopen=true "
                                  f"to move it to {target}")
        changes["stage"] = target
        changes["probability"] = _probability(probability, target)
        if target in CLOSED and close_date is None:
            changes["close_date"] = ctx.now.date()
    elif probability is not None:
        changes["probability"] = _probability(probability, target)
    if name is not None:
        changes["name"] = _text(name, "name", MAX_NAME, required=True)
    code = as_argument(currency_code, currency) if currency is not None else d.currency
    if code != d.currency:
        if amount is None:
            raise InvalidArgument(f"changing the currency from {d.currency} to {code} needs amount in {code} too "
                                  "(amounts are never converted)")
        changes["currency"] = code
    if amount is not None:
        changes["amount_minor"] = as_argument(to_minor, amount, code, "amount")
    if close_date is not None:
        changes["close_date"] = _date(close_date, "close_date")
    if owner is not None:
        changes["owner"] = _owner(ctx, owner)
    if next_step is not None:
        changes["next_step"] = _text(next_step, "next_step", 500)
    d, changed = ctx.update(DEALS, d, changes, updated=ctx.now)
    return {"deal": _deal_json(ctx, d), "changed": changed}


# --- activities -----------------------------------------------------------------------------------


@SERVICE.tool(render=lambda d: "Logged " + activity_line(d["activity"]))
def log_activity(
    ctx: ToolContext, type: ActivityType, subject: str, account_id: str | None = None, deal_id: str | None = None,
    body: str = "", contacts: list[str] = [], occurred_at: str | None = None,
) -> dict:
    """Log a call, meeting, e-mail, note or task against an account, or against a deal (and so its account).

    Args:
        type: call, meeting, email, note or task.
        subject: One-line summary, e.g. 'Pricing call with procurement'.
        account_id: The account id or exact name; may be left out when deal_id is given.
        deal_id: The deal it concerns, if any.
        body: Notes, e.g. what was agreed.
        contacts: People involved: addresses or directory names.
        occurred_at: When it happened, ISO 8601 with offset (e.g. 2026-03-02T14:00:00+00:00); now if omitted. Only a
            task may lie in the future.
    """
    deal = _deal(ctx, deal_id) if deal_id is not None else None
    account = _account(ctx, account_id) if account_id is not None else None
    if account is None and deal is None:
        raise InvalidArgument("give account_id or deal_id (or both) to say what the activity concerns")
    if account is not None and deal is not None and deal.account_id != account.id:
        raise InvalidArgument(f"deal {deal.id} belongs to account {deal.account_id}, not {account.id}")
    when = _moment(occurred_at, "occurred_at") if occurred_at is not None else ctx.now
    if when > ctx.now and type != "task":
        raise InvalidArgument(f"occurred_at {occurred_at} is in the future (now is {ctx.now.isoformat()}); log what "
                              "happened, or use type task for planned work")
    if len(contacts) > 50:
        raise InvalidArgument(f"contacts has {len(contacts)} entries; at most 50 are allowed")
    act = Activity(id=_new_id(ctx, ACTIVITIES, "act"), type=type, subject=_text(subject, "subject", 300, required=True),
                   body=clean_text(body, "body", MAX_BODY),
                   account_id=deal.account_id if deal else account.id,  # type: ignore[union-attr]
                   deal_id=deal.id if deal else None, contacts=resolve_addresses(ctx, contacts, "contacts"),
                   author=ctx.user, occurred=when)
    ctx.put(ACTIVITIES, act)
    return {"activity": activity_json(act)}


@SERVICE.tool(read_only=True, render=render_list("activities", activity_line, "No activities match."))
def list_activities(
    ctx: ToolContext, account_id: str | None = None, deal_id: str | None = None, type: ActivityType | None = None,
    since: str | None = None, until: str | None = None, limit: int = 20, offset: int = 0,
) -> dict:
    """List logged activities, newest first, optionally only those of an account, a deal, a type or a time span.

    Args:
        account_id: Only activities of this account (id or exact name).
        deal_id: Only activities of this deal.
        type: Only activities of this type: call, meeting, email, note or task.
        since: Only activities at or after this time (ISO 8601 with offset, or a date YYYY-MM-DD meaning its start in
            UTC).
        until: Only activities before this time (ISO 8601 with offset, or a date YYYY-MM-DD meaning its start in UTC).
        limit: Most activities to return (1-100).
        offset: Matching activities to skip (for paging).
    """
    _page(limit, offset)
    account = _account(ctx, account_id).id if account_id is not None else None
    deal = _deal(ctx, deal_id).id if deal_id is not None else None
    lo = _moment(_day_start(since), "since") if since is not None else None
    hi = _moment(_day_start(until), "until") if until is not None else None
    hits = [x for x in ctx.values(ACTIVITIES)
            if (account is None or x.account_id == account) and (deal is None or x.deal_id == deal)
            and (type is None or x.type == type)
            and (lo is None or _when(ctx, x) >= lo) and (hi is None or _when(ctx, x) < hi)]
    hits.sort(key=lambda x: (_when(ctx, x), x.id), reverse=True)
    return {"total": len(hits), "offset": offset, "limit": limit,
            "activities": [activity_json(x) for x in hits[offset:offset + limit]]}


def _when(ctx: ToolContext, a: Activity) -> datetime:
    return a.occurred or ctx.now


def _day_start(value: str) -> str:
    text = value.strip()
    return f"{text}T00:00:00+00:00" if len(text) == 10 and text[4:5] == "-" else text


# --- reports --------------------------------------------------------------------------------------

ACCOUNT_COLUMNS: dict[str, Callable[[Account, ToolContext], Any]] = {
    "id": lambda a, c: a.id, "name": lambda a, c: a.name, "domain": lambda a, c: a.domain,
    "industry": lambda a, c: a.industry, "tier": lambda a, c: a.tier,
    "annual_revenue": lambda a, c: money_text(a.annual_revenue_minor, a.currency), "currency": lambda a, c: a.currency,
    "owner": lambda a, c: a.owner, "status": lambda a, c: a.status,
    "renewal_date": lambda a, c: a.renewal_date.isoformat() if a.renewal_date else None,
    "last_contact": lambda a, c: (t.isoformat() if (t := last_contacts(c).get(a.id)) else None),
    "open_deals": lambda a, c: sum(d.is_open and d.account_id == a.id for d in c.values(DEALS)),
    "description": lambda a, c: a.description,
}
DEAL_COLUMNS: dict[str, Callable[[Deal, ToolContext], Any]] = {
    "id": lambda d, c: d.id, "name": lambda d, c: d.name, "account_id": lambda d, c: d.account_id,
    "account_name": lambda d, c: getattr(c.get(ACCOUNTS, d.account_id), "name", ""),
    "amount": lambda d, c: format_minor(d.amount_minor, d.currency), "currency": lambda d, c: d.currency,
    "stage": lambda d, c: d.stage, "probability": lambda d, c: d.probability,
    "close_date": lambda d, c: d.close_date.isoformat() if d.close_date else None, "owner": lambda d, c: d.owner,
    "next_step": lambda d, c: d.next_step,
}
DEFAULT_COLUMNS = {"accounts": ["id", "name", "tier", "status", "annual_revenue", "currency", "owner", "renewal_date"],
                   "deals": ["id", "name", "account_name", "stage", "amount", "currency", "close_date", "owner"]}


class _Filters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(k for k in data if k not in cls.model_fields)
            if unknown:
                raise ValueError(f"unknown filter(s) {', '.join(map(repr, unknown))}; use {', '.join(cls.model_fields)}")
        return data


def _filters_model() -> type[BaseModel]:
    """The filters of export_report, made from the filter arguments of search_accounts and search_deals (paging
    and sort aside), each optional; which of them a report takes is checked when it runs."""
    uses: dict[str, list[tuple[str, Any]]] = {}
    for tool in ("search_accounts", "search_deals"):
        for name, info in SERVICE.tools[tool].args_model.model_fields.items():
            if name not in ("limit", "offset", "sort"):
                uses.setdefault(name, []).append((tool.removeprefix("search_").capitalize(), info))
    fields: dict[str, Any] = {}
    for name, found in uses.items():
        kinds = tuple(dict.fromkeys(a for _, info in found for a in
                                    (typing.get_args(info.annotation) if typing.get_origin(info.annotation) in
                                     (typing.Union, types.UnionType) else (info.annotation,))))
        texts = dict.fromkeys(info.description or "" for _, info in found)
        text = next(iter(texts)) if len(texts) == 1 else " ".join(f"{w}: {info.description}" for w, info in found)
        fields[name] = (typing.Optional[typing.Union[kinds]], Field(None, description=text))  # type: ignore[valid-type]
    return create_model("ReportFilters", __base__=_Filters, __doc__="Filters of a report, as the search tools take them.",
                        **fields)  # type: ignore[call-overload]


def _report_filters(report: str, filters: dict[str, Any]) -> dict[str, Any]:
    """`filters` checked against the search tool's own arguments (less paging and sort)."""
    tool = SERVICE.tools["search_accounts" if report == "accounts" else "search_deals"]
    allowed = [n for n in tool.args_model.model_fields if n not in ("limit", "offset", "sort")]
    unknown = sorted(k for k in filters if k not in allowed)
    if unknown:
        raise InvalidArgument(f"unknown filter(s) {', '.join(map(repr, unknown))} for a {report} report; "
                              f"use {', '.join(allowed)}")
    try:
        checked = tool.args_model.model_validate(filters)
    except ValidationError as e:
        raise InvalidArgument(f"invalid filters: {pydantic_error_message(e, 'filters')}") from None
    return {k: getattr(checked, k) for k in filters}


ReportFilters = _filters_model()


def _render_report(data: dict) -> str:
    where = f"; saved to {data['path']}" if data.get("path") else ""
    return f"{data['report'].capitalize()} report: {data['rows']} rows, columns {', '.join(data['columns'])}{where}\n" \
           + data["csv"]


@SERVICE.tool(read_only=False, render=_render_report)
def export_report(
    ctx: ToolContext, report: Literal["accounts", "deals"], columns: list[str] = [],
    filters: ReportFilters | None = None, sort: str = "", path: str | None = None,
) -> dict:
    """Export a report over accounts or deals as CSV text (a header row, then one row per record; money as exact
    decimal text). With path given and the files service present, the CSV is also saved there as a file.

    Args:
        report: What each row is: accounts or deals.
        columns: Columns in order. Accounts: id, name, domain, industry, tier, annual_revenue, currency, owner, status,
            renewal_date, last_contact, open_deals, description. Deals: id, name, account_id, account_name, amount, currency, stage,
            probability, close_date, owner, next_step. Empty gives a standard set.
        filters: The filters search_accounts or search_deals take, e.g. {"status": "renewal_due", "tier": "Enterprise"};
            none if omitted.
        sort: Sort field as in search_accounts / search_deals, e.g. -annual_revenue; their default if empty.
        path: File path to save the CSV to, e.g. /reports/renewals.csv; not saved if omitted.
    """
    known = ACCOUNT_COLUMNS if report == "accounts" else DEAL_COLUMNS
    cols = list(columns) or DEFAULT_COLUMNS[report]
    bad = [c for c in cols if c not in known]
    if bad:
        raise InvalidArgument(f"unknown column(s) {', '.join(map(repr, bad))} for a {report} report; "
                              f"use {', '.join(known)}")
    if len(set(cols)) != len(cols):
        raise InvalidArgument("columns lists a column twice")
    given = {} if filters is None else {k: v for k in filters.model_fields_set if (v := getattr(filters, k)) is not None}
    args = _report_filters(report, given)
    if sort.strip():
        args["sort"] = sort
    rows = find_accounts(ctx, **args) if report == "accounts" else find_deals(ctx, **args)
    if len(rows) > MAX_EXPORT_ROWS:
        raise InvalidArgument(f"the report has {len(rows)} rows; at most {MAX_EXPORT_ROWS} can be exported; "
                              "narrow the filters")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(cols)
    for r in rows:
        writer.writerow(["" if (v := known[c](r, ctx)) is None else v for c in cols])  # type: ignore[arg-type]
    text = out.getvalue()
    saved = None
    if path is not None:
        if not ctx.has_tool("write_file"):
            raise Unavailable("this workspace has no files service to save the report in; leave path out to get the "
                              "CSV text")
        saved = ctx.invoke("write_file", path=path, content=text)["path"]
    return {"report": report, "columns": cols, "rows": len(rows), "ids": [r.id for r in rows], "csv": text,
            "path": saved}
