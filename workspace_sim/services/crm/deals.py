"""The CRM's deal tools: search, read, create and update deals (opportunities) through the sales stages."""

from __future__ import annotations

from typing import Any, Callable, Literal

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument
from workspace_sim.core.registry import tool
from workspace_sim.text.folding import fold
from workspace_sim.text.money import AmountInput, currency_code, to_minor
from workspace_sim.text.render import render_list
from workspace_sim.text.validation import as_argument
from .records import (
    ACCOUNTS, ACTIVITIES, CLOSED, DEALS, MAX_NAME, STAGE_PROBABILITY, STAGES, Deal, Stage, probability_problem,
)
from .views import activity_json, deal_line, deal_summary, render_deal
from .lookups import (
    account_named, deal_named, owner_address, owner_filter, date_arg, check_page, query_words, major, amount_bound,
    ordered, line_arg, new_id, when_of,
)

DealStatus = Literal["open", "closed", "won", "lost"]


DEAL_SORTS: dict[str, Callable[[Deal], Any]] = {
    "close_date": lambda d: d.close_date, "amount": lambda d: major(d.amount_minor, d.currency),
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
    words = query_words(query)
    account = account_named(ctx, account_id).id if account_id is not None else None
    owned = owner_filter(ctx, owner)
    code = as_argument(currency_code, currency) if currency is not None else None
    lo, hi = amount_bound(min_amount, "min_amount"), amount_bound(max_amount, "max_amount")
    after = date_arg(closing_after, "closing_after") if closing_after is not None else None
    before = date_arg(closing_before, "closing_before") if closing_before is not None else None
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
        amount = major(d.amount_minor, d.currency)
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
    return ordered(hits, sort, DEAL_SORTS, "deals")


@tool(read_only=True, render=render_list("deals", deal_line, "No deals match."))
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
    check_page(limit, offset)
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


@tool(read_only=True, render=render_deal)
def get_deal(ctx: ToolContext, deal_id: str) -> dict:
    """Get one deal with all its fields, its account's name and the activities logged against it (newest first).

    Args:
        deal_id: The deal id, e.g. deal-0001abcd.
    """
    d = deal_named(ctx, deal_id)
    acts = sorted((x for x in ctx.values(ACTIVITIES) if x.deal_id == d.id),
                  key=lambda x: (when_of(ctx, x), x.id), reverse=True)
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


@tool(render=render_deal)
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
    a = account_named(ctx, account_id)
    code = as_argument(currency_code, currency) if currency is not None else a.currency
    closes = date_arg(close_date, "close_date")
    if closes is None and stage in CLOSED:
        closes = ctx.now.date()
    d = Deal(id=new_id(ctx, DEALS, "deal"), name=line_arg(name, "name", MAX_NAME, required=True), account_id=a.id,
             amount_minor=as_argument(to_minor, amount, code, "amount"), currency=code, stage=stage,
             probability=_probability(probability, stage), close_date=closes, owner=owner_address(ctx, owner),
             next_step=line_arg(next_step, "next_step", 500), created=ctx.now, updated=ctx.now)
    ctx.put(DEALS, d)
    return {"deal": _deal_json(ctx, d)}


@tool(render=render_deal)
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
    d = deal_named(ctx, deal_id)
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
        changes["name"] = line_arg(name, "name", MAX_NAME, required=True)
    code = as_argument(currency_code, currency) if currency is not None else d.currency
    if code != d.currency:
        if amount is None:
            raise InvalidArgument(f"changing the currency from {d.currency} to {code} needs amount in {code} too "
                                  "(amounts are never converted)")
        changes["currency"] = code
    if amount is not None:
        changes["amount_minor"] = as_argument(to_minor, amount, code, "amount")
    if close_date is not None:
        changes["close_date"] = date_arg(close_date, "close_date")
    if owner is not None:
        changes["owner"] = owner_address(ctx, owner)
    if next_step is not None:
        changes["next_step"] = line_arg(next_step, "next_step", 500)
    d, changed = ctx.update(DEALS, d, changes, updated=ctx.now)
    return {"deal": _deal_json(ctx, d), "changed": changed}
