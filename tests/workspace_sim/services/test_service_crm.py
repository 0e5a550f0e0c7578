"""Behaviour and errors of every CRM tool, money rules, deal stages, reports, predicates and policies on CRM data."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from support import call_error

from mcp_server import Episode, PythonEnvironment, build_server
from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.text.money import format_minor, to_minor
from workspace_sim.predicates import evaluate, parse_predicates
from workspace_sim.services import all_services
from workspace_sim.services.crm import ACCOUNT_COLUMNS, DEAL_COLUMNS

ME, DANA, DANI = "me@acme.com", "dana.reyes@acme.com", "dani.reyes@acme.com"
PEOPLE = [{"email": ME, "name": "Mia Chen"}, {"email": DANA, "name": "Dana Reyes", "title": "AE"},
          {"email": DANI, "name": "Dani Reyes"}]
ACCOUNTS = [
    {"id": "acc-1", "name": "Globex", "domain": "globex.com", "industry": "Logistics", "tier": "Enterprise",
     "annual_revenue": "25,000,000", "currency": "usd", "owner": ME, "status": "renewal_due",
     "renewal_date": "2026-04-01", "description": "Largest logistics customer in EMEA."},
    {"id": "acc-2", "name": "Initech", "industry": "Software", "tier": "SMB", "annual_revenue": 1200000.5,
     "currency": "EUR", "owner": DANA, "status": "active", "renewal_date": "2026-09-30"},
    {"id": "acc-3", "name": "Umbrella", "industry": "Pharma", "tier": "Enterprise", "annual_revenue_minor": 900000000,
     "currency": "JPY", "status": "churned"},
]
DEALS = [
    {"id": "deal-1", "name": "Globex renewal 2026", "account_id": "acc-1", "amount": "120000", "stage": "negotiation",
     "close_date": "2026-03-30", "owner": ME, "next_step": "Send revised quote"},
    {"id": "deal-2", "name": "Initech upsell", "account_id": "acc-2", "amount": "15000.50", "currency": "EUR",
     "stage": "proposal", "close_date": "2026-05-15", "owner": DANA},
    {"id": "deal-3", "name": "Umbrella pilot", "account_id": "acc-3", "amount": 0, "currency": "JPY",
     "stage": "closed_lost", "close_date": "2026-01-10"},
]
CONTACTS = [{"email": DANA, "account_id": "acc-1", "role": "Champion"},
            {"email": "bob@globex.com", "account_id": "acc-1", "name": "Bob Gray", "title": "CFO", "role": "Buyer"}]
ACTIVITIES = [{"id": "act-1", "type": "call", "subject": "Pricing call", "deal_id": "deal-1",
               "occurred": "2026-02-20T15:00:00+00:00"},
              {"id": "act-2", "type": "note", "subject": "Kickoff notes", "account_id": "acc-2",
               "occurred": "2026-02-25T10:00:00+00:00"}]


def data(**over: Any) -> dict:
    crm = {"accounts": ACCOUNTS, "deals": DEALS, "contacts": CONTACTS, "activities": ACTIVITIES}
    crm.update(over)
    return {"contacts": {"people": PEOPLE}, "crm": crm, "files": {"files": [{"path": "/reports/README.md",
                                                                            "content": "reports\n"}]}}


def make(services: tuple[str, ...] = ("contacts", "crm", "files"), policies: list | None = None, **over: Any) -> Workspace:
    d = {k: v for k, v in data(**over).items() if k in services}
    return Workspace.create(WorkspaceConfig(services=list(services), user=ME, policies=policies or []), d)


@pytest.fixture
def ws() -> Workspace:
    return make()


err = call_error


def ids(result: Any, key: str) -> list[str]:
    assert result.ok, result.text
    return [x["id"] for x in result.data[key]]


# --- money ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("value,currency,minor", [
    ("125000", "USD", 12500000), ("125,000.50", "USD", 12500050), (0.1, "USD", 10), (1250.5, "usd", 125050),
    (7, "JPY", 7), ("1.234", "KWD", 1234), (0, "EUR", 0), ("0.30", "GBP", 30),
])
def test_amounts_become_exact_minor_units(value: Any, currency: str, minor: int) -> None:
    assert to_minor(value, currency) == minor


@pytest.mark.parametrize("value,currency,words", [
    ("1.005", "USD", "more than 2 decimal places"), ("1.5", "JPY", "more than 0 decimal places"),
    ("-3", "USD", "not a plain amount"), (-3, "USD", "negative"), ("$100", "USD", "not a plain amount"),
    ("50k", "USD", "not a plain amount"), (float("nan"), "USD", "finite"), (10**20, "USD", "larger than"),
    ("1,00", "USD", "not a plain amount"), (True, "USD", "must be a number"), ("5", "XYZ", "ISO 4217"),
])
def test_bad_amounts_are_refused_clearly(value: Any, currency: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        to_minor(value, currency)


@given(st.integers(0, 10**15), st.sampled_from(["USD", "JPY", "KWD"]))
def test_minor_units_round_trip_through_text(minor: int, currency: str) -> None:
    assert to_minor(format_minor(minor, currency), currency) == minor


# --- initial data ---------------------------------------------------------------------------------


def test_initial_data_is_completed(ws: Workspace) -> None:
    accounts, deals = ws.table("crm.accounts"), ws.table("crm.deals")
    assert accounts["acc-1"].annual_revenue_minor == 2_500_000_000 and accounts["acc-1"].currency == "USD"
    assert accounts["acc-2"].annual_revenue_minor == 120_000_050 and accounts["acc-1"].created == ws.config.now
    assert deals["deal-1"].probability == 75 and deals["deal-3"].probability == 0
    assert deals["deal-2"].amount_minor == 1_500_050
    assert ws.table("crm.activities")["act-1"].account_id == "acc-1"  # from its deal
    assert ws.export_data()["crm"]["deals"][0]["amount_minor"] == 12_000_000


@pytest.mark.parametrize("over,where,words", [
    ({"deals": [{"id": "d", "name": "x", "account_id": "nope"}]}, "data.crm.deals[d].account_id", "does not exist"),
    ({"deals": [{"id": "d", "name": "x", "account_id": "acc-1", "stage": "closed_won", "probability": 50}]},
     "data.crm.deals[0]", "probability 100"),
    ({"deals": [{"id": "d", "name": "x", "account_id": "acc-1", "amount": "1.001"}]}, "data.crm.deals[0]",
     "decimal places"),
    ({"deals": [{"id": "d", "name": "x", "account_id": "acc-1", "amount": 5, "amount_minor": 500}]},
     "data.crm.deals[0]", "not both"),
    ({"accounts": [{"id": "a b", "name": "x"}]}, "data.crm.accounts[0]", "account id 'a b'"),
    ({"accounts": [{"id": "a", "name": "x", "currency": "ZZZ"}]}, "data.crm.accounts[0]", "ISO 4217"),
    ({"accounts": [{"id": "a", "name": "x", "domain": "https://x.com/"}]}, "data.crm.accounts[0]", "domain"),
    ({"accounts": [{"id": "a", "name": "x", "status": "won"}]}, "data.crm.accounts[0]", "status"),
    ({"contacts": [{"email": "out@x.com", "account_id": "acc-1"}]}, "data.crm.contacts[out@x.com].name",
     "not in the directory"),
    ({"contacts": [{"email": DANA, "account_id": "acc-1", "name": "Someone Else"}]},
     f"data.crm.contacts[{DANA}].name", "is 'Dana Reyes' in the directory"),
    ({"contacts": [{"email": DANA, "account_id": "acc-9"}]}, f"data.crm.contacts[{DANA}].account_id", "acc-9"),
    ({"activities": [{"id": "a", "subject": "s", "deal_id": "deal-1", "account_id": "acc-2"}]},
     "data.crm.activities[a].account_id", "belongs to account acc-1"),
    ({"activities": [{"id": "a", "subject": "s"}]}, "data.crm.activities[0]", "needs an account_id or a deal_id"),
])
def test_bad_initial_data_is_refused_with_its_path(over: dict, where: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        make(**over)
    assert str(info.value).startswith(where) and words in str(info.value), str(info.value)


def test_outside_contacts_need_a_name_without_a_directory() -> None:
    with pytest.raises(SpecError, match="not in the directory"):
        make(services=("crm",), contacts=[{"email": DANA, "account_id": "acc-1"}])
    ws = make(services=("crm",), contacts=[{"email": DANA, "account_id": "acc-1", "name": "Dana Reyes"}])
    card = ws.call("get_account", {"account_id": "acc-1"}).data["contacts"]
    assert [(c["name"], c["in_directory"]) for c in card] == [("Dana Reyes", False)]


# --- accounts -------------------------------------------------------------------------------------


def test_search_accounts_filters_and_sorts(ws: Workspace) -> None:
    s = lambda **a: ids(ws.call("search_accounts", a), "accounts")  # noqa: E731
    assert s() == ["acc-1", "acc-2", "acc-3"]
    assert s(query="emea logistics") == ["acc-1"]
    assert s(tier="enterprise") == ["acc-1", "acc-3"]
    assert s(status="churned") == ["acc-3"]
    assert s(owner="me") == ["acc-1"] and s(owner="Dana Reyes") == ["acc-2"] and s(owner="none") == ["acc-3"]
    assert s(industry="SOFTWARE") == ["acc-2"]
    assert s(min_revenue=1_000_000, currency="EUR") == ["acc-2"]
    assert s(min_revenue="2,000,000") == ["acc-1", "acc-3"]  # own currency each: 25M USD, 9M JPY
    assert s(max_revenue=1_200_000.5) == ["acc-2"]
    assert s(renewal_before="2026-06-01") == ["acc-1"] and s(renewal_after="2026-06-01") == ["acc-2"]
    assert s(sort="-annual_revenue") == ["acc-3", "acc-1", "acc-2"]  # numbers, not converted
    assert s(sort="renewal_date") == ["acc-1", "acc-2", "acc-3"]  # no date sorts last
    assert s(sort="-renewal_date") == ["acc-2", "acc-1", "acc-3"]
    page = ws.call("search_accounts", {"limit": 1, "offset": 1})
    assert ids(page, "accounts") == ["acc-2"] and page.data["total"] == 3
    assert page.text.startswith("Accounts 2-2 of 3:\n- acc-2 Initech [active] tier SMB")
    assert ws.call("search_accounts", {"query": "zzz"}).text == "No accounts match."
    first = ws.call("search_accounts", {}).data["accounts"][0]
    assert first["annual_revenue"] == "25000000.00" and first["open_deals"] == 1


@pytest.mark.parametrize("args,words", [
    ({"tier": "Enterprse"}, "did you mean Enterprise"), ({"industry": "Mining"}, "industry values in use"),
    ({"sort": "size"}, "cannot sort accounts by 'size'"), ({"min_revenue": "1.0001"}, "decimal places"),
    ({"renewal_before": "April"}, "YYYY-MM-DD"), ({"owner": "Reyes"}, "matches 2 people"),
    ({"owner": "zed@acme.com"}, "not in the directory"), ({"currency": "usdollar"}, "ISO 4217"),
    ({"limit": 0}, "limit"), ({"offset": -1}, "offset"), ({"query": "x" * 501}, "longer than"),
    ({"status": "gone"}, "status"),
])
def test_search_accounts_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "search_accounts", args)


def test_get_account_shows_contacts_deals_and_activities(ws: Workspace) -> None:
    r = ws.call("get_account", {"account_id": "GLOBEX"})  # exact name, any case
    assert r.ok and r.data["account"]["id"] == "acc-1"
    assert [(c["email"], c["name"], c["in_directory"]) for c in r.data["contacts"]] == [
        ("bob@globex.com", "Bob Gray", False), (DANA, "Dana Reyes", True)]
    assert [d["id"] for d in r.data["open_deals"]] == ["deal-1"] and r.data["closed_deals"] == 0
    assert [a["id"] for a in r.data["recent_activities"]] == ["act-1"]
    assert "Dana Reyes <dana.reyes@acme.com>, Champion" in r.text and "(outside the directory)" in r.text
    assert "acc-1 (Globex)" in err(ws, "get_account", {"account_id": "acc-l"})
    assert "use search_accounts" in err(ws, "get_account", {"account_id": "zzzzzz"})


def test_create_and_update_account(ws: Workspace) -> None:
    r = ws.call("create_account", {"name": "Hooli", "domain": "Hooli.com", "annual_revenue": "3000000",
                                   "currency": "GBP", "tier": "Mid-market", "renewal_date": "2027-01-31"})
    assert r.ok, r.text
    acc = r.data["account"]
    assert acc["id"].startswith("acc-") and acc["status"] == "prospect" and acc["owner"] == ME
    assert acc["domain"] == "hooli.com" and acc["annual_revenue"] == "3000000.00"
    u = ws.call("update_account", {"account_id": acc["id"], "status": "active", "owner": "Dana Reyes",
                                   "tier": "Mid-market"})
    assert u.data["changed"] == ["owner", "status"] and u.data["account"]["owner"] == DANA
    again = ws.call("update_account", {"account_id": acc["id"], "status": "active"})
    assert again.data["changed"] == []
    cur = ws.call("update_account", {"account_id": acc["id"], "currency": "EUR", "annual_revenue": 3500000})
    assert cur.data["changed"] == ["annual_revenue_minor", "currency"]
    assert ws.table("crm.accounts")[acc["id"]].annual_revenue_minor == 350_000_000


@pytest.mark.parametrize("tool,args,words", [
    ("create_account", {"name": "globex"}, "already exists (acc-1)"),
    ("create_account", {"name": "  "}, "name is empty"),
    ("create_account", {"name": "X", "domain": "not a domain"}, "domain"),
    ("create_account", {"name": "X", "annual_revenue": "1.5", "currency": "JPY"}, "decimal places"),
    ("create_account", {"name": "X", "owner": "nobody at all"}, "neither an e-mail address nor a name"),
    ("create_account", {"name": "X", "description": "d" * 5001}, "at most 5000"),
    ("create_account", {"name": "X\ud800"}, "lone surrogates"),
    ("update_account", {"account_id": "acc-1"}, "nothing to change"),
    ("update_account", {"account_id": "acc-1", "currency": "EUR"}, "needs annual_revenue in EUR"),
    ("update_account", {"account_id": "acc-1", "name": "Initech"}, "already named"),
    ("update_account", {"account_id": "acc-1", "renewal_date": "2026-02-30"}, "YYYY-MM-DD"),
    ("update_account", {"account_id": "nope", "status": "active"}, "not found"),
])
def test_account_write_errors(ws: Workspace, tool: str, args: dict, words: str) -> None:
    assert words in err(ws, tool, args)


def test_account_contacts_link_directory_people_or_outside_customers(ws: Workspace) -> None:
    r = ws.call("add_account_contact", {"account_id": "Initech", "person": "Dani Reyes", "role": "Champion"})
    assert r.ok and r.data["created"] and r.data["contact"] == {
        "email": DANI, "account_id": "acc-2", "role": "Champion", "in_directory": True, "name": "Dani Reyes",
        "title": "", "phone": ""}
    out = ws.call("add_account_contact", {"account_id": "acc-2", "person": "Pat Kim <pat@initech.io>",
                                          "name": "Pat Kim", "title": "CTO", "role": "Technical buyer"})
    assert out.ok and out.data["contact"]["in_directory"] is False
    same = ws.call("add_account_contact", {"account_id": "acc-2", "person": DANI, "role": "Champion"})
    assert same.ok and not same.data["created"] and same.event.diff.changes == ()
    assert "a contact belongs to one account" in err(ws, "add_account_contact", {"account_id": "acc-1",
                                                                                "person": DANI})
    assert "give the outside contact's name" in err(ws, "add_account_contact", {"account_id": "acc-1",
                                                                               "person": "x@y.io"})
    assert "leave them empty" in err(ws, "add_account_contact", {"account_id": "acc-1", "person": DANA,
                                                                 "name": "Dana"})
    assert "matches 2 people" in err(ws, "add_account_contact", {"account_id": "acc-1", "person": "Reyes"})


# --- deals ----------------------------------------------------------------------------------------


def test_search_deals_filters_and_sorts(ws: Workspace) -> None:
    s = lambda **a: ids(ws.call("search_deals", a), "deals")  # noqa: E731
    assert s() == ["deal-3", "deal-1", "deal-2"]  # by close date
    assert s(status="open") == ["deal-1", "deal-2"] and s(status="lost") == ["deal-3"] and s(status="won") == []
    assert s(stage="proposal") == ["deal-2"] and s(account_id="Globex") == ["deal-1"]
    assert s(owner="me") == ["deal-1"] and s(owner="none") == ["deal-3"]
    assert s(min_amount=20000) == ["deal-1"] and s(max_amount="15000.50") == ["deal-3", "deal-2"]
    assert s(closing_after="2026-03-01", closing_before="2026-04-01") == ["deal-1"]
    assert s(query="revised quote") == ["deal-1"] and s(query="globex") == ["deal-1"]
    assert s(sort="-amount") == ["deal-1", "deal-2", "deal-3"] and s(sort="stage") == ["deal-2", "deal-1", "deal-3"]
    assert s(currency="EUR") == ["deal-2"]
    assert "cannot sort deals" in err(ws, "search_deals", {"sort": "amount_minor"})
    assert "account 'acme' not found" in err(ws, "search_deals", {"account_id": "acme"})
    assert "stage" in err(ws, "search_deals", {"stage": "won"})
    text = ws.call("search_deals", {"status": "open"}).text
    assert "- deal-1 Globex renewal 2026 (Globex) [negotiation 75%] 120000.00 USD, closes 2026-03-30" in text


def test_get_deal(ws: Workspace) -> None:
    r = ws.call("get_deal", {"deal_id": "deal-1"})
    assert r.data["deal"]["account_name"] == "Globex" and [a["id"] for a in r.data["activities"]] == ["act-1"]
    assert "Next step: Send revised quote" in r.text
    assert "did you mean deal-1" in err(ws, "get_deal", {"deal_id": "deal1"})


def test_create_deal_probability_follows_stage(ws: Workspace) -> None:
    r = ws.call("create_deal", {"account_id": "acc-2", "name": "Initech expansion", "amount": 40000})
    d = r.data["deal"]
    assert d["currency"] == "EUR" and d["probability"] == 10 and d["amount"] == "40000.00" and d["owner"] == ME
    won = ws.call("create_deal", {"account_id": "acc-1", "name": "Add-on", "amount": "999.99", "stage": "closed_won"})
    assert won.data["deal"]["probability"] == 100 and won.data["deal"]["close_date"] == "2026-03-02"
    custom = ws.call("create_deal", {"account_id": "acc-1", "name": "Maybe", "amount": 1, "stage": "proposal",
                                     "probability": 35, "close_date": "2026-06-30", "currency": "GBP"})
    assert custom.data["deal"]["probability"] == 35 and custom.data["deal"]["currency"] == "GBP"
    assert "probability 100" in err(ws, "create_deal", {"account_id": "acc-1", "name": "x", "amount": 1,
                                                        "stage": "closed_won", "probability": 90})
    assert "0 to 100" in err(ws, "create_deal", {"account_id": "acc-1", "name": "x", "amount": 1, "probability": 101})
    assert "decimal places" in err(ws, "create_deal", {"account_id": "acc-3", "name": "x", "amount": 1.5})
    assert "invalid arguments" in err(ws, "create_deal", {"account_id": "acc-1", "name": "x", "amount": True})
    assert "name is empty" in err(ws, "create_deal", {"account_id": "acc-1", "name": " ", "amount": 1})


def test_update_deal_stage_rules(ws: Workspace) -> None:
    up = ws.call("update_deal", {"deal_id": "deal-2", "stage": "negotiation", "next_step": "Legal review"})
    assert up.data["changed"] == ["next_step", "probability", "stage"] and up.data["deal"]["probability"] == 75
    prob = ws.call("update_deal", {"deal_id": "deal-2", "probability": 60})
    assert prob.data["changed"] == ["probability"]
    back = ws.call("update_deal", {"deal_id": "deal-2", "stage": "qualification", "probability": 30})
    assert back.data["deal"]["probability"] == 30  # moving back among open stages is allowed
    won = ws.call("update_deal", {"deal_id": "deal-2", "stage": "closed_won"})
    assert won.data["deal"]["close_date"] == "2026-03-02" and won.data["deal"]["probability"] == 100
    assert "reopen only explicitly: pass reopen=true" in err(ws, "update_deal", {"deal_id": "deal-2",
                                                                                 "stage": "negotiation"})
    assert "closed_lost deal has probability 0" in err(ws, "update_deal", {"deal_id": "deal-2",
                                                                           "stage": "closed_lost", "probability": 5})
    assert "reopen is for" in err(ws, "update_deal", {"deal_id": "deal-1", "stage": "proposal", "reopen": True})
    assert "needs stage set" in err(ws, "update_deal", {"deal_id": "deal-2", "amount": 5, "reopen": True})
    lost = ws.call("update_deal", {"deal_id": "deal-2", "stage": "closed_lost"})  # correcting won to lost
    assert lost.ok and lost.data["deal"]["probability"] == 0
    assert ws.call("update_deal", {"deal_id": "deal-2", "stage": "closed_won"}).ok
    assert "a closed_won deal has probability 100" in err(ws, "update_deal", {"deal_id": "deal-2", "probability": 90})
    reopened = ws.call("update_deal", {"deal_id": "deal-2", "stage": "negotiation", "reopen": True})
    assert reopened.ok and reopened.data["deal"]["probability"] == 75
    assert "needs amount in USD" in err(ws, "update_deal", {"deal_id": "deal-2", "currency": "USD"})
    assert "nothing to change" in err(ws, "update_deal", {"deal_id": "deal-2"})
    cur = ws.call("update_deal", {"deal_id": "deal-2", "currency": "USD", "amount": "16000"})
    assert ws.table("crm.deals")["deal-2"].amount_minor == 1_600_000 and cur.data["deal"]["currency"] == "USD"


# --- activities -----------------------------------------------------------------------------------


def test_log_and_list_activities(ws: Workspace) -> None:
    r = ws.call("log_activity", {"type": "meeting", "subject": "QBR", "deal_id": "deal-1",
                                 "contacts": ["Dana Reyes", "bob@globex.com"], "body": "Agreed on 3-year term",
                                 "occurred_at": "2026-03-01T14:00:00+00:00"})
    a = r.data["activity"]
    assert a["account_id"] == "acc-1" and a["contacts"] == [DANA, "bob@globex.com"] and a["author"] == ME
    task = ws.call("log_activity", {"type": "task", "subject": "Follow up", "account_id": "Globex",
                                    "occurred_at": "2026-03-09T09:00:00+00:00"})
    assert task.ok
    lst = lambda **q: ids(ws.call("list_activities", q), "activities")  # noqa: E731
    assert lst() == [task.data["activity"]["id"], a["id"], "act-2", "act-1"]
    assert lst(account_id="acc-1", type="call") == ["act-1"] and lst(deal_id="deal-1") == [a["id"], "act-1"]
    assert lst(since="2026-02-21", until="2026-03-02") == [a["id"], "act-2"]
    assert "in the future" in err(ws, "log_activity", {"type": "call", "subject": "x", "account_id": "acc-1",
                                                       "occurred_at": "2026-03-05T09:00:00+00:00"})
    assert "needs a time zone offset" in err(ws, "log_activity", {"type": "call", "subject": "x", "account_id": "acc-1",
                                                                  "occurred_at": "2026-03-01T09:00:00"})
    assert "belongs to account acc-1, not acc-2" in err(ws, "log_activity", {"type": "note", "subject": "x",
                                                                              "account_id": "acc-2", "deal_id": "deal-1"})
    assert "give account_id or deal_id" in err(ws, "log_activity", {"type": "note", "subject": "x"})
    assert "subject is empty" in err(ws, "log_activity", {"type": "note", "subject": "", "account_id": "acc-1"})
    assert "type" in err(ws, "log_activity", {"type": "lunch", "subject": "x", "account_id": "acc-1"})
    assert "date-time" in err(ws, "list_activities", {"since": "yesterday"})


# --- reports --------------------------------------------------------------------------------------


def parse_csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_export_report_columns_filters_and_sort(ws: Workspace) -> None:
    r = ws.call("export_report", {"report": "accounts", "columns": ["name", "annual_revenue", "currency", "tier"],
                                  "filters": {"tier": "Enterprise"}, "sort": "-annual_revenue"})
    assert parse_csv(r.data["csv"]) == [["name", "annual_revenue", "currency", "tier"],
                                        ["Umbrella", "900000000", "JPY", "Enterprise"],
                                        ["Globex", "25000000.00", "USD", "Enterprise"]]
    assert r.data["rows"] == 2 and r.data["path"] is None and r.event.diff.changes == ()
    d = ws.call("export_report", {"report": "deals", "filters": {"status": "open", "min_amount": 1000}})
    rows = parse_csv(d.data["csv"])
    assert rows[0] == ["id", "name", "account_name", "stage", "amount", "currency", "close_date", "owner"]
    assert [x[0] for x in rows[1:]] == ["deal-1", "deal-2"] and rows[2][4] == "15000.50"


@pytest.mark.parametrize("args,words", [
    ({"report": "deals", "columns": ["tier"]}, "unknown column(s) 'tier' for a deals report"),
    ({"report": "accounts", "columns": ["id", "id"]}, "twice"),
    ({"report": "accounts", "filters": {"stage": "proposal"}}, "unknown filter(s) 'stage'"),
    ({"report": "accounts", "filters": {"limit": 5}}, "unknown filter(s) 'limit'"),
    ({"report": "deals", "filters": {"min_amount": [1]}}, "filters.min_amount"),
    ({"report": "deals", "filters": {"tier": "Enterprise"}}, "unknown filter(s) 'tier' for a deals report"),
    ({"report": "deals", "filters": {"bogus": 1}}, "unknown filter(s) 'bogus'"),
    ({"report": "deals", "filters": {"status": "pending"}}, "filters.status"),
    ({"report": "deals", "sort": "bogus"}, "cannot sort deals"),
    ({"report": "leads"}, "report"),
    ({"report": "deals", "path": "/nowhere/x.csv"}, "folder /nowhere does not exist"),
])
def test_export_report_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "export_report", args)


def test_export_report_with_path_writes_the_file_and_a_protected_path_blocks_it() -> None:
    ws = make()
    r = ws.call("export_report", {"report": "deals", "path": "/reports/deals.csv"})
    assert r.ok and r.data["path"] == "/reports/deals.csv"
    assert ws.table("files.files")["/reports/deals.csv"].content == r.data["csv"]
    assert "saved to /reports/deals.csv" in r.text
    guarded = make(policies=[{"type": "protected_paths", "paths": ["/reports/*"]}])
    message = err(guarded, "export_report", {"report": "deals", "path": "/reports/deals.csv"})
    assert message.startswith("policy_violation: blocked by policy 'protected_paths'") and "Nothing was changed" in message
    assert guarded.diff().changes == ()
    assert guarded.call("export_report", {"report": "deals"}).ok  # without a path nothing is written
    no_files = make(services=("contacts", "crm"))
    assert "no files service" in err(no_files, "export_report", {"report": "deals", "path": "/r.csv"})


SEARCH_FILTERS = st.fixed_dictionaries({}, optional={
    "tier": st.sampled_from(["Enterprise", "smb"]), "status": st.sampled_from(["active", "churned", "renewal_due"]),
    "min_revenue": st.integers(0, 30_000_000), "max_revenue": st.sampled_from(["2,000,000", "30000000.00"]),
    "query": st.sampled_from(["", "globex", "a", "emea"]), "owner": st.sampled_from(["me", "none", DANA]),
})
DEAL_FILTERS = st.fixed_dictionaries({}, optional={
    "status": st.sampled_from(["open", "closed", "won", "lost"]), "min_amount": st.integers(0, 200_000),
    "closing_before": st.sampled_from(["2026-04-01", "2026-12-31"]), "query": st.sampled_from(["", "renewal", "i"]),
})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(report=st.sampled_from(["accounts", "deals"]), data_=st.data(),
       sort=st.sampled_from(["", "id", "-id", "name", "-name"]),
       names=st.lists(st.sampled_from(["Acme, Inc.", 'Quote "Co"', "Line\nbreak", "Plain"]), max_size=4))
def test_export_round_trips_through_csv_and_matches_search(report: str, data_: Any, sort: str, names: list[str]) -> None:
    ws = make()
    for i, n in enumerate(names):  # awkward CSV content: commas, quotes, newlines
        a = ws.call("create_account", {"name": f"{n} {i}", "description": n, "status": "active", "tier": "SMB"})
        assert a.ok, a.text
        assert ws.call("create_deal", {"account_id": a.data["account"]["id"], "name": f"{n} deal", "amount": i}).ok
    filters = data_.draw(SEARCH_FILTERS if report == "accounts" else DEAL_FILTERS)
    columns = list(ACCOUNT_COLUMNS if report == "accounts" else DEAL_COLUMNS)
    r = ws.call("export_report", {"report": report, "columns": columns, "filters": filters, "sort": sort})
    assert r.ok, r.text
    rows = list(csv.DictReader(io.StringIO(r.data["csv"])))
    search = ws.call("search_" + report, {**filters, **({"sort": sort} if sort else {}), "limit": 100})
    found = search.data[report]
    assert [row["id"] for row in rows] == [x["id"] for x in found] == r.data["ids"]
    money = "annual_revenue" if report == "accounts" else "amount"
    for row, x in zip(rows, found):
        assert row["name"] == x["name"] and row[money] == (x[money] or "") and row["currency"] == x["currency"]


# --- predicates and MCP ---------------------------------------------------------------------------


def test_predicates_work_on_crm_tables(ws: Workspace) -> None:
    ws.call("update_deal", {"deal_id": "deal-1", "stage": "closed_won"})
    ws.call("update_account", {"account_id": "acc-1", "status": "active", "renewal_date": "2027-04-01"})
    checks = parse_predicates([
        {"kind": "record_exists", "table": "crm.deals", "where": {"id": "deal-1", "stage": "closed_won",
                                                                  "amount_minor": {"gte": 10_000_000}}},
        {"kind": "record_exists", "table": "crm.accounts", "where": {"status": "active"}, "count": 2},
        {"kind": "record_absent", "table": "crm.deals", "where": {"stage": "negotiation"}},
        {"kind": "unchanged", "scope": "crm.contacts"},
        {"kind": "unchanged", "scope": "crm.deals:deal-2"},
        {"kind": "only_changed", "scopes": ["crm.deals:deal-1", "crm.accounts"]},
    ])
    result = evaluate(checks, ws)
    assert [r.passed for r in result.results] == [True] * 6, result.to_json()
    ws.call("update_deal", {"deal_id": "deal-2", "next_step": "Call"})
    after = evaluate(checks, ws)
    assert [r.passed for r in after.results] == [True, True, True, True, False, False]


def test_mcp_lists_and_calls_crm_tools() -> None:
    env = PythonEnvironment("crm", "CRM", "Review accounts.", make)
    ep = Episode(env)

    async def go() -> tuple[list[Any], Any]:
        async with Client(build_server(ep)) as c:
            return (await c.list_tools()).tools, await c.call_tool("search_deals", {"status": "open"})

    tools, result = anyio.run(go)
    crm = {t.name: t for t in tools if t.name in all_services()["crm"].tools}
    assert set(crm) == set(all_services()["crm"].tools)
    for name, t in crm.items():
        assert t.input_schema == ep.workspace.tools[name].strict_input_schema  # MCP serves the strict form by default
    assert crm["export_report"].input_schema["properties"]["report"]["enum"] == ["accounts", "deals"]
    assert crm["search_accounts"].annotations.read_only_hint is True
    assert not result.is_error and [d["id"] for d in result.structured_content["deals"]] == ["deal-1", "deal-2"]
    assert json.dumps(result.structured_content)


# --- inactive accounts and last contact -----------------------------------------------------------


def test_inactive_status_and_last_contact_from_logged_activities(ws: Workspace) -> None:
    """Last contact is the latest call, meeting or e-mail that has happened (not a note or a planned task), or a
    recorded last_contact when later; logging an activity changes only the activity log."""
    acct = lambda ref: ws.call("get_account", {"account_id": ref}).data["account"]  # noqa: E731
    assert acct("acc-1")["last_contact"] == "2026-02-20T15:00:00+00:00"  # act-1, a call on deal-1
    assert acct("acc-2")["last_contact"] is None  # a note is no contact
    before = ws.snapshot()
    assert ws.call("log_activity", {"type": "email", "subject": "Renewal terms", "account_id": "acc-2",
                                    "occurred_at": "2026-03-01T09:00:00+00:00"}).ok
    assert ws.call("log_activity", {"type": "task", "subject": "Call back", "account_id": "acc-1",
                                    "occurred_at": "2026-03-20T09:00:00+00:00"}).ok
    assert {c.table for c in ws.diff(before, ws.snapshot()).changes} == {"crm.activities"}
    assert acct("acc-2")["last_contact"] == "2026-03-01T09:00:00+00:00"
    assert acct("acc-1")["last_contact"] == "2026-02-20T15:00:00+00:00"  # the future task is not a contact
    search = lambda **q: ids(ws.call("search_accounts", q), "accounts")  # noqa: E731
    assert search(contacted_before="2026-02-25") == ["acc-1"]
    assert search(contacted_after="2026-02-25") == ["acc-2"]
    assert search(never_contacted=True) == ["acc-3"]
    assert search(sort="-last_contact") == ["acc-2", "acc-1", "acc-3"]
    r = ws.call("update_account", {"account_id": "acc-2", "status": "inactive"})
    assert r.ok and r.data["changed"] == ["status"] and search(status="inactive") == ["acc-2"]
    assert "last contact 2026-03-01" in ws.call("search_accounts", {"status": "inactive"}).text
    csv_text = ws.call("export_report", {"report": "accounts", "columns": ["id", "status", "last_contact"],
                                         "filters": {"never_contacted": False}}).data["csv"]
    assert parse_csv(csv_text) == [["id", "status", "last_contact"], ["acc-1", "renewal_due", "2026-02-20T15:00:00+00:00"],
                                   ["acc-2", "inactive", "2026-03-01T09:00:00+00:00"]]


def test_recorded_last_contact_counts_when_later_and_needs_an_offset() -> None:
    accounts = [{**ACCOUNTS[0], "last_contact": "2026-02-27T08:00:00+00:00"}, ACCOUNTS[1], ACCOUNTS[2]]
    ws = make(accounts=accounts)
    assert ws.call("get_account", {"account_id": "acc-1"}).data["account"]["last_contact"] == "2026-02-27T08:00:00+00:00"
    with pytest.raises(SpecError, match="last_contact needs a time zone offset"):
        make(accounts=[{**ACCOUNTS[0], "last_contact": "2026-02-27T08:00:00"}])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["call", "meeting", "email", "note", "task"]),
                          st.integers(min_value=0, max_value=20 * 24)), max_size=8))
def test_last_contact_is_the_latest_past_contact(acts: list[tuple[str, int]]) -> None:
    """Whatever is logged (all before the clock's 2 March), last contact equals the latest call/meeting/e-mail."""
    from datetime import datetime, timedelta, timezone
    ws = make()
    start = datetime(2026, 2, 10, tzinfo=timezone.utc)
    expect = datetime(2026, 2, 20, 15, tzinfo=timezone.utc)
    for kind, hours in acts:
        when = start + timedelta(hours=hours)
        assert ws.call("log_activity", {"type": kind, "subject": "x", "account_id": "acc-1",
                                        "occurred_at": when.isoformat()}).ok
        if kind in ("call", "meeting", "email"):
            expect = max(expect, when)
    got = ws.call("get_account", {"account_id": "acc-1"}).data["account"]["last_contact"]
    assert datetime.fromisoformat(got) == expect
