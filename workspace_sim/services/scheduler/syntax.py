"""Cron expressions: parsing five-field schedules and finding the next run in a time zone.

The syntax is Vixie cron's (the cron of most Linux systems): `minute hour day-of-month month day-of-week`,
each a `*`, a number, a range `a-b`, a step `*/n`, `a-b/n` or `a/n` (from a to the field's end), or a
comma-separated list of those; months and days of the week may be named (`jan`-`dec`, `sun`-`sat`, any
case, also in ranges), and day-of-week 7 is Sunday like 0. The macros `@yearly` (`@annually`),
`@monthly`, `@weekly`, `@daily` (`@midnight`) and `@hourly` stand for their five fields.

Day matching follows Vixie cron: when both the day-of-month and the day-of-week field are restricted
(neither starts with `*`), a day matches if *either* does (`0 9 1 * mon` runs on the 1st and on every
Monday); when either starts with `*`, both must match.

Times are wall-clock times in the schedule's time zone. Across daylight-saving changes it behaves as
Vixie cron does for changes of a few hours: a job whose hour is fixed and whose time falls in the hour
skipped when clocks go forward runs at the first minute after the change; in the hour repeated when
clocks go back, a job with a fixed hour runs once (at the first occurrence) and one whose hour field
starts with `*` runs at both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from datetime import timezone as dt_timezone
from zoneinfo import ZoneInfo

UTC = dt_timezone.utc
FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
          "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
MAX_EXPRESSION = 200
MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # the most each month can have
SEARCH_DAYS = 366 * 9  # every valid schedule runs within 8 years (29 February, skipping 2100)


class CronError(ValueError):
    """A malformed cron expression; the message names the field and what is wrong."""


@dataclass(frozen=True)
class Cron:
    """A parsed schedule: the allowed values of each field, and whether the day fields start with `*`."""

    expression: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday .. 6 = Saturday (7 folded into 0)
    days_star: bool
    weekdays_star: bool
    hours_star: bool

    def day_matches(self, day: date) -> bool:
        """Whether the schedule runs on `day` (month, then the day-of-month / day-of-week rule)."""
        if day.month not in self.months:
            return False
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        if self.days_star or self.weekdays_star:
            return dom and dow
        return dom or dow

    def wall_matches(self, wall: datetime) -> bool:
        """Whether a wall-clock time (any time zone, seconds ignored) is one of the schedule's minutes."""
        return wall.minute in self.minutes and wall.hour in self.hours and self.day_matches(wall.date())


def _number(text: str, index: int, names: tuple[str, ...] | None) -> int:
    """One value of field `index`: digits, or a name (months count from 1, days from 0)."""
    field, (lo, hi) = FIELDS[index], BOUNDS[index]
    low = text.lower()
    if names is not None and low in names:
        return names.index(low) + (1 if names is MONTHS else 0)
    if not text.isdigit():
        named = f", or a name such as {names[0]}" if names is not None else ""
        raise CronError(f"{field} field: {text!r} is not a number from {lo} to {hi}{named}")
    value = int(text)
    if not lo <= value <= hi:
        raise CronError(f"{field} field: {value} is out of range; use {lo}-{hi}")
    return value


def _field(text: str, index: int) -> frozenset[int]:
    """The set of values a field allows."""
    field, (lo, hi) = FIELDS[index], BOUNDS[index]
    names = MONTHS if index == 3 else DAYS if index == 4 else None
    values: set[int] = set()
    for part in text.split(","):
        if not part:
            raise CronError(f"{field} field: {text!r} has an empty list item")
        base, slash, step_text = part.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"{field} field: step {step_text!r} in {part!r} must be a whole number of 1 or more")
            step = int(step_text)
        if base == "*":
            first, last = lo, hi if index != 4 else 6
        elif "-" in base:
            a, _, b = base.partition("-")
            first, last = _number(a, index, names), _number(b, index, names)
            if first > last:
                raise CronError(f"{field} field: range {base!r} runs backwards; write the smaller value first")
        else:
            first = _number(base, index, names)
            last = (hi if index != 4 else 6) if slash else first
            if slash and first > last:
                last = first
        values.update(range(first, last + 1, step))
    if index == 4 and 7 in values:
        values.discard(7)
        values.add(0)
    return frozenset(values)


def parse_cron(expression: str) -> Cron:
    """Parse a five-field cron expression (or a macro such as @daily); CronError names the bad field."""
    if not isinstance(expression, str):
        raise CronError(f"a cron expression must be text, got {type(expression).__name__}")
    text = " ".join(expression.split())
    if not text:
        raise CronError("the cron expression is empty; give five fields such as '0 9 * * mon-fri'")
    if len(text) > MAX_EXPRESSION:
        raise CronError(f"the cron expression is longer than {MAX_EXPRESSION} characters")
    if text.startswith("@"):
        if text.lower() == "@reboot":
            raise CronError("@reboot has no time to compute; give a schedule such as '@daily' or '0 9 * * *'")
        if text.lower() not in MACROS:
            raise CronError(f"unknown macro {text!r}; use one of {', '.join(MACROS)}")
        text_fields = MACROS[text.lower()].split()
    else:
        text_fields = text.split(" ")
    if len(text_fields) != 5:
        raise CronError(f"a cron expression has 5 fields (minute hour day-of-month month day-of-week), "
                        f"got {len(text_fields)} in {expression.strip()!r}")
    sets = [_field(f, i) for i, f in enumerate(text_fields)]
    cron = Cron(text, *sets, days_star=text_fields[2].startswith("*"),  # type: ignore[misc]
                weekdays_star=text_fields[4].startswith("*"), hours_star=text_fields[1].startswith("*"))
    if cron.weekdays_star and not any(d <= MONTH_DAYS[m - 1] for m in cron.months for d in cron.days):
        raise CronError(f"day-of-month field: {text_fields[2]!r} never occurs in month(s) {text_fields[3]!r}, "
                        "so the job would never run")
    return cron


def _gap_end(wall: datetime, tz: ZoneInfo) -> datetime | None:
    """For a wall time that does not exist in `tz` (skipped when clocks went forward), the first whole-minute
    instant after the gap, in UTC; None when the wall time exists."""
    after = wall.replace(tzinfo=tz, fold=0).astimezone(UTC)  # a skipped time read with the old offset: past the gap
    if after.astimezone(tz).replace(tzinfo=None) == wall:
        return None
    while (after - timedelta(minutes=1)).astimezone(tz).replace(tzinfo=None) >= wall:
        after -= timedelta(minutes=1)
    return after


def _instants(cron: Cron, wall: datetime, tz: ZoneInfo) -> list[datetime]:
    """The UTC instants at which the schedule runs for one matching wall time (none, one or two)."""
    gap = _gap_end(wall, tz)
    if gap is not None:
        return [] if cron.hours_star else [gap]
    first = wall.replace(tzinfo=tz, fold=0).astimezone(UTC)
    second = wall.replace(tzinfo=tz, fold=1).astimezone(UTC)
    if second != first and cron.hours_star:
        return [first, second]
    return [first]


def next_run(cron: Cron, after: datetime, tz: ZoneInfo) -> datetime | None:
    """The earliest instant strictly after `after` (aware) at which the schedule runs in `tz`, in UTC, or None
    when it never runs within the search window (which a parsed schedule always does)."""
    if after.utcoffset() is None:
        raise ValueError("after must be an aware datetime")
    start = after.astimezone(UTC)
    # wall times more than 3 hours before the start's own cannot be after it (DST shifts are under 3 hours)
    floor = start.astimezone(tz).replace(tzinfo=None) - timedelta(hours=3)
    day = floor.date()
    hours, minutes = sorted(cron.hours), sorted(cron.minutes)
    for _ in range(SEARCH_DAYS):
        if cron.day_matches(day):
            best: datetime | None = None
            for h in hours:
                if datetime.combine(day, time(h, 59)) < floor:
                    continue
                for m in minutes:
                    wall = datetime.combine(day, time(h, m))
                    if wall < floor:
                        continue
                    for t in _instants(cron, wall, tz):
                        if t > start and (best is None or t < best):
                            best = t
                if best is not None and datetime.combine(day, time(h)) > (
                        best.astimezone(tz).replace(tzinfo=None) + timedelta(hours=3)):
                    break  # later wall times cannot come before the best instant (DST shifts are under 3 hours)
            if best is not None:
                return best
        day += timedelta(days=1)
    return None


def runs(cron: Cron, after: datetime, tz: ZoneInfo, count: int) -> list[datetime]:
    """The next `count` runs strictly after `after`, in UTC."""
    out: list[datetime] = []
    t = after
    for _ in range(count):
        nxt = next_run(cron, t, tz)
        if nxt is None:
            break
        out.append(nxt)
        t = nxt
    return out


def describe(cron: Cron) -> str:
    """A short plain-English reading of common schedules, else the expression itself."""
    m, h = sorted(cron.minutes), sorted(cron.hours)
    every_day = cron.days_star and cron.weekdays_star and len(cron.months) == 12
    if len(m) == 1 and len(h) == 1:
        at = f"{h[0]:02d}:{m[0]:02d}"
        if every_day:
            return f"every day at {at}"
        if cron.days_star and len(cron.months) == 12:
            names = ", ".join(DAYS[d].capitalize() for d in sorted(cron.weekdays, key=lambda d: (d == 0, d)))
            return f"at {at} on {names}"
    if len(m) == 1 and len(h) == 24 and every_day:
        return f"every hour at minute {m[0]}"
    return cron.expression
