"""The CRM's activity log: log calls, meetings, e-mails, notes and tasks against accounts and deals, and list them."""

from __future__ import annotations

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument
from workspace_sim.core.registry import tool
from workspace_sim.text.people import resolve_addresses
from workspace_sim.text.render import render_list
from workspace_sim.text.validation import clean_text
from .records import ACTIVITIES, MAX_BODY, Activity, ActivityType
from .views import activity_json, activity_line
from .lookups import (
    account_named, deal_named, moment_arg, check_page, line_arg, new_id, when_of, day_start,
)


@tool(render=lambda d: "Logged " + activity_line(d["activity"]))
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
    deal = deal_named(ctx, deal_id) if deal_id is not None else None
    account = account_named(ctx, account_id) if account_id is not None else None
    if account is None and deal is None:
        raise InvalidArgument("give account_id or deal_id (or both) to say what the activity concerns")
    if account is not None and deal is not None and deal.account_id != account.id:
        raise InvalidArgument(f"deal {deal.id} belongs to account {deal.account_id}, not {account.id}")
    when = moment_arg(occurred_at, "occurred_at") if occurred_at is not None else ctx.now
    if when > ctx.now and type != "task":
        raise InvalidArgument(f"occurred_at {occurred_at} is in the future (now is {ctx.now.isoformat()}); log what "
                              "happened, or use type task for planned work")
    if len(contacts) > 50:
        raise InvalidArgument(f"contacts has {len(contacts)} entries; at most 50 are allowed")
    act = Activity(id=new_id(ctx, ACTIVITIES, "act"), type=type, subject=line_arg(subject, "subject", 300, required=True),
                   body=clean_text(body, "body", MAX_BODY),
                   account_id=deal.account_id if deal else account.id,  # type: ignore[union-attr]
                   deal_id=deal.id if deal else None, contacts=resolve_addresses(ctx, contacts, "contacts"),
                   author=ctx.user, occurred=when)
    ctx.put(ACTIVITIES, act)
    return {"activity": activity_json(act)}


@tool(read_only=True, render=render_list("activities", activity_line, "No activities match."))
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
    check_page(limit, offset)
    account = account_named(ctx, account_id).id if account_id is not None else None
    deal = deal_named(ctx, deal_id).id if deal_id is not None else None
    lo = moment_arg(day_start(since), "since") if since is not None else None
    hi = moment_arg(day_start(until), "until") if until is not None else None
    hits = [x for x in ctx.values(ACTIVITIES)
            if (account is None or x.account_id == account) and (deal is None or x.deal_id == deal)
            and (type is None or x.type == type)
            and (lo is None or when_of(ctx, x) >= lo) and (hi is None or when_of(ctx, x) < hi)]
    hits.sort(key=lambda x: (when_of(ctx, x), x.id), reverse=True)
    return {"total": len(hits), "offset": offset, "limit": limit,
            "activities": [activity_json(x) for x in hits[offset:offset + limit]]}
