"""How the tickets service shows its records: the JSON a tool returns and its text renderings."""

from __future__ import annotations

from typing import Any


from workspace_sim.text.render import render_list
from .records import UNSET, Project, Ticket


def ticket_summary(t: Ticket) -> dict[str, Any]:
    """The fields of a ticket a search result shows."""
    return {"key": t.key, "title": t.title, "status": t.status, "priority": t.priority, "assignee": t.assignee,
            "department": t.department, "category": t.category, "account": t.account, "customer": t.customer,
            "labels": list(t.labels),
            "due_date": t.due_date.isoformat() if t.due_date else None}


def ticket_json(t: Ticket, project: Project | None) -> dict[str, Any]:
    """A ticket with all its fields and the statuses it may move to next."""
    out = t.model_dump(mode="json")
    out["allowed_transitions"] = list(project.workflow.get(t.status, [])) if project else []
    return out


def ticket_line(d: dict[str, Any]) -> str:
    """One line of text for a ticket summary."""
    who = d["assignee"] or "unassigned"
    due = f", due {d['due_date']}" if d.get("due_date") else ""
    return f"{d['key']} [{d['status']}] ({d['priority'] or UNSET}) {d['title']} - {who}{due}"


def reporter_text(d: dict[str, Any]) -> str:
    """Who reported a ticket, as text: name and address, either one, or 'unknown'."""
    if d["reporter_name"] and d["reporter"]:
        return f"{d['reporter_name']} <{d['reporter']}>"
    return d["reporter_name"] or d["reporter"] or "unknown"


render_search = render_list("tickets", ticket_line, "No tickets match.")


def render_ticket(data: dict) -> str:
    """The text rendering of a ticket answer: its line, reporter, fields, description, links, comments and next
    statuses."""
    d = data["ticket"] if "ticket" in data else data
    lines = [ticket_line(d), f"Reporter: {reporter_text(d)}; labels: {', '.join(d['labels']) or 'none'}"]
    where = [f"{k.capitalize()}: {d[k]}" for k in ("department", "category", "customer") if d[k]]
    if d.get("account"):
        where.append(f"CRM account: {d['account']}")
    if d["watchers"]:
        where.append(f"Watchers: {', '.join(d['watchers'])}")
    if where:
        lines.append("; ".join(where))
    if d["description"]:
        lines.append(d["description"])
    lines += [f"Link: {x['type']} {x['target']}" for x in d["links"]]
    lines += [f"Comment {c['id']} by {c['author']} ({c['created']}): {c['body']}" for c in d["comments"]]
    lines.append(f"Can move to: {', '.join(d['allowed_transitions']) or 'nothing (final status)'}")
    return "\n".join(lines)
