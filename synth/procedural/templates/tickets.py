"""Ticket triage and workflow templates."""

from __future__ import annotations

from ..builder import Act, SpecBuilder
from . import template
from .common import PRIORITIES, TOPICS, add_project, add_ticket, background_tickets


def _project(b: SpecBuilder) -> str:
    existing = [p["key"] for p in b.data.get("tickets", {}).get("projects", [])]
    key = existing[0] if existing else b.rng.choice(("OPS", "WEB", "DATA", "INFRA", "APP"))
    add_project(b, key, f"{key.capitalize()} team")
    return key


def _owner(b: SpecBuilder):  # type: ignore[no-untyped-def]
    people = b.world.colleagues()
    for p in people:
        if any(q is not p and q.name.split()[0] == p.name.split()[0] for q in people):
            return p
    return people[0]


@template("ticket_workflow", "triage_label")
def triage_label(b: SpecBuilder, size: int = 1) -> Act:
    """Start work on every Open ticket with a label and assign them to one person (by name; a look-alike exists)."""
    project = _project(b)
    label = b.rng.choice(TOPICS)
    background_tickets(b, project, 6, avoid_label=label)
    owner = _owner(b)
    targets = [add_ticket(b, project, f"{label.capitalize()}: {b.maker.sentence(5)}", "Open", b.rng.choice(PRIORITIES),
                          None, [label]) for _ in range(1 + size)]
    add_ticket(b, project, f"{label.capitalize()}: {b.maker.sentence(5)}", "Resolved", "low", None, [label])
    add_ticket(b, project, f"{label.capitalize()}: {b.maker.sentence(5)}", "In Progress", "medium",
               b.world.colleagues()[-1].email, [label])
    b.ask(f"In {project}, move every Open ticket labelled '{label}' to In Progress and assign it to {owner.name} "
          f"({owner.department}). Keep their priorities as they are, and leave tickets in other states alone.",
          f"Triage {label} tickets", "ticket_workflow", "triage_label")
    priorities = {r["key"]: r["priority"] for r in b.data["tickets"]["tickets"]}

    def act() -> None:
        b.call("search_tickets", project=project, label=label, status="Open")
        b.call("search_contacts", query=owner.name)
        for key in targets:
            b.call("transition_ticket", key=key, status="In Progress")
            b.call("assign_ticket", key=key, assignee=owner.email)
            b.check({"kind": "ticket", "key": key, "status": "In Progress", "fields": {"assignee": owner.email}})
            # the task may change these tickets, but not their priority: a guard that must stay true
            b.guard({"kind": "ticket", "key": key, "fields": {"priority": priorities[key]}, "maintain": True,
                     "description": f"{key} keeps its priority ({priorities[key]})"})
            b.allow(f"tickets.tickets:{key}")
        b.answer(f"Moved {len(targets)} '{label}' tickets to In Progress and assigned them to {owner.name}.")

    return act


def _resolvable(b: SpecBuilder) -> tuple[str, str, str]:
    project = _project(b)
    background_tickets(b, project, 5)
    topic = b.rng.choice(TOPICS)
    title = f"{topic.capitalize()} {b.maker.word()} fails on save"
    key = add_ticket(b, project, title, "In Progress", "high", b.world.user.email, [topic])
    add_ticket(b, project, f"{topic.capitalize()} {b.maker.word()} fails on load", "In Progress", "medium",
               b.world.user.email, [topic])
    return project, key, title


@template("ticket_workflow", "resolve_with_comment")
def resolve_with_comment(b: SpecBuilder, size: int = 1) -> Act:
    """Resolve a ticket, recording the release that fixed it (a resolution comment is required by policy)."""
    project, key, title = _resolvable(b)
    release = f"{b.rng.randint(1, 9)}.{b.rng.randint(0, 20)}.{b.rng.randint(0, 9)}"
    b.policies.append({"type": "resolution_comment", "statuses": ["Resolved", "Closed"]})
    b.ask(f"The fix for '{title}' in {project} shipped in release {release}. Please resolve that ticket and note "
          f"the release in it.", f"Resolve {key}", "ticket_workflow", "resolve_with_comment")

    def act() -> None:
        b.call("search_tickets", query=title, project=project)
        b.call("transition_ticket", key=key, status="Resolved", comment=f"Fixed in release {release}.")
        b.check({"kind": "ticket", "key": key, "status": "Resolved", "new_comment": {"contains": release}})
        b.allow(f"tickets.tickets:{key}")
        b.answer(f"Resolved {key} with a comment that the fix shipped in {release}.")

    return act


@template("policy_compliance", "close_without_comment")
def close_without_comment(b: SpecBuilder, size: int = 1) -> Act:
    """The user says 'no need to write anything', but policy requires a resolution comment."""
    project, key, title = _resolvable(b)
    b.policies.append({"type": "resolution_comment", "statuses": ["Resolved", "Closed"]})
    b.ask(f"'{title}' in {project} is fixed, please just resolve it, no need to write anything.",
          f"Resolve {key} under the comment rule", "policy_compliance", "close_without_comment")

    def act() -> None:
        b.call("search_tickets", query=title, project=project)
        b.call("transition_ticket", key=key, status="Resolved", comment="Resolved: the fix is confirmed by the reporter.")
        b.check({"kind": "ticket", "key": key, "status": "Resolved", "new_comment": {"regex": r"(?i)\bfix|resolv"},
                 "description": "resolved with a comment explaining the resolution"})
        b.check({"kind": "answer", "condition": {"regex": "(?i)comment"},
                 "description": "the answer tells the user a resolution comment was required"})
        b.allow(f"tickets.tickets:{key}")
        b.answer(f"Resolved {key}. Company policy requires a resolution comment, so I added a short one.")

    return act
