"""Fuzzing every tool of every service: no call raises, none ends in an internal error, invariants hold.

The workspace is the benchmarks' standard one with every non-blocking service enabled (a service
added later is fuzzed without being listed here), plus a little data for the services the standard
data leaves empty.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.standard_workspace import NOW, USER, standard_data
from workspace_sim import Workspace, WorkspaceConfig, all_services
from workspace_sim.core.state import build_state

DESK = {
    "crm": {"accounts": [{"id": "acc-1", "name": "Globex", "tier": "Enterprise", "annual_revenue": "2500000",
                          "owner": "person01@example.com", "status": "renewal_due", "renewal_date": "2026-04-01"},
                         {"id": "acc-2", "name": "Initech", "currency": "JPY", "annual_revenue": 90000000}],
            "contacts": [{"email": "person02@example.com", "account_id": "acc-1", "role": "Champion"},
                         {"email": "buyer@globex.com", "account_id": "acc-1", "name": "Bo Buyer"}],
            "deals": [{"id": "deal-1", "name": "Globex renewal", "account_id": "acc-1", "amount": "120000.50",
                       "stage": "negotiation", "close_date": "2026-03-30"},
                      {"id": "deal-2", "name": "Initech pilot", "account_id": "acc-2", "amount": 5000, "currency": "JPY",
                       "stage": "closed_won"}],
            "activities": [{"id": "act-1", "type": "call", "subject": "Pricing", "deal_id": "deal-1"}]},
    "kb": {"spaces": [{"key": "IT", "name": "IT Help"}],
           "articles": [{"id": "kb-1", "space": "IT", "title": "Reset VPN", "body": "Open the portal.",
                         "tags": ["vpn"], "related": ["OPS-1"]},
                        {"id": "kb-2", "space": "HR", "title": "Leave", "body": "25 days.", "status": "draft"}]},
}
EXTRA = {
    **DESK,
    "notes": {"notebooks": [{"id": "nb-1", "name": "Work"}],
              "notes": [{"id": "n1", "title": "Plan", "body": "budget", "notebook": "nb-1", "tags": ["q2"]},
                        {"id": "n2", "title": "Shared", "body": "x", "owner": "person01@example.com",
                         "collaborators": [{"email": USER, "permission": "view"}]}]},
    "todo": {"lists": [{"id": "l1", "name": "Work"}],
             "tasks": [{"id": "t1", "list_id": "l1", "title": "Send report", "due_date": "2026-03-03"},
                       {"id": "t2", "list_id": "l1", "title": "Draft", "parent": "t1"},
                       {"id": "t3", "title": "Done", "status": "completed"}]},
}
SERVICES = sorted(n for n, s in all_services().items() if not s.blocking)
BASE = Workspace.create(WorkspaceConfig(user=USER, now=NOW, services=SERVICES),
                        {**standard_data(), **{k: v for k, v in EXTRA.items() if k in SERVICES}})
TOOLS = sorted(BASE.tools)
IDS = ["msg-0001", "msg-0002", "evt-0001", "OPS-1", "OPS-2", "OPS", "person01@example.com",
       "ana.lopez@example.com", "/projects/p1/docs/file001.txt", "/projects/p1", "x@y", "", "../../etc/passwd",
       "n1", "n2", "nb-1", "Work", "t1", "t2", "t3", "l1", "inbox", "Person 1", "2026-03-04",
       "acc-1", "Globex", "deal-1", "deal-2", "kb-1", "kb-2", "IT", "accounts", "deals", "closed_won", "-amount",
       "renewal_due", "/projects/p1/report.csv", "1,000.50"]
VALUE = st.recursive(
    st.one_of(st.sampled_from(IDS), st.integers(-5, 500), st.booleans(), st.none(), st.text(max_size=12),
              st.sampled_from(["2026-03-03T10:00:00+00:00", "2026-03-03T11:00:00", "tomorrow", "Resolved",
                               "In Progress", "is:unread from:person01", "high", "blocks", "accepted"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["old_text", "new_text", "x"]), inner, max_size=2)),
    max_leaves=6,
)


@st.composite
def calls(draw):  # type: ignore[no-untyped-def]
    tool = draw(st.sampled_from(TOOLS + ["bogus_tool"]))
    props = list(BASE.tools[tool].input_schema.get("properties", {})) if tool in BASE.tools else ["x"]
    names = draw(st.lists(st.sampled_from(props + ["unexpected"]), max_size=len(props) + 1, unique=True)) if props else []
    return tool, {n: draw(VALUE) for n in names}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls(), min_size=1, max_size=12))
def test_random_calls_on_all_services(seq) -> None:  # type: ignore[no-untyped-def]
    ws = BASE.fork()
    for tool, args in seq:
        before = ws.state
        r = ws.call(tool, args)
        assert r.ok or r.error.code != "internal_error", f"{tool}({args}) -> {r.error.message}"
        if not r.ok:
            assert ws.content_hash == before.content_hash
        assert isinstance(r.text, str)
    tables = {name: dict(t.items()) for name, t in ws.state.tables.items()}
    assert build_state(tables, ws.state.now).content_hash == ws.content_hash


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls(), max_size=10))
def test_all_services_survive_json_round_trip(seq) -> None:  # type: ignore[no-untyped-def]
    from workspace_sim import Workspace

    ws = BASE.fork()
    for tool, args in seq:
        ws.call(tool, args)
    back = Workspace.from_json(ws.to_json())
    assert back.content_hash == ws.content_hash and back.to_json() == ws.to_json()
