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

The folder: `records.py` holds the records, the key forms and the priority scale, the start-data check (`prepare`)
and `SERVICE` with its table handles. The tools are in two tool modules: `search.py` the search tool, `tools.py` the
rest (get, create, update, transition, comment, assign, link). `lookups.py` holds the lookups and argument checks
they share, `views.py` the JSON and text renderings, `syntax.py` the search query language.
"""

from __future__ import annotations

from .records import (
    PROJECTS, TICKETS, ACCOUNTS, Priority, PRIORITIES, UNSET, PriorityArg, SortBy, LinkType, INVERSE,
    DEFAULT_WORKFLOW, DONE_NAMES, MAX_TITLE, MAX_TEXT, MAX_LABELS, MAX_FIELD, MAX_WATCHERS, PROJECT_KEY, TICKET_KEY,
    KeyFormat, KEY_HELP, label_word, priority_rank, ticket_number, key_format, Project, Comment, Link, Ticket,
    SERVICE, prepare,
)
from .lookups import (
    ticket_named, project_named, person_address, people_addresses, field_text, account_id_of, priority_arg,
    label_list, due_arg,
)
from .views import (
    ticket_summary, ticket_json, ticket_line, reporter_text, render_search, render_ticket,
)
from .syntax import FILTERS, parse_query, priority_test
from .search import search_tickets
from .tools import (
    get_ticket, create_ticket, update_ticket, transition_ticket, add_comment, assign_ticket, link_tickets,
)

SERVICE.add_tools(
    search_tickets, get_ticket, create_ticket, update_ticket, transition_ticket,
    add_comment, assign_ticket, link_tickets,
)

__all__ = [
    "SERVICE", "prepare", "PROJECTS", "TICKETS", "ACCOUNTS", "Priority", "PRIORITIES", "UNSET", "PriorityArg",
    "SortBy", "LinkType", "INVERSE", "DEFAULT_WORKFLOW", "DONE_NAMES", "MAX_TITLE", "MAX_TEXT", "MAX_LABELS",
    "MAX_FIELD", "MAX_WATCHERS", "PROJECT_KEY", "TICKET_KEY", "KeyFormat", "KEY_HELP", "label_word", "priority_rank",
    "ticket_number", "key_format", "Project", "Comment", "Link", "Ticket", "ticket_named", "project_named",
    "person_address", "people_addresses", "field_text", "account_id_of", "priority_arg", "label_list", "due_arg",
    "ticket_summary", "ticket_json", "ticket_line", "reporter_text", "render_search", "render_ticket", "FILTERS",
    "parse_query", "priority_test", "search_tickets", "get_ticket", "create_ticket", "update_ticket",
    "transition_ticket", "add_comment", "assign_ticket", "link_tickets",
]
