"""Distractors shared by templates: background files, near-miss mail, busy calendars, ticket backlogs."""

from __future__ import annotations

import random
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from workspace_sim.services.tickets import DEFAULT_WORKFLOW, PRIORITIES  # noqa: F401  (re-exported to templates)

from ...spec import Person
from ..builder import SpecBuilder
from ..prose import office_mail

STATUSES = ("Open", "In Progress", "In Review", "Resolved", "Closed", "Reopened")
WORKFLOW = DEFAULT_WORKFLOW
TOPICS = ("pricing", "onboarding", "roadmap", "vendor", "hiring", "budget", "migration", "audit", "launch",
          "renewal", "security", "training", "inventory", "forecast", "offsite")


ACKS = ("Thanks! ", "Great, thanks - ", "Perfect. ", "Cheers - ", "Lovely, ", "Good, thanks. ", "Thank you! ", "Nice - ")
"""How a user's follow-up opens (drawn by `acked`)."""


def acked(seed: int, text: str) -> str:
    """A follow-up `text` (starting lower-case) opened by one of ACKS, drawn with an rng of its own (the task's draws
    are unchanged); the text is capitalised after an ack that ends a sentence."""
    ack = random.Random(f"ack:{seed}").choice(ACKS)
    return ack + (text[0].upper() + text[1:] if ack.rstrip().endswith((".", "!")) else text)


def background_files(b: SpecBuilder, n: int = 4) -> None:
    """Unrelated documents in a few folders."""
    b.use("files")
    rows = b.table("files", "files")
    taken = {r["path"] for r in rows}
    for _ in range(n):
        folder = b.rng.choice(("/notes", "/shared", "/projects/" + b.rng.choice(TOPICS), "/personal"))
        path = f"{folder}/{b.maker.word()}-{b.rng.choice(TOPICS)}.md"
        if path in taken:
            continue
        taken.add(path)
        rows.append({"path": path, "content": f"# {b.maker.sentence(4)}\n\n{b.maker.paragraph(2)}\n"})


def add_mail(b: SpecBuilder, sender: Person | str, subject: str, body: str, days_ago: float, to: list[str] | None = None,
             folder: str = "inbox", read: bool = True, labels: list[str] | None = None,
             attachments: list[str] | None = None) -> str:
    """A message in the user's mailbox; returns its id."""
    b.use("mail")
    mid = b.next_id("mail")
    sender_email = sender if isinstance(sender, str) else sender.email
    b.table("mail", "messages").append({
        "id": mid, "owner": b.world.user.email, "folder": folder, "sender": sender_email,
        "to": to or [b.world.user.email], "subject": subject, "body": body, "date": b.ago(days=days_ago).isoformat(),
        "read": read, "labels": labels or [], "attachments": attachments or [],
    })
    return mid


def background_mail(b: SpecBuilder, n: int = 4) -> None:
    """Everyday mail from colleagues and outsiders on other things, each about one thing (`prose.office_mail`)."""
    people = b.world.colleagues() + b.world.externals()
    user = b.world.user.name.split()[0]
    for _ in range(n):
        p = b.rng.choice(people)
        subject, body = office_mail(b.rng, user, p.name.split()[0], outside=p.role == "external")
        add_mail(b, p, subject, body, days_ago=b.rng.uniform(0.2, 9), read=b.rng.random() < 0.6)


def add_project(b: SpecBuilder, key: str, name: str) -> None:
    """A ticket project with the standard workflow."""
    b.use("tickets", "contacts")
    projects = b.table("tickets", "projects")
    if not any(p["key"] == key for p in projects):
        projects.append({"key": key, "name": name, "workflow": WORKFLOW, "initial_status": "Open"})


def add_ticket(b: SpecBuilder, project: str, title: str, status: str = "Open", priority: str = "medium",
               assignee: str | None = None, labels: list[str] | None = None, description: str = "") -> str:
    """A ticket with the next key of its project; returns the key."""
    rows = b.table("tickets", "tickets")
    n = sum(1 for r in rows if r["project"] == project) + 1
    key = f"{project}-{n}"
    rows.append({"key": key, "project": project, "title": title, "description": description or b.maker.paragraph(2),
                 "status": status, "priority": priority, "assignee": assignee, "reporter": b.world.manager.email,
                 "labels": labels or [], "created": b.ago(days=b.rng.uniform(1, 30)).isoformat()})
    return key


def background_tickets(b: SpecBuilder, project: str, n: int = 6, avoid_label: str | None = None) -> None:
    """Tickets in many states and priorities, assigned around the team."""
    people = [p.email for p in b.world.colleagues()]
    for _ in range(n):
        label = b.rng.choice([t for t in TOPICS if t != avoid_label])
        add_ticket(b, project, f"{b.maker.sentence(5)}", b.rng.choice(STATUSES), b.rng.choice(PRIORITIES),
                   b.rng.choice(people + [None]), [label])  # type: ignore[list-item]


def local(b: SpecBuilder, day_offset: int, hour: int, minute: int = 0, tz: str | None = None) -> datetime:
    """A wall-clock time `day_offset` days after today in a time zone (the user's by default)."""
    z = ZoneInfo(tz or b.world.user.timezone)
    day = b.now.astimezone(z).date() + timedelta(days=day_offset)
    return datetime.combine(day, time(hour, minute), tzinfo=z)


def add_event(b: SpecBuilder, title: str, start: datetime, minutes: int, organizer: str, attendees: list[str],
              location: str = "") -> str:
    """A calendar event everyone listed has accepted; returns its id."""
    b.use("calendar")
    eid = b.next_id("cal")
    b.table("calendar", "events").append({
        "id": eid, "title": title, "start": start.isoformat(), "end": (start + timedelta(minutes=minutes)).isoformat(),
        "timezone": str(start.tzinfo), "organizer": organizer,
        "attendees": [{"email": a, "response": "accepted"} for a in attendees if a != organizer],
        "location": location,
    })
    return eid


def busy_calendar(b: SpecBuilder, people: list[Person], days: int = 3, per_day: int = 2) -> None:
    """Meetings that fill part of each person's working days."""
    for d in range(days):
        for p in people:
            for _ in range(per_day):
                hour = b.rng.choice((9, 10, 11, 13, 14, 15, 16))
                start = local(b, d, hour, b.rng.choice((0, 30)), p.timezone)
                add_event(b, f"{b.rng.choice(TOPICS).capitalize()} sync", start, b.rng.choice((30, 60)), p.email, [p.email])


def money(x: float) -> str:
    """An amount as written in reports: two decimals, no thousands separator."""
    return f"{x:.2f}"


def unique_names(b: SpecBuilder, n: int, make: Any) -> list[str]:
    """n distinct values from a maker function."""
    out: list[str] = []
    for _ in range(n * 20):
        v = make()
        if v not in out:
            out.append(v)
        if len(out) == n:
            return out
    raise RuntimeError("could not draw distinct values")


def directory_key(p: Person) -> tuple[str, str]:
    """Where `p` stands in the directory's listing (search_contacts sorts by folded name, then address)."""
    return (p.name.casefold(), p.email)


def lookalike_listed_first(b: SpecBuilder, p: Person) -> Person:
    """A colleague easy to confuse with `p` (same first name, a surname cut short or one sorting earlier) whose
    directory entry comes before `p`'s, so `p` is never the first person a listing shows; an existing person of
    that name is reused, a new one joins the world, the contacts and the mail accounts of the services in use."""
    first, last = p.name.split(" ", 1) if " " in p.name else (p.name, "")
    earlier = sorted(s for s in b.maker.pools.last_names if s.casefold() < last.casefold())
    twist = last[:-1] if len(last) > 3 or not earlier else b.rng.choice(earlier)
    while len(twist) > 2 and last in (twist + "s", twist + "es"):  # never a surname + "s" look-alike
        twist = twist[:-1]
    name = f"{first} {twist}".strip()
    for q in b.world.people:
        if q.name == name and directory_key(q) < directory_key(p):
            return q
    q = b.maker.person(p.email.split("@")[1], "colleague", p.department, first=first, last=twist)
    if directory_key(q) >= directory_key(p):  # pragma: no cover - a prefix or an earlier surname sorts first
        raise RuntimeError(f"look-alike {q.name} does not sort before {p.name}")
    b.world.people.append(q)
    if "contacts" in b.services:
        b.table("contacts", "people").append({"email": q.email, "name": q.name, "title": q.title,
                                              "department": q.department, "manager": None,
                                              "timezone": q.timezone, "phone": b.maker.phone(q.timezone)})
    if "mail" in b.services:
        b.table("mail", "accounts").append({"email": q.email, "name": q.name})
    return q
