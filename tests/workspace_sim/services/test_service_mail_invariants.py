"""Mail invariants: the same calls give the same bytes, random call sequences keep every mailbox consistent, a
search term and its negation partition the mailbox, pages concatenate to the whole result, and any query text
is answered without an internal error."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workspace_sim import Workspace

from mail_data import ALICE, BOB, EXT, ME, err, ids, make


@pytest.fixture
def ws() -> Workspace:
    return make()


# --- determinism and invariants ------------------------------------------------------------------

SCRIPT = [
    ("send_email", {"to": [ALICE, EXT], "subject": "a", "body": "b"}),
    ("reply_email", {"id": "m-lunch", "body": "r", "reply_all": True}),
    ("create_draft", {"to": [BOB], "subject": "d"}),
    ("forward_email", {"id": "m-budget", "to": [BOB]}),
    ("label_email", {"id": "m-vendor", "add": ["paid"]}),
    ("delete_email", {"id": "m-old"}),
]


def test_same_calls_give_the_same_bytes() -> None:
    a, b = make(seed=7), make(seed=7)
    for tool, args in SCRIPT:
        assert a.call(tool, args).to_json() == b.call(tool, args).to_json()
    assert a.to_json() == b.to_json() and a.content_hash == b.content_hash
    assert Workspace.from_json(a.to_json()).content_hash == a.content_hash  # derived fields survive a round trip
    assert [e.to_json() for e in a.events()] == [e.to_json() for e in b.events()]


CALLS = st.one_of(
    st.builds(lambda to, s: ("send_email", {"to": to, "subject": s, "body": "x"}),
              st.lists(st.sampled_from([ALICE, BOB, EXT, ME, "bad", "carol.diaz@corp.com"]), max_size=3), st.text(max_size=8)),
    st.builds(lambda i, a: ("reply_email", {"id": i, "body": "x", "reply_all": a}),
              st.sampled_from(["m-budget", "m-lunch", "m-sent", "d-1", "a-private", "?"]), st.booleans()),
    st.builds(lambda i, f: ("move_email", {"id": i, "folder": f}),
              st.sampled_from(["m-budget", "m-lunch", "m-old", "a-private"]), st.sampled_from(["archive", "trash", "X", "sent", "drafts", ""])),
    st.builds(lambda i: ("delete_email", {"id": i}), st.sampled_from(["m-budget", "m-lunch", "m-old", "d-1", "a-private"])),
    st.builds(lambda i, add: ("label_email", {"id": i, "add": add}), st.sampled_from(["m-budget", "m-vendor"]), st.lists(st.text(max_size=5), max_size=2)),
    st.builds(lambda i: ("send_draft", {"id": i}), st.sampled_from(["d-1", "m-sent"])),
    st.builds(lambda q: ("search_emails", {"query": q}), st.text(max_size=30)),
    st.builds(lambda q: ("forward_email", {"id": "m-budget", "to": [q]}), st.sampled_from([ALICE, "x@", EXT])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CALLS, max_size=12))
def test_random_calls_keep_mailbox_invariants(calls: list[tuple[str, dict]]) -> None:
    ws = make()
    start = ws.snapshot()
    for tool, args in calls:
        before = ws.snapshot()
        r = ws.call(tool, args)
        assert r.ok or r.error.code in ("not_found", "invalid_argument", "conflict"), r.text
        for ch in r.diff:  # the agent only changes its own mailbox, except for mail it delivers
            if ch.table != "mail.messages":
                continue
            m = ch.after or ch.before
            if m.owner != ME:
                assert ch.kind == "added" and m.folder == "inbox" and not m.read and m.sender == ME
        if not r.ok:
            assert ws.content_hash == before.content_hash
    msgs = ws.table("mail.messages")
    accounts = ws.table("mail.accounts")
    for m in msgs.values():
        assert m.owner in accounts and m.thread_id and m.message_id
        if m.owner == ME and m.folder == "sent":
            assert m.sender == ME
    ws.restore(start)
    assert ws.content_hash == make().content_hash


SINGLE_TERMS = st.one_of(
    st.sampled_from(["alice", "bob", "stone", "vendor", ME, "corp.com"]).flatmap(
        lambda v: st.sampled_from([f"from:{v}", f"to:{v}", f"cc:{v}", f"bcc:{v}", v])),
    st.sampled_from(["budget", "q1", "lunch", "invoice", "roadmap", "review the", "half"]).flatmap(
        lambda w: st.sampled_from([f'subject:"{w}"', f'"{w}"', f"filename:{w.split()[0]}"])),
    st.sampled_from(["is:read", "is:unread", "is:starred", "has:attachment", "label:finance", "thread:m-budget"]),
    st.dates(min_value=datetime(2026, 1, 1).date(), max_value=datetime(2026, 3, 5).date()).flatmap(
        lambda d: st.sampled_from([f"after:{d}", f"before:{d:%Y/%m/%d}"])),
)


@settings(max_examples=120, deadline=None)
@given(SINGLE_TERMS, st.sampled_from([None, "inbox", "archive", "trash"]))
def test_a_term_and_its_negation_partition_the_mailbox(term: str, folder: str | None) -> None:
    ws = make()
    scope = {"folder": folder} if folder else {}
    everything = ids(ws, max_results=100, **scope)
    yes, no = ids(ws, term, max_results=100, **scope), ids(ws, "-" + term, max_results=100, **scope)
    assert not set(yes) & set(no)
    assert sorted(yes + no) == sorted(everything)
    assert [i for i in everything if i in yes] == yes  # newest-first order is kept


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=4), st.sampled_from(["", "in:anywhere", "is:read", "-is:read"]))
def test_pages_concatenate_to_the_full_result(size: int, query: str) -> None:
    ws = make()
    full = ids(ws, query, max_results=100)
    paged: list[str] = []
    while True:
        page = ids(ws, query, max_results=size, offset=len(paged))
        if not page:
            break
        paged += page
    assert paged == full


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list('ab:"-() \tOR') + ["from:", "in:", "is:", "after:", "2026-03-01"]), max_size=12)
       .map("".join))
def test_any_query_text_is_answered_without_internal_errors(query: str) -> None:
    r = make().call("search_emails", {"query": query})
    assert r.ok or r.error.code in ("invalid_argument", "not_found"), r.text
    if not r.ok:
        assert r.error.message.startswith("query")


def test_overlong_queries_are_refused(ws: Workspace) -> None:
    assert "longer than 2000" in err(ws, "search_emails", {"query": "a " * 1500})
