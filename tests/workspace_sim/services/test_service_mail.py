"""Behaviour and errors of every mail tool: search syntax, reading, sending and delivery, threading,
drafts, organising, mailbox isolation, recipients named by name, and senders that are nobody (the
invariants are in test_service_mail_invariants.py)."""

from __future__ import annotations

import pytest

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.predicates import evaluate, parse_predicates

from mail_data import ALICE, BOB, DATA, EXT, ME, MESSAGES, T0, copies, err, ids, make, msg, ok, rec


@pytest.fixture
def ws() -> Workspace:
    return make()


# --- records and loading -------------------------------------------------------------------------


def test_loading_normalises_and_fills_defaults() -> None:
    ws = Workspace.create(WorkspaceConfig(services=["mail"], user="Me@Corp.com"), {"mail": {"messages": [
        {"id": "x", "owner": " ME@corp.com", "sender": "Alice@Corp.com", "to": ["me@corp.com", "ME@corp.com"],
         "folder": "INBOX", "labels": ["Urgent", "urgent", " work "], "attachments": ["a//b/../c.txt"],
         "date": "2026-03-01T10:00:00+01:00"}]}})
    m = rec(ws, "x")
    assert (m.owner, m.sender, m.to, m.folder) == (ME, ALICE, [ME], "inbox")
    assert (m.thread_id, m.message_id, m.labels, m.attachments) == ("x", "x", ["Urgent", "work"], ["/a/c.txt"])
    assert list(ws.table("mail.accounts")) == [ME]  # the user's mailbox is created


@pytest.mark.parametrize("row,words", [
    (msg("x", date="2026-03-01T10:00:00"), "time zone offset"),
    (msg("x", subject="two\nlines"), "one line"),
    (msg("x", folder="  "), "folder name"),
    (msg("x", to=["not an address"]), "e-mail address"),
    (msg("x", attachments=["../../etc/passwd"]), "escapes"),
    (msg(""), "at least 1 character"),
    (msg("x", labels=["a\tb"]), "control characters"),
])
def test_malformed_messages_are_refused_with_their_path(row: dict, words: str) -> None:
    with pytest.raises(SpecError) as e:
        Workspace.create(WorkspaceConfig(services=["mail"], user=ME), {"mail": {"messages": [row]}})
    assert "data.mail.messages[0]" in str(e.value) and words in str(e.value)


def test_messages_need_an_owner_account_and_the_user_an_address() -> None:
    with pytest.raises(SpecError, match=r"messages\[id=x\]\.owner.*zed@corp.com has no mail account"):
        Workspace.create(WorkspaceConfig(services=["mail"], user=ME), {"mail": {"messages": [msg("x", owner="zed@corp.com")]}})
    with pytest.raises(SpecError, match="config.user"):
        Workspace.create(WorkspaceConfig(services=["mail"], user="nobody"), {})


# --- search_emails -------------------------------------------------------------------------------


def test_search_lists_own_mailbox_newest_first_without_trash(ws: Workspace) -> None:
    assert ids(ws) == ["m-lunch", "d-1", "m-sent", "m-budget", "m-vendor"]
    first = ok(ws, "search_emails", {"max_results": 1})["messages"][0]
    assert first == {"id": "m-lunch", "thread_id": "m-lunch", "folder": "inbox", "from": BOB, "from_name": "Bob Stone",
                     "to": [ME, ALICE], "subject": "Lunch on Thursday?", "date": "2026-03-01T11:00:00+00:00",
                     "snippet": "Pizza or sushi?", "unread": False, "labels": [], "attachments": 0}


@pytest.mark.parametrize("query,expected", [
    ("from:alice", ["m-budget"]),
    ("from:bob stone", ["m-lunch"]),  # 'stone' is a free word; display names are part of the text
    ('from:"bob stone"', ["m-lunch"]),
    ("to:alice", ["m-lunch", "m-sent"]),
    ("cc:bob", ["m-budget"]),
    (f"cc:{EXT}", ["m-sent"]),
    ("subject:budget", ["m-budget"]),
    ('subject:"lunch on"', ["m-lunch"]),
    ("is:unread", ["m-budget"]),
    ("is:read", ["m-lunch", "d-1", "m-sent", "m-vendor"]),
    ("has:attachment", ["m-budget", "m-vendor"]),
    ("label:FINANCE", ["m-budget"]),
    ("in:archive", ["m-vendor"]),
    ("in:trash", ["m-old"]),
    ("in:anywhere from:bob", ["m-lunch", "m-old"]),
    ("after:2026-02-28", ["m-lunch", "d-1", "m-sent"]),
    ("before:2026-02-28", ["m-budget", "m-vendor"]),
    ("after:2026/02/25 before:2026-03-01", ["m-sent", "m-budget"]),
    ("filename:invoice", ["m-vendor"]),
    ("thread:m-budget", ["m-budget"]),
    ('"review the q1"', ["m-budget"]),
    ("pizza SUSHI", ["m-lunch"]),
    ("invoice -in:archive", []),
    ("-from:alice -is:read", []),
    ("roadmap AND here", ["m-sent"]),
    ("vendor.org", ["m-sent", "m-vendor"]),
    ("q1.xlsx", ["m-budget"]),
    ("wong", ["m-lunch", "m-sent", "m-budget"]),  # display names are searchable
])
def test_search_operators(ws: Workspace, query: str, expected: list[str]) -> None:
    assert ids(ws, query) == expected


def test_search_folder_argument_and_paging(ws: Workspace) -> None:
    assert ids(ws, folder="Sent") == ["m-sent"]
    assert ids(ws, "is:read", folder="drafts") == ["d-1"]
    page = ok(ws, "search_emails", {"max_results": 2, "offset": 2})
    assert [m["id"] for m in page["messages"]] == ["m-sent", "m-budget"] and page["total"] == 5
    text = ws.call("search_emails", {"max_results": 2, "offset": 2}).text
    assert text.startswith("Messages 3-4 of 5, newest first:") and "More: call again with offset=4." in text
    assert ids(ws, offset=50) == []
    assert "offset is past the end" in ws.call("search_emails", {"offset": 50}).text


def test_search_render_is_compact(ws: Workspace) -> None:
    text = ws.call("search_emails", {"query": "budget"}).text
    assert text.splitlines() == [
        "Messages 1-1 of 1, newest first:",
        '- m-budget  2026-02-27 16:30  Alice Wong <alice@corp.com>  "Q1 budget review"  '
        "(inbox, unread, label finance, 1 attachment(s))",
        "    Please review the Q1 budget before Friday. Thanks, Alice",
    ]


def test_search_dates_use_the_workspace_time_zone() -> None:
    ws = make(timezone="Asia/Tokyo")  # 2026-02-27 16:30 UTC is 2026-02-28 01:30 in Tokyo
    assert "m-budget" in ids(ws, "after:2026-02-28")
    assert ok(ws, "search_emails", {"query": "budget"})["messages"][0]["date"] == "2026-02-28T01:30:00+09:00"


@pytest.mark.parametrize("query,words", [
    ("fron:alice", "unknown operator 'fron:'; did you mean from:?"),
    ("re:budget", "put it in double quotes"),
    ('"unclosed phrase', "never closed"),
    ('subject:"', "never closed"),
    ('""', "empty quoted phrase"),
    ("from:", "from: needs a value"),
    ("after:yesterday", "not a valid date; use YYYY-MM-DD"),
    ("before:2026-02-30", "not a valid date"),
    ("is:important", "use one of is:read, is:unread, is:starred"),
    ("has:link", "use has:attachment"),
    ("budget OR lunch", "OR is not supported"),
    ("(budget lunch)", "grouping"),
    ("in:Projects", "no folder named 'Projects'; your folders: inbox, sent, drafts, archive, trash"),
])
def test_malformed_queries_are_clear_errors(ws: Workspace, query: str, words: str) -> None:
    message = err(ws, "search_emails", {"query": query})
    assert message.startswith("invalid_argument") or message.startswith("not_found")
    assert words in message


def test_search_argument_errors(ws: Workspace) -> None:
    assert "no folder named 'Nope'" in err(ws, "search_emails", {"folder": "Nope"})
    assert "folder name" in err(ws, "search_emails", {"folder": ""})
    assert "less than or equal to 100" in err(ws, "search_emails", {"max_results": 1000})
    assert "greater than or equal to 0" in err(ws, "search_emails", {"offset": -1})


def test_list_mail_folders_counts(ws: Workspace) -> None:
    ok(ws, "move_email", {"id": "m-lunch", "folder": "Projects"})
    data = ok(ws, "list_mail_folders", {})
    assert data["folders"] == [
        {"name": "inbox", "total": 1, "unread": 1}, {"name": "sent", "total": 1, "unread": 0},
        {"name": "drafts", "total": 1, "unread": 0}, {"name": "archive", "total": 1, "unread": 0},
        {"name": "trash", "total": 1, "unread": 0}, {"name": "Projects", "total": 1, "unread": 0},
    ]
    assert data["labels"] == [{"name": "finance", "total": 1, "unread": 1}]
    assert "- Projects: 1 (0 unread)" in ws.call("list_mail_folders", {}).text


# --- read_email and isolation --------------------------------------------------------------------


def test_read_email_full_and_read_flag(ws: Workspace) -> None:
    r = ws.call("read_email", {"id": "m-budget"})
    assert r.ok and r.data["body"].startswith("Please review") and r.data["attachments"] == ["/reports/q1.xlsx"]
    assert r.data["cc"] == [BOB] and r.data["from_name"] == "Alice Wong" and r.data["read"] is False
    assert r.text.startswith("From: Alice Wong <alice@corp.com>\nTo: me@corp.com\nCc: bob@corp.com\n")
    assert "Attachments: /reports/q1.xlsx" in r.text and r.text.endswith("Thanks, Alice")
    assert not r.diff and rec(ws, "m-budget").read is False
    r = ws.call("read_email", {"id": "m-budget", "mark_read": True})
    assert r.data["read"] is True and rec(ws, "m-budget").read is True
    assert [c.fields for c in r.diff] == [{"read": (False, True)}]
    assert not ws.call("read_email", {"id": "m-budget", "mark_read": True}).diff


def test_read_email_not_found_suggests_own_ids_only(ws: Workspace) -> None:
    assert "did you mean m-budget?" in err(ws, "read_email", {"id": "m-budgte"})
    assert "use search_emails" in err(ws, "read_email", {"id": "zzz"})
    message = err(ws, "read_email", {"id": "a-privat"})
    assert "a-private" not in message


@pytest.mark.parametrize("tool,args", [
    ("read_email", {"id": "a-private"}), ("reply_email", {"id": "a-private", "body": "hi"}),
    ("forward_email", {"id": "a-private", "to": [EXT]}), ("move_email", {"id": "a-private", "folder": "archive"}),
    ("label_email", {"id": "a-private", "add": ["x"]}), ("mark_email_read", {"id": "a-private"}),
    ("delete_email", {"id": "a-private"}), ("update_draft", {"id": "a-private", "body": "x"}),
    ("send_draft", {"id": "a-private"}), ("create_draft", {"in_reply_to": "a-private"}),
])
def test_other_mailboxes_are_invisible(ws: Workspace, tool: str, args: dict) -> None:
    assert err(ws, tool, args) == "not_found: message 'a-private' not found in your mailbox; use search_emails to find message ids"


def test_search_never_shows_other_mailboxes(ws: Workspace) -> None:
    assert ids(ws, "in:anywhere salary") == [] and ids(ws, "in:anywhere confidential") == []
    assert all(m.owner == ME for m in ws.table("mail.messages").values() if m.id in ids(ws, "in:anywhere"))


# --- send_email and delivery ---------------------------------------------------------------------


def test_send_email_stores_sent_copy_and_delivers_internally(ws: Workspace) -> None:
    r = ws.call("send_email", {"to": ["Alice Wong <Alice@corp.com>", EXT], "cc": [BOB, ALICE], "bcc": ["carol.diaz@corp.com"],
                               "subject": "Plan", "body": "See attached.", "attachments": ["notes/plan.md"]})
    assert r.ok, r.text
    d = r.data
    assert (d["to"], d["cc"], d["bcc"]) == ([ALICE, EXT], [BOB], ["carol.diaz@corp.com"])
    assert d["delivered_internally"] == [ALICE, BOB] and d["external"] == [EXT, "carol.diaz@corp.com"]
    assert r.text == f'Sent {d["id"]} "Plan" to {ALICE}, {EXT}, cc {BOB}, bcc carol.diaz@corp.com with 1 attachment(s) (thread {d["id"]}).'
    sent = rec(ws, d["id"])
    assert (sent.owner, sent.folder, sent.read, sent.date, sent.attachments) == (ME, "sent", True, T0, ["/notes/plan.md"])
    added = [c.after for c in r.diff if c.kind == "added"]
    assert len(added) == 3 and all(c.kind == "added" for c in r.diff)
    for who in (ALICE, BOB):
        [copy] = copies(ws, who, d["id"])
        assert (copy.folder, copy.read, copy.thread_id, copy.sender, copy.bcc) == ("inbox", False, d["id"], ME, [])
        assert copy.id != d["id"] and copy.attachments == ["/notes/plan.md"]


def test_bcc_recipients_see_only_themselves() -> None:
    ws = make()
    d = ok(ws, "send_email", {"to": [ALICE], "bcc": [BOB], "subject": "s", "body": "b"})
    assert copies(ws, ALICE, d["id"])[0].bcc == [] and copies(ws, BOB, d["id"])[0].bcc == [BOB]
    assert rec(ws, d["id"]).bcc == [BOB]


def test_sending_to_yourself_lands_in_your_inbox(ws: Workspace) -> None:
    d = ok(ws, "send_email", {"to": [ME], "subject": "note to self", "body": "x"})
    assert sorted(m.folder for m in copies(ws, ME, d["id"])) == ["inbox", "sent"]
    assert ids(ws, "in:inbox note") != []


@pytest.mark.parametrize("args,words", [
    ({"to": ["bob@"]}, "to[0] 'bob@' is not a valid e-mail address: it has an invalid domain (''); it needs a dot, like example.com; did you mean bob@corp.com?"),
    ({"to": ["carol@@corp"]}, "did you mean carol.diaz@corp.com?"),
    ({"to": ["Bob Stome"]}, "to[0] 'Bob Stome' is neither an e-mail address nor a name in the directory; did you mean Bob Stone?"),
    ({"to": [ALICE], "cc": ["Zed"]}, "cc[0] 'Zed' is neither an e-mail address nor a name in the directory"),
    ({"to": [ALICE], "cc": ["x@@corp.com"]}, "cc[0]"),
    ({"to": ["a@b.com, c@d.com"]}, "one address per list item"),
    ({"to": ["a@localhost"]}, "needs a dot"),
    ({"to": [ALICE], "bcc": ["a b@corp.com"]}, "bcc[0]"),
    ({"to": []}, "to is empty"),
    ({"to": "alice@corp.com"}, "valid list"),
    ({"to": [ALICE], "attachments": ["/reports/q2.xlsx"]}, "attachments[0]: file /reports/q2.xlsx not found; did you mean /reports/q1.xlsx?"),
    ({"to": [ALICE], "attachments": ["/reports"]}, "is a folder"),
    ({"to": [ALICE], "attachments": ["../secret"]}, "escapes the workspace root"),
    ({"to": [ALICE], "subject": "a\nBcc: evil@x.com"}, "one line"),
    ({"to": [ALICE], "subject": "x" * 1000}, "longer than 998"),
    ({"to": [f"u{i}@corp.com" for i in range(101)]}, "too many recipients"),
])
def test_send_email_errors(ws: Workspace, args: dict, words: str) -> None:
    full = {"subject": "s", "body": "b"} | args
    assert words in err(ws, "send_email", full)


def test_attachments_are_not_checked_without_the_files_service() -> None:
    ws = Workspace.create(WorkspaceConfig(services=["mail"], user=ME), {"mail": {"accounts": [{"email": ALICE}]}})
    d = ok(ws, "send_email", {"to": [ALICE], "subject": "s", "body": "b", "attachments": ["reports/x.pdf"]})
    assert d["attachments"] == ["/reports/x.pdf"]
    assert "escapes" in err(ws, "send_email", {"to": [ALICE], "subject": "s", "body": "b", "attachments": ["/../x"]})


def test_recipient_domain_policy_blocks_external_mail() -> None:
    ws = make(policies=[{"type": "allowed_recipient_domains", "domains": ["corp.com"]}])
    r = ws.call("send_email", {"to": [ALICE], "cc": [EXT], "subject": "s", "body": "b"})
    assert r.error.code == "policy_violation" and EXT in r.error.message and not r.diff
    assert ws.call("send_email", {"to": [ALICE], "subject": "s", "body": "b"}).ok


# --- replies, threads, forwards ------------------------------------------------------------------


def test_reply_goes_to_sender_in_the_same_thread(ws: Workspace) -> None:
    d = ok(ws, "reply_email", {"id": "m-budget", "body": "Looks good."})
    assert (d["to"], d["cc"], d["subject"], d["thread_id"], d["in_reply_to"]) == ([ALICE], [], "Re: Q1 budget review", "m-budget", "m-budget")
    [alice_copy] = [m for m in copies(ws, ALICE, d["id"]) if m.folder == "inbox"]
    assert alice_copy.thread_id == "m-budget" and alice_copy.in_reply_to == "a-budget"  # her own copy of the original
    assert ids(ws, "thread:m-budget") == [d["id"], "m-budget"]


def test_reply_all_excludes_me_and_keeps_cc(ws: Workspace) -> None:
    d = ok(ws, "reply_email", {"id": "m-lunch", "body": "Sushi", "reply_all": True})
    assert (d["to"], d["cc"]) == ([BOB, ALICE], [])
    d = ok(ws, "reply_email", {"id": "m-budget", "body": "ok", "reply_all": True})
    assert (d["to"], d["cc"]) == ([ALICE], [BOB])
    [bob_copy] = copies(ws, BOB, d["id"])
    assert bob_copy.in_reply_to is None  # Bob's mailbox holds no copy of the original


def test_reply_to_own_sent_message_goes_to_its_recipients(ws: Workspace) -> None:
    d = ok(ws, "reply_email", {"id": "m-sent", "body": "Any thoughts?"})
    assert (d["to"], d["cc"]) == ([ALICE], [])
    d = ok(ws, "reply_email", {"id": "m-sent", "body": "Any thoughts?", "reply_all": True})
    assert (d["to"], d["cc"]) == ([ALICE], [EXT])


def test_reply_subject_prefix_is_not_doubled_and_chains(ws: Workspace) -> None:
    first = ok(ws, "reply_email", {"id": "m-budget", "body": "1"})
    second = ok(ws, "reply_email", {"id": first["id"], "body": "2"})  # a follow-up to my own reply
    assert (second["subject"], second["thread_id"], second["in_reply_to"]) == ("Re: Q1 budget review", "m-budget", first["id"])
    assert second["to"] == [ALICE]
    [alice_first] = copies(ws, ALICE, first["id"])
    assert copies(ws, ALICE, second["id"])[0].in_reply_to == alice_first.id


def test_reply_with_attachments_and_errors(ws: Workspace) -> None:
    d = ok(ws, "reply_email", {"id": "m-lunch", "body": "x", "attachments": ["/notes/plan.md"]})
    assert d["attachments"] == ["/notes/plan.md"]
    assert "is a draft" in err(ws, "reply_email", {"id": "d-1", "body": "x"})
    assert "not_found" in err(ws, "reply_email", {"id": "nope", "body": "x"})
    assert "not found" in err(ws, "reply_email", {"id": "m-lunch", "body": "x", "attachments": ["/nope.txt"]})
    assert "body" in err(ws, "reply_email", {"id": "m-lunch"})


def test_forward_keeps_attachments_and_quotes_the_original(ws: Workspace) -> None:
    r = ws.call("forward_email", {"id": "m-budget", "to": ["carol.diaz@corp.com"], "cc": [BOB], "body": "FYI"})
    d = r.data
    assert d["subject"] == "Fwd: Q1 budget review" and d["attachments"] == ["/reports/q1.xlsx"] and d["in_reply_to"] is None
    body = rec(ws, d["id"]).body
    assert body.startswith("FYI\n\n---------- Forwarded message ---------\nFrom: Alice Wong <alice@corp.com>\n")
    assert "Subject: Q1 budget review" in body and "Cc: Bob Stone <bob@corp.com>" in body and body.endswith("Thanks, Alice")
    assert d["delivered_internally"] == [BOB]
    again = ok(ws, "forward_email", {"id": d["id"], "to": [ALICE]})
    assert again["subject"] == "Fwd: Q1 budget review"
    assert "to is empty" in err(ws, "forward_email", {"id": "m-budget", "to": []})
    assert "is a draft" in err(ws, "forward_email", {"id": "d-1", "to": [ALICE]})
    assert "not a valid e-mail" in err(ws, "forward_email", {"id": "m-budget", "to": ["bob@"]})


# --- drafts --------------------------------------------------------------------------------------


def test_draft_lifecycle(ws: Workspace) -> None:
    d = ok(ws, "create_draft", {"subject": "Offsite", "body": "Draft text"})
    assert d["to"] == [] and rec(ws, d["id"]).folder == "drafts"
    assert "no recipients" in err(ws, "send_draft", {"id": d["id"]})
    u = ok(ws, "update_draft", {"id": d["id"], "to": [ALICE], "attachments": ["/notes/plan.md"]})
    assert (u["to"], u["subject"], u["body"], u["attachments"]) == ([ALICE], "Offsite", "Draft text", ["/notes/plan.md"])
    s = ws.call("send_draft", {"id": d["id"]})
    assert s.ok and s.data["draft_id"] == d["id"] and s.data["id"] != d["id"]
    assert d["id"] not in ws.table("mail.messages") and rec(ws, s.data["id"]).folder == "sent"
    assert s.data["thread_id"] == s.data["id"] and len(copies(ws, ALICE, s.data["id"])) == 1
    preds = parse_predicates([{"kind": "mail_sent", "to": [ALICE], "subject": {"equals": "Offsite"},
                               "attachments": ["/notes/plan.md"]}])
    assert evaluate(preds, ws).passed


def test_seeded_draft_reply_keeps_thread() -> None:
    ws = make()
    d = ok(ws, "create_draft", {"in_reply_to": "m-budget", "to": [ALICE], "body": "Approved"})
    assert (d["subject"], d["thread_id"], d["in_reply_to"]) == ("Re: Q1 budget review", "m-budget", "m-budget")
    s = ok(ws, "send_draft", {"id": d["id"]})
    assert (s["thread_id"], s["in_reply_to"]) == ("m-budget", "m-budget")
    assert copies(ws, ALICE, s["id"])[0].in_reply_to == "a-budget"
    s2 = ok(ws, "send_draft", {"id": "d-1"})  # a draft from the initial data counts as sent mail too
    preds = parse_predicates([{"kind": "mail_sent", "to": [BOB], "body": {"contains": "Hi Bob"}}])
    assert evaluate(preds, ws).passed and s2["to"] == [BOB]


def test_draft_errors(ws: Workspace) -> None:
    assert "is not a draft (it is in sent)" in err(ws, "update_draft", {"id": "m-sent", "body": "edited"})
    assert "is not a draft (it is in inbox)" in err(ws, "send_draft", {"id": "m-lunch"})
    assert "nothing to change" in err(ws, "update_draft", {"id": "d-1"})
    assert "to[0]" in err(ws, "update_draft", {"id": "d-1", "to": ["nope"]})
    assert "one line" in err(ws, "update_draft", {"id": "d-1", "subject": "a\rb"})
    assert "not found" in err(ws, "create_draft", {"attachments": ["/missing.txt"]})
    assert "is a draft" in err(ws, "create_draft", {"in_reply_to": "d-1"})
    d = ok(ws, "create_draft", {"to": [ALICE], "attachments": ["/notes/plan.md"]})
    assert ws.call("delete_file", {"path": "/notes/plan.md"}).ok
    assert "draft attachments[0]: file /notes/plan.md not found" in err(ws, "send_draft", {"id": d["id"]})


def test_sent_mail_cannot_be_changed_through_drafts(ws: Workspace) -> None:
    d = ok(ws, "create_draft", {"to": [ALICE], "subject": "x"})
    s = ok(ws, "send_draft", {"id": d["id"]})
    assert "not_found" in err(ws, "update_draft", {"id": d["id"], "body": "too late"})
    assert "is not a draft" in err(ws, "update_draft", {"id": s["id"], "body": "too late"})


# --- organising ----------------------------------------------------------------------------------


def test_move_email(ws: Workspace) -> None:
    assert ok(ws, "move_email", {"id": "m-lunch", "folder": " ARCHIVE "}) == {
        "id": "m-lunch", "folder": "archive", "from_folder": "inbox", "moved": True}
    assert ok(ws, "move_email", {"id": "m-lunch", "folder": "archive"})["moved"] is False
    ok(ws, "move_email", {"id": "m-lunch", "folder": "Clients/Acme"})
    assert ids(ws, folder="Clients/Acme") == ["m-lunch"] and ids(ws, 'in:"clients/acme"') == ["m-lunch"]
    ok(ws, "move_email", {"id": "m-old", "folder": "inbox"})  # restore from trash
    assert "m-old" in ids(ws)
    ok(ws, "move_email", {"id": "m-sent", "folder": "archive"})
    ok(ws, "move_email", {"id": "m-sent", "folder": "sent"})


def test_move_email_errors(ws: Workspace) -> None:
    assert "only drafts live in drafts" in err(ws, "move_email", {"id": "m-lunch", "folder": "drafts"})
    assert "only mail you sent can go to sent" in err(ws, "move_email", {"id": "m-lunch", "folder": "Sent"})
    assert "is a draft" in err(ws, "move_email", {"id": "d-1", "folder": "archive"})
    assert "folder name" in err(ws, "move_email", {"id": "m-lunch", "folder": ""})
    assert "control characters" in err(ws, "move_email", {"id": "m-lunch", "folder": "a\x00b"})
    assert "longer than" in err(ws, "move_email", {"id": "m-lunch", "folder": "x" * 200})


def test_label_email(ws: Workspace) -> None:
    assert ok(ws, "label_email", {"id": "m-lunch", "add": ["Starred", "team", "TEAM"]})["labels"] == ["Starred", "team"]
    assert ids(ws, "is:starred") == ["m-lunch"] and ids(ws, "label:team") == ["m-lunch"]
    r = ok(ws, "label_email", {"id": "m-lunch", "remove": ["starred", "ghost"]})
    assert r == {"id": "m-lunch", "labels": ["team"], "not_present": ["ghost"]}
    assert not ws.call("label_email", {"id": "m-lunch", "add": ["Team"]}).diff
    assert "both added and removed" in err(ws, "label_email", {"id": "m-lunch", "add": ["x"], "remove": ["X"]})
    assert "give labels" in err(ws, "label_email", {"id": "m-lunch"})
    assert "is empty" in err(ws, "label_email", {"id": "m-lunch", "add": [" "]})


def test_mark_email_read(ws: Workspace) -> None:
    r = ws.call("mark_email_read", {"id": "m-budget"})
    assert r.data == {"id": "m-budget", "read": True} and rec(ws, "m-budget").read
    assert not ws.call("mark_email_read", {"id": "m-budget", "read": True}).diff
    ok(ws, "mark_email_read", {"id": "m-budget", "read": False})
    assert ids(ws, "is:unread") == ["m-budget"]
    assert "invalid_argument" in err(ws, "mark_email_read", {"id": "m-budget", "read": "maybe"})


def test_delete_email_trash_then_permanent(ws: Workspace) -> None:
    assert ok(ws, "delete_email", {"id": "m-lunch"}) == {"id": "m-lunch", "deleted": "moved to trash", "from_folder": "inbox"}
    assert rec(ws, "m-lunch").folder == "trash" and "m-lunch" not in ids(ws)
    assert ok(ws, "delete_email", {"id": "m-lunch"})["deleted"] == "permanently"
    assert "m-lunch" not in ws.table("mail.messages")
    assert ok(ws, "delete_email", {"id": "d-1"})["deleted"] == "permanently"
    assert "not_found" in err(ws, "delete_email", {"id": "m-lunch"})
    assert ws.tools["delete_email"].mcp_annotations()["destructiveHint"]


def test_tool_hints_and_schemas(ws: Workspace) -> None:
    assert ws.tools["search_emails"].mcp_annotations()["readOnlyHint"]
    assert not ws.tools["read_email"].mcp_annotations()["readOnlyHint"]  # mark_read can change it
    assert ws.tools["move_email"].mcp_annotations()["idempotentHint"]
    schema = ws.tools["send_email"].input_schema
    assert schema["required"] == ["to", "subject", "body"] and schema["properties"]["to"]["type"] == "array"


# --- recipients named by name --------------------------------------------------------------------


def test_recipients_named_by_directory_or_account_name(ws: Workspace) -> None:
    d = ok(ws, "send_email", {"to": ["Carol Diaz", "alice wong"], "cc": ["Bob"], "subject": "s", "body": "b"})
    assert (d["to"], d["cc"]) == (["carol.diaz@corp.com", ALICE], [BOB])
    assert d["delivered_internally"] == [ALICE, BOB] and d["external"] == ["carol.diaz@corp.com"]
    draft = ok(ws, "create_draft", {"to": ["carol"], "bcc": ["Bob Stone"]})
    assert (draft["to"], draft["bcc"]) == (["carol.diaz@corp.com"], [BOB])
    assert ok(ws, "update_draft", {"id": draft["id"], "cc": ["Alice"]})["cc"] == [ALICE]
    fwd = ok(ws, "forward_email", {"id": "m-vendor", "to": ["Carol Diaz"]})
    assert fwd["to"] == ["carol.diaz@corp.com"]


def test_reply_can_copy_more_people_by_name(ws: Workspace) -> None:
    d = ok(ws, "reply_email", {"id": "m-budget", "body": "On it.", "cc": ["Carol Diaz", ALICE, "bob stone"]})
    assert d["to"] == [ALICE] and d["cc"] == ["carol.diaz@corp.com", BOB]  # Alice is already in To
    both = ok(ws, "reply_email", {"id": "m-budget", "body": "All", "reply_all": True, "cc": ["Bob Stone"]})
    assert both["cc"] == [BOB]  # already copied by reply-all, not twice
    assert "cc[0] 'Zed' is neither" in err(ws, "reply_email", {"id": "m-budget", "body": "x", "cc": ["Zed"]})


def test_a_name_shared_by_a_colleague_and_a_directory_entry_is_refused() -> None:
    data = {**DATA, "contacts": {"people": [{"email": "bob.stone@partner.org", "name": "Bob Stone", "title": "Partner"}]}}
    ws = Workspace.create(WorkspaceConfig(services=["files", "mail", "contacts"], user=ME, now=T0), data)
    message = err(ws, "send_email", {"to": ["Bob Stone"], "subject": "s", "body": "b"})
    assert ("to[0] 'Bob Stone' matches 2 people: Bob Stone <bob.stone@partner.org>, Partner; Bob Stone <bob@corp.com>; "
            "give the e-mail address") in message


# --- senders that are nobody ----------------------------------------------------------------------

NOREPLY, NEWS = "no-reply@corp.com", "news@corp.com"


def automated(policies: list | None = None) -> Workspace:
    accounts = [*DATA["mail"]["accounts"], {"email": NOREPLY, "name": "IT Helpdesk", "kind": "system"},
                {"email": NEWS, "name": "Corp Weekly", "kind": "newsletter"}]
    messages = [*MESSAGES, msg("m-alert", sender=NOREPLY, subject="Password expires in 3 days"),
                msg("m-news", sender=NEWS, subject="This week at Corp")]
    data = {**DATA, "mail": {"accounts": accounts, "messages": messages}}
    return Workspace.create(WorkspaceConfig(services=["files", "mail", "contacts"], user=ME, now=T0,
                                            policies=policies or []), data)


def test_system_and_newsletter_senders_are_mail_accounts_of_their_kind() -> None:
    ws = automated()
    assert ws.table("mail.accounts")[NOREPLY].kind == "system" and ws.table("mail.accounts")[ALICE].kind == "person"
    assert ws.call("reply_email", {"id": "m-alert", "body": "thanks"}).ok  # no policy: allowed
    assert ws.call("send_email", {"to": ["Corp Weekly"], "subject": "x", "body": "y"}).ok  # named by its name


@pytest.mark.parametrize("tool, args", [
    ("reply_email", {"id": "m-alert", "body": "thanks"}),
    ("send_email", {"to": [ALICE], "cc": [NEWS], "subject": "x", "body": "y"}),
    ("forward_email", {"id": "m-budget", "to": [NOREPLY]}),
])
def test_a_policy_refuses_personal_mail_to_automated_addresses(tool: str, args: dict) -> None:
    ws = automated([{"type": "no_mail_to_automated"}])
    before = ws.snapshot()
    r = ws.call(tool, args)
    assert not r.ok and "address: mail must not be sent to system or newsletter addresses" in r.text
    assert ws.diff(before, ws.snapshot()).changes == ()
    assert ws.call("send_email", {"to": [ALICE], "subject": "x", "body": "y"}).ok  # people still get mail


def test_a_policy_of_one_kind_lets_the_other_through() -> None:
    ws = automated([{"type": "no_mail_to_automated", "kinds": ["system"]}])
    assert ws.call("send_email", {"to": [NEWS], "subject": "unsubscribe", "body": "please"}).ok
    assert not ws.call("send_email", {"to": [NOREPLY], "subject": "x", "body": "y"}).ok


def test_validation_knows_automated_senders_but_not_unknown_company_addresses() -> None:
    from pathlib import Path

    from synth.checks import known_emails
    from synth.spec import load_spec

    spec = load_spec(Path(__file__).resolve().parents[3] / "examples/specs/handwritten-multiday-vendor-week.yaml")
    domain = spec.world.organisation.domain
    accounts = [{"email": f"no-reply@{domain}", "kind": "system"}, {"email": f"ghost@{domain}"}]
    spec = spec.model_copy(update={"initial": {**spec.initial, "mail": {**spec.initial.get("mail", {}),
                                                                          "accounts": accounts}}})
    known = known_emails(spec)
    assert f"no-reply@{domain}" in known and f"ghost@{domain}" not in known
