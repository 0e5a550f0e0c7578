"""The mail tests' shared world: a user's mailbox with colleagues' and an outside sender's mail, a colleague's own
mailbox, files for attachments and a directory entry, and helpers that call tools and read the messages."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from support import call_error

from workspace_sim import Workspace, WorkspaceConfig

ME, ALICE, BOB, EXT = "me@corp.com", "alice@corp.com", "bob@corp.com", "partner@vendor.org"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def msg(id: str, owner: str = ME, **kw: Any) -> dict:
    row = {"id": id, "owner": owner, "sender": ALICE, "to": [ME], "subject": id, "body": "", "date": "2026-03-01T10:00:00+00:00"}
    row.update(kw)
    return row


MESSAGES = [
    msg("m-budget", subject="Q1 budget review", body="Please review the Q1 budget before Friday.\nThanks, Alice",
        cc=[BOB], date="2026-02-27T16:30:00+00:00", attachments=["/reports/q1.xlsx"], labels=["finance"]),
    msg("m-lunch", sender=BOB, to=[ME, ALICE], subject="Lunch on Thursday?", body="Pizza or sushi?",
        date="2026-03-01T11:00:00+00:00", read=True),
    msg("m-vendor", sender=EXT, subject="Invoice 4471", body="Invoice attached, due in 30 days.",
        date="2026-02-20T08:00:00+00:00", attachments=["/reports/invoice.pdf"], folder="archive", read=True),
    msg("m-old", sender=BOB, subject="Old newsletter", body="Unsubscribe", date="2026-01-05T08:00:00+00:00",
        folder="trash", read=True),
    msg("m-sent", sender=ME, to=[ALICE], cc=[EXT], subject="Roadmap draft", body="Here is the roadmap.",
        date="2026-02-28T09:00:00+00:00", folder="sent", read=True),
    msg("d-1", sender=ME, to=[BOB], subject="Half-written", body="Hi Bob,", folder="drafts", read=True),
    # Alice's own mailbox: her copy of the budget mail, and a private one
    msg("a-budget", owner=ALICE, sender=ALICE, to=[ME], cc=[BOB], subject="Q1 budget review", folder="sent",
        message_id="m-budget", thread_id="m-budget", date="2026-02-27T16:30:00+00:00", read=True),
    msg("a-private", owner=ALICE, sender=BOB, to=[ALICE], subject="Salary review", body="Confidential"),
]
DATA = {
    "mail": {"accounts": [{"email": ME, "name": "Morgan Lee"}, {"email": ALICE, "name": "Alice Wong"},
                          {"email": BOB, "name": "Bob Stone"}],
             "messages": MESSAGES},
    "files": {"files": [{"path": "/reports/q1.xlsx", "content": "q1"}, {"path": "/reports/invoice.pdf", "content": "inv"},
                        {"path": "/notes/plan.md", "content": "plan"}]},
    "contacts": {"people": [{"email": "carol.diaz@corp.com", "name": "Carol Diaz", "title": "Counsel"}]},
}


def make(**cfg: Any) -> Workspace:
    config = {"services": ["files", "mail", "contacts"], "user": ME, "now": T0} | cfg
    return Workspace.create(WorkspaceConfig(**config), DATA)


def ok(ws: Workspace, tool: str, args: dict) -> Any:
    r = ws.call(tool, args)
    assert r.ok, r.text
    return r.data


err = call_error


def ids(ws: Workspace, query: str = "", **args: Any) -> list[str]:
    return [m["id"] for m in ok(ws, "search_emails", {"query": query, **args})["messages"]]


def rec(ws: Workspace, mid: str) -> Any:
    return ws.table("mail.messages")[mid]


def copies(ws: Workspace, owner: str, message_id: str) -> list[Any]:
    return [m for m in ws.table("mail.messages").values() if m.owner == owner and m.message_id == message_id]
