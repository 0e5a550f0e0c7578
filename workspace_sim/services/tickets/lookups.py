"""The tickets tools' shared lookups and argument checks: tickets and projects by key (with close-match hints),
people, CRM accounts, one-line fields, priorities, labels and due dates."""

from __future__ import annotations

import difflib
from datetime import date


from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, NotFound
from workspace_sim.text.folding import fold
from workspace_sim.text.people import PEOPLE, resolve_address
from workspace_sim.text.validation import as_argument, clean_text, iso_date, record_id
from .records import (
    PROJECTS, TICKETS, ACCOUNTS, UNSET, MAX_LABELS, MAX_FIELD, MAX_WATCHERS, TICKET_KEY, KEY_HELP, label_word,
    ticket_number, Project, Ticket,
)


def ticket_named(ctx: ToolContext, key: str) -> Ticket:
    """A ticket by key in any of its forms (4512 and #4512 name the same ticket), or NotFound with close keys."""
    k = key.strip().upper()
    t = ctx.get(TICKETS, k)
    if t is None and TICKET_KEY.match(k) and not ticket_number(k)[0]:  # 4512 and #4512 name the same ticket
        t = ctx.get(TICKETS, k[1:] if k.startswith("#") else f"#{k}")
    if t is None:
        if not TICKET_KEY.match(k):
            raise InvalidArgument(f"ticket key {key!r} must look like {KEY_HELP}")
        close = difflib.get_close_matches(k, ctx.keys(TICKETS), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use search_tickets to find ticket keys"
        raise NotFound(f"ticket {k} not found{hint}")
    return t


def project_named(ctx: ToolContext, key: str) -> Project:
    """A project by key (any case), or NotFound listing the projects."""
    k = key.strip().upper()
    p = ctx.get(PROJECTS, k)
    if p is None:
        known = ctx.keys(PROJECTS)
        raise NotFound(f"project {key!r} not found; projects: {', '.join(known) if known else 'none'}")
    return p


def person_address(ctx: ToolContext, value: str, what: str, directory_only: bool = True) -> str:
    """An address for `value` ('me' is the user; a name resolves through the directory). With the
    contacts service and `directory_only`, the person must be in the directory."""
    if value.strip().lower() == "me":
        return ctx.user
    email = resolve_address(ctx, value, what)
    if directory_only and ctx.has_service("contacts") and email != ctx.user and ctx.get(PEOPLE, email) is None:
        close = difflib.get_close_matches(email, ctx.keys(PEOPLE), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use search_contacts to find people"
        raise NotFound(f"{what} {email} is not in the directory{hint}")
    return email


def people_addresses(ctx: ToolContext, values: list[str], what: str) -> list[str]:
    """Addresses for a list of people (at most MAX_WATCHERS), without repeats."""
    if len(values) > MAX_WATCHERS:
        raise InvalidArgument(f"{what} has {len(values)} entries; at most {MAX_WATCHERS} are allowed")
    return list(dict.fromkeys(person_address(ctx, v, f"{what}[{i}]") for i, v in enumerate(values)))


def field_text(value: str, what: str) -> str:
    """A one-line text field of at most MAX_FIELD characters, spaces collapsed."""
    text = clean_text(value, what, MAX_FIELD)
    if "\n" in text or "\r" in text:
        raise InvalidArgument(f"{what} must be one line")
    return " ".join(text.split())


def account_id_of(ctx: ToolContext, value: str) -> str | None:
    """A CRM account id from an id or exact name ('' for none); without the CRM any id is kept as given."""
    text = value.strip()
    if not text:
        return None
    if not ctx.has_service("crm"):
        return as_argument(record_id, text, "account", "acc-0001")
    if ctx.get(ACCOUNTS, text) is not None:
        return text
    named = [a.id for a in ctx.values(ACCOUNTS) if fold(a.name) == fold(text)]
    if len(named) == 1:
        return named[0]
    close = difflib.get_close_matches(text, [a.name for a in ctx.values(ACCOUNTS)], n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else "; use search_accounts to find accounts"
    raise NotFound(f"CRM account {text!r} not found{hint}")


def priority_arg(value: str) -> str | None:
    """A priority argument as stored: None for 'unset'."""
    return None if value == UNSET else value


def label_list(values: list[str], what: str) -> list[str]:
    """Labels from an argument (at most MAX_LABELS), each checked, without repeats."""
    if len(values) > MAX_LABELS:
        raise InvalidArgument(f"{what} has {len(values)} entries; at most {MAX_LABELS} are allowed")
    out: list[str] = []
    for v in values:
        x = as_argument(label_word, v)
        if x not in out:
            out.append(x)
    return out


def due_arg(value: str, what: str = "due_date") -> date | None:
    """A date from YYYY-MM-DD text; an empty string means no due date."""
    return iso_date(value, what, "2026-03-20")
