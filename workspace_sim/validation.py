"""Validation shared by services, configuration and specs: time zones and stored text."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from zoneinfo import ZoneInfo

from pydantic import AfterValidator

from .errors import InvalidArgument


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


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("must include a time zone offset, e.g. 2026-03-02T09:00:00+00:00")
    return value


AwareTime = Annotated[datetime, AfterValidator(_aware)]
"""A datetime field that must carry a time zone offset."""
