"""The finance ledger: listing and filters, expense reports and claims whose totals must match per currency, approvers
by name, reconciliation against invoices (mismatches refused with the reason), initial data checks, predicates."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import call_error, verdict

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.text.money import format_minor

ME, DANA, DANI = "me@acme.com", "dana.reyes@acme.com", "dani.reyes@acme.com"
NOW = datetime(2026, 3, 9, 9, 0, tzinfo=timezone.utc)
PEOPLE = [{"email": ME, "name": "Mia Chen"}, {"email": DANA, "name": "Dana Reyes", "title": "Finance lead"},
          {"email": DANI, "name": "Dani Reyes"}, {"email": "sam@acme.com", "name": "Sam Park"}]
TXS = [
    {"id": "t1", "date": "2026-03-02", "amount": "412.80", "currency": "EUR", "merchant": "Lufthansa",
     "category": "Travel", "description": "FRA-BER return", "spent_by": ME},
    {"id": "t2", "date": "2026-03-03", "amount": "189", "currency": "EUR", "merchant": "Hotel Adlon",
     "category": "Lodging", "spent_by": ME},
    {"id": "t3", "date": "2026-03-04", "amount": "25.50", "currency": "EUR", "merchant": "Hotel Adlon",
     "category": "Lodging", "type": "refund", "spent_by": ME},
    {"id": "t4", "date": "2026-03-04", "amount": "64.20", "currency": "USD", "merchant": "Uber", "category": "Travel",
     "spent_by": ME},
    {"id": "t5", "date": "2026-03-05", "amount": "1250", "currency": "USD", "merchant": "AWS",
     "supplier": "Amazon Web Services", "category": "Cloud", "reference": "ACCT-77"},
    {"id": "t6", "date": "2026-03-05", "amount": "30", "currency": "EUR", "merchant": "Cafe", "category": "Meals",
     "spent_by": "sam@acme.com"},
    {"id": "t7", "date": "2026-02-20", "amount": "9800", "currency": "USD", "type": "income", "customer": "Globex",
     "reference": "INV-2001"},
    {"id": "t8", "date": "2026-03-06", "amount_minor": 12000, "currency": "JPY", "merchant": "Tokyo Taxi",
     "category": "Travel", "spent_by": ME},
]
INVOICES = [
    {"id": "i1", "number": "AWS-0305", "kind": "payable", "counterparty": "Amazon Web Services", "amount": "1250",
     "currency": "USD", "issued": "2026-03-01", "due": "2026-03-31"},
    {"id": "i2", "number": "INV-2001", "kind": "receivable", "counterparty": "Globex", "amount": "9800.00",
     "currency": "USD", "due": "2026-03-15"},
    {"id": "i3", "number": "AWS-0305-EU", "kind": "payable", "counterparty": "Amazon Web Services", "amount": "1250",
     "currency": "EUR", "due": "2026-03-20"},
    {"id": "i4", "number": "ACME-9", "kind": "payable", "counterparty": "Acme", "amount": "1249.99",
     "currency": "USD", "due": "2026-04-01"},
]


def make(txs: list | None = None, invoices: list | None = None, reports: list | None = None) -> Workspace:
    cfg = WorkspaceConfig(services=["finance", "contacts"], user=ME, now=NOW, timezone="Europe/Berlin")
    return Workspace.create(cfg, {"contacts": {"people": PEOPLE}, "finance": {
        "transactions": TXS if txs is None else txs, "invoices": INVOICES if invoices is None else invoices,
        "reports": reports or []}})


@pytest.fixture
def ws() -> Workspace:
    return make()


err = call_error


def ids(r) -> list[str]:  # type: ignore[no-untyped-def]
    return [t["id"] for t in r.data["transactions"]]


def test_money_is_loaded_exactly(ws: Workspace) -> None:
    t = ws.table("finance.transactions")
    assert t["t1"].amount_minor == 41280 and t["t8"].amount_minor == 12000 and t["t5"].counterparty == "Amazon Web Services"


def test_list_transactions_filters_and_totals(ws: Workspace) -> None:
    assert ids(ws.call("list_transactions", {})) == ["t7", "t1", "t2", "t3", "t4", "t5", "t6", "t8"]
    r = ws.call("list_transactions", {"start_date": "2026-03-02", "end_date": "2026-03-04", "spent_by": "me"})
    assert ids(r) == ["t1", "t2", "t3", "t4"] and r.data["totals"] == {"EUR": "576.30", "USD": "64.20"}  # t3 a refund
    assert r.data["totals_by_type"] == {"expense": {"EUR": "601.80", "USD": "64.20"}, "refund": {"EUR": "25.50"}}
    assert "expenses less refunds, as a report of them states it): 576.30 EUR, 64.20 USD" in r.text
    assert ids(ws.call("list_transactions", {"category": "lodging", "type": "expense"})) == ["t2"]
    assert ids(ws.call("list_transactions", {"merchant": "hotel"})) == ["t2", "t3"]
    assert ids(ws.call("list_transactions", {"counterparty": "amazon"})) == ["t5"]
    assert ids(ws.call("list_transactions", {"min_amount": "1000"})) == ["t7", "t5", "t8"]  # in each own currency
    assert ids(ws.call("list_transactions", {"max_amount": 30, "currency": "eur"})) == ["t3", "t6"]
    assert ids(ws.call("list_transactions", {"query": "FRA-BER"})) == ["t1"]
    assert "before start_date" in err(ws, "list_transactions", {"start_date": "2026-03-05", "end_date": "2026-03-01"})
    assert "not a date" in err(ws, "list_transactions", {"start_date": "March 1"})
    assert "not a supported ISO 4217 code" in err(ws, "list_transactions", {"currency": "EURO"})
    assert "spent_by 'reyes' matches 2 people" in err(ws, "list_transactions", {"spent_by": "reyes"})


def test_the_listed_total_is_the_net_a_report_of_the_same_transactions_needs() -> None:
    ws = make([{"id": "x1", "date": "2026-03-02", "amount": "100.00", "currency": "EUR", "merchant": "Cafe",
                "spent_by": ME},
               {"id": "x2", "date": "2026-03-03", "amount": "30.00", "currency": "EUR", "merchant": "Cafe",
                "type": "refund", "spent_by": ME},
               {"id": "x3", "date": "2026-03-03", "amount": "500", "currency": "EUR", "type": "income",
                "customer": "Globex"},
               {"id": "x4", "date": "2026-03-04", "amount": "9", "currency": "EUR", "status": "void", "spent_by": ME}],
              invoices=[])
    listed = ws.call("list_transactions", {"merchant": "cafe"}).data
    assert listed["totals"] == {"EUR": "70.00"}, listed["totals"]
    assert listed["totals_by_type"] == {"expense": {"EUR": "100.00"}, "refund": {"EUR": "30.00"}}
    assert "off by 60.00" in err(ws, "submit_expense_report", {"title": "Cafe", "transaction_ids": ["x1", "x2"],
                                                                  "total": "130.00"})
    assert ws.call("submit_expense_report", {"title": "Cafe", "transaction_ids": ["x1", "x2"],
                                             "total": listed["totals"]["EUR"]}).ok
    assert ws.call("submit_expense_claim", {"title": "Cafe", "transaction_ids": ["x1", "x2"], "approver": DANA,
                                            "total": listed["totals"]["EUR"]}).ok
    everything = ws.call("list_transactions", {}).data  # income is no spending, a void expense counts nowhere
    assert everything["totals"] == {"EUR": "70.00"} and ids(ws.call("list_transactions", {})) == ["x1", "x2", "x3", "x4"]
    assert everything["totals_by_type"] == {"expense": {"EUR": "100.00"}, "income": {"EUR": "500.00"},
                                            "refund": {"EUR": "30.00"}}


def test_get_transaction(ws: Workspace) -> None:
    assert ws.call("get_transaction", {"id": "t5"}).data["transaction"]["amount"] == "1250.00"
    assert err(ws, "get_transaction", {"id": "t11"}) == "not_found: transaction 't11' not found; did you mean t1?"


def test_expense_claim(ws: Workspace) -> None:
    r = ws.call("submit_expense_claim", {"title": "Berlin trip", "transaction_ids": ["t1", "t2", "t3"],
                                         "total": "576.30", "approver": "Dana Reyes", "notes": "Client visit"})
    assert r.ok, r.text
    claim = r.data["claim"]
    assert claim["status"] == "pending_approval" and claim["approver"] == DANA and claim["total"] == "576.30"
    t = ws.table("finance.transactions")
    assert all(t[i].status == "submitted" and t[i].approver == DANA and t[i].claim_id == claim["id"]
               for i in ("t1", "t2", "t3"))
    assert "already claimed" in err(ws, "submit_expense_claim", {"title": "again", "transaction_ids": ["t2"],
                                                                 "total": 189, "approver": DANA})
    assert ids(ws.call("list_transactions", {"unclaimed": True, "spent_by": "me"})) == ["t4", "t8"]
    assert [x["id"] for x in ws.call("list_expense_reports", {"kind": "claim"}).data["reports"]] == [claim["id"]]


@pytest.mark.parametrize("args,words", [
    ({"transaction_ids": ["t1", "t2"], "total": "600"}, "does not match the transactions' sum 601.80 EUR (off by 1.80)"),
    ({"transaction_ids": ["t1", "t4"], "total": "477"}, "in EUR and USD (412.80 EUR, 64.20 USD)"),
    ({"transaction_ids": ["t1"], "total": "412.80", "currency": "USD"}, "in EUR, not USD"),
    ({"transaction_ids": ["t1"], "total": "412.801"}, "more than 2 decimal places"),
    ({"transaction_ids": ["t1"], "total": "412.80", "currency": "XXX"}, "not a supported ISO 4217"),
    ({"transaction_ids": ["t6"], "total": 30}, "spent by someone else"),
    ({"transaction_ids": ["t7"], "total": 9800}, "not spending"),
    ({"transaction_ids": ["t1", "t1"], "total": 1}, "more than once"),
    ({"transaction_ids": [], "total": 1}, "transaction_ids is empty"),
    ({"transaction_ids": ["t99"], "total": 1}, "not found"),
    ({"transaction_ids": ["t1"], "total": "412.80", "approver": "me"}, "cannot approve your own claim"),
    ({"transaction_ids": ["t1"], "total": "412.80", "approver": "Reyes"}, "approver"),
    ({"transaction_ids": ["t1"], "total": "412.80", "approver": "x@other.com"}, "not in the directory"),
])
def test_bad_claims_change_nothing(ws: Workspace, args: dict, words: str) -> None:
    full = {"title": "Trip", "approver": "Dana Reyes", **args}
    assert words in err(ws, "submit_expense_claim", full)


def test_expense_report_does_not_lock_transactions(ws: Workspace) -> None:
    r = ws.call("submit_expense_report", {"title": "Cloud March", "transaction_ids": ["t5"], "total": 1250})
    assert r.ok and r.data["report"]["status"] == "submitted" and r.data["report"]["approver"] is None
    assert ws.table("finance.transactions")["t5"].status == "posted"
    assert "off by" in err(ws, "submit_expense_report", {"title": "x", "transaction_ids": ["t8"], "total": 12001})


def test_reconciliation(ws: Workspace) -> None:
    assert "amounts differ: t5 is 1250.00 USD, invoice ACME-9 is 1249.99 USD (off by 0.01)" in err(
        ws, "reconcile_transaction", {"transaction_id": "t5", "invoice": "ACME-9"})
    assert "currencies differ" in err(ws, "reconcile_transaction", {"transaction_id": "t5", "invoice": "aws-0305-eu"})
    assert "settled by income" in err(ws, "reconcile_transaction", {"transaction_id": "t5", "invoice": "INV-2001"})
    r = ws.call("reconcile_transaction", {"transaction_id": "t5", "invoice": "aws-0305"})
    assert r.ok and r.data["counterparty_matches"] is True
    assert ws.table("finance.transactions")["t5"].invoice_id == "i1" and ws.table("finance.invoices")["i1"].status == "paid"
    assert "already reconciled" in err(ws, "reconcile_transaction", {"transaction_id": "t5", "invoice": "i4"})
    assert "only open invoices" in err(ws, "reconcile_transaction", {"transaction_id": "t4", "invoice": "i1"})
    assert ws.call("reconcile_transaction", {"transaction_id": "t7", "invoice": "i2"}).ok
    assert [i["number"] for i in ws.call("list_invoices", {"status": "open"}).data["invoices"]] == [
        "AWS-0305-EU", "ACME-9"]
    assert ws.call("get_invoice", {"invoice": "inv-2001"}).data["transaction"]["id"] == "t7"
    assert "not found" in err(ws, "get_invoice", {"invoice": "INV-9"})


@pytest.mark.parametrize("txs,invoices,reports,where,words", [
    ([{"id": "a", "date": "2026-03-01", "amount": -5}], [], [], "data.finance.transactions[0]", "negative"),
    ([{"id": "a", "date": "2026-03-01", "amount": "5", "currency": "ABC"}], [], [], "data.finance.transactions[0]",
     "ISO 4217"),
    ([{"id": "a", "date": "2026-03-01", "amount": "5", "customer": "x", "supplier": "y"}], [], [],
     "data.finance.transactions[0]", "both a customer and a supplier"),
    ([{"id": "a", "date": "2026-03-01", "amount": "5", "status": "reconciled", "invoice_id": "i"}], [], [],
     "data.finance.transactions[a].invoice_id", "does not name"),
    ([], [{"id": "i", "number": "N", "counterparty": "c", "amount": 1},
          {"id": "j", "number": "n", "counterparty": "c", "amount": 1}], [], "data.finance.invoices[j].number",
     "also the number"),
    ([{"id": "a", "date": "2026-03-01", "amount": "5"}], [],
     [{"id": "r", "title": "t", "transaction_ids": ["a"], "total": "6"}], "data.finance.reports[r].transaction_ids",
     "does not match"),
])
def test_bad_initial_data(txs: list, invoices: list, reports: list, where: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        make(txs, invoices, reports)
    assert str(info.value).startswith(where) and words in str(info.value), str(info.value)


def test_generic_predicates_see_the_ledger(ws: Workspace) -> None:
    ws.call("submit_expense_claim", {"title": "Berlin trip", "transaction_ids": ["t1", "t2"], "total": "601.80",
                                     "approver": DANA})
    assert verdict(ws, {"kind": "record_exists", "table": "finance.reports", "new_only": True,
                        "where": {"kind": "claim", "approver": DANA, "total_minor": 60180,
                                  "transaction_ids": {"includes": ["t1", "t2"]}}})
    assert verdict(ws, {"kind": "only_changed", "scopes": ["finance.reports", "finance.transactions:t1",
                                                           "finance.transactions:t2"]})
    assert verdict(ws, {"kind": "unchanged", "scope": "finance.invoices"})
    assert verdict(ws, {"kind": "record_absent", "table": "finance.transactions", "where": {"id": "t3",
                                                                                            "status": "submitted"}})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.lists(st.sampled_from(["t1", "t2", "t3"]), min_size=1, max_size=3, unique=True),
       off=st.integers(-5000, 5000))
def test_a_claim_passes_exactly_when_its_total_is_the_sum(pick: list[str], off: int) -> None:
    ws = make()
    t = ws.table("finance.transactions")
    total = sum(-t[i].amount_minor if t[i].type == "refund" else t[i].amount_minor for i in pick) + off
    args = {"title": "Trip", "transaction_ids": pick, "total": format_minor(abs(total), "EUR"), "approver": DANA}
    before = ws.content_hash
    r = ws.call("submit_expense_claim", args)
    assert r.ok == (off == 0 and total >= 0), r.text
    assert (ws.content_hash == before) == (not r.ok)
