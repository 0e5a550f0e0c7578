"""Validation shared by services, configuration and specs: time zones, dates and date-times, record ids, stored
text, tags and tag lists, and the wrapper that turns a rule's ValueError into a tool's InvalidArgument."""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime
from typing import Annotated, Any, Callable, Sequence
from zoneinfo import ZoneInfo

from pydantic import AfterValidator

from workspace_sim.core.errors import InvalidArgument
from workspace_sim.text.folding import fold

_RECORD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


def as_argument(fn: Callable[..., Any], *args: Any) -> Any:
    """Call a validation helper with `args`, turning its ValueError into the InvalidArgument a tool returns
    (same message), so one rule serves both record validators and tool arguments."""
    try:
        return fn(*args)
    except ValueError as e:
        raise InvalidArgument(str(e)) from None


def zone(name: object, what: str = "timezone") -> ZoneInfo:
    """The IANA time zone `name`, or ValueError naming `what` and giving an example."""
    if isinstance(name, str) and name and len(name) <= 64:
        try:
            return ZoneInfo(name)
        except Exception:  # ZoneInfo raises several types for bad keys (paths, NULs, unknown names)
            pass
    raise ValueError(f"{what} {name!r} is not a known IANA time zone name such as Europe/London or America/New_York")


def _zone_name(name: str) -> str:
    zone(name)
    return name


TimeZoneName = Annotated[str, AfterValidator(_zone_name)]
"""A field holding an IANA time zone name, checked when the model is validated."""


def clean_text(value: str, what: str, limit: int, required: bool = False) -> str:
    """Stripped text within `limit` characters that can be stored as UTF-8 (no lone surrogates)."""
    text = value.strip()
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{what} contains characters that are not valid Unicode (lone surrogates)") from None
    if required and not text:
        raise InvalidArgument(f"{what} is empty; give a short {what}")
    if len(text) > limit:
        raise InvalidArgument(f"{what} is {len(text)} characters long; at most {limit} are allowed")
    return text


def short_name(value: str, what: str, limit: int) -> str:
    """A record's name or title: `value` with white space collapsed, 1 to `limit` characters; ValueError names
    `what`."""
    text = " ".join(value.split())
    if not text or len(text) > limit:
        raise ValueError(f"{what} must be 1-{limit} characters")
    return text


def one_line(value: str, what: str, limit: int, required: bool = False) -> str:
    """`clean_text` that must also be a single line: a line break is refused naming `what`."""
    text = clean_text(value, what, limit, required)
    if "\n" in text or "\r" in text:
        raise InvalidArgument(f"{what} must be one line (it contains a line break)")
    return text


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("must include a time zone offset, e.g. 2026-03-02T09:00:00+00:00")
    return value


AwareTime = Annotated[datetime, AfterValidator(_aware)]
"""A datetime field that must carry a time zone offset."""


def parse_when(value: str, what: str, tz: ZoneInfo) -> datetime:
    """An aware datetime from ISO 8601 text; text without an offset (or a bare date) is read in `tz`."""
    text = value.strip() if isinstance(value, str) else ""
    example = "2026-03-02T14:00:00+01:00"
    if not text or len(text) > 64:
        raise InvalidArgument(f"{what} must be an ISO 8601 date-time such as {example}, got {value!r}")
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidArgument(
            f"{what} {value!r} is not an ISO 8601 date-time; use e.g. {example} "
            f"(a time without an offset is read in {tz.key})"
        ) from None
    if not 1900 <= dt.year <= 2200:
        raise InvalidArgument(f"{what} {value!r} is outside the years 1900-2200")
    return dt.replace(tzinfo=tz) if dt.tzinfo is None else dt


def record_id(value: str, what: str, example: str) -> str:
    """A record id: 1-40 letters, digits, '.', '_' or '-', starting with a letter or digit; ValueError names `what`
    and shows `example`."""
    if not _RECORD_ID.match(value):
        raise ValueError(f"{what} {value!r} must be 1-40 letters, digits, '.', '_' or '-' (e.g. {example})")
    return value


def iso_date(value: str, what: str, example: str, required: bool = False) -> date | None:
    """A date from YYYY-MM-DD text (stripped); empty text is None, or with `required` refused like any other
    non-date. InvalidArgument names `what` and shows `example`."""
    text = value.strip()
    if not text and not required:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidArgument(f"{what} {value!r} is not a date in the form YYYY-MM-DD (e.g. {example})") from None


def tag(value: object, what: str = "tag", spaces: bool = True) -> str:
    """A tag or label in any script: NFKC-normalized printable text of at most 100 characters, inner spaces
    collapsed (or, with `spaces=False`, refused); ValueError names `what` and the rule broken."""
    text = " ".join(unicodedata.normalize("NFKC", value).split()) if isinstance(value, str) else ""
    surrogate = any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    if not text or len(text) > 100 or not text.isprintable() or surrogate or (not spaces and " " in text):
        rule = "printable characters" if spaces else "printable characters without spaces"
        raise ValueError(f"{what} {value!r} must be non-empty text of at most 100 {rule}")
    return text


def tag_list(values: Sequence[object], what: str, spaces: bool = True, limit: int | None = None,
             each: str | None = None) -> list[str]:
    """Each value checked by `tag` (naming it `each`, or `what[i]` by default), then de-duplicated case- and
    accent-insensitively in order, the first spelling kept; with `limit`, a longer list is refused. Raises
    ValueError, so a record validator can use it as is and a tool through `as_argument`."""

    if limit is not None and len(values) > limit:
        raise ValueError(f"{what} has {len(values)} entries; at most {limit} are allowed")
    out: dict[str, str] = {}
    for i, v in enumerate(values):
        t = tag(v, each or f"{what}[{i}]", spaces)
        out.setdefault(fold(t), t)
    return list(out.values())


def edit_tag_list(tags: list[str], add: list[str], remove: list[str]) -> tuple[list[str], list[str], list[str]]:
    """An add/remove edit of a tag list (entries already checked by `tag_list`), compared by fold: (`tags` with
    `add` appended where not already on it, that list with `remove` taken out, the entries of `remove` on neither),
    so the caller can refuse removing what is not there in its own words."""

    added = list(tags)
    folded = {fold(t) for t in added}
    for t in add:
        if fold(t) not in folded:
            added.append(t)
            folded.add(fold(t))
    gone = {fold(t): t for t in remove}
    missing = [t for f, t in gone.items() if f not in folded]
    return added, [t for t in added if fold(t) not in gone], missing
