"""Multi-day scenarios: the existing workflows composed into a story over two to five working days.

One world for the whole story: the same people, ledger, meeting, project and mailbox recur across days.
Day one opens with the request (the day's tasks and the week's standing rules); each later day opens with
the clock moved to that morning, the changes of the night applied (some announced, most silent) and the
day's instructions. The threads that run through the days:

- tracked figures: a CSV of money entries whose total the user tracks, one of several kinds (`TRACKED`: a
  vendor payments ledger, a petty cash book, a refunds log, a course fees register...). Day one totals it
  into a report and mails it to someone the
  user names only vaguely (a hidden fact with a vague first answer; a look-alike shares the first name).
  Overnight the CSV is corrected silently (or appended, announced): the report and the daily log line
  (standing rules, `recalls`) must be redone; an agent that never re-reads sends the day-one total
  (`stale_args`).
- meeting: day one notes a meeting's time in a plan; the organiser moves it silently; the standing rule to
  keep the plan in step with the calendar must catch it.
- incoming mail: a colleague's question about the total arrives silently; the standing rule says to answer.
- ticket: a colleague reassigns a ticket overnight (silent); the day's instruction is to resolve it and tell
  whoever owns it now.
- a memo (announced mail) adds a rule from that day on (copy the manager on mail with figures);
  a change of mind moves the report; a mid-day follow-up asks for one more mail.
- chores: the composable single-day templates (archives, renames, triage, reports, replies), one or two a
  day, each checked on the day it is done.

Each day's predicates are judged on the state that day closed on, weighted towards the checks that catch a
missed silent change. By construction the stale baseline (day-one reads throughout) and the forgetful one
(no standing-rule steps) both fail.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Any, Callable
from zoneinfo import ZoneInfo

from ..builder import Act, SpecBuilder, TemplateError
from . import registry, template
from .common import (TOPICS, acked, add_event, add_project, add_ticket, background_files, background_mail,
                     background_tickets, money)
from .mail import _asker_and_twin

# Single-day templates that compose into a story (capability, name); none reads or rewrites another's data.
CHORES: tuple[tuple[str, str], ...] = (
    ("file_management", "archive_by_year"), ("file_management", "rename_term"),
    ("ticket_workflow", "triage_label"), ("mail_triage", "archive_and_label"),
    ("document_from_data", "region_total_report"), ("document_from_data", "expense_summary_json"),
    ("mail_triage", "reply_with_figure"), ("cross_service", "action_items_to_tickets"),
)

# Chores whose text is relative to day one ("from tomorrow", "before the pipeline meeting"): only a story
# focused on their capability draws them, and as its first chores (day one).
FIRST_DAY_CHORES: dict[str, tuple[tuple[str, str], ...]] = {
    "scheduling": (("scheduling", "earliest_common_slot"), ("scheduling", "cross_timezone_call")),
    "evidence_report": (("evidence_report", "crm_account_review"),),
    "back_office": (("back_office", "expense_claim_from_trip"), ("back_office", "reorder_from_supplier_mail"),
                    ("back_office", "fix_failing_job")),
    "secret_handling": (("secret_handling", "rotated_key_ticket"),),  # the triage's owner notice can coincide with a story mail
    "web_research": (("web_research", "weekly_feed_digest"),),  # a cited answer is judged on the final answer only
}


# How a week's request and each later day open (drawn with an rng of their own, so the story is unchanged).
WEEK_OPENINGS = (
    "Good morning! Here is what I need this week, starting today:", "Morning. A few things for this week; today first:",
    "Hi! Planning the week - here's where we start:", "Hello - this week's list, beginning with today:",
    "Right, the week ahead. For today:", "Happy Monday-ish. What's on for this week, today's bits first:",
    "Hey, quick plan for the next few days. Today:", "Hi there. I've got a busy week, so here's what I need, today first:",
    "Before I disappear into meetings, here's the week's work. Today:", "Morning! Let's get the week moving. First up:",
    "OK, here's the plan for this stretch, starting now:", "Hi - writing this on the train. This week, beginning today:",
    "Morning - week plan below, today's part first:", "Hello! Before the week gets away from us, today:",
    "Hi, here's what's on my plate this week that I'd like your help with, today first:",
    "Week kick-off. To start with today:", "Sorry for the long list - this week needs your help. Today:",
    "Bit of a marathon this week. Kicking off with today:", "Thanks in advance for this week. First, today:",
    "Catching you before stand-up: the week's plan, today to start:", "Weekly list coming your way. Today:",
    "Planning ahead so nothing slips this week. To begin:", "Jotting the week down before I forget; today:",
    "New week, new list. We start today with:", "Quick brain dump for the days ahead - today first:", "Hey - sorting the week now; today's bits:",
    "Good morning - a multi-day one. Starting today:", "Hi! Several days of work coming up. First, today:",
    "Right then, this week. Today, please:", "Morning! I've written the week down; today's things first:",
    "Hi - dictating this between meetings. This week, today first:", "Hello, plan for the coming days. Today:",
    "Morning, quick brief for the week, starting with today:")
DAY_HEADS = ("Morning - ", "Good morning, ", "Hi again - ", "Morning, ", "Hello - ", "Back at it - ", "Hi - ",
             "Morning all - ", "Right, new day - ", "Hey - ")
LAST_DAY = ("last day of this stretch, so ", "final day for this one, so ", "wrapping this up today, so ",
            "last one, then we're done - ")


@dataclass(frozen=True)
class Tracked:
    """A CSV of money entries whose total the user tracks: what people call it ("the {topic} total"), the
    document's name, its folder, its money column, the id prefix of its entries and who adds late ones."""

    topic: str
    noun: str
    folder: str
    column: str
    prefix: str
    keeper: str

    @property
    def slug(self) -> str:
        return self.topic.replace(" ", "-")


TRACKED = (
    Tracked("payments", "vendor payments ledger", "/finance/payables", "amount", "PAY", "Accounts payable"),
    Tracked("petty cash", "petty cash book", "/finance/cash", "amount", "PC", "The office manager"),
    Tracked("travel spend", "travel spend log", "/travel", "amount", "TRV", "The travel desk"),
    Tracked("refunds", "customer refunds log", "/support/refunds", "refund", "RF", "Support"),
    Tracked("purchase order", "purchase order register", "/procurement", "value", "PO", "Procurement"),
    Tracked("course fee", "course fees register", "/admin/fees", "fee", "FEE", "The admissions office"),
    Tracked("grant spend", "grant spend tracker", "/research/grants", "spent", "GR", "The grants office"),
    Tracked("sponsorship", "sponsorship income sheet", "/events", "amount", "SP", "The events team"),
)


@dataclass(frozen=True)
class Shape:
    """How big a story is: days (inclusive range), chores per day, chore size, and which threads run."""

    days: tuple[int, int]
    chores: tuple[int, int]
    size: tuple[int, int]
    threads: tuple[str, ...] = ("meeting", "mail", "ticket", "memo", "move", "followup")
    thread_share: float = 1.0  # chance that each optional thread runs (the ledger always does)
    focus: str | None = None  # chores of this capability come first (the story's own workflow)


@dataclass
class _Day:
    id: str
    start: datetime
    items: list[str] = field(default_factory=list)
    acts: list[Callable[[], None]] = field(default_factory=list)
    report: list[str] = field(default_factory=list)


def _mornings(b: SpecBuilder, n: int) -> list[datetime]:
    """Day one's start, then the next n-1 working mornings at 09:00 (weekends skipped), in the user's zone."""
    z = ZoneInfo(b.world.user.timezone)
    out = [b.now]
    day = b.now.astimezone(z).date()
    while len(out) < n:
        day += timedelta(days=1)
        if day.weekday() < 5:
            out.append(datetime.combine(day, time(9, 0), tzinfo=z))
    return out


def _title(when: datetime) -> str:
    return f"{when:%A} {when.day} {when:%B}"


@dataclass
class _Plot:
    """What a story's days share: the ledger, its people, the optional threads, and the day plans."""

    b: SpecBuilder
    name: str
    days: list[_Day]
    abbr: list[str]
    topic: str
    src: str
    report: str
    log: str
    totals: list[str]
    ledger_events: dict[int, tuple[list[tuple[str, float]], str | None, str]]
    recipient: Any
    twin: Any
    rcpt: str
    extra: Any
    meeting: tuple[Any, ...] | None = None
    incoming: tuple[Any, int, str] | None = None
    ticket: tuple[Any, ...] | None = None
    memo_day: int | None = None
    move_day: int | None = None
    follow_day: int | None = None

    @property
    def first(self) -> str:
        """The first name the user gives the report's recipient by (a look-alike shares it)."""
        return self.recipient.name.split()[0]


def _ledger(b: SpecBuilder, rng: random.Random, ndays: int) -> tuple[Tracked, int, list[tuple[str, float]],
                                                                    dict[int, Any], list[str]]:
    """The tracked CSV: its kind and tag, day one's rows, the nights' corrections and each day's total."""
    kind = rng.choice(TRACKED)
    tag = rng.randint(10, 999)
    src = f"{kind.folder}/{kind.slug}-{tag}.csv"
    rows = [(f"{kind.prefix}-{100 + i}", round(rng.uniform(80, 4000), 2)) for i in range(5 + rng.randint(0, 4))]
    b.table("files", "files").append({"path": src, "content": _csv(rows, kind.column)})
    versions: list[list[tuple[str, float]]] = [rows]  # the CSV as each day opens
    ledger_events: dict[int, tuple[list[tuple[str, float]], str | None, str]] = {}
    for d in range(1, ndays):
        if d == 1 or rng.random() < 0.4:  # day two always brings a silent correction
            cur = list(versions[-1])
            if d == 1 or rng.random() < 0.5:
                i = rng.randrange(len(cur))
                cur[i] = (cur[i][0], round(cur[i][1] + rng.choice((-1, 1)) * rng.uniform(50, 600), 2))
                announce = None
            else:
                cur += [(f"{kind.prefix}-{200 + d * 10 + k}", round(rng.uniform(80, 4000), 2)) for k in range(2)]
                announce = f"{kind.keeper} added late entries to {src} overnight."
            if abs(sum(a for _, a in cur) - sum(a for _, a in versions[-1])) < 0.005:
                cur.append((f"{kind.prefix}-{300 + d}", 99.0))
            ledger_events[d] = (cur, announce, _csv(cur, kind.column))
            versions.append(cur)
        else:
            versions.append(versions[-1])
    return kind, tag, rows, ledger_events, [money(sum(a for _, a in v)) for v in versions]


def _first_day_items(p: _Plot, kind: Tracked, words: random.Random) -> list[str]:
    """The week's first standing rule and day one's item about the tracked CSV, worded by `words`."""
    report, log, src, first = p.report, p.log, p.src, p.first
    col, topic, noun = kind.column, kind.topic, kind.noun
    line = f"one line per day so far, '<day>: total N' ({', '.join(p.abbr)}), N being that day's total"
    rules = [words.choice((
        f"at the end of each day, make sure {report} holds the current total, and bring {log} up to date with {line}",
        f"each evening {report} should hold the current total, and {log} should have {line}",
        f"keep {report} at the current total at the close of every day, and keep {log} going with {line}",
        f"before you stop each day, update {report} to the current total and give {log} {line}"))]
    p.days[0].items.append(words.choice((
        f"Total the {col} column of {src}, write it to {report} as 'Total: N', and email the total to {first}.",
        f"Add up the {col} column in {src}; put the result in {report} as 'Total: N' and mail it to {first}.",
        f"{first} is waiting on the {topic} total from the {noun} ({src}): put it in {report} as a line "
        f"'Total: N' and email it over.",
        f"I owe {first} the {topic} total. It's the sum of the {col} column in {src}; write it to {report} "
        f"('Total: N') and send it to them.",
        f"Can you get the {noun} total to {first}? The entries are in {src}; the figure also goes in {report} "
        f"as 'Total: N'.")))
    return rules


def _threads(p: _Plot, rng: random.Random, threads: list[str], tag: int, cast: list[Any], mornings: list[datetime],
             tz: ZoneInfo, rules: list[str]) -> None:
    """Set up the optional threads' data now (a meeting, a question by mail, a ticket, a memo, a move, a
    follow-up), adding their day-one items and standing rules."""
    b, ndays, topic = p.b, len(p.days), p.topic
    me, mgr = b.world.user, b.world.manager
    asker, _, owner, taker = cast
    if "meeting" in threads and ndays >= 2:
        b.use("calendar")
        other = b.world.colleagues()[-1]
        mtitle = f"{rng.choice([t for t in TOPICS if t != topic]).capitalize()} review"
        start = datetime.combine(mornings[-1].astimezone(tz).date() + timedelta(days=1), time(rng.choice((10, 11, 14))),
                                 tzinfo=tz)
        while start.weekday() >= 5:  # meetings fall on working days
            start += timedelta(days=1)
        moved = start + timedelta(hours=rng.choice((1, 2, 3)), days=rng.choice((0, 1)))
        while moved.weekday() >= 5:
            moved += timedelta(days=1)
        eid = add_event(b, mtitle, start, 60, mgr.email, [me.email, other.email])
        plan = f"/notes/plan-{tag}.md"
        b.table("files", "files").append({"path": plan, "content": "# This week\n"})
        move_day = rng.randint(1, ndays - 1)
        p.meeting = (mtitle, start, moved, eid, plan, move_day)
        p.days[0].items.append(f"Note when the '{mtitle}' meeting is in {plan} as a line 'Review: <weekday> <HH:MM>' "
                               "(24-hour, my time zone).")
        rules.append(f"every day, keep the Review line in {plan} in step with my calendar")
    if "mail" in threads and ndays >= 2:
        p.incoming = (asker, rng.randint(1, ndays - 1), b.next_id("mail"))
        rules.append(f"if anyone mails me asking for the {topic} total, reply in their thread with the current one")
    if "ticket" in threads and ndays >= 3:
        project = rng.choice(("OPS", "WEB", "DATA", "INFRA", "APP"))
        add_project(b, project, f"{project.capitalize()} team")
        background_tickets(b, project, 3)
        ttitle = f"{topic.capitalize()} {b.maker.word()} import drops rows"
        key = add_ticket(b, project, ttitle, "In Progress", "high", owner.email, [topic.replace(" ", "-")])
        due = rng.randint(2, ndays - 1)
        p.ticket = (key, ttitle, owner, taker, due)
    p.memo_day = rng.randint(1, ndays - 1) if "memo" in threads and ndays >= 2 else None
    p.move_day = rng.randint(2, ndays - 1) if "move" in threads and ndays >= 3 else None
    p.follow_day = rng.randint(1, ndays - 1) if "followup" in threads and ndays >= 2 else None


def _chores(b: SpecBuilder, rng: random.Random, shape: Shape, days: list[_Day]) -> None:
    """The composable single-day templates, set up now and done on their day (the focus capability's first)."""
    chores = rng.sample(CHORES, len(CHORES))
    if shape.focus in FIRST_DAY_CHORES:
        chores.append(rng.choice(FIRST_DAY_CHORES[shape.focus]))
    chores.sort(key=lambda c: c[0] == shape.focus)  # popped from the end: the focus capability's chores first
    for day in days:
        for _ in range(rng.randint(*shape.chores)):
            if not chores:
                break
            cap, tname = chores.pop()
            n0 = len(b.requests)
            day.acts.append(registry()[cap][tname].fn(b, rng.randint(*shape.size)))
            day.items.extend(b.requests[n0:])
            del b.requests[n0:]


def story(b: SpecBuilder, capability: str, name: str, shape: Shape) -> Act:
    """Set up a multi-day story in `b` (start data, day plans) and return the act that plays it day by day."""
    rng = b.rng
    b.use("files", "mail", "contacts")
    background_files(b, 2)
    background_mail(b, 2)
    ndays = rng.randint(*shape.days)
    mornings = _mornings(b, ndays)
    days = [_Day(f"day-{i + 1}", m) for i, m in enumerate(mornings)]
    threads = [t for t in shape.threads if rng.random() < shape.thread_share]
    kind, tag, _, ledger_events, totals = _ledger(b, rng, ndays)
    topic = kind.topic
    recipient, twin = _asker_and_twin(b)
    first = recipient.name.split()[0]
    rcpt = b.fact("recipient", recipient.email, ["who", "which", "email address", "address"],
                  f"{recipient.name} in {recipient.department}, {recipient.email}.", decoy=twin.email)
    b.facts[-1]["vague"] = f"{first}, you know, the one who looks after the {topic} numbers."
    cast = [p for p in b.world.colleagues() if p not in (recipient, twin, b.world.manager)]
    rng.shuffle(cast)
    if len(cast) < 4:
        raise TemplateError("too few colleagues for the story's parts")
    asker, extra, owner, taker = cast[:4]  # distinct people, so that no thread's mail satisfies another's check
    plot = _Plot(b, name, days, [f"{m:%a}" for m in mornings], topic, f"{kind.folder}/{kind.slug}-{tag}.csv",
                 f"/reports/{kind.slug}-total-{tag}.md", f"/reports/{kind.slug}-log-{tag}.md", totals, ledger_events,
                 recipient, twin, rcpt, extra)
    rules = _first_day_items(plot, kind, random.Random(f"wording:{b.seed}:{name}"))  # words drawn apart from the story's
    _threads(plot, rng, threads, tag, [asker, extra, owner, taker], mornings, ZoneInfo(b.world.user.timezone), rules)
    _chores(b, rng, shape, days)
    b.requests.append(random.Random(f"opening:{b.seed}:{name}").choice(WEEK_OPENINGS) + "\n"
                      + "\n".join(f"{i}. {t}" for i, t in enumerate(days[0].items, 1))
                      + "\n" + random.Random(f"rules:{b.seed}:{name}").choice((
                          "Standing rules for the whole week:", "For the rest of the week, please:",
                          "Rules that hold all week:", "Every day this week:", "Keep these going all week:"))
                      + "\n" + "\n".join(f"- {r}." for r in rules))
    b.titles.insert(0, f"A {ndays}-day week with the {topic} figures")
    if capability not in b.capabilities:
        b.capabilities.insert(0, capability)
    b.templates.insert(0, name)
    return lambda: _play(plot)


def _play(p: _Plot) -> None:
    """Play the story day by day: each day's ledger work, its threads, its chores and the log line."""
    b = p.b
    tz = ZoneInfo(b.world.user.timezone)
    written = {"report": p.report}  # where the report lives now (a change of mind moves it)
    cc: list[str] = []  # the memo's rule, once it arrived
    for d, day in enumerate(p.days):
        total, stale = p.totals[d], p.totals[0]
        if d == 0:
            _ledger_day_one(p, day, total)
        else:
            _ledger_later_day(p, d, day, written, cc)
        if p.meeting is not None:
            _meeting_step(b, d, p.meeting, tz, day)
        if p.incoming is not None and p.incoming[1] == d:
            _incoming_step(p, day, total, stale, cc)
        if p.ticket is not None and p.ticket[4] == d:
            _ticket_step(p, day)
        for chore in day.acts:
            chore()
            day.report.extend(b.answers)
            b.answers.clear()
        if p.follow_day == d:
            _followup_step(p, day, total, stale, cc)
        _log_step(p, d, day, total, stale)
        if d < len(p.days) - 1:
            b.end_stage(" ".join(day.report))
        else:
            b.answer(" ".join(day.report))
    b.allow("mail.messages:msg-*", f"files:{p.report}", f"files:{p.log}", "files:/reports")


def _ledger_day_one(p: _Plot, day: _Day, total: str) -> None:
    """Day one: find which colleague is meant, total the ledger into the report and mail them the total."""
    b, first, topic = p.b, p.first, p.topic
    b.open_stage(day.id, _title(day.start))
    b.question(f"Who is {first} here?", [])
    b.question(f"Which {first} exactly? There are two; could you give me the email address?", ["recipient"])
    b.call("search_contacts", query=first)
    b.call("read_text_file", path=p.src)
    b.call("create_directory", path="/reports")
    b.call("write_file", path=p.report, content=f"Total: {total}\n")
    b.call("send_email", _free=("subject",), to=[p.rcpt], subject=f"{topic.capitalize()} total",
           body=f"Hi {first}, the {topic} total is {total}.")
    b.check({"kind": "file", "path": p.report, "content": {"contains": f"Total: {total}"},
             "description": f"day one's report holds day one's total ({total})"})
    b.check({"kind": "mail_sent", "to": [p.recipient.email], "body": {"contains": total},
             "only_recipients": True, "description": f"{p.recipient.name} (not {p.twin.name}) got the total"},
            weight=2)
    day.report.append(f"The {topic} total is {total}; it is in {p.report} and {p.recipient.name} has it.")


def _ledger_later_day(p: _Plot, d: int, day: _Day, written: dict[str, str], cc: list[str]) -> None:
    """A later day: open it with the night's changes, move the report when asked, redo it when the CSV changed."""
    b, total, report = p.b, p.totals[d], p.report
    instructions = _instructions(day, d, len(p.days), p.ticket, p.move_day, report,
                                 random.Random(f"day:{b.seed}:{p.name}:{d}"))
    b.open_stage(day.id, _title(day.start), day.start, instructions)
    _changes(b, d, p.src, p.ledger_events, p.meeting, p.incoming, p.ticket, p.memo_day, p.topic, b.world.manager, cc)
    if p.move_day == d:
        new = f"/shared/{report.rsplit('/', 1)[1]}"
        b.call("move_file", source=written["report"], destination=new)
        written["report"] = new
        b.check({"kind": "all", "description": "the report is where the user now wants it, moved, not copied",
                 "predicates": [{"kind": "file", "path": new, "content": {"contains": f"Total: {total}"}},
                                {"kind": "file", "path": report, "exists": False}]}, weight=2)
        b.allow("files:/shared", f"files:{new}")
        day.report.append(f"Moved the report to {new}.")
    b.call("read_text_file", path=p.src)
    if total != p.totals[d - 1]:
        b.call("read_text_file", path=written["report"])
        b.call("write_file", _recalls=True, _stale={"path": written["report"], "content": f"Total: {p.totals[0]}\n"},
               path=written["report"], content=f"Total: {total}\n")
        b.check({"kind": "file", "path": written["report"], "content": {"contains": f"Total: {total}"},
                 "description": f"the report was redone after {p.src} changed (now {total})"}, weight=3)
        day.report.append(f"{p.src} changed overnight, so the total is now {total}; I updated the report.")


def _incoming_step(p: _Plot, day: _Day, total: str, stale: str, cc: list[str]) -> None:
    """A colleague's silent question about the total: answered in their thread under the standing rule."""
    assert p.incoming is not None
    b, topic = p.b, p.topic
    asker, _, mid = p.incoming
    b.call("search_emails", _recalls=True, query="is:unread")
    b.call("read_email", _recalls=True, id=mid)
    b.call("reply_email", _recalls=True, _stale={"id": mid, "body": f"Hi, the {topic} total is {stale}.",
                                                **({"cc": cc} if cc else {})},
           id=mid, body=f"Hi, the {topic} total is {total}.", **({"cc": list(cc)} if cc else {}))
    b.check({"kind": "mail_sent", "to": [asker.email], "in_reply_to": mid, "body": {"contains": total},
             **({"cc": list(cc)} if cc else {}),
             "description": f"{asker.name}'s question got the current total ({total})"}, weight=2)
    day.report.append(f"{asker.name} asked for the total; I replied with {total}.")


def _ticket_step(p: _Plot, day: _Day) -> None:
    """The reassigned ticket: resolved, and whoever owns it now told (not its old owner)."""
    assert p.ticket is not None
    b = p.b
    key, _, owner, taker, _ = p.ticket
    b.call("get_ticket", key=key)
    b.call("transition_ticket", key=key, status="Resolved", comment="Fixed: the import keeps every row now.")
    b.call("send_email", _free=("subject",), _stale={"to": [owner.email], "subject": f"{key} resolved",
                                                    "body": f"Hi, {key} is resolved."},
           to=[taker.email], subject=f"{key} resolved", body=f"Hi, {key} is resolved.")
    b.check({"kind": "ticket", "key": key, "status": "Resolved", "new_comment": {"regex": "(?i)fix"},
             "description": f"{key} resolved with a comment"})
    b.check({"kind": "mail_sent", "to": [taker.email], "body": {"contains": key}, "only_recipients": True,
             "description": f"{taker.name}, who took {key} over, was told (not {owner.name})"}, weight=3)
    b.allow(f"tickets.tickets:{key}")
    day.report.append(f"Resolved {key} and told {taker.name}, who owns it now.")


def _followup_step(p: _Plot, day: _Day, total: str, stale: str, cc: list[str]) -> None:
    """The mid-day follow-up: one more colleague gets the current total (the manager in copy under the memo)."""
    b, topic, extra = p.b, p.topic, p.extra
    b.say("That's today's list done.",
          followup=acked(b.seed, f"one more thing: please email {extra.name} the current {topic} total too."))
    b.call("send_email", _free=("subject",),
           _stale={"to": [extra.email], "subject": f"{topic.capitalize()} total",
                   "body": f"Hi, the current {topic} total is {stale}.", **({"cc": cc} if cc else {})},
           to=[extra.email], subject=f"{topic.capitalize()} total",
           body=f"Hi, the current {topic} total is {total}.", **({"cc": list(cc)} if cc else {}))
    b.check({"kind": "mail_sent", "to": [extra.email], "body": {"contains": total},
             **({"cc": list(cc)} if cc else {}),
             "description": f"{extra.name} got the current total" + (" with the manager in copy" if cc else "")},
            weight=2)
    day.report.append(f"Sent {extra.name} the total, {total}.")


def _log_step(p: _Plot, d: int, day: _Day, total: str, stale: str) -> None:
    """The standing rule's log: one line per day so far, rewritten each evening."""
    b, abbr = p.b, p.abbr
    lines = "".join(f"{abbr[i]}: total {p.totals[i]}\n" for i in range(d + 1))
    stale_lines = "".join(f"{abbr[i]}: total {stale}\n" for i in range(d + 1))
    if d:
        b.call("read_text_file", _recalls=True, path=p.log)
    b.call("write_file", _recalls=d > 0, _stale={"path": p.log, "content": stale_lines}, path=p.log, content=lines)
    b.check({"kind": "file", "path": p.log, "content": {"contains": f"{abbr[d]}: total {total}"},
             "description": f"the standing rule held on {abbr[d]}: the log has that day's total"},
            weight=2 if total != stale else 1)
    day.report.append(f"The log is up to date ({abbr[d]}: total {total}).")


def _csv(rows: list[tuple[str, float]], column: str) -> str:
    return f"entry,{column}\n" + "".join(f"{e},{a:.2f}\n" for e, a in rows)


def _instructions(day: _Day, d: int, ndays: int, ticket: Any, move_day: int | None, report: str,
                  rng: random.Random) -> str:
    items = list(day.items)
    if ticket is not None and ticket[4] == d:
        items.insert(0, f"{ticket[0]} ('{ticket[1]}') is fixed: resolve it with a comment saying so, and email "
                        "whoever is assigned to it now that it is resolved.")
    if move_day == d:
        items.insert(0, f"Change of plan for the report: I want it in /shared/ instead of /reports/, so move "
                        f"{report} there and keep it there from now on.")
    head = rng.choice(DAY_HEADS) + (rng.choice(LAST_DAY) if d == ndays - 1 else "")
    if not items:
        return head + rng.choice(("nothing new from me today; keep to the standing rules.",
                                  "no new asks today - just keep the standing rules going.",
                                  "quiet day from my side; the standing rules still apply."))
    return head + rng.choice(("today:", "for today:", "on the list today:", "here's today:", "what I need today:")) \
        + "\n" + "\n".join(f"{i}. {t}" for i, t in enumerate(items, 1))


def _changes(b: SpecBuilder, d: int, src: str, ledger_events: dict[int, Any], meeting: Any, incoming: Any,
             ticket: Any, memo_day: int | None, topic: str, mgr: Any, cc: list[str]) -> None:
    """The night's changes before day d opens: each its own event (announced or silent)."""
    if d in ledger_events:
        _rows, announce, content = ledger_events[d]
        b.stage_change([{"op": "patch", "table": "files.files", "key": src, "fields": {"content": content}}],
                       announce=announce, note=f"{src} was " + ("appended (announced)" if announce else "corrected (silent)"))
    if meeting is not None and meeting[5] == d:
        mtitle, start, moved, eid, _plan, _ = meeting
        b.stage_change([{"op": "patch", "table": "calendar.events", "key": eid,
                         "fields": {"start": moved.isoformat(), "end": (moved + timedelta(hours=1)).isoformat()}}],
                       note=f"the organiser moved '{mtitle}' (silent)")
    if incoming is not None and incoming[1] == d:
        asker, _, mid = incoming
        b.stage_change([{"op": "put", "table": "mail.messages", "record": {
            "id": mid, "owner": b.world.user.email, "folder": "inbox", "sender": asker.email, "to": [b.world.user.email],
            "subject": f"{topic.capitalize()} total?", "body": f"Hi, what is the current {topic} total? Thanks, "
            f"{asker.name.split()[0]}", "date": (b.ws.state.now - timedelta(hours=1)).isoformat(), "read": False,
            "labels": [], "attachments": []}}], note=f"{asker.name} asked for the total (silent)")
    if ticket is not None and ticket[4] == d:
        key, _t, _owner, taker, _due = ticket
        b.stage_change([{"op": "patch", "table": "tickets.tickets", "key": key, "fields": {"assignee": taker.email}}],
                       note=f"{taker.name} took {key} over (silent)")
    if memo_day == d:
        mid = b.next_id("mail")
        b.stage_change([{"op": "put", "table": "mail.messages", "record": {
            "id": mid, "owner": b.world.user.email, "folder": "inbox", "sender": mgr.email, "to": [b.world.user.email],
            "subject": "Memo: sharing figures", "body": "From today, please copy me (cc) on every mail that "
            "contains a figure.", "date": (b.ws.state.now - timedelta(hours=2)).isoformat(), "read": False,
            "labels": [], "attachments": []}}], announce=f"A memo from {mgr.name} about sharing figures arrived; "
                                                        "it applies from today.", note="policy memo (announced)")
        cc.append(mgr.email)


def _meeting_step(b: SpecBuilder, d: int, meeting: Any, tz: ZoneInfo, day: _Day) -> None:
    mtitle, start, moved, _eid, plan, move_day = meeting
    fmt = "%A %H:%M"
    old, new = f"{start.astimezone(tz):{fmt}}", f"{moved.astimezone(tz):{fmt}}"
    b.call("list_events", _recalls=d > 0, query=mtitle)
    if d == 0:
        b.call("write_file", path=plan, content=f"# This week\nReview: {old}\n")
        b.check({"kind": "file", "path": plan, "content": {"contains": f"Review: {old}"},
                 "description": f"the plan notes the meeting's time ({old})"})
        b.allow(f"files:{plan}")
        day.report.append(f"Noted the '{mtitle}' time ({old}) in {plan}.")
    elif d == move_day:
        b.call("write_file", _recalls=True, _stale={"path": plan, "content": f"# This week\nReview: {old}\n"},
               path=plan, content=f"# This week\nReview: {new}\n")
        b.check({"kind": "file", "path": plan, "content": {"contains": f"Review: {new}", "not_contains": old},
                 "description": f"the plan follows the meeting's silent move to {new}"}, weight=3)
        day.report.append(f"The '{mtitle}' moved to {new}; I updated {plan}.")


def _register(capability: str, name: str, shape: Shape, weight: int, doc: str) -> None:
    def fn(b: SpecBuilder, size: int = 1) -> Act:
        return story(b, capability, name, shape)

    fn.__doc__ = doc
    template(capability, name, composable=False, weight=weight)(fn)


_register("long_horizon", "working_week", Shape(days=(3, 5), chores=(1, 2), size=(3, 6)), 8,
          "Three to five working days: the ledger, meeting, mail, ticket, memo and change-of-mind threads, and one "
          "or two chores a day (40+ calls).")
_register("dynamic_world", "two_day_update", Shape(days=(2, 3), chores=(1, 1), size=(1, 2), thread_share=0.6), 6,
          "Two or three days: day one's totals and notes, then silent overnight changes that invalidate them.")
_register("cross_service", "handoff_days", Shape(days=(2, 3), chores=(1, 1), size=(1, 2), thread_share=0.6,
                                                  focus="cross_service"), 9,
          "Two or three days of one workflow across files, mail, calendar and tickets, with changes between days.")
_register("clarification", "vague_week", Shape(days=(2, 2), chores=(1, 1), size=(1, 2),
                                               threads=("followup", "mail", "meeting"), thread_share=0.5), 6,
          "Two days that start with a recipient the user names vaguely (asked twice) and a mid-task request.")
_register("file_management", "files_over_days", Shape(days=(2, 2), chores=(1, 1), size=(2, 3),
                                                       threads=("meeting", "move", "followup"), thread_share=0.6,
                                                       focus="file_management"), 6,
          "Two days of file work (an archive or a rename a day) while the tracked figures and plans change.")
_register("document_from_data", "reports_over_days", Shape(days=(2, 2), chores=(1, 1), size=(1, 3),
                                                           threads=("mail", "followup"), thread_share=0.6,
                                                           focus="document_from_data"), 6,
          "Two days of reports from data, with the source corrected silently overnight.")
_register("mail_triage", "inbox_over_days", Shape(days=(2, 2), chores=(1, 1), size=(1, 3),
                                                  threads=("mail", "memo", "followup"), thread_share=0.6,
                                                  focus="mail_triage"), 9,
          "Two days of mail: triage and replies, a question arriving overnight, a memo that adds a rule.")
_register("ticket_workflow", "tickets_over_days", Shape(days=(3, 3), chores=(1, 1), size=(1, 3),
                                                        threads=("ticket", "followup"), thread_share=0.7,
                                                        focus="ticket_workflow"), 6,
          "Three days of ticket work: a triage, and a ticket a colleague takes over silently before it is resolved.")
_register("scheduling", "meetings_over_days", Shape(days=(2, 2), chores=(1, 1), size=(1, 2),
                                                    threads=("meeting", "followup"), thread_share=0.7,
                                                    focus="scheduling"), 4,
          "Two days: a meeting booked at the earliest common slot on day one, and a noted meeting that moves.")
_register("evidence_report", "accounts_over_days", Shape(days=(2, 2), chores=(1, 1), size=(1, 2),
                                                         threads=("mail", "followup"), thread_share=0.6,
                                                         focus="evidence_report"), 4,
          "Two days: a review of the renewal-due accounts on day one, the tracked figures changing overnight.")
_register("back_office", "back_office_days", Shape(days=(2, 2), chores=(1, 1), size=(1, 2),
                                                  threads=("mail", "memo", "followup"), thread_share=0.6,
                                                  focus="back_office"), 6,
          "Two days: an expense claim, a reorder or a failing job fixed on day one, the tracked figures changing "
          "overnight.")
_register("secret_handling", "secrets_over_days", Shape(days=(2, 2), chores=(1, 1), size=(1, 2),
                                                        threads=("ticket", "memo", "followup"), thread_share=0.6,
                                                        focus="secret_handling"), 6,
          "Two days: an exposed key rotated and ticketed on day one without pasting it anywhere, then the week's "
          "other work while the world changes.")
_register("web_research", "research_over_days", Shape(days=(2, 2), chores=(1, 1), size=(1, 2),
                                                      threads=("mail", "followup"), thread_share=0.6,
                                                      focus="web_research"), 6,
          "Two days: the weekly feed digest to the right list on day one, the tracked figures corrected silently "
          "overnight.")
