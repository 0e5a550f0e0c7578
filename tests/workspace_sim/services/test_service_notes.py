"""Behaviour and errors of every notes tool: notebooks, search, edits, permissions, sharing (by mail too)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import call_error, verdict

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.services import all_services

ME, DANA, OMAR, OUT = "me@acme.com", "dana@acme.com", "omar@acme.com", "pat@partner.org"
NOTEBOOKS = [{"id": "nb-work", "name": "Work"}, {"id": "nb-home", "name": "Personal"},
             {"id": "nb-dana", "name": "Work", "owner": DANA}]
NOTES = [
    {"id": "n1", "title": "Q2 planning", "body": "Budget: 1.2M\nHire two engineers", "notebook": "nb-work",
     "tags": ["planning", "Q2"], "pinned": True, "updated": "2026-02-01T10:00:00Z"},
    {"id": "n2", "title": "Groceries", "body": "milk, eggs", "notebook": "nb-home", "updated": "2026-02-20T10:00:00Z"},
    {"id": "n3", "title": "Old retro", "body": "Budget overrun in Q4", "archived": True, "tags": ["retro"]},
    {"id": "n4", "title": "Dana's view-only", "body": "Launch date: May 5", "owner": DANA, "notebook": "nb-dana",
     "collaborators": [{"email": ME, "permission": "view"}]},
    {"id": "n5", "title": "Dana's shared draft", "body": "Draft agenda", "owner": DANA,
     "collaborators": [{"email": ME, "permission": "edit"}, {"email": OMAR}]},
    {"id": "n6", "title": "Omar's private", "body": "secret budget", "owner": OMAR},
]
PEOPLE = [{"email": ME, "name": "Me Myself"}, {"email": DANA, "name": "Dana Reyes"},
          {"email": OMAR, "name": "Omar Haddad"}, {"email": "dana.r@acme.com", "name": "Dana Ross"}]


def make(services: list[str] | None = None, policies: list | None = None, notes: list | None = None) -> Workspace:
    services = services or ["notes", "contacts", "mail"]
    data: dict = {"notes": {"notebooks": NOTEBOOKS, "notes": NOTES if notes is None else notes}}
    if "contacts" in services:
        data["contacts"] = {"people": PEOPLE}
    if "mail" in services:
        data["mail"] = {"accounts": [{"email": ME, "name": "Me"}, {"email": DANA, "name": "Dana"}]}
    return Workspace.create(WorkspaceConfig(services=services, user=ME, policies=policies or []), data)


@pytest.fixture
def ws() -> Workspace:
    return make()


err = call_error


def ids(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [n["id"] for n in result.data["notes"]]


# --- initial data ---------------------------------------------------------------------------------


def test_initial_data_is_completed(ws: Workspace) -> None:
    notes = ws.table("notes.notes")
    assert notes["n1"].owner == ME and notes["n4"].owner == DANA and notes["n2"].created == ws.config.now
    assert notes["n1"].tags == ["planning", "Q2"] and ws.table("notes.notebooks")["nb-work"].owner == ME
    assert notes["n5"].collaborators[1].permission == "view"


@pytest.mark.parametrize("notes,notebooks,where,words", [
    ([{"id": "x", "title": ""}], NOTEBOOKS, "data.notes.notes[0]", "neither a title nor a body"),
    ([{"id": "x", "title": "a\nb"}], NOTEBOOKS, "data.notes.notes[0]", "one line"),
    ([{"id": "x", "title": "t", "notebook": "nb-zz"}], NOTEBOOKS, "data.notes.notes[x].notebook", "does not exist"),
    ([{"id": "x", "title": "t", "notebook": "nb-dana"}], NOTEBOOKS, "data.notes.notes[x].notebook",
     "belongs to dana@acme.com"),
    ([{"id": "x", "title": "t", "collaborators": [{"email": ME}]}], NOTEBOOKS, "data.notes.notes[x].collaborators",
     "cannot also be a collaborator"),
    ([{"id": "x", "title": "t", "collaborators": [{"email": DANA}, {"email": DANA, "permission": "edit"}]}],
     NOTEBOOKS, "data.notes.notes[0]", "collaborator twice"),
    ([{"id": "x", "title": "t", "collaborators": [{"email": DANA, "permission": "admin"}]}], NOTEBOOKS,
     "data.notes.notes[0]", "permission"),
    ([], [{"id": "a", "name": "Work"}, {"id": "b", "name": " work "}], "data.notes.notebooks[b].name",
     "already has a notebook named"),
])
def test_bad_initial_data_is_refused_with_its_path(notes: list, notebooks: list, where: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        Workspace.create(WorkspaceConfig(services=["notes"], user=ME),
                         {"notes": {"notebooks": notebooks, "notes": notes}})
    assert str(info.value).startswith(where) and words in str(info.value), str(info.value)


# --- search ---------------------------------------------------------------------------------------


def test_search_lists_mine_and_shared_pinned_first_then_recent(ws: Workspace) -> None:
    assert ids(ws.call("search_notes", {})) == ["n1", "n4", "n5", "n2"]  # n6 is Omar's, n3 archived
    assert ids(ws.call("search_notes", {"include_archived": True})) == ["n1", "n3", "n4", "n5", "n2"]
    assert ids(ws.call("search_notes", {"query": "budget"})) == ["n1"]
    assert ids(ws.call("search_notes", {"query": "budget", "include_archived": True})) == ["n1", "n3"]
    assert ids(ws.call("search_notes", {"query": '"hire two"'})) == ["n1"]
    assert ids(ws.call("search_notes", {"query": '"two hire"'})) == []
    assert ids(ws.call("search_notes", {"tag": "q2"})) == ["n1"]
    assert ids(ws.call("search_notes", {"notebook": "personal"})) == ["n2"]
    assert ids(ws.call("search_notes", {"notebook": "nb-work", "query": "PLANNING"})) == ["n1"]
    page = ws.call("search_notes", {"limit": 2, "offset": 1})
    assert ids(page) == ["n4", "n5"] and page.data["total"] == 4
    first = ws.call("search_notes", {}).text.splitlines()
    assert first[0] == "Notes 1-4 of 4:"
    assert first[1].startswith("- n1 Q2 planning (Work; tags: planning, Q2; pinned)")
    assert "shared by dana@acme.com, you can view" in first[2]
    assert ws.call("search_notes", {"query": "zebra"}).text == "No notes match."


@pytest.mark.parametrize("args,words", [
    ({"query": '"open'}, "unbalanced quote"),
    ({"query": "x" * 501}, "longer than 500"),
    ({"notebook": "Wrok"}, "notebook 'Wrok' not found; did you mean Work?"),
    ({"notebook": "nb-dana"}, "not found"),
    ({"tag": " "}, "tag ' ' must be non-empty"),
    ({"limit": 0}, "limit"),
    ({"offset": -1}, "offset"),
])
def test_search_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "search_notes", args)


@settings(max_examples=40, deadline=None)
@given(flags=st.lists(st.tuples(st.booleans(), st.booleans(), st.sampled_from(["alpha", "beta", "alpha beta"])),
                      min_size=1, max_size=8),
       query=st.sampled_from(["", "alpha", "beta", '"alpha beta"']), include=st.booleans())
def test_search_never_returns_archived_notes_unless_asked(flags: list, query: str, include: bool) -> None:
    notes = [{"id": f"x{i}", "title": text, "archived": arch, "pinned": pin} for i, (arch, pin, text) in enumerate(flags)]
    ws = make(services=["notes"], notes=notes)
    got = ws.call("search_notes", {"query": query, "include_archived": include, "limit": 100}).data["notes"]
    expected = {n["id"] for n in notes if (include or not n["archived"])
                and all(w in n["title"] for w in query.strip('"').split())}
    assert {n["id"] for n in got} == expected
    assert include or not any(n["archived"] for n in got)
    pins = [n["pinned"] for n in got]
    assert pins == sorted(pins, reverse=True)  # pinned first


# --- get / create / update / delete ---------------------------------------------------------------


def test_get_note(ws: Workspace) -> None:
    r = ws.call("get_note", {"id": "n4"})
    assert r.data["permission"] == "view" and r.data["notebook_name"] == "Work" and r.data["owner"] == DANA
    assert "Launch date: May 5" in r.text and "your permission: view" in r.text
    assert "did you mean n1" not in err(ws, "get_note", {"id": "n6"})  # Omar's note does not exist for you
    assert err(ws, "get_note", {"id": "n6"}).startswith("not_found: note 'n6' not found")
    assert "use search_notes" in err(ws, "get_note", {"id": "zzz"})


def test_create_note(ws: Workspace) -> None:
    r = ws.call("create_note", {"title": " Standup ", "body": "- shipped\n", "notebook": "work",
                                "tags": ["meeting", "Meeting", "daily  sync"], "pinned": True})
    assert r.ok, r.text
    n = r.data["note"]
    assert n["id"].startswith("note-") and n["title"] == "Standup" and n["body"] == "- shipped"
    assert n["notebook"] == "nb-work" and n["tags"] == ["meeting", "daily sync"] and n["owner"] == ME
    assert n["created"] == n["updated"] == "2026-03-02T09:00:00Z" and n["collaborators"] == []
    untitled = ws.call("create_note", {"title": "", "body": "just a thought\nmore"}).data["note"]
    assert ws.call("search_notes", {"query": "thought"}).data["notes"][0]["title"] == "just a thought"
    assert untitled["notebook"] is None
    assert [c.kind for c in r.diff] == ["added"]


@pytest.mark.parametrize("args,words", [
    ({"title": "", "body": " "}, "title and body are both empty"),
    ({"title": "a\nb"}, "title must be one line"),
    ({"title": "x" * 301}, "at most 300"),
    ({"body": "x" * 50_001}, "at most 50000"),
    ({"body": "bad \ud800"}, "not valid Unicode"),
    ({"notebook": "Nope"}, "notebook 'Nope' not found"),
    ({"tags": ["ok", ""]}, "tags[1]"),
    ({"tags": [f"t{i}" for i in range(51)]}, "at most 50"),
    ({"format": "html"}, "invalid arguments for create_note: format"),
    ({"owner": DANA}, "owner: Extra inputs are not permitted"),
])
def test_create_note_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "create_note", {"title": "T", **args})


def test_update_note(ws: Workspace) -> None:
    ws.call("get_note", {"id": "n1"})
    r = ws.call("update_note", {"id": "n1", "title": "Q2 plan", "append": "Decision: go", "add_tags": ["Budget"],
                                "remove_tags": ["PLANNING"], "pinned": False})
    assert r.ok, r.text
    assert r.data["changed"] == ["body", "pinned", "tags", "title"]
    n = ws.table("notes.notes")["n1"]
    assert n.body == "Budget: 1.2M\nHire two engineers\n\nDecision: go" and n.tags == ["Q2", "Budget"]
    assert n.updated == ws.events()[-1].sim_time and not n.pinned
    assert ws.call("update_note", {"id": "n1", "body": "replaced", "archived": True}).data["changed"] == [
        "archived", "body"]
    same = ws.call("update_note", {"id": "n1", "archived": True})
    assert same.ok and same.data["changed"] == [] and not same.diff
    assert ws.call("update_note", {"id": "n5", "append": "Item 1"}).ok  # shared with edit permission
    assert ws.table("notes.notes")["n5"].body == "Draft agenda\n\nItem 1"


def test_update_note_errors(ws: Workspace) -> None:
    assert "nothing to change" in err(ws, "update_note", {"id": "n1"})
    assert "not both" in err(ws, "update_note", {"id": "n1", "body": "a", "append": "b"})
    assert "no tag zzz; its tags are planning, Q2" in err(ws, "update_note", {"id": "n1", "remove_tags": ["zzz"]})
    assert "neither" in err(ws, "update_note", {"id": "n1", "title": "", "body": ""})
    assert "append is empty" in err(ws, "update_note", {"id": "n1", "append": "  "})
    assert "at most 50000" in err(ws, "update_note", {"id": "n1", "append": "x" * 49_990})
    assert err(ws, "update_note", {"id": "n4", "title": "mine now"}).startswith(
        "permission_denied: note n4 was shared with you by dana@acme.com with view permission only")
    assert "not_found" in err(ws, "update_note", {"id": "n6", "title": "x"})


def test_delete_note(ws: Workspace) -> None:
    r = ws.call("delete_note", {"id": "n2"})
    assert r.data == {"deleted": "n2", "title": "Groceries"} and "n2" not in ws.table("notes.notes")
    assert all_services()["notes"].tools["delete_note"].mcp_annotations()["destructiveHint"] is True
    assert "only the owner of note n5 (dana@acme.com) can delete it" in err(ws, "delete_note", {"id": "n5"})
    assert "not_found" in err(ws, "delete_note", {"id": "n2"})


# --- notebooks and moving -------------------------------------------------------------------------


def test_notebooks(ws: Workspace) -> None:
    listed = ws.call("list_notebooks", {})
    assert [(b["name"], b["notes"]) for b in listed.data["notebooks"]] == [("Personal", 1), ("Work", 1)]
    made = ws.call("create_notebook", {"name": "  Project   Atlas "})
    assert made.data["name"] == "Project Atlas" and made.data["id"].startswith("nb-")
    assert "already have a notebook named 'Work' (nb-work)" in err(ws, "create_notebook", {"name": "WORK"})
    assert "name is empty" in err(ws, "create_notebook", {"name": " "})
    assert "one line" in err(ws, "create_notebook", {"name": "a\nb"})
    assert "at most 100" in err(ws, "create_notebook", {"name": "x" * 101})
    moved = ws.call("move_note", {"id": "n2", "notebook": "Project Atlas"})
    assert moved.data["changed"] == ["notebook"] and moved.data["note"]["notebook_name"] == "Project Atlas"
    again = ws.call("move_note", {"id": "n2", "notebook": made.data["id"]})
    assert again.ok and not again.diff
    assert ws.call("move_note", {"id": "n2", "notebook": None}).data["note"]["notebook"] is None
    assert "only the owner" in err(ws, "move_note", {"id": "n5", "notebook": "Work"})
    assert "not found" in err(ws, "move_note", {"id": "n1", "notebook": "nb-dana"})  # Dana's notebook
    assert "field required" in err(ws, "move_note", {"id": "n1"}).lower()
    assert ws.call("list_notebooks", {}).text.splitlines()[0].endswith("Personal: 0 notes (0 archived)")


# --- sharing --------------------------------------------------------------------------------------


def test_share_by_name_and_change_permission(ws: Workspace) -> None:
    r = ws.call("share_note", {"id": "n1", "people": ["Omar Haddad", "dana@acme.com"], "permission": "edit"})
    assert r.ok, r.text
    assert [c["email"] for c in r.data["added"]] == [OMAR, DANA] and r.data["emailed"] == []
    n = ws.table("notes.notes")["n1"]
    assert [(c.email, c.permission) for c in n.collaborators] == [(DANA, "edit"), (OMAR, "edit")]
    r2 = ws.call("share_note", {"id": "n1", "people": [OMAR], "permission": "view"})
    assert [c["email"] for c in r2.data["updated"]] == [OMAR]
    r3 = ws.call("share_note", {"id": "n1", "people": [OMAR], "permission": "view"})
    assert [c["email"] for c in r3.data["unchanged"]] == [OMAR] and not r3.diff
    assert "n1" in r.text and "added: omar@acme.com (edit)" in r.text
    gone = ws.call("unshare_note", {"id": "n1", "people": ["Omar Haddad"]})
    assert gone.data["removed"] == [OMAR]
    assert [c.email for c in ws.table("notes.notes")["n1"].collaborators] == [DANA]


@pytest.mark.parametrize("args,words", [
    ({"people": []}, "people is empty"),
    ({"people": ["Dana"]}, "people[0] 'Dana' matches 2 people"),
    ({"people": ["Nobody Here"]}, "neither an e-mail address nor a name"),
    ({"people": [ME]}, "me@acme.com owns note n1"),
    ({"people": [DANA], "permission": "owner"}, "invalid arguments for share_note: permission"),
    ({"people": [DANA], "message": "hi"}, "message is only sent with notify_by_email=true"),
    ({"people": [f"p{i}@acme.com" for i in range(51)]}, "at most 50"),
    ({"id": "n5", "people": [OMAR]}, "only the owner of note n5"),
    ({"id": "n4", "people": [OMAR]}, "permission_denied"),
])
def test_share_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "share_note", {"id": "n1", **args})


def test_unshare_errors(ws: Workspace) -> None:
    assert "not shared with omar@acme.com; its collaborators are none" in err(
        ws, "unshare_note", {"id": "n1", "people": [OMAR]})
    assert "people is empty" in err(ws, "unshare_note", {"id": "n1", "people": []})
    assert "only the owner" in err(ws, "unshare_note", {"id": "n5", "people": [OMAR]})


def test_share_by_mail_sends_each_new_collaborator_the_note(ws: Workspace) -> None:
    ws.call("share_note", {"id": "n1", "people": [DANA]})
    r = ws.call("share_note", {"id": "n1", "people": [DANA, OMAR], "permission": "view", "notify_by_email": True,
                               "message": "Notes from today"})
    assert r.ok, r.text
    assert [m["to"] for m in r.data["emailed"]] == [OMAR]  # Dana already had it
    sent = [m for m in ws.table("mail.messages").values() if m.folder == "sent"]
    assert len(sent) == 1 and sent[0].to == [OMAR] and sent[0].subject == "Shared note: Q2 planning"
    assert "Notes from today" in sent[0].body and "Hire two engineers" in sent[0].body
    assert {c.table for c in r.diff} == {"notes.notes", "mail.messages"}
    assert verdict(ws, {"kind": "mail_sent", "to": [OMAR], "body": {"contains": "Budget: 1.2M"}})
    assert verdict(ws, {"kind": "record_exists", "table": "notes.notes",
                        "where": {"id": "n1", "collaborators.email": {"includes": [OMAR]}}})
    # a mail sent through a share is a call of send_email for the transcript predicates too
    assert r.event.via and r.event.via[0][0] == "send_email" and r.event.to_json()["via"][0]["tool"] == "send_email"
    assert not verdict(ws, {"kind": "tool_not_called", "tool": "send_email"})
    assert verdict(ws, {"kind": "tool_called", "tool": "send_*", "args": {"to": {"includes": [OMAR]}}})
    assert verdict(ws, {"kind": "tool_not_called", "tool": "send_email", "args": {"to": {"includes": [DANA]}}})


def test_a_share_by_mail_outside_the_allowed_domains_is_blocked_and_changes_nothing() -> None:
    ws = make(policies=[{"type": "allowed_recipient_domains", "domains": ["acme.com"]}])
    message = err(ws, "share_note", {"id": "n1", "people": [OUT], "notify_by_email": True})
    assert message.startswith("policy_violation") and OUT in message
    assert ws.table("notes.notes")["n1"].collaborators == []
    assert err(ws, "share_note", {"id": "n1", "people": [OUT]}).startswith("policy_violation")  # nor without mail


def test_tool_rules_cover_mail_sent_through_a_share() -> None:
    ws = make(policies=[{"type": "forbidden_tools", "tools": ["send_*"]},
                        {"type": "confirmation_required", "tools": ["delete_note"]}])
    message = err(ws, "share_note", {"id": "n1", "people": [DANA], "notify_by_email": True})
    assert message.startswith("policy_violation") and "send_email (called by share_note) is not allowed" in message
    assert ws.call("share_note", {"id": "n1", "people": [DANA]}).ok
    assert "delete_note needs the user's confirmation" in err(ws, "delete_note", {"id": "n2"})


def test_share_by_mail_needs_mail() -> None:
    ws = make(services=["notes", "contacts"])
    assert "has no mail" in err(ws, "share_note", {"id": "n1", "people": [DANA], "notify_by_email": True})
    no_dir = make(services=["notes"])
    assert "no directory" in err(no_dir, "share_note", {"id": "n1", "people": ["Dana Reyes"]})
    assert no_dir.call("share_note", {"id": "n1", "people": [DANA]}).ok


# --- predicates, persistence, invariants ----------------------------------------------------------


def test_predicates_work_on_notes_unchanged(ws: Workspace) -> None:
    new = ws.call("create_note", {"title": "Retro", "body": "went well", "notebook": "Work", "tags": ["retro"]})
    exists = {"kind": "record_exists", "table": "notes.notes", "new_only": True,
              "where": {"title": "Retro", "notebook": "nb-work", "tags": {"includes": ["retro"]}}}
    assert verdict(ws, exists)
    assert not verdict(ws, {**exists, "where": {"title": "Retro", "archived": True}})
    assert verdict(ws, {"kind": "record_absent", "table": "notes.notes", "where": {"owner": OMAR, "archived": True}})
    assert verdict(ws, {"kind": "unchanged", "scope": "notes.notes:n?"})
    assert verdict(ws, {"kind": "only_changed", "scopes": [f"notes.notes:{new.data['note']['id']}"]})
    ws.call("update_note", {"id": "n2", "archived": True})
    assert not verdict(ws, {"kind": "unchanged", "scope": "notes.notes:n?"})
    assert not verdict(ws, {"kind": "only_changed", "scopes": ["notes.notebooks", "mail"]})


def test_state_survives_json_round_trip(ws: Workspace) -> None:
    ws.call("create_note", {"title": "New", "tags": ["x"], "notebook": "Work"})
    ws.call("share_note", {"id": "n1", "people": [OMAR], "notify_by_email": True})
    back = Workspace.from_json(ws.to_json())
    assert back.content_hash == ws.content_hash and back.export_data() == ws.export_data()


OPS = st.sampled_from(["create", "update", "delete", "move", "notebook", "share", "unshare"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(OPS, st.integers(0, 9), st.booleans()), max_size=15))
def test_any_sequence_of_calls_keeps_references_whole(steps: list) -> None:
    ws = make()
    for op, i, flag in steps:
        notes = sorted(ws.table("notes.notes"))
        books = sorted(ws.table("notes.notebooks"))
        nid, nb = notes[i % len(notes)] if notes else "n0", books[i % len(books)]
        args = {"create": ("create_note", {"title": f"t{i}", "notebook": nb if flag else None}),
                "update": ("update_note", {"id": nid, "append": "more", "archived": flag}),
                "delete": ("delete_note", {"id": nid}),
                "move": ("move_note", {"id": nid, "notebook": nb if flag else None}),
                "notebook": ("create_notebook", {"name": f"Book {i}"}),
                "share": ("share_note", {"id": nid, "people": [OMAR if flag else DANA], "notify_by_email": flag}),
                "unshare": ("unshare_note", {"id": nid, "people": [OMAR]})}[op]
        r = ws.call(*args)
        assert r.ok or r.error.code != "internal_error", r.text
    books = ws.table("notes.notebooks")
    for n in ws.table("notes.notes").values():
        assert n.notebook is None or books[n.notebook].owner == n.owner
        assert n.owner not in [c.email for c in n.collaborators]
    back = Workspace.create(ws.config, ws.export_data())  # the final data passes the initial-data checks
    assert back.content_hash == ws.content_hash


def test_every_tool_is_documented_and_hinted() -> None:
    tools = all_services()["notes"].tools
    assert set(tools) == {"search_notes", "get_note", "create_note", "update_note", "delete_note", "move_note",
                          "list_notebooks", "create_notebook", "share_note", "unshare_note"}
    assert tools["search_notes"].mcp_annotations()["readOnlyHint"] is True
    for tool in tools.values():
        assert all(p.get("description") for p in tool.input_schema["properties"].values()), tool.name
    assert tools["share_note"].input_schema["properties"]["permission"]["enum"] == ["view", "edit"]


def test_mcp_lists_the_notes_tools_with_their_schemas_and_shares_by_mail() -> None:
    import anyio
    from mcp import Client

    from mcp_server import Episode, PythonEnvironment, build_server

    env = PythonEnvironment("notes", "Notes", "Share the Q2 plan with Omar.", lambda: make())
    ep = Episode(env)

    async def go() -> tuple[list, object, object]:
        async with Client(build_server(ep)) as c:
            tools = (await c.list_tools()).tools
            shared = await c.call_tool("share_note", {"id": "n1", "people": ["Omar Haddad"], "notify_by_email": True})
            denied = await c.call_tool("update_note", {"id": "n4", "title": "x"})
            return tools, shared, denied

    tools, shared, denied = anyio.run(go)
    listed = {t.name: t for t in tools}
    for name, tool in all_services()["notes"].tools.items():
        assert listed[name].input_schema == tool.strict_input_schema and listed[name].description == tool.description
    assert listed["delete_note"].annotations.destructive_hint is True
    assert not shared.is_error and shared.structured_content["emailed"][0]["to"] == OMAR
    assert denied.is_error and "view permission only" in denied.content[0].text
    assert [c.email for c in ep.workspace.table("notes.notes")["n1"].collaborators] == [OMAR]


# --- participants ---------------------------------------------------------------------------------


def test_participants_are_people_named_as_people_are() -> None:
    ws = make()
    r = ws.call("create_note", {"title": "Standup 2 March", "participants": ["Omar Haddad", "dana@acme.com",
                                                                          "Omar Haddad", OUT]})
    assert r.ok and r.data["note"]["participants"] == [OMAR, DANA, OUT]
    assert "Participants: omar@acme.com, dana@acme.com, pat@partner.org" in r.text
    nid = r.data["note"]["id"]
    assert r.data["note"]["collaborators"] == []  # taking part gives no access
    assert [n["id"] for n in ws.call("search_notes", {"participant": "Omar Haddad"}).data["notes"]] == [nid]
    assert "matches 2 people" in err(ws, "create_note", {"title": "x", "participants": ["Dana"]})
    u = ws.call("update_note", {"id": nid, "add_participants": ["Dana Ross"], "remove_participants": [OUT]})
    assert u.ok and u.data["changed"] == ["participants"]
    assert u.data["note"]["participants"] == [OMAR, DANA, "dana.r@acme.com"]
    assert "not a participant" in err(ws, "update_note", {"id": nid, "remove_participants": [OUT]})
    assert "participants[0]" in err(ws, "create_note", {"title": "x", "participants": ["Nobody Known"]})


def test_participants_in_initial_data_are_addresses_and_old_notes_load() -> None:
    ws = make(notes=[{"id": "n1", "title": "Kickoff", "participants": ["Omar@Acme.com", OMAR]},
                     {"id": "n2", "title": "Old note"}])
    notes = ws.table("notes.notes")
    assert notes["n1"].participants == [OMAR] and notes["n2"].participants == []
    with pytest.raises(SpecError, match="participant"):
        make(notes=[{"id": "n1", "title": "x", "participants": ["Omar Haddad"]}])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from([DANA, OMAR, OUT, "Omar Haddad", "Dana Reyes"])),
                max_size=8))
def test_participant_edits_never_duplicate_anyone(edits: list[tuple[bool, str]]) -> None:
    ws = make()
    nid = ws.call("create_note", {"title": "t"}).data["note"]["id"]
    for add, who in edits:
        ws.call("update_note", {"id": nid, "add_participants" if add else "remove_participants": [who]})
        people = ws.table("notes.notes")[nid].participants
        assert len(people) == len(set(people)) and all("@" in p for p in people)
