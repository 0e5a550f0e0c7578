"""The CRM tools' shared lookups and argument checks: records by id or name (with close-match hints), owners,
dates and times, paging, query words, amount bounds, sort orders, new ids, and each account's last contact."""

from __future__ import annotations

import difflib
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Callable

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, NotFound
from workspace_sim.text.folding import fold
from workspace_sim.text.money import AmountInput, format_minor, to_minor
from workspace_sim.text.people import PEOPLE, resolve_address
from workspace_sim.text.validation import as_argument, iso_date
from .records import (
    ACCOUNTS, ACTIVITIES, CONTACT_TYPES, DEALS, Account, Activity, Deal, short_text,
)

MAX_QUERY = 500


def not_found(ctx: ToolContext, table: str, what: str, ref: str, search_tool: str) -> NotFound:
    """NotFound for an id, suggesting records whose id or name is close to what was given."""
    names = {r.id: r.name for r in ctx.values(table)}
    by_fold = {fold(n): i for i, n in names.items()}
    close = difflib.get_close_matches(ref.strip(), list(names), n=3, cutoff=0.6)
    close += [by_fold[n] for n in difflib.get_close_matches(fold(ref.strip()), list(by_fold), n=3, cutoff=0.6)]
    hints = [f"{i} ({names[i]})" for i in dict.fromkeys(close)]
    hint = f"; did you mean {', '.join(hints)}?" if hints else f"; use {search_tool} to find {what} ids"
    return NotFound(f"{what} {ref.strip()!r} not found{hint}")


def account_named(ctx: ToolContext, ref: str) -> Account:
    """An account by id, or by its exact name (any case) when that names exactly one account."""
    a = ctx.get(ACCOUNTS, ref.strip())
    if a is not None:
        return a
    named = [x for x in ctx.values(ACCOUNTS) if fold(x.name) == fold(" ".join(ref.split()))]
    if len(named) == 1:
        return named[0]
    if named:
        raise InvalidArgument(f"{len(named)} accounts are named {ref.strip()!r}: "
                              f"{', '.join(x.id for x in named)}; give the account id")
    raise not_found(ctx, ACCOUNTS, "account", ref, "search_accounts")


def deal_named(ctx: ToolContext, ref: str) -> Deal:
    """A deal by id, or NotFound suggesting close ids and names."""
    d = ctx.get(DEALS, ref.strip())
    if d is None:
        raise not_found(ctx, DEALS, "deal", ref, "search_deals")
    return d


def owner_address(ctx: ToolContext, value: str, what: str = "owner") -> str:
    """An owner's address: 'me', an address or a directory name; with contacts, someone in the directory."""
    if value.strip().lower() == "me":
        return ctx.user
    email = resolve_address(ctx, value, what)
    if ctx.has_service("contacts") and email != ctx.user and ctx.get(PEOPLE, email) is None:
        close = difflib.get_close_matches(email, ctx.keys(PEOPLE), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use search_contacts to find people"
        raise NotFound(f"{what} {email} is not in the directory{hint}")
    return email


def owner_filter(ctx: ToolContext, owner: str | None) -> Callable[[str | None], bool]:
    """A test on a record's owner: anyone (None), unowned ('none'), or one person."""
    if owner is None:
        return lambda o: True
    if owner.strip().lower() == "none":
        return lambda o: o is None
    who = owner_address(ctx, owner)
    return lambda o: o == who


def date_arg(value: str, what: str) -> date | None:
    """A date from YYYY-MM-DD text; empty text means none."""
    return iso_date(value, what, "2026-06-30")


def moment_arg(value: str, what: str) -> datetime:
    """A date-time from ISO 8601 text with a time zone offset, or InvalidArgument naming `what`."""
    try:
        t = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgument(f"{what} {value!r} is not a date-time like 2026-03-02T14:00:00+00:00") from None
    if t.utcoffset() is None:
        raise InvalidArgument(f"{what} {value!r} needs a time zone offset, e.g. 2026-03-02T14:00:00+00:00")
    return t


def check_page(limit: int, offset: int) -> None:
    """Refuse a page size outside 1-100 or a negative offset."""
    if not 1 <= limit <= 100:
        raise InvalidArgument("limit must be between 1 and 100")
    if offset < 0:
        raise InvalidArgument("offset must be zero or positive")


def query_words(query: str) -> list[str]:
    """The folded words of a search query (refusing one longer than MAX_QUERY)."""
    if len(query) > MAX_QUERY:
        raise InvalidArgument(f"query is longer than {MAX_QUERY} characters; use a few words")
    return fold(query).split()


def major(minor: int | None, currency: str) -> Decimal | None:
    """An optional amount in minor units as an exact Decimal of major units."""
    return None if minor is None else Decimal(format_minor(minor, currency))


def amount_bound(value: AmountInput | None, what: str) -> Decimal | None:
    """A range bound in major units (the currency only decides allowed decimals: 3 are accepted)."""
    if value is None:
        return None
    return Decimal(format_minor(as_argument(to_minor, value, "KWD", what), "KWD"))


def sorter(sort: str, keys: dict[str, Callable[[Any], Any]], what: str) -> tuple[Callable[[Any], Any], bool]:
    """The key function and direction for a sort spec like 'name' or '-annual_revenue'."""
    field = sort.strip()
    descending = field.startswith("-")
    field = field.lstrip("-")
    if field not in keys:
        raise InvalidArgument(f"cannot sort {what} by {sort!r}; use one of {', '.join(keys)} "
                              "('-' first for descending)")
    key = keys[field]
    # Records without a value (None) sort last in either direction.
    return (lambda r: (key(r) is None, key(r) if key(r) is not None else 0)), descending


def ordered(rows: list[Any], sort: str, keys: dict[str, Callable[[Any], Any]], what: str) -> list[Any]:
    """`rows` sorted by a sort spec (ties by id), records without a value last."""
    keyfn, descending = sorter(sort, keys, what)
    rows = sorted(rows, key=lambda r: r.id)
    present = [r for r in rows if not keyfn(r)[0]]
    missing = [r for r in rows if keyfn(r)[0]]
    return sorted(present, key=lambda r: keyfn(r)[1], reverse=descending) + missing


def line_arg(value: str, what: str, limit: int, required: bool = False) -> str:
    """Single-line text (spaces collapsed) of at most `limit` characters, valid as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{what} contains characters that are not valid Unicode (lone surrogates)") from None
    return as_argument(short_text, value, what, limit, required)


def new_id(ctx: ToolContext, table: str, prefix: str) -> str:
    """A new id with `prefix` that no record of `table` has yet."""
    while True:  # seeded data may already use an id of the same shape
        key = ctx.new_id(prefix)
        if ctx.get(table, key) is None:
            return key


def when_of(ctx: ToolContext, a: Activity) -> datetime:
    """When an activity happened (now when its data gave no time)."""
    return a.occurred or ctx.now


def day_start(value: str) -> str:
    """A bare date YYYY-MM-DD as the start of that day in UTC; other text unchanged."""
    text = value.strip()
    return f"{text}T00:00:00+00:00" if len(text) == 10 and text[4:5] == "-" else text


def last_contacts(ctx: ToolContext) -> dict[str, datetime]:
    """Each account's last contact: the latest call, meeting or e-mail logged against it that is not in the
    future, or its recorded `last_contact` when that is later; accounts never contacted are left out."""
    out: dict[str, datetime] = {a.id: a.last_contact for a in ctx.values(ACCOUNTS) if a.last_contact is not None}
    for x in ctx.values(ACTIVITIES):
        when = when_of(ctx, x)
        if x.type in CONTACT_TYPES and when <= ctx.now and (x.account_id not in out or when > out[x.account_id]):
            out[x.account_id] = when
    return out
