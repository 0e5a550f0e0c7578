"""Behaviour and errors of every todo tool: lists, due dates in the user's zone, filters, subtasks, completion."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import call_error, verdict

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.services import all_services

ME, DANA = "me@acme.com", "dana@acme.com"
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)  # a Monday; 10:00 in Berlin
LISTS = [{"id": "work", "name": "Work"}, {"id": "home", "name": "Home"}]
TASKS = [
    {"id": "t1", "list_id": "work", "title": "Send Q2 budget", "due_date": "2026-03-01", "priority": "High",
     "assignee": ME, "labels": ["finance"], "source": "msg-0003"},
    {"id": "t2", "list_id": "work", "title": "Review contract", "due_at": "2026-03-02T08:30:00+00:00",
     "priority": "medium", "assignee": DANA, "notes": "Clause 7 needs legal"},
    {"id": "t3", "list_id": "work", "title": "Draft agenda", "parent": "t2", "labels": ["Meeting"]},
    {"id": "t4", "list_id": "home", "title": "Buy milk", "due_date": "2026-03-03"},
    {"id": "t5", "list_id": "home", "title": "Fix tap", "status": "completed"},
    {"id": "t6", "title": "Call plumber", "due_date": "2026-03-03", "priority": "high"},
]
PEOPLE = [{"email": ME, "name": "Me Myself"}, {"email": DANA, "name": "Dana Reyes"},
          {"email": "dana.r@acme.com", "name": "Dana Ross"}]


def make(tasks: list | None = None, lists: list | None = None, services: list[str] | None = None) -> Workspace:
    services = services or ["todo", "contacts"]
    data: dict = {"todo": {"lists": LISTS if lists is None else lists, "tasks": TASKS if tasks is None else tasks}}
    if "contacts" in services:
        data["contacts"] = {"people": PEOPLE}
    cfg = WorkspaceConfig(services=services, user=ME, now=NOW, timezone="Europe/Berlin")
    return Workspace.create(cfg, data)


@pytest.fixture
def ws() -> Workspace:
    return make()


err = call_error


def ids(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [t["id"] for t in result.data["tasks"]]


# --- initial data ---------------------------------------------------------------------------------


def test_initial_data_is_completed(ws: Workspace) -> None:
    tasks, lists = ws.table("todo.tasks"), ws.table("todo.lists")
    assert lists["inbox"].name == "Inbox" and tasks["t6"].list_id == "inbox"
    assert tasks["t2"].due_date == date(2026, 3, 2) and tasks["t1"].priority == "high"
    assert tasks["t5"].completed_at == NOW and tasks["t1"].completed_at is None and tasks["t1"].created == NOW


def test_a_list_named_inbox_stands_in_for_the_default() -> None:
    ws = make(lists=[{"id": "l1", "name": "INBOX"}], tasks=[])
    assert list(ws.table("todo.lists")) == ["l1"]
    assert ws.call("create_task", {"title": "x"}).data["task"]["list_id"] == "l1"


@pytest.mark.parametrize("tasks,lists,where,words", [
    ([{"id": "x", "title": " "}], LISTS, "data.todo.tasks[0]", "title must be one non-empty line"),
    ([{"id": "x", "title": "t", "list_id": "zz"}], LISTS, "data.todo.tasks[x].list_id", "does not exist"),
    ([{"id": "x", "title": "t", "parent": "y"}], LISTS, "data.todo.tasks[x].parent", "'y' does not exist"),
    ([{"id": "x", "title": "t", "parent": "x"}], LISTS, "data.todo.tasks[0]", "its own parent"),
    ([{"id": "x", "title": "t", "parent": "y"}, {"id": "y", "title": "u", "parent": "x"}], LISTS,
     "data.todo.tasks[x].parent", "parents loop"),
    ([{"id": "x", "title": "t", "list_id": "home"}, {"id": "y", "title": "u", "parent": "x"}], LISTS,
     "data.todo.tasks[y].parent", "is in list home, not inbox"),
    ([{"id": "x", "title": "t", "status": "completed"}, {"id": "y", "title": "u", "parent": "x"}], LISTS,
     "data.todo.tasks[y].parent", "completed but this subtask is open"),
    ([{"id": "x", "title": "t", "completed_at": "2026-03-01T00:00:00Z"}], LISTS, "data.todo.tasks[0]",
     "open but has completed_at"),
    ([{"id": "x", "title": "t", "due_at": "2026-03-01T23:30:00Z", "due_date": "2026-03-01"}], LISTS,
     "data.todo.tasks[x].due_date", "not the local date of due_at (2026-03-02 in Europe/Berlin)"),
    ([{"id": "x", "title": "t", "due_at": "2026-03-01T10:00:00"}], LISTS, "data.todo.tasks[0]", "offset"),
    ([{"id": "x", "title": "t", "priority": "p1"}], LISTS, "data.todo.tasks[0]", "priority"),
    ([{"id": "x", "title": "t", "labels": ["x" * 101]}], LISTS, "data.todo.tasks[0]", "at most 100"),
    ([{"id": "x", "title": "t", "status": "doing"}], LISTS, "data.todo.tasks[0]", "in_progress"),
    ([{"id": "x", "title": "t", "status": "waiting", "completed_at": "2026-03-01T00:00:00Z"}], LISTS,
     "data.todo.tasks[0]", "waiting but has completed_at"),
    ([], [{"id": "a", "name": "Work"}, {"id": "b", "name": "work"}], "data.todo.lists[b].name", "also the name"),
])
def test_bad_initial_data_is_refused_with_its_path(tasks: list, lists: list, where: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        make(tasks=tasks, lists=lists, services=["todo"])
    assert str(info.value).startswith(where) and words in str(info.value), str(info.value)


# --- lists ----------------------------------------------------------------------------------------


def test_task_lists(ws: Workspace) -> None:
    r = ws.call("list_task_lists", {})
    assert [(x["name"], x["open"], x["overdue"], x["completed"]) for x in r.data["lists"]] == [
        ("Inbox", 1, 0, 0), ("Home", 1, 0, 1), ("Work", 3, 2, 0)]
    assert r.text.splitlines()[2] == "- work Work: 3 open (2 overdue), 0 completed"
    made = ws.call("create_task_list", {"name": " Q2   Launch "})
    assert made.data["name"] == "Q2 Launch" and made.data["id"].startswith("list-")
    assert "a list named 'Work' already exists (work)" in err(ws, "create_task_list", {"name": "work"})
    assert "name is empty" in err(ws, "create_task_list", {"name": ""})
    assert "at most 100" in err(ws, "create_task_list", {"name": "x" * 101})


# --- listing --------------------------------------------------------------------------------------


def test_list_tasks_sorted_by_due_then_priority(ws: Workspace) -> None:
    assert ids(ws.call("list_tasks", {})) == ["t1", "t2", "t6", "t4", "t3"]  # t6 high before t4 on 3 Mar
    assert ids(ws.call("list_tasks", {"status": "all"})) == ["t1", "t2", "t6", "t4", "t3", "t5"]
    assert ids(ws.call("list_tasks", {"status": "completed"})) == ["t5"]
    assert ids(ws.call("list_tasks", {"task_list": "WORK"})) == ["t1", "t2", "t3"]
    assert ids(ws.call("list_tasks", {"overdue": True})) == ["t1", "t2"]  # t2 was due 08:30 UTC, now 09:00
    assert ids(ws.call("list_tasks", {"due_before": "2026-03-02"})) == ["t1", "t2"]
    assert ids(ws.call("list_tasks", {"due_after": "2026-03-02T10:00"})) == ["t6", "t4"]  # 10:00 Berlin = 09:00Z
    assert ids(ws.call("list_tasks", {"due_before": "2026-03-02T09:30:00+01:00"})) == ["t1", "t2"]
    assert ids(ws.call("list_tasks", {"assignee": "me"})) == ["t1"]
    assert ids(ws.call("list_tasks", {"assignee": "Dana Reyes"})) == ["t2"]
    assert ids(ws.call("list_tasks", {"assignee": "none", "task_list": "home"})) == ["t4"]
    assert ids(ws.call("list_tasks", {"label": "meeting"})) == ["t3"]
    assert ids(ws.call("list_tasks", {"query": "clause"})) == ["t2"]  # words in notes
    assert ids(ws.call("list_tasks", {"query": "msg-0003"})) == ["t1"]  # and in the source
    assert ids(ws.call("list_tasks", {"query": '"q2 budget"'})) == ["t1"]
    page = ws.call("list_tasks", {"limit": 2, "offset": 1})
    assert ids(page) == ["t2", "t6"] and page.data["total"] == 5
    lines = ws.call("list_tasks", {}).text.splitlines()
    assert lines[0] == "Tasks 1-5 of 5:"
    assert lines[1] == "- t1 [ ] Send Q2 budget (high) due 2026-03-01 OVERDUE @me@acme.com #finance in Work"
    assert lines[2].startswith("- t2 [ ] Review contract (medium) due 2026-03-02 09:30+01:00 OVERDUE")
    assert lines[5].endswith("in Work, subtask of t2")
    assert ws.call("list_tasks", {"query": "zebra"}).text == "No tasks match."


@pytest.mark.parametrize("args,words", [
    ({"task_list": "Wrk"}, "task list 'Wrk' not found; did you mean Work?"),
    ({"status": "done"}, "invalid arguments for list_tasks: status"),
    ({"due_before": "friday"}, "due_before 'friday' is not an ISO 8601 date-time"),
    ({"due_after": ""}, "need a date or date-time"),
    ({"due_before": "2026-02-30"}, "not a real date"),
    ({"assignee": "Dana"}, "assignee 'Dana' matches 2 people"),
    ({"label": " "}, "non-empty text"),
    ({"query": '"x'}, "unbalanced quote"),
    ({"limit": 0}, "limit"),
])
def test_list_tasks_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "list_tasks", args)


def test_get_task(ws: Workspace) -> None:
    r = ws.call("get_task", {"id": "t2"})
    assert r.data["subtasks"] == [{"id": "t3", "title": "Draft agenda", "status": "open"}]
    assert r.data["due"] == "2026-03-02T09:30+01:00" and r.data["overdue"] is True and r.data["list_name"] == "Work"
    assert "Clause 7 needs legal" in r.text and "Subtask t3 [ ] Draft agenda" in r.text
    assert "did you mean t1" in err(ws, "get_task", {"id": "t11"})
    assert "use list_tasks" in err(ws, "get_task", {"id": "nothing-like-it"})


# --- create / update ------------------------------------------------------------------------------


def test_create_task(ws: Workspace) -> None:
    r = ws.call("create_task", {"title": " Book venue ", "due": "2026-03-06T17:00", "priority": "high",
                                "assignee": "Dana Reyes", "labels": ["events", "Events"], "source": "OPS-12",
                                "notes": "50 people"})
    assert r.ok, r.text
    t = r.data["task"]
    assert t["id"].startswith("task-") and t["list_id"] == "inbox" and t["title"] == "Book venue"
    assert t["due_at"] == "2026-03-06T16:00:00Z" and t["due_date"] == "2026-03-06" and t["due"] == "2026-03-06T17:00+01:00"
    assert (t["assignee"], t["labels"], t["source"], t["status"]) == (DANA, ["events"], "OPS-12", "open")
    day = ws.call("create_task", {"title": "All day", "due": "2026-03-06", "task_list": "home"}).data["task"]
    assert day["due_at"] is None and day["due_date"] == "2026-03-06" and day["list_id"] == "home"
    late = ws.call("create_task", {"title": "Late", "due": "2026-03-06T23:30:00-05:00"}).data["task"]
    assert late["due_date"] == "2026-03-07"  # the local date in Berlin
    sub = ws.call("create_task", {"title": "Slides", "parent": "t2", "assignee": "me"}).data["task"]
    assert sub["list_id"] == "work" and sub["parent"] == "t2" and sub["assignee"] == ME
    assert [c.kind for c in r.diff] == ["added"]


@pytest.mark.parametrize("args,words", [
    ({"title": " "}, "title is empty"),
    ({"title": "a\nb"}, "one line"),
    ({"title": "x" * 301}, "at most 300"),
    ({"notes": "x" * 20_001}, "at most 20000"),
    ({"source": "x" * 501}, "at most 500"),
    ({"due": "next week"}, "due 'next week' is not an ISO 8601 date-time"),
    ({"due": "1850-01-01"}, "outside the years"),
    ({"priority": "p1"}, "invalid arguments for create_task: priority"),
    ({"assignee": "Nobody Known"}, "neither an e-mail address nor a name in the directory"),
    ({"labels": ["a\x07"]}, "labels[0]"),
    ({"task_list": "Nope"}, "task list 'Nope' not found"),
    ({"parent": "t99"}, "task 't99' not found"),
    ({"parent": "t2", "task_list": "home"}, "the parent t2 is in list work, not home"),
    ({"parent": "t5"}, "the parent t5 is completed"),
    ({"status": "completed"}, "status: Extra inputs are not permitted"),
])
def test_create_task_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "create_task", {"title": "T", **args})


def test_update_task(ws: Workspace) -> None:
    ws.call("get_task", {"id": "t4"})
    r = ws.call("update_task", {"id": "t4", "title": "Buy oat milk", "due": "2026-03-04T08:00", "priority": "low",
                                "assignee": "dana@acme.com", "add_labels": ["shop"], "source": "note n1"})
    assert r.data["changed"] == ["assignee", "due_at", "due_date", "labels", "priority", "source", "title"]
    t = ws.table("todo.tasks")["t4"]
    assert t.due_at == datetime(2026, 3, 4, 7, 0, tzinfo=timezone.utc) and t.updated == ws.events()[-1].sim_time
    cleared = ws.call("update_task", {"id": "t4", "due": "", "assignee": "", "remove_labels": ["SHOP"], "notes": "x"})
    assert cleared.data["changed"] == ["assignee", "due_at", "due_date", "labels", "notes"]
    assert ws.call("update_task", {"id": "t4", "labels": ["a", "b"]}).data["changed"] == ["labels"]
    same = ws.call("update_task", {"id": "t4", "priority": "low"})
    assert same.ok and same.data["changed"] == [] and not same.diff


def test_update_task_errors(ws: Workspace) -> None:
    assert "nothing to change" in err(ws, "update_task", {"id": "t1"})
    assert "task t1 has no label urgent; its labels are finance" in err(
        ws, "update_task", {"id": "t1", "remove_labels": ["urgent"]})
    assert "title is empty" in err(ws, "update_task", {"id": "t1", "title": ""})
    assert "not a real date" in err(ws, "update_task", {"id": "t1", "due": "2026-02-29"})
    assert "status: Extra inputs" in err(ws, "update_task", {"id": "t1", "status": "completed"})
    assert "not_found" in err(ws, "update_task", {"id": "t0", "title": "x"})


# --- completion -----------------------------------------------------------------------------------


def test_complete_and_reopen(ws: Workspace) -> None:
    r = ws.call("complete_task", {"id": "t1"})
    assert r.data["task"]["status"] == "completed" and r.data["task"]["completed_at"] == "2026-03-02T09:00:00Z"
    assert r.data["also_completed"] == [] and r.data["task"]["overdue"] is False
    assert "already completed" in err(ws, "complete_task", {"id": "t1"})
    back = ws.call("reopen_task", {"id": "t1"})
    assert back.data["task"]["status"] == "open" and back.data["task"]["completed_at"] is None
    assert "is not completed (it is not started)" in err(ws, "reopen_task", {"id": "t1"})


def test_a_task_with_open_subtasks_completes_only_with_them(ws: Workspace) -> None:
    message = err(ws, "complete_task", {"id": "t2"})
    assert message.startswith("conflict: task t2 has 1 open subtask(s): t3 'Draft agenda'")
    r = ws.call("complete_task", {"id": "t2", "include_subtasks": True})
    assert r.data["also_completed"] == ["t3"] and ws.table("todo.tasks")["t3"].status == "completed"
    assert "Also completed: t3" in r.text
    up = ws.call("reopen_task", {"id": "t3"})  # reopening a subtask reopens its parent
    assert up.data["also_reopened"] == ["t2"] and ws.table("todo.tasks")["t2"].status == "open"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=st.sampled_from(["t1", "t3", "t4", "t6"]), ticks=st.integers(0, 3))
def test_completing_then_reopening_restores_the_task_except_timestamps(task: str, ticks: int) -> None:
    ws = make()
    for _ in range(ticks):
        ws.call("list_task_lists", {})
    before = ws.table("todo.tasks")[task]
    assert ws.call("complete_task", {"id": task}).ok
    assert ws.call("reopen_task", {"id": task}).ok
    after = ws.table("todo.tasks")[task]
    assert after.updated != before.updated
    assert after.model_dump(exclude={"updated"}) == before.model_dump(exclude={"updated"})
    others = {k: v for k, v in ws.table("todo.tasks").items() if k != task}
    assert others == {k: v for k, v in ws.initial.table("todo.tasks").items() if k != task}


# --- delete / move --------------------------------------------------------------------------------


def test_delete_task_takes_its_subtasks(ws: Workspace) -> None:
    r = ws.call("delete_task", {"id": "t2"})
    assert r.data == {"deleted": ["t2", "t3"], "title": "Review contract"}
    assert "t3" not in ws.table("todo.tasks") and len(r.diff) == 2
    assert "not_found" in err(ws, "delete_task", {"id": "t2"})
    assert all_services()["todo"].tools["delete_task"].mcp_annotations()["destructiveHint"] is True


def test_move_task(ws: Workspace) -> None:
    r = ws.call("move_task", {"id": "t2", "task_list": "Home"})
    assert r.data["changed"] == ["list_id"] and r.data["moved_with_it"] == ["t3"]
    assert ws.table("todo.tasks")["t3"].list_id == "home" and ws.table("todo.tasks")["t3"].parent == "t2"
    under = ws.call("move_task", {"id": "t4", "parent": "t2"})
    assert under.data["changed"] == ["parent"] and ws.table("todo.tasks")["t4"].parent == "t2"
    out = ws.call("move_task", {"id": "t3", "task_list": "work"})  # to another list: top-level there
    assert out.data["changed"] == ["list_id", "parent"] and ws.table("todo.tasks")["t3"].parent is None
    top = ws.call("move_task", {"id": "t4", "parent": ""})
    assert top.data["changed"] == ["parent"]
    same = ws.call("move_task", {"id": "t4", "task_list": "home"})
    assert same.ok and same.data["changed"] == [] and not same.diff
    across = ws.call("move_task", {"id": "t6", "parent": "t1"})  # the parent's list is the target
    assert across.data["changed"] == ["list_id", "parent"]


def test_move_task_errors(ws: Workspace) -> None:
    assert "nothing to move" in err(ws, "move_task", {"id": "t2"})
    assert "t3 is t2 itself or one of its subtasks" in err(ws, "move_task", {"id": "t2", "parent": "t3"})
    assert "itself" in err(ws, "move_task", {"id": "t2", "parent": "t2"})
    assert "the parent t4 is in list home, not work" in err(
        ws, "move_task", {"id": "t1", "parent": "t4", "task_list": "work"})
    assert "the parent t5 is completed and task t4 is open" in err(ws, "move_task", {"id": "t4", "parent": "t5"})
    assert "task list 'Garden' not found" in err(ws, "move_task", {"id": "t4", "task_list": "Garden"})


# --- predicates, persistence, invariants ----------------------------------------------------------


def test_predicates_work_on_tasks_unchanged(ws: Workspace) -> None:
    new = ws.call("create_task", {"title": "Reply to Dana", "due": "2026-03-03", "priority": "high",
                                  "source": "msg-0009", "labels": ["mail"]}).data["task"]
    ws.call("complete_task", {"id": "t1"})
    assert verdict(ws, {"kind": "record_exists", "table": "todo.tasks", "new_only": True,
                        "where": {"title": {"contains": "Dana", "ignore_case": True}, "due_date": "2026-03-03",
                                  "priority": "high", "source": "msg-0009", "labels": {"includes": ["mail"]}}})
    assert verdict(ws, {"kind": "record_exists", "table": "todo.tasks",
                        "where": {"id": "t1", "status": "completed", "completed_at": {"exists": True}}})
    assert verdict(ws, {"kind": "record_absent", "table": "todo.tasks", "where": {"status": "open", "id": "t1"}})
    assert verdict(ws, {"kind": "unchanged", "scope": "todo.tasks:t[2-6]"})
    assert not verdict(ws, {"kind": "unchanged", "scope": "todo.tasks:t?"})
    assert verdict(ws, {"kind": "only_changed", "scopes": ["todo.tasks:t1", f"todo.tasks:{new['id']}"]})
    assert not verdict(ws, {"kind": "only_changed", "scopes": ["todo.lists", "todo.tasks:t1"]})


def test_policies_work_on_tasks_unchanged() -> None:
    cfg = WorkspaceConfig(services=["todo"], user=ME, now=NOW, policies=[
        {"type": "confirmation_required", "tools": ["delete_*"]}, {"type": "forbidden_tools", "tools": ["move_task"]}])
    ws = Workspace.create(cfg, {"todo": {"lists": LISTS, "tasks": TASKS}})
    assert "delete_task needs the user's confirmation first" in err(ws, "delete_task", {"id": "t2"})
    assert "move_task is not allowed" in err(ws, "move_task", {"id": "t4", "task_list": "work"})
    assert ws.call("complete_task", {"id": "t1"}).ok


def test_state_survives_json_round_trip(ws: Workspace) -> None:
    ws.call("create_task", {"title": "New", "due": "2026-03-05T09:15", "labels": ["x"]})
    ws.call("complete_task", {"id": "t2", "include_subtasks": True})
    back = Workspace.from_json(ws.to_json())
    assert back.content_hash == ws.content_hash and back.export_data() == ws.export_data()


OPS = st.sampled_from(["create", "sub", "complete", "complete_all", "reopen", "delete", "move_list", "move_under",
                       "update"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(OPS, st.integers(0, 20), st.integers(0, 20)), max_size=15))
def test_any_sequence_of_calls_keeps_references_whole(steps: list) -> None:
    ws = make()
    for op, i, j in steps:
        tasks, lists = sorted(ws.table("todo.tasks")), sorted(ws.table("todo.lists"))
        a = tasks[i % len(tasks)] if tasks else "t0"
        b = tasks[j % len(tasks)] if tasks else "t0"
        call = {"create": ("create_task", {"title": f"n{i}", "task_list": lists[j % len(lists)]}),
                "sub": ("create_task", {"title": f"s{i}", "parent": a}),
                "complete": ("complete_task", {"id": a}),
                "complete_all": ("complete_task", {"id": a, "include_subtasks": True}),
                "reopen": ("reopen_task", {"id": a}),
                "delete": ("delete_task", {"id": a}),
                "move_list": ("move_task", {"id": a, "task_list": lists[j % len(lists)]}),
                "move_under": ("move_task", {"id": a, "parent": b}),
                "update": ("update_task", {"id": a, "due": "2026-03-0%d" % (1 + j % 9)})}[op]
        r = ws.call(*call)
        assert r.ok or r.error.code != "internal_error", r.text
    tasks = ws.table("todo.tasks")
    for t in tasks.values():
        assert t.list_id in ws.table("todo.lists")
        assert (t.status == "completed") == (t.completed_at is not None)
        if t.parent is not None:
            parent = tasks[t.parent]
            assert parent.list_id == t.list_id
            assert not (parent.status == "completed" and t.status == "open")
    back = Workspace.create(ws.config, ws.export_data())  # the final data passes the initial-data checks
    assert back.content_hash == ws.content_hash


def test_every_tool_is_documented_and_hinted() -> None:
    tools = all_services()["todo"].tools
    assert set(tools) == {"list_task_lists", "create_task_list", "list_tasks", "get_task", "create_task",
                          "update_task", "complete_task", "reopen_task", "delete_task", "move_task", "set_task_status"}
    assert tools["list_tasks"].mcp_annotations()["readOnlyHint"] is True
    for tool in tools.values():
        assert all(p.get("description") for p in tool.input_schema["properties"].values()), tool.name
    assert tools["create_task"].input_schema["properties"]["priority"]["enum"] == ["none", "low", "medium", "high"]


def test_mcp_lists_the_todo_tools_with_their_schemas_and_runs_them() -> None:
    import anyio
    from mcp import Client

    from mcp_server import Episode, PythonEnvironment, build_server

    env = PythonEnvironment("todo", "To-do", "Plan the week.", lambda: make())
    ep = Episode(env)

    async def go() -> tuple[list, object, object]:
        async with Client(build_server(ep)) as c:
            tools = (await c.list_tools()).tools
            made = await c.call_tool("create_task", {"title": "Book room", "due": "2026-03-04", "assignee": "Dana Reyes"})
            bad = await c.call_tool("complete_task", {"id": "t2"})
            return tools, made, bad

    tools, made, bad = anyio.run(go)
    listed = {t.name: t for t in tools}
    for name, tool in all_services()["todo"].tools.items():
        assert listed[name].input_schema == tool.strict_input_schema and listed[name].description == tool.description
    assert listed["list_tasks"].annotations.read_only_hint is True
    assert not made.is_error and made.structured_content["task"]["assignee"] == DANA
    assert bad.is_error and "open subtask" in bad.content[0].text


# --- statuses and free-text labels ----------------------------------------------------------------


def test_in_progress_and_waiting_tasks_are_open_and_move_between_statuses(ws: Workspace) -> None:
    r = ws.call("set_task_status", {"id": "t1", "status": "in_progress"})
    assert r.ok and r.data["changed"] == ["status"] and "[~]" in r.text and "(in progress)" in r.text
    assert ws.call("set_task_status", {"id": "t1", "status": "in_progress"}).data["changed"] == []
    open_ids = [t["id"] for t in ws.call("list_tasks", {}).data["tasks"]]
    assert "t1" in open_ids  # 'open' lists every task not completed
    assert [t["id"] for t in ws.call("list_tasks", {"status": "in_progress"}).data["tasks"]] == ["t1"]
    assert "t1" not in [t["id"] for t in ws.call("list_tasks", {"status": "not_started"}).data["tasks"]]
    assert ws.call("set_task_status", {"id": "t1", "status": "waiting"}).ok
    assert "[w]" in ws.call("get_task", {"id": "t1"}).text
    done = ws.call("complete_task", {"id": "t1", "include_subtasks": True})
    assert done.ok and done.data["task"]["status"] == "completed"
    assert "reopen_task reopens it" in err(ws, "set_task_status", {"id": "t1", "status": "open"})
    assert "status" in err(ws, "set_task_status", {"id": "t2", "status": "completed"})
    assert ws.call("reopen_task", {"id": "t1"}).data["task"]["status"] == "open"


def test_a_completed_parent_reopens_when_an_in_progress_subtask_appears_under_it() -> None:
    ws = make()
    lst = ws.call("list_tasks", {"status": "all"}).data["tasks"]
    child = next(t for t in lst if t["parent"])
    assert ws.call("set_task_status", {"id": child["id"], "status": "in_progress"}).ok
    r = ws.call("complete_task", {"id": child["parent"]})
    assert not r.ok and "open subtask" in r.text  # an in-progress subtask is not completed


@pytest.mark.parametrize("labels, stored", [
    (["waiting on vendor", "Waiting  on Vendor"], ["waiting on vendor"]), (["报销", "ＱＡ"], ["报销", "QA"]),
])
def test_labels_are_free_text_in_any_script(ws: Workspace, labels: list[str], stored: list[str]) -> None:
    r = ws.call("create_task", {"title": "T", "labels": labels})
    assert r.ok and r.data["task"]["labels"] == stored
    assert [t["id"] for t in ws.call("list_tasks", {"label": labels[-1]}).data["tasks"]] == [r.data["task"]["id"]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["set", "complete", "reopen"]),
                          st.sampled_from(["open", "in_progress", "waiting"])), max_size=10))
def test_status_moves_keep_completed_at_consistent(moves: list[tuple[str, str]]) -> None:
    ws = make()
    for kind, status in moves:
        if kind == "set":
            ws.call("set_task_status", {"id": "t1", "status": status})
        else:
            ws.call(f"{kind}_task", {"id": "t1", "include_subtasks": True} if kind == "complete" else {"id": "t1"})
        for t in ws.table("todo.tasks").values():
            assert (t.status == "completed") == (t.completed_at is not None)
            parent = ws.table("todo.tasks").get(t.parent) if t.parent else None
            assert not (parent is not None and parent.status == "completed" and t.status != "completed")
