"""Contacts: the organisation's directory (people keyed by email), with search and lookup tools.

The address rules and name resolution the other services share live in `workspace_sim.people`.
"""

from __future__ import annotations

import difflib
from datetime import time
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import Field, field_validator, model_validator

from ..context import ToolContext
from ..errors import InvalidArgument, NotFound, SpecError
from ..records import Record
from ..people import PEOPLE, email_problem, fold, normalize_email, person_summary  # noqa: F401 (re-exported)
from ..registry import Service
from ..validation import TimeZoneName

MAX_QUERY = 500


class Person(Record):
    """One person of the directory. Working hours are local times in the person's time zone."""

    key_field = "email"
    email: str
    name: str
    title: str = ""
    department: str = ""
    manager: str | None = None
    timezone: TimeZoneName = "UTC"
    phone: str = ""
    location: str | None = None
    working_hours_start: time = time(9, 0)
    working_hours_end: time = time(17, 0)

    @field_validator("email")
    @classmethod
    def _email(cls, v: str) -> str:
        return normalize_email(v)

    @field_validator("manager")
    @classmethod
    def _manager(cls, v: str | None) -> str | None:
        return None if v is None or not v.strip() else normalize_email(v)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        v = " ".join(v.split())
        if not v:
            raise ValueError("name is empty")
        return v

    @field_validator("working_hours_start", "working_hours_end")
    @classmethod
    def _local_time(cls, v: time) -> time:
        if v.tzinfo is not None:
            raise ValueError("working hours are local to the person's time zone; give them without an offset")
        return v

    @model_validator(mode="after")
    def _check(self) -> "Person":
        if self.working_hours_start >= self.working_hours_end:
            raise ValueError(
                f"working_hours_start {self.working_hours_start:%H:%M} must be before "
                f"working_hours_end {self.working_hours_end:%H:%M}"
            )
        if self.manager == self.email:
            raise ValueError(f"{self.email} cannot be their own manager")
        return self


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Check that every manager is in the directory and that no management chain loops."""
    people = tables.get(PEOPLE)
    if not people:
        return
    for email, p in people.items():
        assert isinstance(p, Person)
        if p.manager is not None and p.manager not in people:
            raise SpecError(f"data.contacts.people[email={email}].manager", f"{p.manager} is not in the directory")
    for email in people:
        seen = [email]
        boss = people[email].manager  # type: ignore[attr-defined]
        while boss is not None:
            if boss in seen:
                raise SpecError(f"data.contacts.people[email={email}].manager",
                                f"management chain loops: {' -> '.join([*seen, boss])}")
            seen.append(boss)
            boss = people[boss].manager  # type: ignore[attr-defined]


SERVICE = Service("contacts", {"people": Person}, title="Contacts", prepare=_prepare)


def _card(ctx: ToolContext, p: Person) -> dict[str, Any]:
    return {
        "email": p.email, "name": p.name, "title": p.title, "department": p.department,
        "manager": p.manager, "timezone": p.timezone, "phone": p.phone, "location": p.location,
        "working_hours": f"{p.working_hours_start:%H:%M}-{p.working_hours_end:%H:%M}",
    }


def _score(p: Person, words: list[str], whole: str) -> int:
    """Relevance of a person for a folded query; 0 when some word matches nothing."""
    name, email = fold(p.name), p.email
    if whole == email:
        return 1000
    score = 200 if whole == name else 0
    tokens = name.split()
    local = email.split("@")[0]
    title, dept = fold(p.title), fold(p.department)
    for w in words:
        best = 0
        if w in tokens:
            best = 60
        elif any(t.startswith(w) for t in tokens):
            best = 40
        elif local.startswith(w):
            best = 35
        elif w in name:
            best = 25
        elif w in email:
            best = 20
        if w == dept:
            best = max(best, 15)
        elif w in dept or w in title:
            best = max(best, 10)
        if not best:
            return 0
        score += best
    return score


def _render_search(d: dict) -> str:
    if not d["contacts"]:
        return "No contacts match."
    head = f"{len(d['contacts'])} of {d['total']} contacts"
    if d["truncated"]:
        head += " (more: narrow the query or raise limit)"
    lines = [head]
    for c in d["contacts"]:
        extra = ", ".join(x for x in (c["title"], c["department"]) if x)
        lines.append(f"- {c['name']} <{c['email']}>" + (f" — {extra}" if extra else "") + f" ({c['timezone']})")
    return "\n".join(lines)


def _departments(ctx: ToolContext) -> list[str]:
    return sorted({p.department for p in ctx.values(PEOPLE) if p.department}, key=str.casefold)


@SERVICE.tool(read_only=True, render=_render_search)
def search_contacts(
    ctx: ToolContext, query: str = "", department: str | None = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> dict:
    """Search the organisation's directory by name, email, title or department (case-insensitive), best matches first;
    every result shows email, title and department so people with similar names can be told apart.

    Args:
        query: Words to look for; every word must match the person's name, email, title or department. Empty lists
            everyone.
        department: Only people of this department (exact name, case-insensitive).
        limit: Most results to return (1-100).
    """
    if len(query) > MAX_QUERY:
        raise InvalidArgument(f"query is longer than {MAX_QUERY} characters; use a few words of the name or title")
    words = fold(query).split()
    whole = " ".join(words)
    dept = None
    if department is not None and department.strip():
        dept = fold(department.strip())
        known = _departments(ctx)
        if dept not in {fold(d) for d in known}:
            close = difflib.get_close_matches(department.strip(), known, n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(close)}?" if close else f"departments: {', '.join(known) or 'none'}"
            raise NotFound(f"no department named {department.strip()!r}; {hint}")
    ranked: list[tuple[int, Person]] = []
    for p in ctx.values(PEOPLE):
        if dept is not None and fold(p.department) != dept:
            continue
        score = _score(p, words, whole) if words else 1
        if score:
            ranked.append((score, p))
    ranked.sort(key=lambda sp: (-sp[0], fold(sp[1].name), sp[1].email))
    shown = [_card(ctx, p) for _, p in ranked[:limit]]
    return {"query": query, "department": department, "total": len(ranked), "truncated": len(ranked) > limit,
            "contacts": shown}


def find_person(ctx: ToolContext, address: str) -> Person | None:
    """The directory entry of an address (any case), or None."""
    try:
        return ctx.get(PEOPLE, normalize_email(address))
    except ValueError:
        return None


def _not_found(ctx: ToolContext, email: str) -> NotFound:
    people = list(ctx.values(PEOPLE))
    q = fold(email.strip())
    if "@" not in q:
        hits = [p for p in people if _score(p, q.split(), q)]
        if hits:
            listed = "; ".join(person_summary(p) for p in hits[:5])
            return NotFound(f"get_contact needs an e-mail address, not {email!r}; people matching it: {listed}")
        return NotFound(f"{email!r} is not an e-mail address and matches no one; use search_contacts to find people")
    close = difflib.get_close_matches(q, [p.email for p in people], n=3, cutoff=0.6)
    hint = "; did you mean " + "; ".join(person_summary(ctx.get(PEOPLE, c)) for c in close) + "?" if close else (
        "; use search_contacts to find people")
    return NotFound(f"no contact with e-mail {email.strip()!r}{hint}")


def _render_card(d: dict) -> str:
    lines = [f"{d['name']} <{d['email']}>"]
    for label, key in (("Title", "title"), ("Department", "department"), ("Phone", "phone"), ("Location", "location")):
        if d.get(key):
            lines.append(f"{label}: {d[key]}")
    if d["manager"]:
        lines.append(f"Manager: {d['manager_name']} <{d['manager']}>")
    if d["reports"]:
        lines.append(f"Direct reports: {', '.join(d['reports'])}")
    lines.append(f"Time zone: {d['timezone']} (local time now {d['local_time'][:16].replace('T', ' ')}; "
                 f"working hours {d['working_hours']})")
    return "\n".join(lines)


@SERVICE.tool(read_only=True, render=_render_card)
def get_contact(ctx: ToolContext, email: str) -> dict:
    """Get one person's full directory entry by e-mail address: title, department, manager, direct reports, phone,
    location, time zone with their current local time, and working hours.

    Args:
        email: The person's e-mail address (case-insensitive), e.g. alice.smith@example.com.
    """
    p = find_person(ctx, email)
    if p is None:
        raise _not_found(ctx, email)
    card = _card(ctx, p)
    boss = ctx.get(PEOPLE, p.manager) if p.manager else None
    card["manager_name"] = boss.name if boss is not None else None
    card["reports"] = [q.email for q in ctx.values(PEOPLE) if q.manager == p.email]
    card["local_time"] = ctx.now.astimezone(ZoneInfo(p.timezone)).isoformat()
    return card
