"""Tickets: Jira-like projects and tickets with a per-project status workflow, comments and links.

Each project declares its workflow as a map from every status to the statuses a ticket may move to
next (the default is Open -> In Progress -> In Review -> Resolved -> Closed, with Reopened). Priorities
use one ordered scale, lowest < low < medium < high < highest < urgent < critical (urgent and critical
are the escalation levels above the usual five), and a ticket's priority may be unset (stored as
None, shown as "unset", sorted below lowest). Links are kept on both tickets (A blocks B means
B is_blocked_by A). A ticket may come from someone outside the directory: `reporter` is their address
when known and `reporter_name` is free text such as "Priya from Acme Corp". People are named by
address or by a name from the directory (resolved by `workspace_sim.text.people`).

Keys come in the forms real trackers use: `PROJECT-N` (Jira, Linear), a bare number such as `4512`
(Zendesk, Freshdesk) or `#N` (GitHub, GitLab). A project's `key_format` (prefixed, number or hash)
says how its new tickets are numbered; bare and hash keys carry their project in the record, and
their numbers are counted across every project of that form (a help desk's one sequence). A ticket
may name its customer: `account` is a CRM account id (checked against `crm.accounts` by table name
when the CRM is present) and `customer` is an outside organisation as free text.
"""

from __future__ import annotations

import difflib
import re
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, NotFound, SpecError
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.render import render_list
from workspace_sim.text.folding import fold
from workspace_sim.text.people import normalize_email, resolve_address
from workspace_sim.text.validation import as_argument, clean_text, iso_date, record_id

PROJECTS, TICKETS, PEOPLE = "tickets.projects", "tickets.tickets", "contacts.people"
Priority = Literal["lowest", "low", "medium", "high", "highest", "urgent", "critical"]
PRIORITIES: tuple[str, ...] = ("lowest", "low", "medium", "high", "highest", "urgent", "critical")
UNSET = "unset"
PriorityArg = Literal["lowest", "low", "medium", "high", "highest", "urgent", "critical", "unset"]
SortBy = Literal["key", "priority", "due_date", "updated"]
LinkType = Literal["blocks", "is_blocked_by", "relates_to", "duplicates", "is_duplicated_by"]
INVERSE: dict[str, str] = {"blocks": "is_blocked_by", "is_blocked_by": "blocks", "relates_to": "relates_to",
                           "duplicates": "is_duplicated_by", "is_duplicated_by": "duplicates"}
DEFAULT_WORKFLOW: dict[str, list[str]] = {
    "Open": ["In Progress", "Resolved", "Closed"],
    "In Progress": ["Open", "In Review", "Resolved"],
    "In Review": ["In Progress", "Resolved"],
    "Resolved": ["Closed", "Reopened"],
    "Closed": ["Reopened"],
    "Reopened": ["In Progress", "Resolved", "Closed"],
}
DONE_NAMES = {"resolved", "closed", "done", "cancelled", "canceled", "won't do", "rejected"}
MAX_TITLE, MAX_TEXT, MAX_LABELS, MAX_FIELD, MAX_WATCHERS = 300, 20_000, 50, 200, 50
_PROJECT_KEY = re.compile(r"^[A-Z][A-Z0-9]{1,9}$")
_TICKET_KEY = re.compile(r"^(?:([A-Z][A-Z0-9]{1,9})-|(#)?)([1-9][0-9]{0,8})$")
ACCOUNTS = "crm.accounts"
KeyFormat = Literal["prefixed", "number", "hash"]
KEY_HELP = "PROJECT-123 (e.g. OPS-12), a ticket number such as 4512, or #4512"


# --- validation helpers ---------------------------------------------------------------------------


def _label(value: object) -> str:
    """A label: one printable word of at most 100 characters."""
    text = value.strip() if isinstance(value, str) else ""
    odd = any(c.isspace() or 0xD800 <= ord(c) <= 0xDFFF for c in text)
    if not text or len(text) > 100 or not text.isprintable() or odd:
        raise ValueError(f"label {value!r} must be a non-empty word of at most 100 printable characters without spaces")
    return text


def priority_rank(priority: str | None) -> int:
    """Where a priority sits on the scale: -1 for unset, 0 for lowest, up to 6 for critical."""
    return -1 if priority is None else PRIORITIES.index(priority)


def ticket_number(key: str) -> tuple[str, int]:
    """The (project, number) of a ticket key: ('OPS', 12) for 'OPS-12'; ('', 4512) for a bare '4512' or '#4512',
    whose project the ticket record carries."""
    m = _TICKET_KEY.match(key)
    if m is None:
        raise ValueError(f"ticket key {key!r} must look like {KEY_HELP}")
    return m.group(1) or "", int(m.group(3))


def key_format(key: str) -> str:
    """Which form a valid ticket key has: prefixed ('OPS-12'), number ('4512') or hash ('#4512')."""
    m = _TICKET_KEY.match(key)
    assert m is not None, key
    return "prefixed" if m.group(1) else "hash" if m.group(2) else "number"


# --- records --------------------------------------------------------------------------------------


class Project(Record):
    """A project: its key, name and workflow (status -> statuses it may move to)."""

    key_field = "key"
    key: str
    name: str = ""
    workflow: dict[str, list[str]] = Field(default_factory=dict)
    initial_status: str = ""
    done_statuses: list[str] | None = None
    key_format: KeyFormat = "prefixed"

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        if not _PROJECT_KEY.match(v):
            raise ValueError(f"project key {v!r} must be 2-10 capital letters or digits, first a letter (e.g. OPS)")
        return v

    @model_validator(mode="after")
    def _check(self) -> "Project":
        flow = self.workflow or {k: list(v) for k, v in DEFAULT_WORKFLOW.items()}
        for status, targets in flow.items():
            if not status.strip():
                raise ValueError("workflow has an empty status name")
            unknown = [t for t in targets if t not in flow]
            if unknown:
                raise ValueError(f"workflow status {status!r} moves to {unknown}, which are not statuses of it")
        initial = self.initial_status or next(iter(flow))
        if initial not in flow:
            raise ValueError(f"initial_status {initial!r} is not a status of the workflow ({', '.join(sorted(flow))})")
        done = self.done_statuses
        if done is None:
            done = sorted(s for s in flow if s.lower() in DONE_NAMES)
        if any(s not in flow for s in done):
            raise ValueError(f"done_statuses {done} must all be statuses of the workflow")
        # Canonical key order, so a JSON round trip (which sorts keys) gives back the same record.
        object.__setattr__(self, "workflow", dict(sorted(flow.items())))
        object.__setattr__(self, "initial_status", initial)
        object.__setattr__(self, "done_statuses", done)
        object.__setattr__(self, "name", self.name or self.key)
        return self

    def statuses(self) -> list[str]:
        """The workflow's statuses in the order a ticket meets them: breadth-first from the initial one."""
        order, queue = [self.initial_status], [self.initial_status]
        while queue:
            for nxt in self.workflow[queue.pop(0)]:
                if nxt not in order:
                    order.append(nxt)
                    queue.append(nxt)
        return order + sorted(s for s in self.workflow if s not in order)

    def status_named(self, text: str) -> str | None:
        """The workflow status matching `text` case-insensitively, or None."""
        folded = " ".join(text.split()).lower()
        return next((s for s in self.workflow if s.lower() == folded), None)


class Comment(BaseModel):
    """A comment on a ticket."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = ""
    author: str
    body: str
    created: datetime | None = None

    @field_validator("author", mode="before")
    @classmethod
    def _author(cls, v: object) -> str:
        return normalize_email(v, "comment author")


class Link(BaseModel):
    """A typed link to another ticket."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: LinkType
    target: str

    @field_validator("target")
    @classmethod
    def _target(cls, v: str) -> str:
        ticket_number(v)
        return v


class Ticket(Record):
    """A ticket of a project; `project` is derived from the key when left empty."""

    key_field = "key"
    key: str
    project: str = ""
    title: str
    description: str = ""
    status: str = ""
    priority: Priority | None = "medium"
    assignee: str | None = None
    reporter: str | None = None
    reporter_name: str = Field("", max_length=MAX_FIELD)
    department: str = Field("", max_length=MAX_FIELD)
    category: str = Field("", max_length=MAX_FIELD)
    watchers: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    comments: list[Comment] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    due_date: date | None = None
    account: str | None = None
    customer: str = Field("", max_length=MAX_FIELD)
    created: datetime | None = None
    updated: datetime | None = None

    @field_validator("priority", mode="before")
    @classmethod
    def _priority(cls, v: object) -> object:
        if isinstance(v, str):
            v = v.strip().lower()
            return None if v in ("", UNSET, "none") else v
        return v

    @field_validator("assignee", "reporter", mode="before")
    @classmethod
    def _person(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "assignee/reporter")

    @field_validator("watchers")
    @classmethod
    def _watchers(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(normalize_email(x, "watcher") for x in v))

    @field_validator("reporter_name", "department", "category", "customer")
    @classmethod
    def _one_line(cls, v: str) -> str:
        return " ".join(v.split())

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: list[str]) -> list[str]:
        out: list[str] = []
        for x in v:
            x = _label(x)
            if x not in out:
                out.append(x)
        return out

    @model_validator(mode="after")
    def _check(self) -> "Ticket":
        project, _ = ticket_number(self.key)
        if not project:
            if not self.project:
                raise ValueError(f"ticket {self.key} has a numbered key, so it needs its project (e.g. project: HELP)")
            if not _PROJECT_KEY.match(self.project):
                raise ValueError(f"ticket {self.key}: project {self.project!r} must be 2-10 capital letters or digits")
            project = self.project
        if self.project and self.project != project:
            raise ValueError(f"ticket {self.key} belongs to project {project}, not {self.project!r}")
        object.__setattr__(self, "project", project)
        if self.account is not None and not self.account.strip():
            object.__setattr__(self, "account", None)
        if not self.title.strip():
            raise ValueError(f"ticket {self.key} has an empty title")
        if any(not c.id for c in self.comments):
            numbered = [c if c.id else c.model_copy(update={"id": f"{self.key}-c{i}"})
                        for i, c in enumerate(self.comments, 1)]
            object.__setattr__(self, "comments", numbered)
        if any(link.target == self.key for link in self.links):
            raise ValueError(f"ticket {self.key} links to itself")
        return self


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Complete initial data: create missing projects (default workflow), set initial statuses and
    times, add the reverse side of every link, and refuse statuses or links that cannot exist."""
    projects, tickets = tables.get(PROJECTS), tables.get(TICKETS)
    if projects is None or tickets is None:
        return
    for key, t in list(tickets.items()):
        where = f"data.tickets.tickets[{key}]"
        project = projects.get(t.project)
        if project is None:
            fmt = key_format(t.key)
            project = projects[t.project] = Project(key=t.project, key_format=fmt)  # type: ignore[arg-type]
        accounts = tables.get(ACCOUNTS)
        if t.account is not None and accounts is not None and t.account not in accounts:
            raise SpecError(f"{where}.account", f"CRM account {t.account!r} does not exist")
        status = t.status or project.initial_status
        if status not in project.workflow:
            raise SpecError(f"{where}.status", f"{status!r} is not a status of project {t.project} "
                            f"(workflow: {', '.join(project.statuses())})")
        comments = [c if c.created else c.model_copy(update={"created": config.now}) for c in t.comments]
        tickets[key] = t.evolve(status=status, comments=comments, created=t.created or config.now,
                                updated=t.updated or t.created or config.now)
    for key, t in list(tickets.items()):
        for i, link in enumerate(t.links):
            target = tickets.get(link.target)
            if target is None:
                raise SpecError(f"data.tickets.tickets[{key}].links[{i}]",
                                f"links to {link.target}, which does not exist")
            back = Link(type=INVERSE[link.type], target=key)  # type: ignore[arg-type]
            if back not in target.links:
                tickets[link.target] = target.evolve(links=[*target.links, back])


SERVICE = Service("tickets", {"projects": Project, "tickets": Ticket}, title="Tickets", prepare=_prepare)


# --- lookups --------------------------------------------------------------------------------------


def _ticket(ctx: ToolContext, key: str) -> Ticket:
    k = key.strip().upper()
    t = ctx.get(TICKETS, k)
    if t is None and _TICKET_KEY.match(k) and not ticket_number(k)[0]:  # 4512 and #4512 name the same ticket
        t = ctx.get(TICKETS, k[1:] if k.startswith("#") else f"#{k}")
    if t is None:
        if not _TICKET_KEY.match(k):
            raise InvalidArgument(f"ticket key {key!r} must look like {KEY_HELP}")
        close = difflib.get_close_matches(k, ctx.keys(TICKETS), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use search_tickets to find ticket keys"
        raise NotFound(f"ticket {k} not found{hint}")
    return t


def _project(ctx: ToolContext, key: str) -> Project:
    k = key.strip().upper()
    p = ctx.get(PROJECTS, k)
    if p is None:
        known = ctx.keys(PROJECTS)
        raise NotFound(f"project {key!r} not found; projects: {', '.join(known) if known else 'none'}")
    return p


def _person(ctx: ToolContext, value: str, what: str, directory_only: bool = True) -> str:
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


def _people(ctx: ToolContext, values: list[str], what: str) -> list[str]:
    if len(values) > MAX_WATCHERS:
        raise InvalidArgument(f"{what} has {len(values)} entries; at most {MAX_WATCHERS} are allowed")
    return list(dict.fromkeys(_person(ctx, v, f"{what}[{i}]") for i, v in enumerate(values)))


def _text_field(value: str, what: str) -> str:
    text = clean_text(value, what, MAX_FIELD)
    if "\n" in text or "\r" in text:
        raise InvalidArgument(f"{what} must be one line")
    return " ".join(text.split())


def _account(ctx: ToolContext, value: str) -> str | None:
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


def _priority(value: str) -> str | None:
    return None if value == UNSET else value


def _labels(values: list[str], what: str) -> list[str]:
    if len(values) > MAX_LABELS:
        raise InvalidArgument(f"{what} has {len(values)} entries; at most {MAX_LABELS} are allowed")
    out: list[str] = []
    for v in values:
        x = as_argument(_label, v)
        if x not in out:
            out.append(x)
    return out


def _due(value: str, what: str = "due_date") -> date | None:
    """A date from YYYY-MM-DD text; an empty string means no due date."""
    return iso_date(value, what, "2026-03-20")


# --- output ---------------------------------------------------------------------------------------


def _summary(t: Ticket) -> dict[str, Any]:
    return {"key": t.key, "title": t.title, "status": t.status, "priority": t.priority, "assignee": t.assignee,
            "department": t.department, "category": t.category, "account": t.account, "customer": t.customer,
            "labels": list(t.labels),
            "due_date": t.due_date.isoformat() if t.due_date else None}


def ticket_json(t: Ticket, project: Project | None) -> dict[str, Any]:
    """A ticket with all its fields and the statuses it may move to next."""
    out = t.model_dump(mode="json")
    out["allowed_transitions"] = list(project.workflow.get(t.status, [])) if project else []
    return out


def _line(d: dict[str, Any]) -> str:
    who = d["assignee"] or "unassigned"
    due = f", due {d['due_date']}" if d.get("due_date") else ""
    return f"{d['key']} [{d['status']}] ({d['priority'] or UNSET}) {d['title']} - {who}{due}"


def _reporter(d: dict[str, Any]) -> str:
    if d["reporter_name"] and d["reporter"]:
        return f"{d['reporter_name']} <{d['reporter']}>"
    return d["reporter_name"] or d["reporter"] or "unknown"


_render_search = render_list("tickets", _line, "No tickets match.")


def _render_ticket(data: dict) -> str:
    d = data["ticket"] if "ticket" in data else data
    lines = [_line(d), f"Reporter: {_reporter(d)}; labels: {', '.join(d['labels']) or 'none'}"]
    where = [f"{k.capitalize()}: {d[k]}" for k in ("department", "category", "customer") if d[k]]
    if d.get("account"):
        where.append(f"CRM account: {d['account']}")
    if d["watchers"]:
        where.append(f"Watchers: {', '.join(d['watchers'])}")
    if where:
        lines.append("; ".join(where))
    if d["description"]:
        lines.append(d["description"])
    lines += [f"Link: {x['type']} {x['target']}" for x in d["links"]]
    lines += [f"Comment {c['id']} by {c['author']} ({c['created']}): {c['body']}" for c in d["comments"]]
    lines.append(f"Can move to: {', '.join(d['allowed_transitions']) or 'nothing (final status)'}")
    return "\n".join(lines)


# --- search ---------------------------------------------------------------------------------------

FILTERS = ("project", "status", "assignee", "reporter", "priority", "label", "department", "category", "account",
           "customer", "is")
_COMPARE = re.compile(r"^(>=|<=|>|<)?\s*([a-z]+)$")


_TOKEN = re.compile(r'\s*(?:([A-Za-z]+):(?:"([^"]*)"|(\S*))|"([^"]*)"|(\S+))')


def parse_query(query: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Split a search query into (filter, value) pairs and lower-cased free-text terms.

    Filters are `name:value` or `name:"quoted value"` with the names in FILTERS; `is:` takes open,
    done, unassigned or overdue; `priority:` takes a level, `unset`, or a comparison such as `>=high`.
    Everything else is a word or "quoted phrase" that must appear.
    """
    if query.count('"') % 2:
        raise InvalidArgument(f"query {query!r} has an unbalanced quote; close every \" you open")
    filters: list[tuple[str, str]] = []
    words: list[str] = []
    for m in _TOKEN.finditer(query):
        name, quoted, bare, phrase, word = m.groups()
        if name is not None:
            if name.lower() not in FILTERS:
                raise InvalidArgument(f"unknown filter {name}: in query; use {', '.join(f + ':' for f in FILTERS)} "
                                      "or put text containing ':' in quotes")
            value = quoted if quoted is not None else bare
            if not value or not value.strip():
                raise InvalidArgument(f"filter {name}: has no value (write e.g. {name}:value)")
            filters.append((name.lower(), value))
        elif (phrase or word or "").strip():
            words.append(" ".join((phrase or word or "").split()).lower())
    return filters, words


def _priority_test(value: str) -> Any:
    """A test on a ticket's priority from `high`, `unset`/`none` or a comparison such as `>=high`."""
    v = "".join(value.split()).lower()
    if v in (UNSET, "none"):
        return lambda p: p is None
    m = _COMPARE.match(v)
    if m is None or m.group(2) not in PRIORITIES:
        raise InvalidArgument(f"priority {value!r} is not one of {', '.join(PRIORITIES)} or unset; compare with "
                              f">=, >, <=, < (e.g. priority:>=high), lowest < ... < critical")
    op, rank = m.group(1), PRIORITIES.index(m.group(2))
    if op is None:
        return lambda p: p == m.group(2)
    cmp = {">=": rank.__le__, ">": rank.__lt__, "<=": rank.__ge__, "<": rank.__gt__}[op]
    return lambda p: p is not None and cmp(priority_rank(p))


def _person_test(ctx: ToolContext, name: str, value: str) -> Any:
    """A test on a ticket's assignee or reporter: me, none, an address, or a name (for reporters also the
    free-text reporter name, e.g. reporter:acme)."""
    v = value.strip().lower()
    if v in ("none", "unassigned"):
        return lambda t: getattr(t, name) is None
    if v == "me":
        return lambda t: getattr(t, name) == ctx.user
    if name == "reporter" and "@" not in v:
        words = fold(v).split()
        named = {p.email for p in _directory_named(ctx, v)}
        return lambda t: t.reporter in named or all(w in fold(t.reporter_name) for w in words)
    who = resolve_address(ctx, value, name)
    return lambda t: getattr(t, name) == who


def _directory_named(ctx: ToolContext, text: str) -> list[Any]:
    if not ctx.has_service("contacts"):
        return []
    words = fold(text).split()
    return [p for p in ctx.values(PEOPLE) if words and set(words) <= set(fold(p.name).split())]


def _filter(ctx: ToolContext, name: str, value: str, projects: dict[str, Project]) -> Any:
    """The test `name:value` puts on a ticket (values are checked once, before any ticket is seen)."""
    v = value.strip().lower()
    if name == "project":
        if value.strip().upper() not in projects:
            _project(ctx, value)
        return lambda t: t.project.lower() == v
    if name == "status":
        return lambda t: t.status.lower() == " ".join(v.split())
    if name in ("assignee", "reporter"):
        return _person_test(ctx, name, value)
    if name == "priority":
        test = _priority_test(value)
        return lambda t: test(t.priority)
    if name == "label":
        return lambda t: v in (x.lower() for x in t.labels)
    if name in ("department", "category"):
        folded = " ".join(fold(value).split())
        return lambda t: fold(getattr(t, name)) == folded
    if name == "account":
        if v == "none":
            return lambda t: t.account is None
        acct = _account(ctx, value)
        return lambda t: t.account == acct
    if name == "customer":  # words of the outside customer, or of the linked account's name
        words = fold(value).split()
        names = {a.id: fold(a.name) for a in ctx.values(ACCOUNTS)} if ctx.has_service("crm") else {}
        return lambda t: all(w in fold(t.customer) + " " + names.get(t.account or "", "") for w in words)

    def done(t: Ticket) -> bool:
        p = projects.get(t.project)
        return t.status in (p.done_statuses or []) if p else False

    if v == "open":
        return lambda t: not done(t)
    if v == "done":
        return done
    if v == "unassigned":
        return lambda t: t.assignee is None
    if v == "overdue":
        return lambda t: not done(t) and t.due_date is not None and t.due_date < ctx.now.date()
    raise InvalidArgument(f"is:{value} is not supported; use is:open, is:done, is:unassigned or is:overdue")


def _sort_key(by: str) -> Any:
    if by == "priority":  # highest first, unset last
        return lambda t: (-priority_rank(t.priority), ticket_number(t.key))
    if by == "due_date":  # soonest first, none last
        return lambda t: (t.due_date is None, t.due_date or date.min, ticket_number(t.key))
    if by == "updated":  # most recent first
        return lambda t: (-(t.updated.timestamp() if t.updated else 0), ticket_number(t.key))
    return lambda t: ticket_number(t.key)


@SERVICE.tool(read_only=True, render=_render_search)
def search_tickets(
    ctx: ToolContext, query: str = "", project: str | None = None, status: str | None = None,
    assignee: str | None = None, priority: PriorityArg | None = None, min_priority: Priority | None = None,
    label: str | None = None, department: str | None = None, category: str | None = None,
    account: str | None = None, customer: str | None = None, sort: SortBy = "key", limit: int = 20, offset: int = 0,
) -> dict:
    """Search tickets by text and filters, ordered by project and number unless sorted otherwise. The query may mix
    words or "quoted phrases" (matched in key, title, description, reporter name, department, category, labels and
    comments) with filters project:OPS, status:"In Progress", assignee:me (or an email, a directory name, or none),
    reporter: (an email, me, or words of the reporter's name), priority:high (or unset, or a comparison such as
    priority:>=high on the scale lowest < low < medium < high < highest < urgent < critical), label:, department:,
    category:, account: (a CRM account id or name, or none), customer: (words of the customer), is:open, is:done,
    is:unassigned, is:overdue.

    Args:
        query: Text and filters, e.g. 'login error assignee:me is:open priority:>=high'.
        project: Only tickets of this project key.
        status: Only tickets in this status (case-insensitive).
        assignee: Only tickets assigned to this person: an email, a name from the directory, 'me' for you, 'none' for
            unassigned.
        priority: Only tickets of exactly this priority ('unset' for tickets without one).
        min_priority: Only tickets of this priority or higher (unset ones are left out).
        label: Only tickets with this label.
        department: Only tickets of this department (case-insensitive).
        category: Only tickets of this category (case-insensitive).
        account: Only tickets linked to this CRM account (id or exact name; 'none' for tickets without one).
        customer: Only tickets whose customer (free text, or the linked account's name) has these words.
        sort: Order: key (project and number), priority (highest first, unset last), due_date (soonest first, none
            last) or updated (most recent first).
        limit: Maximum number of tickets to return (1-100).
        offset: Number of matching tickets to skip (for paging).
    """
    if not 1 <= limit <= 100:
        raise InvalidArgument("limit must be between 1 and 100")
    if offset < 0:
        raise InvalidArgument("offset must be zero or positive")
    if len(query) > 1000:
        raise InvalidArgument("query is longer than 1000 characters")
    filters, words = parse_query(query)
    for name, value in (("project", project), ("status", status), ("assignee", assignee),
                        ("priority", priority), ("priority", f">={min_priority}" if min_priority else None),
                        ("label", label), ("department", department), ("category", category),
                        ("account", account), ("customer", customer)):
        if value is not None:
            filters.append((name, value))
    projects = {p.key: p for p in ctx.values(PROJECTS)}
    tests = [_filter(ctx, n, v, projects) for n, v in filters]
    hits = []
    for t in ctx.values(TICKETS):
        if not all(test(t) for test in tests):
            continue
        hay = " ".join([t.key, t.title, t.description, t.reporter_name, t.department, t.category, t.customer, *t.labels,
                        *(c.body for c in t.comments)]).lower()
        if all(w in hay for w in words):
            hits.append(t)
    hits.sort(key=_sort_key(sort))
    page = hits[offset:offset + limit]
    return {"total": len(hits), "offset": offset, "limit": limit, "tickets": [_summary(t) for t in page]}


# --- tools ----------------------------------------------------------------------------------------


@SERVICE.tool(read_only=True, render=_render_ticket)
def get_ticket(ctx: ToolContext, key: str) -> dict:
    """Get a ticket with all its fields, comments and links, and the statuses it may move to next.

    Args:
        key: The ticket key, e.g. OPS-12.
    """
    t = _ticket(ctx, key)
    return ticket_json(t, ctx.get(PROJECTS, t.project))


@SERVICE.tool(render=_render_ticket)
def create_ticket(
    ctx: ToolContext, project: str, title: str, description: str = "", priority: PriorityArg = "medium",
    assignee: str | None = None, labels: list[str] = [], due_date: str = "", department: str = "", category: str = "",
    reporter: str | None = None, reporter_name: str = "", watchers: list[str] = [], account: str = "",
    customer: str = "",
) -> dict:
    """Create a ticket in a project; it gets the next key (e.g. OPS-13) and the project's initial status. You are the
    reporter unless the ticket is filed for someone else, e.g. an outside customer known only by name
    (reporter_name="Priya from Acme Corp"). People may be named by e-mail address or by a name from the directory.

    Args:
        project: Key of the project, e.g. OPS.
        title: One-line summary.
        description: Details.
        priority: lowest, low, medium, high, highest, urgent or critical (in rising order), or unset.
        assignee: Who works on it: an email or a name from the directory ('me' for you); unassigned if omitted.
        labels: Labels (single words).
        due_date: Due date as YYYY-MM-DD; empty for none.
        department: The department the ticket belongs to, e.g. Billing.
        category: Its category, e.g. Refund request.
        reporter: Who reported it: an email (outside addresses are fine) or a directory name; default you, or nobody
            when only reporter_name is given.
        reporter_name: The reporter as free text when they are not in the directory, e.g. 'Priya from Acme Corp'.
        watchers: People to keep informed (emails or directory names).
        account: The customer's CRM account (id or exact name), if the ticket is about one.
        customer: The customer organisation as free text when it is not a CRM account, e.g. 'Acme Corp'.
    """
    p = _project(ctx, project)
    t_title = clean_text(title, "title", MAX_TITLE, required=True)
    name = _text_field(reporter_name, "reporter_name")
    if reporter is not None:
        who = _person(ctx, reporter, "reporter", directory_only=False)
    else:
        who = None if name else ctx.user
    if p.key_format == "prefixed":
        numbers = [ticket_number(k)[1] for k in ctx.keys(TICKETS) if k.startswith(p.key + "-")]
        key = f"{p.key}-{max(numbers, default=0) + 1}"
    else:  # one sequence over every numbered ticket, as a help desk numbers them
        numbers = [ticket_number(k)[1] for k in ctx.keys(TICKETS) if not ticket_number(k)[0]]
        key = ("#" if p.key_format == "hash" else "") + str(max(numbers, default=0) + 1)
    t = Ticket(key=key, project=p.key, title=t_title, description=clean_text(description, "description", MAX_TEXT),
               status=p.initial_status, priority=_priority(priority),
               assignee=_person(ctx, assignee, "assignee") if assignee is not None else None,
               reporter=who, reporter_name=name, department=_text_field(department, "department"),
               category=_text_field(category, "category"), watchers=_people(ctx, watchers, "watchers"),
               labels=_labels(labels, "labels"), due_date=_due(due_date), account=_account(ctx, account),
               customer=_text_field(customer, "customer"), created=ctx.now, updated=ctx.now)
    ctx.put(TICKETS, t)
    return {"ticket": ticket_json(t, p)}


@SERVICE.tool(render=_render_ticket)
def update_ticket(
    ctx: ToolContext, key: str, title: str | None = None, description: str | None = None,
    priority: PriorityArg | None = None, labels: list[str] | None = None, add_labels: list[str] = [],
    remove_labels: list[str] = [], due_date: str | None = None, department: str | None = None,
    category: str | None = None, reporter: str | None = None, reporter_name: str | None = None,
    add_watchers: list[str] = [], remove_watchers: list[str] = [], account: str | None = None,
    customer: str | None = None,
) -> dict:
    """Change a ticket's fields; only those given change. Use transition_ticket for the status and assign_ticket for the
    assignee.

    Args:
        key: The ticket key, e.g. OPS-12.
        title: New one-line summary.
        description: New details (replaces the old text).
        priority: New priority: lowest, low, medium, high, highest, urgent or critical, or unset to clear it.
        labels: The complete new list of labels (replaces the old one).
        add_labels: Labels to add.
        remove_labels: Labels to remove.
        due_date: New due date as YYYY-MM-DD; an empty string removes it.
        department: New department; an empty string clears it.
        category: New category; an empty string clears it.
        reporter: New reporter: an email or a directory name; an empty string leaves the ticket without one.
        reporter_name: New free-text reporter name, e.g. 'Priya from Acme Corp'; an empty string clears it.
        add_watchers: People to add as watchers (emails or directory names).
        remove_watchers: Watchers to remove.
        account: The customer's CRM account (id or exact name); an empty string unlinks it.
        customer: The customer organisation as free text; an empty string clears it.
    """
    t = _ticket(ctx, key)
    given = (title, description, priority, labels, due_date, department, category, reporter, reporter_name, account,
             customer)
    if all(v is None for v in given) and not (add_labels or remove_labels or add_watchers or remove_watchers):
        raise InvalidArgument("nothing to change; give at least one field such as title, priority or labels")
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = clean_text(title, "title", MAX_TITLE, required=True)
    if description is not None:
        changes["description"] = clean_text(description, "description", MAX_TEXT)
    if priority is not None:
        changes["priority"] = _priority(priority)
    if due_date is not None:
        changes["due_date"] = _due(due_date)
    if account is not None:
        changes["account"] = _account(ctx, account)
    for field, value in (("department", department), ("category", category), ("reporter_name", reporter_name),
                         ("customer", customer)):
        if value is not None:
            changes[field] = _text_field(value, field)
    if reporter is not None:
        changes["reporter"] = _person(ctx, reporter, "reporter", directory_only=False) if reporter.strip() else None
    new_labels = _labels(labels, "labels") if labels is not None else list(t.labels)
    new_labels += [x for x in _labels(add_labels, "add_labels") if x not in new_labels]
    gone = _labels(remove_labels, "remove_labels")
    missing = [x for x in gone if x not in new_labels]
    if missing:
        raise InvalidArgument(
            f"{t.key} has no label {', '.join(missing)}; its labels are {', '.join(new_labels) or 'none'}")
    changes["labels"] = [x for x in new_labels if x not in gone]
    watchers = list(t.watchers) + [x for x in _people(ctx, add_watchers, "add_watchers") if x not in t.watchers]
    unwatch = [_person(ctx, v, f"remove_watchers[{i}]", directory_only=False) for i, v in enumerate(remove_watchers)]
    missing = [x for x in unwatch if x not in watchers]
    if missing:
        raise InvalidArgument(f"{', '.join(missing)} not watching {t.key}; its watchers are "
                              f"{', '.join(watchers) or 'none'}")
    if len(watchers) > MAX_WATCHERS:
        raise InvalidArgument(f"a ticket may have at most {MAX_WATCHERS} watchers")
    changes["watchers"] = [x for x in watchers if x not in unwatch]
    t, changed = ctx.update(TICKETS, t, changes, updated=ctx.now)
    return {"ticket": ticket_json(t, ctx.get(PROJECTS, t.project)), "changed": changed}


def _comment(ctx: ToolContext, body: str) -> Comment:
    return Comment(id=ctx.new_id("cmt"), author=ctx.user, body=clean_text(body, "comment", MAX_TEXT, required=True),
                   created=ctx.now)


@SERVICE.tool(render=_render_ticket)
def transition_ticket(ctx: ToolContext, key: str, status: str, comment: str | None = None) -> dict:
    """Move a ticket to another status of its project's workflow, optionally adding a comment in the same step; moves
    the workflow does not allow are refused with the allowed ones listed.

    Args:
        key: The ticket key, e.g. OPS-12.
        status: The status to move to, e.g. In Progress or Resolved (case-insensitive).
        comment: A comment to add with the move, e.g. how it was resolved.
    """
    t = _ticket(ctx, key)
    p = _project(ctx, t.project)
    allowed = p.workflow.get(t.status, [])
    onward = ", ".join(allowed) or "nothing"
    target = p.status_named(status)
    if target is None:
        raise InvalidArgument(f"{status!r} is not a status of project {p.key}; its statuses are "
                              f"{', '.join(p.statuses())}. From {t.status} it can move to {onward}")
    if target == t.status:
        raise InvalidArgument(f"{t.key} is already {t.status}; from there it can move to {onward}")
    if target not in allowed:
        raise InvalidArgument(f"{t.key} cannot move from {t.status} to {target}; "
                              f"allowed from {t.status}: {', '.join(allowed) or 'nothing (final status)'}")
    comments = [*t.comments, _comment(ctx, comment)] if comment is not None else list(t.comments)
    t = t.evolve(status=target, comments=comments, updated=ctx.now)
    ctx.put(TICKETS, t)
    return {"ticket": ticket_json(t, p)}


@SERVICE.tool()
def add_comment(ctx: ToolContext, key: str, body: str) -> dict:
    """Add a comment to a ticket, written as you.

    Args:
        key: The ticket key, e.g. OPS-12.
        body: The text of the comment.
    """
    t = _ticket(ctx, key)
    c = _comment(ctx, body)
    ctx.put(TICKETS, t.evolve(comments=[*t.comments, c], updated=ctx.now))
    return {"key": t.key, "comment": c.model_dump(mode="json")}


@SERVICE.tool(idempotent=True, render=_render_ticket)
def assign_ticket(ctx: ToolContext, key: str, assignee: str | None) -> dict:
    """Assign a ticket to a person, or unassign it with null. With the contacts service the person must be in the
    directory, and may be named by a name from it (an ambiguous name is refused with the candidates listed).

    Args:
        key: The ticket key, e.g. OPS-12.
        assignee: The new assignee: an email or a name from the directory ('me' for you), or null to unassign.
    """
    t = _ticket(ctx, key)
    who = _person(ctx, assignee, "assignee") if assignee is not None else None
    if who != t.assignee:
        t = t.evolve(assignee=who, updated=ctx.now)
        ctx.put(TICKETS, t)
    return {"ticket": ticket_json(t, ctx.get(PROJECTS, t.project))}


@SERVICE.tool(idempotent=True)
def link_tickets(ctx: ToolContext, key: str, type: LinkType, target: str) -> dict:
    """Link two tickets; the reverse link is added to the target (A blocks B also records B is_blocked_by A).

    Args:
        key: The ticket the link starts from, e.g. OPS-12.
        type: blocks, is_blocked_by, relates_to, duplicates or is_duplicated_by.
        target: The other ticket's key, e.g. OPS-7.
    """
    a = _ticket(ctx, key)
    b = _ticket(ctx, target)
    if a.key == b.key:
        raise InvalidArgument(f"a ticket cannot be linked to itself ({a.key})")
    forward, back = Link(type=type, target=b.key), Link(type=INVERSE[type], target=a.key)  # type: ignore[arg-type]
    created = forward not in a.links
    if created:
        ctx.put(TICKETS, a.evolve(links=[*a.links, forward], updated=ctx.now))
    if back not in b.links:
        ctx.put(TICKETS, b.evolve(links=[*b.links, back], updated=ctx.now))
    return {"key": a.key, "type": type, "target": b.key, "created": created}
