"""Behaviour and errors of every tickets tool, workflows (legal and illegal moves) and initial data."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import call_error, need

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.services import all_services
from workspace_sim.services.tickets import DEFAULT_WORKFLOW, parse_query

ME, BOB, ANA = "me@acme.com", "bob@acme.com", "ana@acme.com"
KANBAN = {"To Do": ["Doing"], "Doing": ["To Do", "Done"], "Done": []}
PROJECTS = [{"key": "OPS", "name": "Operations"}, {"key": "WEB", "name": "Website", "workflow": KANBAN}]
TICKETS = [
    {"key": "OPS-1", "title": "Login page returns 500", "priority": "High", "assignee": BOB, "reporter": ANA,
     "labels": ["bug", "auth"], "description": "Users cannot log in since the deploy.",
     "comments": [{"author": ANA, "body": "Started after release 4.2"}], "due_date": "2026-03-01"},
    {"key": "OPS-2", "title": "Rotate TLS certificates", "status": "In Progress", "assignee": ME, "labels": ["infra"],
     "due_date": "2026-03-20"},
    {"key": "OPS-7", "title": "Old ticket", "status": "Closed", "priority": "low"},
    {"key": "WEB-1", "title": "New landing page", "assignee": ANA, "links": [{"type": "blocks", "target": "OPS-2"}]},
]


def make(services: list[str] | None = None, tickets: list[dict] | None = None, **extra: object) -> Workspace:
    data: dict = {"tickets": {"projects": PROJECTS, "tickets": TICKETS if tickets is None else tickets}}
    data.update(extra)
    return Workspace.create(WorkspaceConfig(services=services or ["tickets"], user=ME), data)


@pytest.fixture
def ws() -> Workspace:
    return make()


err = call_error


def keys(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [t["key"] for t in result.data["tickets"]]


# --- initial data ---------------------------------------------------------------------------------


def test_initial_data_is_completed(ws: Workspace) -> None:
    tickets = ws.table("tickets.tickets")
    assert tickets["OPS-1"].status == "Open" and tickets["WEB-1"].status == "To Do"
    assert tickets["OPS-1"].priority == "high" and tickets["OPS-1"].project == "OPS"
    assert tickets["OPS-1"].comments[0].id == "OPS-1-c1" and tickets["OPS-1"].comments[0].created == ws.config.now
    assert [link.model_dump() for link in tickets["OPS-2"].links] == [{"type": "is_blocked_by", "target": "WEB-1"}]
    assert ws.table("tickets.projects")["OPS"].workflow == DEFAULT_WORKFLOW
    assert ws.table("tickets.projects")["OPS"].done_statuses == ["Closed", "Resolved"]
    assert ws.table("tickets.projects")["OPS"].statuses() == [
        "Open", "In Progress", "Resolved", "Closed", "In Review", "Reopened"]
    assert ws.export_data()["tickets"]["tickets"][0]["key"] == "OPS-1"


def test_missing_projects_are_created_with_the_default_workflow() -> None:
    ws = Workspace.create(WorkspaceConfig(services=["tickets"], user=ME),
                          {"tickets": {"tickets": [{"key": "SEC-4", "title": "Audit"}]}})
    assert ws.table("tickets.projects")["SEC"].workflow == DEFAULT_WORKFLOW
    assert ws.call("create_ticket", {"project": "SEC", "title": "Next"}).data["ticket"]["key"] == "SEC-5"


@pytest.mark.parametrize("tickets,projects,where,words", [
    ([{"key": "ops-1", "title": "x"}], [], "data.tickets.tickets[0]", "must look like PROJECT-123"),
    ([{"key": "OPS-1", "title": " "}], [], "data.tickets.tickets[0]", "empty title"),
    ([{"key": "OPS-1", "title": "x", "project": "WEB"}], [], "data.tickets.tickets[0]", "belongs to project OPS"),
    ([{"key": "OPS-1", "title": "x", "priority": "blocker"}], [], "data.tickets.tickets[0]", "priority"),
    ([{"key": "OPS-1", "title": "x", "assignee": "bob"}], [], "data.tickets.tickets[0]", "assignee/reporter 'bob'"),
    ([{"key": "OPS-1", "title": "x", "labels": ["two words"]}], [], "data.tickets.tickets[0]", "without spaces"),
    ([{"key": "OPS-1", "title": "x", "links": [{"type": "blocks", "target": "OPS-1"}]}], [],
     "data.tickets.tickets[0]", "links to itself"),
    ([{"key": "OPS-1", "title": "x", "links": [{"type": "blocks", "target": "OPS-9"}]}], [],
     "data.tickets.tickets[OPS-1].links[0]", "OPS-9, which does not exist"),
    ([{"key": "OPS-1", "title": "x", "status": "Doing"}], [], "data.tickets.tickets[OPS-1].status",
     "'Doing' is not a status of project OPS"),
    ([], [{"key": "O"}], "data.tickets.projects[0]", "2-10 capital letters"),
    ([], [{"key": "OPS", "workflow": {"A": ["B"]}}], "data.tickets.projects[0]", "['B'], which are not statuses"),
    ([], [{"key": "OPS", "workflow": {"A": []}, "initial_status": "B"}], "data.tickets.projects[0]",
     "initial_status 'B'"),
    ([], [{"key": "OPS", "workflow": {"A": []}, "done_statuses": ["Z"]}], "data.tickets.projects[0]", "done_statuses"),
])
def test_bad_initial_data_is_refused_with_its_path(tickets: list, projects: list, where: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        Workspace.create(WorkspaceConfig(services=["tickets"], user=ME),
                         {"tickets": {"projects": projects, "tickets": tickets}})
    assert str(info.value).startswith(where) and words in str(info.value)


# --- search ---------------------------------------------------------------------------------------


def test_search_filters_and_text(ws: Workspace) -> None:
    assert keys(ws.call("search_tickets", {})) == ["OPS-1", "OPS-2", "OPS-7", "WEB-1"]
    assert keys(ws.call("search_tickets", {"query": "login"})) == ["OPS-1"]
    assert keys(ws.call("search_tickets", {"query": "release 4.2"})) == ["OPS-1"]  # words found in a comment
    assert keys(ws.call("search_tickets", {"query": '"since the deploy"'})) == ["OPS-1"]
    assert keys(ws.call("search_tickets", {"query": '"deploy since"'})) == []
    assert keys(ws.call("search_tickets", {"query": "assignee:me"})) == ["OPS-2"]
    assert keys(ws.call("search_tickets", {"query": "assignee:none"})) == ["OPS-7"]
    assert keys(ws.call("search_tickets", {"query": 'status:"in progress"'})) == ["OPS-2"]
    assert keys(ws.call("search_tickets", {"query": "project:web"})) == ["WEB-1"]
    assert keys(ws.call("search_tickets", {"query": "priority:HIGH label:bug reporter:ana@acme.com"})) == ["OPS-1"]
    assert keys(ws.call("search_tickets", {"query": "is:done"})) == ["OPS-7"]
    assert keys(ws.call("search_tickets", {"query": "is:open project:OPS"})) == ["OPS-1", "OPS-2"]
    assert keys(ws.call("search_tickets", {"query": "is:overdue"})) == ["OPS-1"]  # due 1 Mar, today is 2 Mar
    assert keys(ws.call("search_tickets", {"query": "is:unassigned"})) == ["OPS-7"]
    assert keys(ws.call("search_tickets", {"project": "OPS", "status": "closed"})) == ["OPS-7"]
    assert keys(ws.call("search_tickets", {"assignee": "me", "label": "INFRA", "priority": "medium"})) == ["OPS-2"]


def test_search_paging_and_rendering(ws: Workspace) -> None:
    page = ws.call("search_tickets", {"limit": 2, "offset": 1})
    assert keys(page) == ["OPS-2", "OPS-7"] and page.data["total"] == 4
    assert page.text.splitlines()[0] == "Tickets 2-3 of 4:"
    assert "- OPS-2 [In Progress] (medium) Rotate TLS certificates - me@acme.com, due 2026-03-20" in page.text
    assert ws.call("search_tickets", {"query": "nothing-like-this"}).text == "No tickets match."


def test_search_orders_numbers_naturally() -> None:
    ws = make(tickets=[{"key": f"OPS-{n}", "title": f"T{n}"} for n in (10, 2, 1)])
    assert keys(ws.call("search_tickets", {})) == ["OPS-1", "OPS-2", "OPS-10"]


@pytest.mark.parametrize("args,words", [
    ({"query": "owner:bob"}, "unknown filter owner:"),
    ({"query": 'status:"Open'}, "unbalanced quote"),
    ({"query": "status:"}, "filter status: has no value"),
    ({"query": "priority:blocker"}, "priority 'blocker' is not one of lowest, low, medium, high, highest, urgent, critical or unset"),
    ({"query": "priority:=>high"}, "compare with >=, >, <=, <"),
    ({"assignee": "Nobody Known"}, "assignee 'Nobody Known' is not an e-mail address"),
    ({"query": "is:stale"}, "is:stale is not supported"),
    ({"query": "project:NOPE"}, "project 'NOPE' not found; projects: OPS, WEB"),
    ({"priority": "P1"}, "invalid arguments for search_tickets: priority"),
    ({"sort": "random"}, "invalid arguments for search_tickets: sort"),
    ({"limit": 0}, "limit must be between 1 and 100"),
    ({"offset": -1}, "offset must be zero or positive"),
    ({"query": "x" * 1001}, "longer than 1000"),
])
def test_search_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "search_tickets", args)


def test_query_parser_keeps_quoted_colons_as_text() -> None:
    assert parse_query('"error: timeout" label:x  Foo') == ([("label", "x")], ["error: timeout", "foo"])


# --- get / create / update ------------------------------------------------------------------------


def test_get_ticket(ws: Workspace) -> None:
    r = ws.call("get_ticket", {"key": "ops-1"})
    assert r.data["key"] == "OPS-1" and r.data["allowed_transitions"] == ["In Progress", "Resolved", "Closed"]
    assert r.data["comments"][0]["body"] == "Started after release 4.2" and r.data["due_date"] == "2026-03-01"
    assert "Comment OPS-1-c1 by ana@acme.com" in r.text and "Can move to: In Progress, Resolved, Closed" in r.text
    assert ws.call("get_ticket", {"key": "WEB-1"}).data["links"] == [{"type": "blocks", "target": "OPS-2"}]
    assert "did you mean OPS-1" in err(ws, "get_ticket", {"key": "OPS-11"})
    assert "must look like PROJECT-123" in err(ws, "get_ticket", {"key": "login bug"})


def test_create_ticket(ws: Workspace) -> None:
    r = ws.call("create_ticket", {"project": "ops", "title": " Disk full on db-3 ", "description": "90% used",
                                  "priority": "highest", "assignee": BOB, "labels": ["infra", "infra", "db"],
                                  "due_date": "2026-03-04"})
    assert r.ok, r.text
    t = r.data["ticket"]
    assert t["key"] == "OPS-8"  # after the highest existing number, not the count
    assert (t["title"], t["status"], t["priority"], t["assignee"], t["reporter"]) == (
        "Disk full on db-3", "Open", "highest", BOB, ME)
    assert t["labels"] == ["infra", "db"] and t["due_date"] == "2026-03-04" and t["created"] == "2026-03-02T09:00:00Z"
    web = ws.call("create_ticket", {"project": "WEB", "title": "Footer", "assignee": "me"}).data["ticket"]
    assert (web["key"], web["status"], web["assignee"]) == ("WEB-2", "To Do", ME)
    assert [c.kind for c in r.diff] == ["added"]


@pytest.mark.parametrize("args,words", [
    ({"project": "HR"}, "project 'HR' not found; projects: OPS, WEB"),
    ({"title": "  "}, "title is empty"),
    ({"title": "x" * 301}, "at most 300"),
    ({"priority": "P1"}, "invalid arguments for create_ticket: priority"),
    ({"assignee": "bob@"}, "assignee 'bob@'"),
    ({"labels": ["has space"]}, "without spaces"),
    ({"labels": ["bad\ud800"]}, "argument labels[0] contains characters that are not valid Unicode"),
    ({"description": "bad \ud800 text"}, "description contains characters that are not valid Unicode"),
    ({"labels": [f"l{i}" for i in range(51)]}, "at most 50"),
    ({"due_date": "next friday"}, "due_date 'next friday' is not a date in the form YYYY-MM-DD"),
    ({"status": "Done"}, "status: Extra inputs are not permitted"),
])
def test_create_ticket_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "create_ticket", {"project": "OPS", "title": "T", **args})


def test_update_ticket(ws: Workspace) -> None:
    ws.call("get_ticket", {"key": "OPS-2"})  # one tick, so `updated` changes visibly
    r = ws.call("update_ticket", {"key": "OPS-2", "title": "Rotate TLS certs", "priority": "high",
                                  "add_labels": ["security"], "remove_labels": ["infra"], "due_date": ""})
    assert r.data["changed"] == ["due_date", "labels", "priority", "title"]
    t = ws.table("tickets.tickets")["OPS-2"]
    assert (t.title, t.priority, t.labels, t.due_date) == ("Rotate TLS certs", "high", ["security"], None)
    assert t.updated == ws.events()[-1].sim_time and t.status == "In Progress"
    replaced = ws.call("update_ticket", {"key": "OPS-2", "labels": ["a", "b"], "description": "new text"})
    assert replaced.data["changed"] == ["description", "labels"]
    same = ws.call("update_ticket", {"key": "OPS-2", "priority": "high"})
    assert same.ok and same.data["changed"] == [] and not same.diff


def test_update_ticket_errors(ws: Workspace) -> None:
    assert "nothing to change" in err(ws, "update_ticket", {"key": "OPS-2"})
    assert "not_found" in err(ws, "update_ticket", {"key": "OPS-99", "title": "x"})
    assert "OPS-2 has no label bug; its labels are infra" in err(
        ws, "update_ticket", {"key": "OPS-2", "remove_labels": ["bug"]})
    assert "status: Extra inputs" in err(ws, "update_ticket", {"key": "OPS-2", "status": "Closed"})
    assert "YYYY-MM-DD" in err(ws, "update_ticket", {"key": "OPS-2", "due_date": "2026-02-30"})
    assert "title is empty" in err(ws, "update_ticket", {"key": "OPS-2", "title": ""})


# --- workflow -------------------------------------------------------------------------------------


def test_legal_transitions_follow_the_default_workflow(ws: Workspace) -> None:
    path = ["In Progress", "In Review", "Resolved", "Closed", "Reopened", "In Progress"]
    for status in path:
        r = ws.call("transition_ticket", {"key": "OPS-1", "status": status.lower()})
        assert r.ok, r.text
        assert r.data["ticket"]["status"] == status
        assert r.data["ticket"]["allowed_transitions"] == DEFAULT_WORKFLOW[status]
    assert len(ws.table("tickets.tickets")["OPS-1"].comments) == 1


def test_illegal_transitions_list_the_allowed_ones(ws: Workspace) -> None:
    assert err(ws, "transition_ticket", {"key": "OPS-7", "status": "In Progress"}) == (
        "invalid_argument: OPS-7 cannot move from Closed to In Progress; allowed from Closed: Reopened")
    assert "From Open it can move to In Progress, Resolved, Closed" in err(
        ws, "transition_ticket", {"key": "OPS-1", "status": "Doing"})
    assert "its statuses are Open, In Progress, Resolved, Closed, In Review, Reopened" in err(
        ws, "transition_ticket", {"key": "OPS-1", "status": "Done"})
    assert "OPS-1 is already Open" in err(ws, "transition_ticket", {"key": "OPS-1", "status": "open"})
    assert "not_found" in err(ws, "transition_ticket", {"key": "OPS-9", "status": "Closed"})
    assert "comment is empty" in err(ws, "transition_ticket", {"key": "OPS-1", "status": "Resolved", "comment": " "})


def test_custom_workflow_and_final_status(ws: Workspace) -> None:
    assert "allowed from To Do: Doing" in err(ws, "transition_ticket", {"key": "WEB-1", "status": "Done"})
    assert ws.call("transition_ticket", {"key": "WEB-1", "status": "Doing"}).ok
    done = ws.call("transition_ticket", {"key": "WEB-1", "status": "Done"})
    assert "Can move to: nothing (final status)" in done.text
    assert "allowed from Done: nothing (final status)" in err(
        ws, "transition_ticket", {"key": "WEB-1", "status": "To Do"})
    assert keys(ws.call("search_tickets", {"query": "is:done project:WEB"})) == ["WEB-1"]


def test_transition_with_comment_is_one_change_and_satisfies_the_policy() -> None:
    ws = Workspace.create(WorkspaceConfig(services=["tickets"], user=ME, policies=[{"type": "resolution_comment"}]),
                          {"tickets": {"projects": PROJECTS, "tickets": TICKETS}})
    blocked = ws.call("transition_ticket", {"key": "OPS-1", "status": "Resolved"})
    assert blocked.error.code == "policy_violation" and ws.table("tickets.tickets")["OPS-1"].status == "Open"
    r = ws.call("transition_ticket", {"key": "OPS-1", "status": "Resolved", "comment": "Rolled back 4.2"})
    assert r.ok, r.text
    (change,) = r.diff
    assert set(change.fields) == {"status", "comments", "updated"}
    new = r.data["ticket"]["comments"][-1]
    assert (new["author"], new["body"]) == (ME, "Rolled back 4.2") and new["id"].startswith("cmt-")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moves=st.lists(st.sampled_from([*DEFAULT_WORKFLOW, "Done", "open", "bogus"]), max_size=12))
def test_random_transitions_only_ever_follow_the_workflow(moves: list[str]) -> None:
    ws = make()
    for status in moves:
        before = ws.table("tickets.tickets")["OPS-1"].status
        r = ws.call("transition_ticket", {"key": "OPS-1", "status": status})
        after = ws.table("tickets.tickets")["OPS-1"].status
        legal = [s for s in DEFAULT_WORKFLOW[before] if s.lower() == status.lower()]
        assert r.ok == bool(legal), r.text
        assert after == (legal[0] if legal else before)
        if not r.ok:
            assert "allowed from" in r.error.message or "it can move to" in r.error.message


# --- comments, assignment, links ------------------------------------------------------------------


def test_add_comment(ws: Workspace) -> None:
    r = ws.call("add_comment", {"key": "OPS-1", "body": "  Looking into it  "})
    assert r.data["key"] == "OPS-1" and r.data["comment"]["body"] == "Looking into it"
    assert r.data["comment"]["author"] == ME and r.data["comment"]["created"] == "2026-03-02T09:00:00Z"
    bodies = [c.body for c in ws.table("tickets.tickets")["OPS-1"].comments]
    assert bodies == ["Started after release 4.2", "Looking into it"]
    second = ws.call("add_comment", {"key": "OPS-1", "body": "Found it"})
    assert second.data["comment"]["id"] != r.data["comment"]["id"]
    assert "comment is empty" in err(ws, "add_comment", {"key": "OPS-1", "body": ""})
    assert "at most 20000" in err(ws, "add_comment", {"key": "OPS-1", "body": "x" * 20001})
    assert "not_found" in err(ws, "add_comment", {"key": "OPS-404", "body": "hi"})


def test_assign_ticket_without_contacts(ws: Workspace) -> None:
    r = ws.call("assign_ticket", {"key": "OPS-7", "assignee": "Carol@Partner.org"})
    assert r.data["ticket"]["assignee"] == "carol@partner.org"
    assert ws.call("assign_ticket", {"key": "OPS-7", "assignee": None}).data["ticket"]["assignee"] is None
    again = ws.call("assign_ticket", {"key": "OPS-7", "assignee": None})
    assert again.ok and not again.diff
    assert "assignee 'carol'" in err(ws, "assign_ticket", {"key": "OPS-7", "assignee": "carol"})
    assert "field required" in err(ws, "assign_ticket", {"key": "OPS-7"}).lower()


def test_assign_ticket_checks_the_directory() -> None:
    need("contacts" in all_services(), "assign_ticket checks assignees against the contacts directory")
    ws = make(services=["tickets", "contacts"], contacts={"people": [
        {"email": BOB, "name": "Bob Stone"}, {"email": "bobby@acme.com", "name": "Bobby Tables"}]})
    assert ws.call("assign_ticket", {"key": "OPS-7", "assignee": BOB}).ok
    assert ws.call("assign_ticket", {"key": "OPS-7", "assignee": "me"}).data["ticket"]["assignee"] == ME
    message = err(ws, "assign_ticket", {"key": "OPS-7", "assignee": "bobb@acme.com"})
    assert "not_found: assignee bobb@acme.com is not in the directory; did you mean" in message
    assert "bob@acme.com" in message
    assert "not in the directory" in err(ws, "create_ticket", {"project": "OPS", "title": "x", "assignee": ANA})


def test_link_tickets_both_ways(ws: Workspace) -> None:
    r = ws.call("link_tickets", {"key": "ops-1", "type": "duplicates", "target": "OPS-7"})
    assert r.data == {"key": "OPS-1", "type": "duplicates", "target": "OPS-7", "created": True}
    t = ws.table("tickets.tickets")
    assert [x.model_dump() for x in t["OPS-1"].links] == [{"type": "duplicates", "target": "OPS-7"}]
    assert [x.model_dump() for x in t["OPS-7"].links] == [{"type": "is_duplicated_by", "target": "OPS-1"}]
    again = ws.call("link_tickets", {"key": "OPS-1", "type": "duplicates", "target": "OPS-7"})
    assert again.data["created"] is False and not again.diff
    back = ws.call("link_tickets", {"key": "OPS-2", "type": "is_blocked_by", "target": "WEB-1"})
    assert back.data["created"] is False and not back.diff  # already recorded from WEB-1's side
    assert "cannot be linked to itself" in err(
        ws, "link_tickets", {"key": "OPS-1", "type": "relates_to", "target": "ops-1"})
    assert "not_found" in err(ws, "link_tickets", {"key": "OPS-1", "type": "relates_to", "target": "OPS-99"})
    assert "invalid_argument" in err(ws, "link_tickets", {"key": "OPS-1", "type": "causes", "target": "OPS-2"})


# --- persistence and schema -----------------------------------------------------------------------


def test_state_survives_json_round_trip(ws: Workspace) -> None:
    ws.call("create_ticket", {"project": "OPS", "title": "New", "labels": ["x"], "due_date": "2026-04-01"})
    ws.call("transition_ticket", {"key": "OPS-1", "status": "In Progress", "comment": "on it"})
    back = Workspace.from_json(ws.to_json())
    assert back.content_hash == ws.content_hash and back.export_data() == ws.export_data()
    assert back.call("create_ticket", {"project": "OPS", "title": "Next"}).data["ticket"]["key"] == "OPS-9"


def test_every_tool_is_documented_and_hinted() -> None:
    tools = all_services()["tickets"].tools
    assert set(tools) == {"search_tickets", "get_ticket", "create_ticket", "update_ticket", "transition_ticket",
                          "add_comment", "assign_ticket", "link_tickets"}
    assert tools["search_tickets"].mcp_annotations()["readOnlyHint"] is True
    assert tools["assign_ticket"].mcp_annotations()["idempotentHint"] is True
    for tool in tools.values():
        assert all(p.get("description") for p in tool.input_schema["properties"].values()), tool.name
    assert tools["create_ticket"].input_schema["properties"]["priority"]["enum"] == [
        "lowest", "low", "medium", "high", "highest", "urgent", "critical", "unset"]


# --- priorities, departments, outside reporters, watchers, names ----------------------------------

SCALE = ["lowest", "low", "medium", "high", "highest", "urgent", "critical"]
DESK = [
    {"key": "HD-1", "title": "Refund not received", "priority": "urgent", "department": "Billing",
     "category": "Refund request", "reporter": "priya@acme-corp.example", "reporter_name": "Priya from Acme Corp"},
    {"key": "HD-2", "title": "VPN drops", "priority": None, "department": "IT", "category": "Network"},
    {"key": "HD-3", "title": "Site down", "priority": "critical", "department": "IT", "reporter_name": "Walk-in visitor"},
    {"key": "HD-4", "title": "Typo on invoice", "priority": "low", "department": "billing", "category": "Invoice"},
    {"key": "HD-5", "title": "New laptop", "priority": "unset", "department": "IT"},
    {"key": "HD-6", "title": "Password reset", "priority": "highest"},
]
DIRECTORY = {"people": [
    {"email": ME, "name": "Morgan Lee"}, {"email": BOB, "name": "Bob Stone", "title": "Engineer"},
    {"email": ANA, "name": "Ana Ruiz"}, {"email": "dana.reyes@acme.com", "name": "Dana Reyes", "title": "VP Sales"},
    {"email": "dana.reyes2@acme.com", "name": "Dana Reyes", "title": "Intern"}]}


def desk(**kw: object) -> Workspace:
    return make(services=["tickets", "contacts"], tickets=DESK, contacts=DIRECTORY, **kw)


def test_unset_priority_is_stored_as_none_and_shown_as_unset() -> None:
    ws = desk()
    t = ws.table("tickets.tickets")
    assert t["HD-2"].priority is None and t["HD-5"].priority is None and t["HD-1"].priority == "urgent"
    r = ws.call("get_ticket", {"key": "HD-2"})
    assert r.data["priority"] is None and r.text.startswith("HD-2 [Open] (unset) VPN drops")
    made = ws.call("create_ticket", {"project": "HD", "title": "Triage me", "priority": "unset"})
    assert made.data["ticket"]["priority"] is None
    up = ws.call("update_ticket", {"key": "HD-1", "priority": "unset"})
    assert up.data["changed"] == ["priority"] and ws.table("tickets.tickets")["HD-1"].priority is None


def test_outside_reporter_department_and_category_are_shown_and_searchable() -> None:
    ws = desk()
    r = ws.call("get_ticket", {"key": "HD-1"})
    assert "Reporter: Priya from Acme Corp <priya@acme-corp.example>" in r.text
    assert "Department: Billing; Category: Refund request" in r.text
    assert keys(ws.call("search_tickets", {"query": "reporter:acme"})) == ["HD-1"]
    assert keys(ws.call("search_tickets", {"query": 'reporter:"walk-in"'})) == ["HD-3"]
    assert keys(ws.call("search_tickets", {"department": "BILLING"})) == ["HD-1", "HD-4"]
    assert keys(ws.call("search_tickets", {"query": 'category:"refund request"'})) == ["HD-1"]
    assert keys(ws.call("search_tickets", {"query": "priya"})) == ["HD-1"]


def test_create_ticket_for_an_outside_customer() -> None:
    ws = desk()
    r = ws.call("create_ticket", {"project": "HD", "title": "Charged twice", "reporter_name": "Priya from Acme Corp",
                                  "department": "Billing", "category": "Refund request", "priority": "urgent",
                                  "assignee": "Bob Stone", "watchers": ["Ana Ruiz", "me"]})
    assert r.ok, r.text
    t = r.data["ticket"]
    assert (t["reporter"], t["reporter_name"], t["assignee"], t["watchers"]) == (
        None, "Priya from Acme Corp", BOB, [ANA, ME])
    mine = ws.call("create_ticket", {"project": "HD", "title": "Mine"}).data["ticket"]
    assert mine["reporter"] == ME and mine["reporter_name"] == ""
    ext = ws.call("create_ticket", {"project": "HD", "title": "By mail", "reporter": "Priya <Priya@Acme-Corp.example>",
                                    "reporter_name": "Priya Shah"}).data["ticket"]
    assert ext["reporter"] == "priya@acme-corp.example"


@pytest.mark.parametrize("args,words", [
    ({"assignee": "Dana Reyes"}, "assignee 'Dana Reyes' matches 2 people: Dana Reyes <dana.reyes2@acme.com>, Intern; "
                                 "Dana Reyes <dana.reyes@acme.com>, VP Sales; give the e-mail address"),
    ({"assignee": "Zed Nobody"}, "neither an e-mail address nor a name in the directory"),
    ({"watchers": ["Bob Stone", "ghost@acme.com"]}, "watchers[1] ghost@acme.com is not in the directory"),
    ({"reporter": "Dana"}, "reporter 'Dana' matches 2 people"),
    ({"department": "a\nb"}, "department must be one line"),
    ({"category": "x" * 201}, "at most 200"),
    ({"priority": "P0"}, "invalid arguments for create_ticket: priority"),
])
def test_create_ticket_refuses_unclear_people_and_fields(args: dict, words: str) -> None:
    assert words in err(desk(), "create_ticket", {"project": "HD", "title": "x"} | args)


def test_update_ticket_new_fields_and_watchers() -> None:
    ws = desk()
    r = ws.call("update_ticket", {"key": "HD-2", "department": "Facilities", "category": "", "reporter": "ana ruiz",
                                  "reporter_name": "Ana", "add_watchers": ["Bob Stone", BOB]})
    assert r.ok, r.text
    assert r.data["changed"] == ["category", "department", "reporter", "reporter_name", "watchers"]
    t = ws.table("tickets.tickets")["HD-2"]
    assert (t.department, t.category, t.reporter, t.reporter_name, t.watchers) == ("Facilities", "", ANA, "Ana", [BOB])
    assert "not watching HD-2" in err(ws, "update_ticket", {"key": "HD-2", "remove_watchers": [ANA]})
    assert ws.call("update_ticket", {"key": "HD-2", "remove_watchers": ["Bob Stone"], "reporter": ""}).ok
    t = ws.table("tickets.tickets")["HD-2"]
    assert t.watchers == [] and t.reporter is None


def test_assign_by_name_and_search_by_assignee_name() -> None:
    ws = desk()
    r = ws.call("assign_ticket", {"key": "HD-2", "assignee": "bob"})
    assert r.data["ticket"]["assignee"] == BOB
    assert keys(ws.call("search_tickets", {"assignee": "Bob Stone"})) == ["HD-2"]
    assert keys(ws.call("search_tickets", {"query": 'assignee:"bob stone"'})) == ["HD-2"]
    assert "matches 2 people" in err(ws, "assign_ticket", {"key": "HD-2", "assignee": "dana reyes"})


def test_priority_comparisons_and_sorting() -> None:
    ws = desk()
    assert keys(ws.call("search_tickets", {"query": "priority:>=highest"})) == ["HD-1", "HD-3", "HD-6"]
    assert keys(ws.call("search_tickets", {"min_priority": "urgent"})) == ["HD-1", "HD-3"]
    assert keys(ws.call("search_tickets", {"query": "priority:<medium"})) == ["HD-4"]
    assert keys(ws.call("search_tickets", {"query": "priority:unset"})) == ["HD-2", "HD-5"]
    assert keys(ws.call("search_tickets", {"priority": "unset"})) == ["HD-2", "HD-5"]
    assert keys(ws.call("search_tickets", {"sort": "priority"})) == ["HD-3", "HD-1", "HD-6", "HD-4", "HD-2", "HD-5"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([*SCALE, None]), min_size=1, max_size=12), st.sampled_from(SCALE),
       st.sampled_from([">=", ">", "<=", "<", ""]))
def test_priority_filters_and_sort_agree_with_the_scale(levels: list, bound: str, op: str) -> None:
    ws = make(tickets=[{"key": f"OPS-{i}", "title": "t", "priority": p} for i, p in enumerate(levels, 1)])
    rank = {p: i for i, p in enumerate(SCALE)}
    hits = keys(ws.call("search_tickets", {"query": f"priority:{op}{bound}", "limit": 100}))
    holds = {">=": lambda r: r >= rank[bound], ">": lambda r: r > rank[bound], "<=": lambda r: r <= rank[bound],
             "<": lambda r: r < rank[bound], "": lambda r: r == rank[bound]}[op]
    assert hits == [f"OPS-{i}" for i, p in enumerate(levels, 1) if p is not None and holds(rank[p])]
    ordered = ws.call("search_tickets", {"sort": "priority", "limit": 100}).data["tickets"]
    ranks = [rank.get(t["priority"], -1) for t in ordered]
    assert ranks == sorted(ranks, reverse=True)


# --- key formats and customer links ---------------------------------------------------------------

HELP = [{"key": "HELP", "name": "Help desk", "key_format": "number"}, {"key": "GH", "key_format": "hash"}]
NUMBERED = [{"key": "4511", "project": "HELP", "title": "Refund for order 88"},
        {"key": "#12", "project": "GH", "title": "Crash on start", "links": [{"type": "relates_to", "target": "4511"}]},
        {"key": "OPS-3", "title": "Prefixed still works"}]


def test_numbered_and_hash_keys_load_search_and_link_alongside_prefixed_ones() -> None:
    ws = Workspace.create(WorkspaceConfig(services=["tickets"], user=ME),
                          {"tickets": {"projects": HELP, "tickets": NUMBERED}})
    t = ws.table("tickets.tickets")
    assert t["4511"].project == "HELP" and t["#12"].project == "GH" and t["OPS-3"].project == "OPS"
    assert [link.model_dump() for link in t["4511"].links] == [{"type": "relates_to", "target": "#12"}]
    assert ws.call("get_ticket", {"key": "#4511"}).data["key"] == "4511"  # either spelling of a number
    assert ws.call("get_ticket", {"key": "12"}).data["key"] == "#12"
    assert keys(ws.call("search_tickets", {"query": "project:HELP"})) == ["4511"]
    new = ws.call("create_ticket", {"project": "HELP", "title": "Password reset"}).data["ticket"]["key"]
    assert new == "4512"  # one sequence over every numbered ticket
    assert ws.call("create_ticket", {"project": "GH", "title": "Docs typo"}).data["ticket"]["key"] == "#4513"
    assert ws.call("create_ticket", {"project": "OPS", "title": "x"}).data["ticket"]["key"] == "OPS-4"
    assert ws.call("link_tickets", {"key": "OPS-3", "type": "blocks", "target": "4512"}).ok
    assert "must look like PROJECT-123" in err(ws, "get_ticket", {"key": "#abc"})


@pytest.mark.parametrize("ticket, words", [
    ({"key": "4511", "title": "x"}, "has a numbered key, so it needs its project"),
    ({"key": "#0", "project": "GH", "title": "x"}, "must look like PROJECT-123"),
    ({"key": "12", "project": "gh", "title": "x"}, "must be 2-10 capital letters"),
    ({"key": "OPS-3", "project": "WEB", "title": "x"}, "belongs to project OPS"),
])
def test_bad_numbered_keys_are_refused(ticket: dict, words: str) -> None:
    with pytest.raises(SpecError, match=words):
        make(tickets=[ticket])


ACCOUNTS = [{"id": "acc-1", "name": "Globex"}, {"id": "acc-2", "name": "Initech"}]


def test_ticket_links_a_crm_account_or_an_outside_customer() -> None:
    data = {"tickets": {"projects": PROJECTS, "tickets": [{**TICKETS[0], "account": "acc-1"}, TICKETS[1]]},
            "crm": {"accounts": ACCOUNTS}}
    ws = Workspace.create(WorkspaceConfig(services=["tickets", "crm"], user=ME), data)
    r = ws.call("create_ticket", {"project": "OPS", "title": "Invoice wrong", "account": "Initech"})
    assert r.ok and r.data["ticket"]["account"] == "acc-2" and "CRM account: acc-2" in r.text
    r = ws.call("create_ticket", {"project": "OPS", "title": "Trial question", "customer": "  Acme   Corp "})
    assert r.data["ticket"]["customer"] == "Acme Corp" and r.data["ticket"]["account"] is None
    assert keys(ws.call("search_tickets", {"account": "acc-2"})) == ["OPS-3"]
    assert keys(ws.call("search_tickets", {"query": "account:Globex"})) == ["OPS-1"]
    assert keys(ws.call("search_tickets", {"query": "customer:acme"})) == ["OPS-4"]
    assert keys(ws.call("search_tickets", {"customer": "globex"})) == ["OPS-1"]  # the account's name counts
    assert keys(ws.call("search_tickets", {"query": "account:none"})) == ["OPS-2", "OPS-4"]
    assert "CRM account 'Umbrela' not found" in err(ws, "create_ticket", {"project": "OPS", "title": "x",
                                                                          "account": "Umbrela"})
    r = ws.call("update_ticket", {"key": "OPS-1", "account": ""})
    assert r.data["changed"] == ["account"] and r.data["ticket"]["account"] is None
    with pytest.raises(SpecError, match=r"tickets\[OPS-1\].account.*'acc-9' does not exist"):
        Workspace.create(WorkspaceConfig(services=["tickets", "crm"], user=ME),
                         {**data, "tickets": {"tickets": [{**TICKETS[0], "account": "acc-9"}]}})


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["HELP", "GH", "OPS"]), min_size=1, max_size=12))
def test_created_keys_are_unique_and_in_their_projects_form(projects: list[str]) -> None:
    ws = Workspace.create(WorkspaceConfig(services=["tickets"], user=ME),
                          {"tickets": {"projects": [*HELP, PROJECTS[0]], "tickets": NUMBERED}})
    made = [ws.call("create_ticket", {"project": p, "title": "t"}).data["ticket"]["key"] for p in projects]
    assert len(set(made) | set(ws.table("tickets.tickets"))) == len(ws.table("tickets.tickets"))
    for p, k in zip(projects, made):
        assert (k.startswith("OPS-") if p == "OPS" else k.startswith("#") if p == "GH" else k.isdigit())
        assert ws.call("get_ticket", {"key": k}).data["project"] == p
