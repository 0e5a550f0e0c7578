"""Coherence rules: a world must read like a real workplace. Run by the validator on every spec; each
violation is a `coherence` problem naming the record and the rule.

- meeting_time: a meeting of the user's (an event with invitees, in the initial calendar or booked by the
  reference) falls on a working day and within the user's working hours (their calendar or directory row,
  else 9:00-18:00 in their time zone): the workspace's locale;
- phone_format: a directory phone number is written as the country of the person's time zone writes it
  (+1 and ten digits in the US, +44 in the UK, +86 in China...);
- address_format: a directory location that is a postal address has the country's shape (a US ZIP, a UK
  postcode, a Chinese 市...号);
- same_name: no two people share a full name, unless `metadata.coherence_allow` lists "same_name";
- lookalike_plural: no look-alike is made by adding "s" (or "es") to another person's surname;
- amounts: an itemised document's line amounts add up to its subtotal, the tax to its rate, the total to
  both; a figure `metadata.figures` records ({"document": path, "total": x} or {"balance": {"total", "paid",
  "due"}}) agrees with the document and with itself.
"""

from __future__ import annotations

import re
from datetime import datetime, time
from typing import Any, Iterable
from zoneinfo import ZoneInfo

from .feedback import ValidationReport
from .spec import CallStep, EnvironmentSpec

RULES = ("meeting_time", "phone_format", "address_format", "same_name", "lookalike_plural", "amounts")
HINTS = {
    "meeting_time": "book it on a working day inside the organiser's working hours",
    "phone_format": "write the number in the format of the person's country (see synth.coherence.PHONES)",
    "address_format": "write the address in the format of the person's country",
    "same_name": "give one of them another name, or list 'same_name' in metadata.coherence_allow if it is the point",
    "lookalike_plural": "make the look-alike a namesake with a surname a careful reader can tell apart "
                        "(Thompson / Thomson), not surname + 's'",
    "amounts": "compute the figures from the lines (subtotal = sum of amounts, total = subtotal + tax)",
}
PHONES = {  # country: (time-zone prefixes, the number's pattern)
    "US": (("America/",), re.compile(r"^\+1[ -]?\(?\d{3}\)?[ -]?\d{3}[ -]?\d{4}( (x|ext\.?) ?\d+)?$")),
    "GB": (("Europe/London",), re.compile(r"^\+44 ?\d{2,4} ?\d{3,4} ?\d{3,4}$")),
    "CN": (("Asia/Shanghai",), re.compile(r"^\+86 ?(1\d{2} ?\d{4} ?\d{4}|\d{2,3} ?\d{4} ?\d{4})$")),
    "DE": (("Europe/Berlin",), re.compile(r"^\+49 ?\d{2,4} ?[\d ]{5,9}$")),
    "ES": (("Europe/Madrid",), re.compile(r"^\+34 ?\d{2} ?\d{3} ?\d{2} ?\d{2}$")),
    "SG": (("Asia/Singapore",), re.compile(r"^\+65 ?\d{4} ?\d{4}$")),
    "AU": (("Australia/",), re.compile(r"^\+61 ?\d ?\d{4} ?\d{4}$")),
    "IN": (("Asia/Kolkata",), re.compile(r"^\+91 ?\d{2} ?\d{4} ?\d{4}$")),
}
ADDRESSES = {"US": re.compile(r", [A-Z]{2} \d{5}(-\d{4})?$"),
             "GB": re.compile(r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$"),
             "CN": re.compile(r"[市省].*\d+号")}
_MONEY = r"[$£¥€]?([\d,]+\.\d{2})"
_ROW = re.compile(r"^\|.*\|\s*" + r"[$£¥€]([\d,]+\.\d{2})\s*\|\s*$")


def country_of(timezone: str) -> str | None:
    """The country whose formats a person in `timezone` uses (None when the zone says nothing: UTC)."""
    for country, (prefixes, _) in PHONES.items():
        if timezone.startswith(prefixes):
            return country
    return None


def check_coherence(spec: EnvironmentSpec, report: ValidationReport) -> None:
    """Add a `coherence` problem to `report` for every violated rule (see the module docstring)."""
    for path, rule, problem in violations(spec):
        report.add("coherence", path, f"{rule}: {problem}", HINTS[rule])


def violations(spec: EnvironmentSpec) -> list[tuple[str, str, str]]:
    """Every (record path, rule, problem) the spec violates."""
    out: list[tuple[str, str, str]] = []
    out += _names(spec)
    out += _directory(spec)
    out += _meetings(spec)
    out += _amounts(spec)
    return out


def _names(spec: EnvironmentSpec) -> Iterable[tuple[str, str, str]]:
    allow = set(spec.metadata.get("coherence_allow") or ())
    seen: dict[str, int] = {}
    people = spec.world.people
    for i, p in enumerate(people):
        key = " ".join(p.name.lower().split())
        if key in seen and "same_name" not in allow:
            yield (f"world.people[{i}]", "same_name",
                   f"{p.name!r} ({p.email}) has the same full name as world.people[{seen[key]}] ({people[seen[key]].email})")
        seen.setdefault(key, i)
    by_first: dict[str, list[tuple[int, str]]] = {}
    for i, p in enumerate(people):
        parts = p.name.split()
        if len(parts) >= 2:
            by_first.setdefault(parts[0].lower(), []).append((i, parts[-1]))
    for group in by_first.values():
        for i, a in group:
            for j, b in group:
                if i != j and b.lower() in (a.lower() + "s", a.lower() + "es"):
                    yield (f"world.people[{j}]", "lookalike_plural",
                           f"{people[j].name!r} is {people[i].name!r} with an 's' added to the surname")


def _directory(spec: EnvironmentSpec) -> Iterable[tuple[str, str, str]]:
    tz_of = {p.email.lower(): p.timezone for p in spec.world.people}
    for i, row in enumerate(spec.initial.get("contacts", {}).get("people", [])):
        if not isinstance(row, dict):
            continue
        tz = row.get("timezone") or tz_of.get(str(row.get("email", "")).lower(), "UTC")
        country = country_of(str(tz))
        phone = str(row.get("phone") or "")
        if phone and country and not PHONES[country][1].match(phone):
            yield (f"initial.contacts.people[{i}].phone", "phone_format",
                   f"{row.get('email')} works in {tz} ({country}) but the phone is written {phone!r}")
        loc = str(row.get("location") or "")
        if country in ADDRESSES and re.search(r"\d", loc) and not ADDRESSES[country].search(loc):
            yield (f"initial.contacts.people[{i}].location", "address_format",
                   f"{row.get('email')} works in {tz} ({country}) but the address {loc!r} is not written as there")


def _hours(spec: EnvironmentSpec, email: str, tz: str) -> tuple[time, time, list[int]]:
    for cal in spec.initial.get("calendar", {}).get("calendars", []):
        if isinstance(cal, dict) and str(cal.get("owner", "")).lower() == email:
            start, end = cal.get("working_hours_start"), cal.get("working_hours_end")
            return (time.fromisoformat(str(start)) if start else time(9), time.fromisoformat(str(end)) if end else time(18),
                    list(cal.get("working_days") or range(5)))
    for row in spec.initial.get("contacts", {}).get("people", []):
        if isinstance(row, dict) and str(row.get("email", "")).lower() == email and row.get("working_hours_start"):
            return (time.fromisoformat(str(row["working_hours_start"])),
                    time.fromisoformat(str(row.get("working_hours_end") or "18:00")), list(range(5)))
    return time(9), time(18), list(range(5))


def _meeting_problem(spec: EnvironmentSpec, start: Any, end: Any, organiser: str) -> str | None:
    try:
        s = start if isinstance(start, datetime) else datetime.fromisoformat(str(start))
        e = end if isinstance(end, datetime) else datetime.fromisoformat(str(end))
    except ValueError:
        return None  # the references check reports unreadable times
    person = next((p for p in spec.world.people if p.email.lower() == organiser), spec.world.people[0])
    tz = ZoneInfo(person.timezone)
    if s.tzinfo is None:
        s, e = s.replace(tzinfo=tz), e.replace(tzinfo=tz)
    s, e = s.astimezone(tz), e.astimezone(tz)
    lo, hi, days = _hours(spec, organiser, person.timezone)
    if s.weekday() not in days:
        return f"it is on a {s.strftime('%A')} ({s.date()}) for {organiser}, not a working day"
    if s.time() < lo or (e.time() > hi and e.date() == s.date()) or e.date() != s.date():
        return f"{s:%H:%M}-{e:%H:%M} ({person.timezone}) is outside {organiser}'s working hours {lo:%H:%M}-{hi:%H:%M}"
    return None


def _meetings(spec: EnvironmentSpec) -> Iterable[tuple[str, str, str]]:
    user = next((p.email.lower() for p in spec.world.people if p.role == "user"), spec.world.people[0].email.lower())
    for i, ev in enumerate(spec.initial.get("calendar", {}).get("events", [])):
        if not isinstance(ev, dict) or len(ev.get("attendees") or []) < 1:
            continue
        emails = {str(ev.get("organizer") or user).lower()} | {
            str(a.get("email", "")).lower() for a in ev["attendees"] if isinstance(a, dict)}
        if user not in emails:  # judged in the workspace's locale: the user's working week
            continue
        why = _meeting_problem(spec, ev.get("start"), ev.get("end"), user)
        if why:
            yield f"initial.calendar.events[{i}]", "meeting_time", f"{ev.get('title', ev.get('id'))!r}: {why}"
    for root, solution in spec.solutions():
        for j, step in enumerate(solution.steps):
            if isinstance(step, CallStep) and step.tool == "create_event" and step.args.get("attendees"):
                why = _meeting_problem(spec, step.args.get("start"), step.args.get("end"), user)
                if why:
                    where = "reference" if root == "reference" else root
                    yield f"{where}.steps[{j}]", "meeting_time", f"the meeting {step.args.get('title')!r} booked: {why}"


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def document_figures(text: str) -> dict[str, Any] | None:
    """An itemised document's figures: its line amounts, subtotal, tax (rate, amount) and total (None when the
    text is not an itemised document)."""
    sub = re.search(r"(?:Subtotal|小计)\S*\s*" + _MONEY, text)
    total = re.search(r"\*\*(?:Total|合计)\S*\s*" + _MONEY + r"\*\*", text)
    if not sub or not total:
        return None
    tax = re.search(r"\((\d+(?:\.\d+)?)%\)\S*\s*" + _MONEY, text)
    lines = [_number(m.group(1)) for m in map(_ROW.match, text.splitlines()) if m]
    return {"lines": lines, "subtotal": _number(sub.group(1)), "tax_rate": float(tax.group(1)) / 100 if tax else 0.0,
            "tax": _number(tax.group(2)) if tax else 0.0, "total": _number(total.group(1))}


def _amounts(spec: EnvironmentSpec) -> Iterable[tuple[str, str, str]]:
    docs: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(spec.initial.get("files", {}).get("files", [])):
        if not isinstance(row, dict) or not isinstance(row.get("content"), str):
            continue
        fig = document_figures(row["content"])
        if fig is None:
            continue
        docs[str(row.get("path"))] = fig
        where = f"initial.files.files[{i}] ({row.get('path')})"
        if fig["lines"] and abs(sum(fig["lines"]) - fig["subtotal"]) > 0.005:
            yield where, "amounts", f"the line amounts sum to {sum(fig['lines']):.2f}, the subtotal says {fig['subtotal']:.2f}"
        if fig["tax_rate"] and abs(fig["subtotal"] * fig["tax_rate"] - fig["tax"]) > 0.0051:
            yield where, "amounts", f"tax at {fig['tax_rate']:.0%} of {fig['subtotal']:.2f} is not {fig['tax']:.2f}"
        if abs(fig["subtotal"] + fig["tax"] - fig["total"]) > 0.005:
            yield where, "amounts", f"subtotal {fig['subtotal']:.2f} + tax {fig['tax']:.2f} is not the total {fig['total']:.2f}"
    for k, rec in enumerate(spec.metadata.get("figures") or ()):
        where = f"metadata.figures[{k}]"
        if not isinstance(rec, dict):
            continue
        if "document" in rec:
            fig = docs.get(str(rec["document"]))
            if fig is None:
                yield where, "amounts", f"{rec['document']!r} is not an itemised document of the initial files"
            elif abs(fig["total"] - float(rec.get("total", fig["total"]))) > 0.005:
                yield where, "amounts", f"{rec['document']} shows {fig['total']:.2f}, the spec records {rec['total']}"
        if isinstance(rec.get("balance"), dict):
            b = rec["balance"]
            if abs(float(b["total"]) - float(b["paid"]) - float(b["due"])) > 0.005:
                yield where, "amounts", f"total {b['total']} less paid {b['paid']} is not the {b['due']} recorded as due"
