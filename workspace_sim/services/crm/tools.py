"""The CRM's account tools: search, read, create and update accounts, and link contacts to them.

The deal tools are in `deals.py`, the activity log in `activities.py`, CSV reports in `reports.py`; each function
is marked with `tool(...)` and the package registers them all (`workspace_sim.services.crm`).
"""

from __future__ import annotations

import difflib
from typing import Any, Callable

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, NotFound
from workspace_sim.core.registry import tool
from workspace_sim.text.folding import fold
from workspace_sim.text.money import AmountInput, currency_code, to_minor
from workspace_sim.text.people import PEOPLE, resolve_address
from workspace_sim.text.render import render_list
from workspace_sim.text.validation import as_argument, clean_text
from .records import (
    ACCOUNTS, ACTIVITIES, CONTACTS, DEALS, MAX_DESCRIPTION, MAX_NAME, MAX_SHORT, Account, AccountContact,
    AccountStatus, domain_name,
)
from .views import (
    account_line, account_summary, activity_json, contact_card, deal_summary, render_account,
)
from .lookups import (
    account_named, owner_address, owner_filter, date_arg, moment_arg, check_page, query_words, major, amount_bound,
    ordered, line_arg, new_id, when_of, day_start, last_contacts,
)


ACCOUNT_SORTS: dict[str, Callable[[Account], Any]] = {
    "name": lambda a: fold(a.name), "annual_revenue": lambda a: major(a.annual_revenue_minor, a.currency),
    "renewal_date": lambda a: a.renewal_date, "tier": lambda a: fold(a.tier) or None, "status": lambda a: a.status,
    "industry": lambda a: fold(a.industry) or None, "owner": lambda a: a.owner, "id": lambda a: a.id,
    "updated": lambda a: a.updated,
}


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
    words = query_words(query)
    owned = owner_filter(ctx, owner)
    code = as_argument(currency_code, currency) if currency is not None else None
    lo, hi = amount_bound(min_revenue, "min_revenue"), amount_bound(max_revenue, "max_revenue")
    before = date_arg(renewal_before, "renewal_before") if renewal_before is not None else None
    after = date_arg(renewal_after, "renewal_after") if renewal_after is not None else None
    c_before = moment_arg(day_start(contacted_before), "contacted_before") if contacted_before is not None else None
    c_after = moment_arg(day_start(contacted_after), "contacted_after") if contacted_after is not None else None
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
        revenue = major(a.annual_revenue_minor, a.currency)
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
    return ordered(hits, sort, {**ACCOUNT_SORTS, "last_contact": lambda a: contact.get(a.id)}, "accounts")


@tool(read_only=True, render=render_list("accounts", account_line, "No accounts match."))
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
    check_page(limit, offset)
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
                  key=lambda x: (when_of(ctx, x), x.id), reverse=True)
    account = account_summary(a, sum(d.is_open for d in deals), last_contacts(ctx).get(a.id))
    account.update(description=a.description, annual_revenue_minor=a.annual_revenue_minor,
                   created=a.created.isoformat() if a.created else None,
                   updated=a.updated.isoformat() if a.updated else None)
    return {"account": account,
            "contacts": [contact_card(ctx, c) for c in ctx.values(CONTACTS) if c.account_id == a.id],
            "open_deals": [deal_summary(d, names[d.account_id]) for d in deals if d.is_open],
            "closed_deals": len([d for d in deals if not d.is_open]),
            "recent_activities": [activity_json(x) for x in acts[:10]]}


@tool(read_only=True, render=render_account)
def get_account(ctx: ToolContext, account_id: str) -> dict:
    """Get one account with all its fields, its contacts (with role), its open deals and its ten most recent activities.

    Args:
        account_id: The account id (e.g. acc-0001), or its exact name when only one account has it.
    """
    return account_json(ctx, account_named(ctx, account_id))


def _revenue(value: AmountInput | None, code: str) -> int | None:
    return None if value is None else as_argument(to_minor, value, code, "annual_revenue")


@tool(render=render_account)
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
    a_name = line_arg(name, "name", MAX_NAME, required=True)
    clash = [a for a in ctx.values(ACCOUNTS) if fold(a.name) == fold(a_name)]
    if clash:
        raise InvalidArgument(f"an account named {a_name!r} already exists ({clash[0].id}); update it instead")
    code = as_argument(currency_code, currency)
    a = Account(id=new_id(ctx, ACCOUNTS, "acc"), name=a_name, domain=as_argument(domain_name, domain),
                industry=line_arg(industry, "industry", MAX_SHORT), tier=line_arg(tier, "tier", MAX_SHORT),
                annual_revenue_minor=_revenue(annual_revenue, code), currency=code, owner=owner_address(ctx, owner),
                status=status, renewal_date=date_arg(renewal_date, "renewal_date"),
                description=clean_text(description, "description", MAX_DESCRIPTION), created=ctx.now, updated=ctx.now)
    ctx.put(ACCOUNTS, a)
    return account_json(ctx, a)


@tool(render=render_account)
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
    a = account_named(ctx, account_id)
    given = {"name": name, "domain": domain, "industry": industry, "tier": tier, "annual_revenue": annual_revenue,
             "currency": currency, "owner": owner, "status": status, "renewal_date": renewal_date,
             "description": description}
    if all(v is None for v in given.values()):
        raise InvalidArgument("nothing to change; give at least one field such as status, owner or renewal_date")
    changes: dict[str, Any] = {}
    if name is not None:
        changes["name"] = line_arg(name, "name", MAX_NAME, required=True)
        clash = [x for x in ctx.values(ACCOUNTS) if x.id != a.id and fold(x.name) == fold(changes["name"])]
        if clash:
            raise InvalidArgument(f"another account is already named {changes['name']!r} ({clash[0].id})")
    if domain is not None:
        changes["domain"] = as_argument(domain_name, domain)
    if industry is not None:
        changes["industry"] = line_arg(industry, "industry", MAX_SHORT)
    if tier is not None:
        changes["tier"] = line_arg(tier, "tier", MAX_SHORT)
    code = as_argument(currency_code, currency) if currency is not None else a.currency
    if code != a.currency:
        if annual_revenue is None and a.annual_revenue_minor is not None:
            raise InvalidArgument(f"changing the currency from {a.currency} to {code} needs annual_revenue in {code} "
                                  "too (amounts are never converted)")
        changes["currency"] = code
    if annual_revenue is not None:
        changes["annual_revenue_minor"] = _revenue(annual_revenue, code)
    if owner is not None:
        changes["owner"] = owner_address(ctx, owner)
    if status is not None:
        changes["status"] = status
    if renewal_date is not None:
        changes["renewal_date"] = date_arg(renewal_date, "renewal_date")
    if description is not None:
        changes["description"] = clean_text(description, "description", MAX_DESCRIPTION)
    a, changed = ctx.update(ACCOUNTS, a, changes, updated=ctx.now)
    return {**account_json(ctx, a), "changed": changed}


@tool(idempotent=True)
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
    a = account_named(ctx, account_id)
    email = resolve_address(ctx, person, "person")
    p = ctx.get(PEOPLE, email) if ctx.has_service("contacts") else None
    fields = {"name": line_arg(name, "name", MAX_NAME), "title": line_arg(title, "title", MAX_SHORT),
              "phone": line_arg(phone, "phone", MAX_SHORT)}
    if p is not None and any(fields.values()):
        raise InvalidArgument(f"{email} is in the directory as {p.name}; name, title and phone come from there, so "
                              "leave them empty")
    if p is None and not fields["name"]:
        raise InvalidArgument(f"{email} is not in the directory; give the outside contact's name")
    old = ctx.get(CONTACTS, email)
    if old is not None and old.account_id != a.id:
        raise InvalidArgument(f"{email} is already a contact of account {old.account_id}; a contact belongs to one "
                              "account")
    c = AccountContact(email=email, account_id=a.id, role=line_arg(role, "role", MAX_SHORT), **fields,
                       created=old.created if old is not None else ctx.now)
    if c != old:
        ctx.put(CONTACTS, c)
    return {"contact": contact_card(ctx, c), "created": old is None}
