"""The tickets search tool: a query's filters turned into tests on tickets, sorted and paged.

Marked with `tool(...)`; the package registers it (`workspace_sim.services.tickets`).
"""

from __future__ import annotations

from datetime import date
from typing import Any


from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument
from workspace_sim.core.registry import tool
from workspace_sim.text.folding import fold
from workspace_sim.text.people import PEOPLE, resolve_address
from .records import (
    PROJECTS, TICKETS, ACCOUNTS, Priority, PriorityArg, SortBy, priority_rank, ticket_number, Project, Ticket,
)
from .lookups import project_named, account_id_of
from .views import ticket_summary, render_search
from .syntax import parse_query, priority_test


def _person_test(ctx: ToolContext, name: str, value: str) -> Any:
    """A test on a ticket's assignee or reporter: me, none, an address, or a name (for reporters also the
    free-text reporter name, e.g. reporter:acme)."""
    v = value.strip().lower()
    if v in ("none", "unassigned"):
        return lambda t: getattr(t, name) is None
    if v == "me":
        return lambda t: getattr(t, name) == ctx.user
    if name == "reporter" and "@" not in v:
        words = fold(v).split()
        named = {p.email for p in _directory_named(ctx, v)}
        return lambda t: t.reporter in named or all(w in fold(t.reporter_name) for w in words)
    who = resolve_address(ctx, value, name)
    return lambda t: getattr(t, name) == who


def _directory_named(ctx: ToolContext, text: str) -> list[Any]:
    if not ctx.has_service("contacts"):
        return []
    words = fold(text).split()
    return [p for p in ctx.values(PEOPLE) if words and set(words) <= set(fold(p.name).split())]


def _filter(ctx: ToolContext, name: str, value: str, projects: dict[str, Project]) -> Any:
    """The test `name:value` puts on a ticket (values are checked once, before any ticket is seen)."""
    v = value.strip().lower()
    if name == "project":
        if value.strip().upper() not in projects:
            project_named(ctx, value)
        return lambda t: t.project.lower() == v
    if name == "status":
        return lambda t: t.status.lower() == " ".join(v.split())
    if name in ("assignee", "reporter"):
        return _person_test(ctx, name, value)
    if name == "priority":
        test = priority_test(value)
        return lambda t: test(t.priority)
    if name == "label":
        return lambda t: v in (x.lower() for x in t.labels)
    if name in ("department", "category"):
        folded = " ".join(fold(value).split())
        return lambda t: fold(getattr(t, name)) == folded
    if name == "account":
        if v == "none":
            return lambda t: t.account is None
        acct = account_id_of(ctx, value)
        return lambda t: t.account == acct
    if name == "customer":  # words of the outside customer, or of the linked account's name
        words = fold(value).split()
        names = {a.id: fold(a.name) for a in ctx.values(ACCOUNTS)} if ctx.has_service("crm") else {}
        return lambda t: all(w in fold(t.customer) + " " + names.get(t.account or "", "") for w in words)

    def done(t: Ticket) -> bool:
        p = projects.get(t.project)
        return t.status in (p.done_statuses or []) if p else False

    if v == "open":
        return lambda t: not done(t)
    if v == "done":
        return done
    if v == "unassigned":
        return lambda t: t.assignee is None
    if v == "overdue":
        return lambda t: not done(t) and t.due_date is not None and t.due_date < ctx.now.date()
    raise InvalidArgument(f"is:{value} is not supported; use is:open, is:done, is:unassigned or is:overdue")


def _sort_key(by: str) -> Any:
    if by == "priority":  # highest first, unset last
        return lambda t: (-priority_rank(t.priority), ticket_number(t.key))
    if by == "due_date":  # soonest first, none last
        return lambda t: (t.due_date is None, t.due_date or date.min, ticket_number(t.key))
    if by == "updated":  # most recent first
        return lambda t: (-(t.updated.timestamp() if t.updated else 0), ticket_number(t.key))
    return lambda t: ticket_number(t.key)


@tool(read_only=True, render=render_search)
def search_tickets(
    ctx: ToolContext, query: str = "", project: str | None = None, status: str | None = None,
    assignee: str | None = None, priority: PriorityArg | None = None, min_priority: Priority | None = None,
    label: str | None = None, department: str | None = None, category: str | None = None,
    account: str | None = None, customer: str | None = None, sort: SortBy = "key", limit: int = 20, offset: int = 0,
) -> dict:
    """Search tickets by text and filters, ordered by project and number unless sorted otherwise. The query may mix
    words or "quoted phrases" (matched in key, title, description, reporter name, department, category, labels and
    comments) with filters project:OPS, status:"In Progress", assignee:me (or an email, a directory name, or none),
    reporter: (an email, me, or words of the reporter's name), priority:high (or unset, or a comparison such as
    priority:>=high on the scale lowest < low < medium < high < highest < urgent < critical), label:, department:,
    category:, account: (a CRM account id or name, or none), customer: (words of the customer), is:open, is:done,
    is:unassigned, is:overdue.

    Args:
        query: Text and filters, e.g. 'login error assignee:me is:open priority:>=high'.
        project: Only tickets of this project key.
        status: Only tickets in this status (case-insensitive).
        assignee: Only tickets assigned to this person: an email, a name from the directory, 'me' for you, 'none' for
            unassigned.
        priority: Only tickets of exactly this priority ('unset' for tickets without one).
        min_priority: Only tickets of this priority or higher (unset ones are left out).
        label: Only tickets with this label.
        department: Only tickets of this department (case-insensitive).
        category: Only tickets of this category (case-insensitive).
        account: Only tickets linked to this CRM account (id or exact name; 'none' for tickets without one).
        customer: Only tickets whose customer (free text, or the linked account's name) has these words.
        sort: Order: key (project and number), priority (highest first, unset last), due_date (soonest first, none
            last) or updated (most recent first).
        limit: Maximum number of tickets to return (1-100).
        offset: Number of matching tickets to skip (for paging).
    """
    if not 1 <= limit <= 100:
        raise InvalidArgument("limit must be between 1 and 100")
    if offset < 0:
        raise InvalidArgument("offset must be zero or positive")
    if len(query) > 1000:
        raise InvalidArgument("query is longer than 1000 characters")
    filters, words = parse_query(query)
    for name, value in (("project", project), ("status", status), ("assignee", assignee),
                        ("priority", priority), ("priority", f">={min_priority}" if min_priority else None),
                        ("label", label), ("department", department), ("category", category),
                        ("account", account), ("customer", customer)):
        if value is not None:
            filters.append((name, value))
    projects = {p.key: p for p in ctx.values(PROJECTS)}
    tests = [_filter(ctx, n, v, projects) for n, v in filters]
    hits = []
    for t in ctx.values(TICKETS):
        if not all(test(t) for test in tests):
            continue
        hay = " ".join([t.key, t.title, t.description, t.reporter_name, t.department, t.category, t.customer, *t.labels,
                        *(c.body for c in t.comments)]).lower()
        if all(w in hay for w in words):
            hits.append(t)
    hits.sort(key=_sort_key(sort))
    page = hits[offset:offset + limit]
    return {"total": len(hits), "offset": offset, "limit": limit, "tickets": [ticket_summary(t) for t in page]}
