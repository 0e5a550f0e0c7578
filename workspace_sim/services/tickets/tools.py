"""The tickets tools that read and change tickets: get, create, update, transition, comment, assign and link.

The search tool is in `search.py`; each function is marked with `tool(...)` and the package registers them all
(`workspace_sim.services.tickets`).
"""

from __future__ import annotations

from typing import Any


from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument
from workspace_sim.core.registry import tool
from workspace_sim.text.validation import clean_text
from .records import (
    PROJECTS, TICKETS, PriorityArg, LinkType, INVERSE, MAX_TITLE, MAX_TEXT, MAX_WATCHERS, ticket_number, Comment,
    Link, Ticket,
)
from .lookups import (
    ticket_named, project_named, person_address, people_addresses, field_text, account_id_of, priority_arg,
    label_list, due_arg,
)
from .views import ticket_json, render_ticket


@tool(read_only=True, render=render_ticket)
def get_ticket(ctx: ToolContext, key: str) -> dict:
    """Get a ticket with all its fields, comments and links, and the statuses it may move to next.

    Args:
        key: The ticket key, e.g. OPS-12.
    """
    t = ticket_named(ctx, key)
    return ticket_json(t, ctx.get(PROJECTS, t.project))


@tool(render=render_ticket)
def create_ticket(
    ctx: ToolContext, project: str, title: str, description: str = "", priority: PriorityArg = "medium",
    assignee: str | None = None, labels: list[str] = [], due_date: str = "", department: str = "", category: str = "",
    reporter: str | None = None, reporter_name: str = "", watchers: list[str] = [], account: str = "",
    customer: str = "",
) -> dict:
    """Create a ticket in a project; it gets the next key (e.g. OPS-13) and the project's initial status. You are the
    reporter unless the ticket is filed for someone else, e.g. an outside customer known only by name
    (reporter_name="Priya from Acme Corp"). People may be named by e-mail address or by a name from the directory.

    Args:
        project: Key of the project, e.g. OPS.
        title: One-line summary.
        description: Details.
        priority: lowest, low, medium, high, highest, urgent or critical (in rising order), or unset.
        assignee: Who works on it: an email or a name from the directory ('me' for you); unassigned if omitted.
        labels: Labels (single words).
        due_date: Due date as YYYY-MM-DD; empty for none.
        department: The department the ticket belongs to, e.g. Billing.
        category: Its category, e.g. Refund request.
        reporter: Who reported it: an email (outside addresses are fine) or a directory name; default you, or nobody
            when only reporter_name is given.
        reporter_name: The reporter as free text when they are not in the directory, e.g. 'Priya from Acme Corp'.
        watchers: People to keep informed (emails or directory names).
        account: The customer's CRM account (id or exact name), if the ticket is about one.
        customer: The customer organisation as free text when it is not a CRM account, e.g. 'Acme Corp'.
    """
    p = project_named(ctx, project)
    t_title = clean_text(title, "title", MAX_TITLE, required=True)
    name = field_text(reporter_name, "reporter_name")
    if reporter is not None:
        who = person_address(ctx, reporter, "reporter", directory_only=False)
    else:
        who = None if name else ctx.user
    if p.key_format == "prefixed":
        numbers = [ticket_number(k)[1] for k in ctx.keys(TICKETS) if k.startswith(p.key + "-")]
        key = f"{p.key}-{max(numbers, default=0) + 1}"
    else:  # one sequence over every numbered ticket, as a help desk numbers them
        numbers = [ticket_number(k)[1] for k in ctx.keys(TICKETS) if not ticket_number(k)[0]]
        key = ("#" if p.key_format == "hash" else "") + str(max(numbers, default=0) + 1)
    t = Ticket(key=key, project=p.key, title=t_title, description=clean_text(description, "description", MAX_TEXT),
               status=p.initial_status, priority=priority_arg(priority),
               assignee=person_address(ctx, assignee, "assignee") if assignee is not None else None,
               reporter=who, reporter_name=name, department=field_text(department, "department"),
               category=field_text(category, "category"), watchers=people_addresses(ctx, watchers, "watchers"),
               labels=label_list(labels, "labels"), due_date=due_arg(due_date), account=account_id_of(ctx, account),
               customer=field_text(customer, "customer"), created=ctx.now, updated=ctx.now)
    ctx.put(TICKETS, t)
    return {"ticket": ticket_json(t, p)}


@tool(render=render_ticket)
def update_ticket(
    ctx: ToolContext, key: str, title: str | None = None, description: str | None = None,
    priority: PriorityArg | None = None, labels: list[str] | None = None, add_labels: list[str] = [],
    remove_labels: list[str] = [], due_date: str | None = None, department: str | None = None,
    category: str | None = None, reporter: str | None = None, reporter_name: str | None = None,
    add_watchers: list[str] = [], remove_watchers: list[str] = [], account: str | None = None,
    customer: str | None = None,
) -> dict:
    """Change a ticket's fields; only those given change. Use transition_ticket for the status and assign_ticket for the
    assignee.

    Args:
        key: The ticket key, e.g. OPS-12.
        title: New one-line summary.
        description: New details (replaces the old text).
        priority: New priority: lowest, low, medium, high, highest, urgent or critical, or unset to clear it.
        labels: The complete new list of labels (replaces the old one).
        add_labels: Labels to add.
        remove_labels: Labels to remove.
        due_date: New due date as YYYY-MM-DD; an empty string removes it.
        department: New department; an empty string clears it.
        category: New category; an empty string clears it.
        reporter: New reporter: an email or a directory name; an empty string leaves the ticket without one.
        reporter_name: New free-text reporter name, e.g. 'Priya from Acme Corp'; an empty string clears it.
        add_watchers: People to add as watchers (emails or directory names).
        remove_watchers: Watchers to remove.
        account: The customer's CRM account (id or exact name); an empty string unlinks it.
        customer: The customer organisation as free text; an empty string clears it.
    """
    t = ticket_named(ctx, key)
    given = (title, description, priority, labels, due_date, department, category, reporter, reporter_name, account,
             customer)
    if all(v is None for v in given) and not (add_labels or remove_labels or add_watchers or remove_watchers):
        raise InvalidArgument("nothing to change; give at least one field such as title, priority or labels")
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = clean_text(title, "title", MAX_TITLE, required=True)
    if description is not None:
        changes["description"] = clean_text(description, "description", MAX_TEXT)
    if priority is not None:
        changes["priority"] = priority_arg(priority)
    if due_date is not None:
        changes["due_date"] = due_arg(due_date)
    if account is not None:
        changes["account"] = account_id_of(ctx, account)
    for field, value in (("department", department), ("category", category), ("reporter_name", reporter_name),
                         ("customer", customer)):
        if value is not None:
            changes[field] = field_text(value, field)
    if reporter is not None:
        changes["reporter"] = person_address(ctx, reporter, "reporter", directory_only=False) if reporter.strip() else None
    new_labels = label_list(labels, "labels") if labels is not None else list(t.labels)
    new_labels += [x for x in label_list(add_labels, "add_labels") if x not in new_labels]
    gone = label_list(remove_labels, "remove_labels")
    missing = [x for x in gone if x not in new_labels]
    if missing:
        raise InvalidArgument(
            f"{t.key} has no label {', '.join(missing)}; its labels are {', '.join(new_labels) or 'none'}")
    changes["labels"] = [x for x in new_labels if x not in gone]
    watchers = list(t.watchers) + [x for x in people_addresses(ctx, add_watchers, "add_watchers") if x not in t.watchers]
    unwatch = [person_address(ctx, v, f"remove_watchers[{i}]", directory_only=False) for i, v in enumerate(remove_watchers)]
    missing = [x for x in unwatch if x not in watchers]
    if missing:
        raise InvalidArgument(f"{', '.join(missing)} not watching {t.key}; its watchers are "
                              f"{', '.join(watchers) or 'none'}")
    if len(watchers) > MAX_WATCHERS:
        raise InvalidArgument(f"a ticket may have at most {MAX_WATCHERS} watchers")
    changes["watchers"] = [x for x in watchers if x not in unwatch]
    t, changed = ctx.update(TICKETS, t, changes, updated=ctx.now)
    return {"ticket": ticket_json(t, ctx.get(PROJECTS, t.project)), "changed": changed}


def _comment(ctx: ToolContext, body: str) -> Comment:
    return Comment(id=ctx.new_id("cmt"), author=ctx.user, body=clean_text(body, "comment", MAX_TEXT, required=True),
                   created=ctx.now)


@tool(render=render_ticket)
def transition_ticket(ctx: ToolContext, key: str, status: str, comment: str | None = None) -> dict:
    """Move a ticket to another status of its project's workflow, optionally adding a comment in the same step; moves
    the workflow does not allow are refused with the allowed ones listed.

    Args:
        key: The ticket key, e.g. OPS-12.
        status: The status to move to, e.g. In Progress or Resolved (case-insensitive).
        comment: A comment to add with the move, e.g. how it was resolved.
    """
    t = ticket_named(ctx, key)
    p = project_named(ctx, t.project)
    allowed = p.workflow.get(t.status, [])
    onward = ", ".join(allowed) or "nothing"
    target = p.status_named(status)
    if target is None:
        raise InvalidArgument(f"{status!r} is not a status of project {p.key}; its statuses are "
                              f"{', '.join(p.statuses())}. From {t.status} it can move to {onward}")
    if target == t.status:
        raise InvalidArgument(f"{t.key} is already {t.status}; from there it can move to {onward}")
    if target not in allowed:
        raise InvalidArgument(f"{t.key} cannot move from {t.status} to {target}; "
                              f"allowed from {t.status}: {', '.join(allowed) or 'nothing (final status)'}")
    comments = [*t.comments, _comment(ctx, comment)] if comment is not None else list(t.comments)
    t = t.evolve(status=target, comments=comments, updated=ctx.now)
    ctx.put(TICKETS, t)
    return {"ticket": ticket_json(t, p)}


@tool()
def add_comment(ctx: ToolContext, key: str, body: str) -> dict:
    """Add a comment to a ticket, written as you.

    Args:
        key: The ticket key, e.g. OPS-12.
        body: The text of the comment.
    """
    t = ticket_named(ctx, key)
    c = _comment(ctx, body)
    ctx.put(TICKETS, t.evolve(comments=[*t.comments, c], updated=ctx.now))
    return {"key": t.key, "comment": c.model_dump(mode="json")}


@tool(idempotent=True, render=render_ticket)
def assign_ticket(ctx: ToolContext, key: str, assignee: str | None) -> dict:
    """Assign a ticket to a person, or unassign it with null. With the contacts service the person must be in the
    directory, and may be named by a name from it (an ambiguous name is refused with the candidates listed).

    Args:
        key: The ticket key, e.g. OPS-12.
        assignee: The new assignee: an email or a name from the directory ('me' for you), or null to unassign.
    """
    t = ticket_named(ctx, key)
    who = person_address(ctx, assignee, "assignee") if assignee is not None else None
    if who != t.assignee:
        t = t.evolve(assignee=who, updated=ctx.now)
        ctx.put(TICKETS, t)
    return {"ticket": ticket_json(t, ctx.get(PROJECTS, t.project))}


@tool(idempotent=True)
def link_tickets(ctx: ToolContext, key: str, type: LinkType, target: str) -> dict:
    """Link two tickets; the reverse link is added to the target (A blocks B also records B is_blocked_by A).

    Args:
        key: The ticket the link starts from, e.g. OPS-12.
        type: blocks, is_blocked_by, relates_to, duplicates or is_duplicated_by.
        target: The other ticket's key, e.g. OPS-7.
    """
    a = ticket_named(ctx, key)
    b = ticket_named(ctx, target)
    if a.key == b.key:
        raise InvalidArgument(f"a ticket cannot be linked to itself ({a.key})")
    forward, back = Link(type=type, target=b.key), Link(type=INVERSE[type], target=a.key)  # type: ignore[arg-type]
    created = forward not in a.links
    if created:
        ctx.put(TICKETS, a.evolve(links=[*a.links, forward], updated=ctx.now))
    if back not in b.links:
        ctx.put(TICKETS, b.evolve(links=[*b.links, back], updated=ctx.now))
    return {"key": a.key, "type": type, "target": b.key, "created": created}
