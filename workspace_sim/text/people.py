"""Rules about people that several services and the policies share: what an e-mail address is, how
text is folded for matching, where a person's time zone and working hours come from, and how a name
("Dana Reyes") resolves to an address through the directory.

This module reads the contacts and calendar tables by name and imports no service, so services and
the core can all use it without importing each other.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import time
from typing import TYPE_CHECKING, Any, Iterable, Mapping
from zoneinfo import ZoneInfo

from workspace_sim.core.errors import InvalidArgument
from workspace_sim.core.memos import remember
from workspace_sim.text.folding import fold
from workspace_sim.text.validation import zone

if TYPE_CHECKING:
    from workspace_sim.core.context import ToolContext

PEOPLE, CALENDARS = "contacts.people", "calendar.calendars"
MAX_ADDRESS = 254
DEFAULT_START, DEFAULT_END, DEFAULT_DAYS = time(9, 0), time(17, 0), (0, 1, 2, 3, 4)
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

_LOCAL = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$")
_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


# --- addresses ------------------------------------------------------------------------------------


# Addresses recur by the thousand (every message copy and record re-validates its addresses), and the answer
# depends on the text alone: remembered per exact string, the cache dropped whole when it is full.
_PROBLEMS: dict[str, str | None] = {}
_NORMAL: dict[str, str] = {}
_MEMO_SIZE = 8192


def _parse_address(text: str) -> str:
    """The address in `Name <a@b.c>` ('' when none), by the standard library's parser."""
    import email.utils  # here, not at the top: it loads socket, which a server's first answer never needs

    return email.utils.parseaddr(text)[1]


def email_problem(address: object) -> str | None:
    """Why `address` is not a plain e-mail address (`local@domain.tld`), or None when it is one."""
    if type(address) is not str:  # a str subclass may compare equal to a str: checked afresh every time
        return _email_problem(address)
    try:
        return _PROBLEMS[address]
    except KeyError:
        pass
    return remember(_PROBLEMS, address, _email_problem(address), _MEMO_SIZE)


def _email_problem(address: object) -> str | None:
    if not isinstance(address, str):
        return f"must be a string, got {type(address).__name__}"
    a = address.strip()
    if not a:
        return "is empty"
    if len(a) > MAX_ADDRESS:
        return f"is longer than {MAX_ADDRESS} characters"
    if any(c.isspace() for c in a) or "," in a or ";" in a:
        return "contains spaces or separators; give one address per list item"
    if a.count("@") != 1:
        return "must contain exactly one '@' (like name@example.com)"
    local, domain = a.split("@")
    if not local or len(local) > 64 or not _LOCAL.match(local):
        return f"has an invalid part before '@' ({local!r})"
    labels = domain.split(".")
    if len(labels) < 2 or not all(_LABEL.match(x) for x in labels) or labels[-1].isdigit():
        return f"has an invalid domain ({domain!r}); it needs a dot, like example.com"
    return None


def normalize_email(value: object, what: str = "e-mail address") -> str:
    """The canonical (stripped, lower-case) form of a valid address; ValueError names `what` and the problem."""
    if type(value) is str:
        hit = _NORMAL.get(value)
        if hit is not None:
            return hit
    problem = email_problem(value)
    if problem is not None:
        raise ValueError(f"{what} {value!r} {problem}")
    out = str(value).strip().lower()
    return remember(_NORMAL, value, out, _MEMO_SIZE) if type(value) is str else out


_KEYS: dict[str, str | None] = {}


def address_key(text: object) -> str | None:
    """The address `text` names, as addresses compare (`Name <a@b.c>` or `a@b.c`, any case, surrounding spaces:
    the address case folded), or None when it names no single valid address. Used wherever two spellings of an
    address must be told to be one (conditions in predicates, the recipient policies)."""
    if type(text) is not str or "@" not in text:
        return None
    try:
        return _KEYS[text]
    except KeyError:
        pass
    raw = text.strip()
    if raw.endswith(">") and "<" in raw:
        raw = _parse_address(raw)
        if not raw:
            return remember(_KEYS, text, None, _MEMO_SIZE)
    key = raw.casefold() if email_problem(raw) is None else None
    return remember(_KEYS, text, key, _MEMO_SIZE)


def address_domain(text: str) -> str:
    """The domain of an address (any spelling `address_key` reads), case folded; '' when `text` is none."""
    key = address_key(text)
    return key.rsplit("@", 1)[1] if key else ""


def person_summary(p: Any) -> str:
    """'Name <email>, Title, Department': enough to tell look-alike names apart."""
    extra = ", ".join(x for x in (getattr(p, "title", ""), getattr(p, "department", "")) if x)
    return f"{p.name} <{p.email}>" + (f", {extra}" if extra else "")


# --- names to addresses ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """Someone a name can resolve to: an address, a display name and a summary telling look-alikes apart."""

    email: str
    name: str
    summary: str


def _directory(ctx: "ToolContext") -> list[Any]:
    return list(ctx.values(PEOPLE)) if ctx.has_service("contacts") else []


def _candidates(ctx: "ToolContext", known: Mapping[str, str] | None) -> list[Candidate]:
    """The directory, then any `known` address -> name pairs (e.g. mail accounts) it lacks."""
    out = {p.email: Candidate(p.email, p.name, person_summary(p)) for p in _directory(ctx)}
    for address, name in (known or {}).items():
        if address not in out and name and name.strip():
            out[address] = Candidate(address, name, f"{name} <{address}>")
    return list(out.values())


def _named(pool: list[Candidate], name: str) -> list[Candidate]:
    words = fold(name).split()
    if not words:
        return []
    whole = " ".join(words)
    exact = [c for c in pool if " ".join(fold(c.name).split()) == whole]
    if exact:
        return exact
    return [c for c in pool if set(words) <= set(fold(c.name).split())]


def _suggest(pool: list[Candidate], text: str) -> str:
    """'; did you mean a, b?' for people whose name or address contains the part of `text` before '@'."""
    q = fold(text.split("@")[0].strip())
    if not q:
        return ""
    hits = sorted(c.email for c in pool if q in fold(c.name) or q in c.email)
    return f"; did you mean {', '.join(hits[:3])}?" if hits else ""


def resolve_address(ctx: "ToolContext", value: object, field: str, known: Mapping[str, str] | None = None) -> str:
    """The canonical address for one recipient, attendee or assignee argument.

    Accepts an address (`dana.reyes@example.com`), a display form (`Dana Reyes <dana@...>`) or a
    person's name as the directory knows it (`Dana Reyes`, any case and accents); `known` adds
    address -> name pairs the directory may lack (mail uses its accounts). A name that matches
    several people, or nobody, raises InvalidArgument naming `field` and the candidates, so the
    agent can choose instead of the simulator guessing.
    """
    if not isinstance(value, str):
        raise InvalidArgument(f"{field} must be a string, got {type(value).__name__}")
    raw = value.strip()
    if "<" in raw and raw.endswith(">"):
        raw = _parse_address(raw) or raw
    if "@" in raw:
        problem = email_problem(raw)
        if problem is not None:
            raise InvalidArgument(f"{field} {value!r} is not a valid e-mail address: it {problem}"
                                  + _suggest(_candidates(ctx, known), raw))
        return raw.lower()
    if not raw:
        raise InvalidArgument(f"{field} is empty; give an e-mail address or a person's name")
    if len(raw) > 200:
        raise InvalidArgument(f"{field} is longer than 200 characters; give an e-mail address or a name")
    pool = _candidates(ctx, known)
    matches = _named(pool, raw)
    if len(matches) == 1:
        return matches[0].email
    if matches:
        listed = "; ".join(c.summary for c in sorted(matches, key=lambda c: c.email)[:8])
        raise InvalidArgument(f"{field} {value!r} matches {len(matches)} people: {listed}; give the e-mail address")
    if not pool:
        where = "the directory is empty" if ctx.has_service("contacts") else "there is no directory to look names up in"
        raise InvalidArgument(f"{field} {value!r} is not an e-mail address (and {where}); "
                              "give an address like name@example.com")
    close = difflib.get_close_matches(raw, sorted({c.name for c in pool}), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else (_suggest(pool, raw) or (
        "; use search_contacts to find people" if ctx.has_service("contacts") else ""))
    raise InvalidArgument(f"{field} {value!r} is neither an e-mail address nor a name in the directory{hint}")


def resolve_addresses(
    ctx: "ToolContext", values: Iterable[object], field: str, known: Mapping[str, str] | None = None,
) -> list[str]:
    """`resolve_address` for every item of a list (errors name `field[i]`), de-duplicated in order."""
    out: dict[str, None] = {}
    for i, v in enumerate(values):
        out[resolve_address(ctx, v, f"{field}[{i}]", known)] = None
    return list(out)


# --- time zones and working hours -----------------------------------------------------------------


@dataclass(frozen=True)
class Availability:
    """Where a person's working hours and time zone come from, resolved for one call."""

    email: str
    tz: ZoneInfo
    start: time
    end: time
    days: tuple[int, ...]
    source: str  # "calendar" | "contacts" | "default"

    def to_json(self) -> dict[str, Any]:
        days = ",".join(DAY_NAMES[d] for d in self.days)
        return {"email": self.email, "timezone": self.tz.key,
                "working_hours": f"{self.start:%H:%M}-{self.end:%H:%M} {days}", "source": self.source}


def _as_time(value: Any, fallback: time) -> time:
    if isinstance(value, time):
        return value
    if isinstance(value, str):
        try:
            return time.fromisoformat(value)
        except ValueError:
            return fallback
    return fallback


def availability(ctx: "ToolContext", email: str) -> Availability:
    """A person's time zone and working hours: calendar record, else contact record, else defaults.

    The default time zone is the workspace's for the user and UTC for anyone else; default hours
    are 09:00-17:00, Monday to Friday. The calendar service and the working-hours policy both use
    this one rule, so a slot `find_free_slots` offers is one the policy accepts.
    """
    cal = ctx.get(CALENDARS, email)
    if cal is not None:
        return Availability(email, zone(cal.timezone), cal.working_hours_start, cal.working_hours_end,
                            tuple(cal.working_days), "calendar")
    if ctx.has_service("contacts"):
        person = ctx.get(PEOPLE, email)
        if person is not None:
            try:
                tz = zone(getattr(person, "timezone", None) or "UTC")
            except ValueError:
                tz = ZoneInfo("UTC")
            start = _as_time(getattr(person, "working_hours_start", None), DEFAULT_START)
            end = _as_time(getattr(person, "working_hours_end", None), DEFAULT_END)
            if end <= start:
                start, end = DEFAULT_START, DEFAULT_END
            return Availability(email, tz, start, end, DEFAULT_DAYS, "contacts")
    tz = zone(ctx.config.timezone) if email == ctx.user else ZoneInfo("UTC")
    return Availability(email, tz, DEFAULT_START, DEFAULT_END, DEFAULT_DAYS, "default")
