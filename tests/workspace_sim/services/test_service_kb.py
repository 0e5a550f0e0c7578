"""Behaviour and errors of every knowledge-base tool, version history, predicates on articles, and MCP."""

from __future__ import annotations

import json

from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from support import call_error

from mcp_server import Episode, PythonEnvironment, build_server
from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.predicates import evaluate, parse_predicates
from workspace_sim.services import all_services

ME, LEE = "me@acme.com", "lee.park@acme.com"
PEOPLE = [{"email": ME, "name": "Mia Chen"}, {"email": LEE, "name": "Lee Park"}]
SPACES = [{"key": "IT", "name": "IT Help", "description": "How-tos for laptops and access"}, {"key": "HR"}]
ARTICLES = [
    {"id": "kb-vpn", "space": "IT", "title": "Reset your VPN token",
     "body": "Open the access portal and choose Reset token. The VPN client asks for the new token.",
     "tags": ["vpn", "access"], "owner": ME, "updated": "2025-06-01T00:00:00+00:00", "last_reviewed": "2025-06-01",
     "related": ["OPS-1"]},
    {"id": "kb-wifi", "space": "IT", "title": "Guest wifi", "body": "The guest network needs no VPN. Ask reception.",
     "tags": ["wifi"], "owner": LEE, "updated": "2026-02-01T00:00:00+00:00", "last_reviewed": "2026-02-01"},
    {"id": "kb-leave", "space": "HR", "title": "Annual leave policy", "body": "Everyone has 25 days of leave.",
     "tags": ["leave"], "owner": LEE, "status": "draft", "updated": "2026-01-15T00:00:00+00:00"},
    {"id": "kb-old", "space": "IT", "title": "Fax machine setup", "body": "Dial 9 for VPN fax.", "status": "archived"},
]
TICKETS = {"projects": [{"key": "OPS"}], "tickets": [{"key": "OPS-1", "title": "VPN down"},
                                                     {"key": "OPS-2", "title": "Token expired"}]}


def make(services: tuple[str, ...] = ("contacts", "kb", "tickets"), articles: list | None = None) -> Workspace:
    d = {"contacts": {"people": PEOPLE}, "kb": {"spaces": SPACES, "articles": ARTICLES if articles is None else articles},
         "tickets": TICKETS}
    return Workspace.create(WorkspaceConfig(services=list(services), user=ME), {k: v for k, v in d.items()
                                                                               if k in services})


@pytest.fixture
def ws() -> Workspace:
    return make()


err = call_error


def ids(result: Any) -> list[str]:
    assert result.ok, result.text
    return [a["id"] for a in result.data["articles"]]


# --- initial data ---------------------------------------------------------------------------------


def test_initial_data_is_completed() -> None:
    ws = make(articles=[*ARTICLES, {"id": "kb-fin", "space": "FIN", "title": "Expenses", "version": 3,
                                    "history": [{"version": 2, "title": "Expenses", "body": "old"}]}])
    assert ws.table("kb.spaces")["FIN"].name == "FIN"  # a space the data left out is created
    assert ws.table("kb.articles")["kb-old"].updated == ws.config.now
    assert ws.table("kb.articles")["kb-vpn"].version == 1


@pytest.mark.parametrize("article,words", [
    ({"id": "a b", "space": "IT", "title": "x"}, "article id 'a b'"),
    ({"id": "a", "space": "it-x", "title": "x"}, "space key"),
    ({"id": "a", "space": "IT", "title": " "}, "title must be"),
    ({"id": "a", "space": "IT", "title": "x", "tags": ["x" * 51]}, "at most 50 are allowed"),
    ({"id": "a", "space": "IT", "title": "x", "tags": ["bell\x07"]}, "tag 'bell"),
    ({"id": "a", "space": "IT", "title": "x", "tags": [" "]}, "non-empty text"),
    ({"id": "a", "space": "IT", "title": "x", "related": ["ftp://x"]}, "ticket key like OPS-12"),
    ({"id": "a", "space": "IT", "title": "x", "status": "live"}, "status"),
    ({"id": "a", "space": "IT", "title": "x", "version": 3, "history": [{"version": 1, "title": "x", "body": ""}]},
     "must count up by one to version 2"),
    ({"id": "a", "space": "IT", "title": "x", "owner": "lee"}, "owner/editor 'lee'"),
])
def test_bad_initial_data_is_refused_with_its_path(article: dict, words: str) -> None:
    with pytest.raises(SpecError) as info:
        make(articles=[article])
    assert str(info.value).startswith("data.kb.articles[0]") and words in str(info.value), str(info.value)


# --- spaces and search ----------------------------------------------------------------------------


def test_list_spaces_counts_articles_by_status(ws: Workspace) -> None:
    r = ws.call("list_spaces", {})
    assert r.data["spaces"] == [
        {"key": "HR", "name": "HR", "description": "", "draft": 1, "published": 0, "archived": 0},
        {"key": "IT", "name": "IT Help", "description": "How-tos for laptops and access", "draft": 0, "published": 2,
         "archived": 1}]
    assert "- IT IT Help: 2 published, 0 draft, 1 archived — How-tos" in r.text


def test_search_ranks_title_and_tags_above_body(ws: Workspace) -> None:
    r = ws.call("search_articles", {"query": "VPN"})
    assert ids(r) == ["kb-vpn", "kb-wifi"]  # title and tag beat a body mention; archived left out
    top = r.data["articles"][0]
    assert top["owner"] == ME and top["updated"].startswith("2025-06-01") and "Reset token" in top["snippet"]
    assert "[kb-vpn] Reset your VPN token (IT, published, v1) #vpn #access — owner me@acme.com" in r.text
    assert ids(ws.call("search_articles", {"query": "reset token portal"})) == ["kb-vpn"]
    assert ids(ws.call("search_articles", {"query": "guest vpn"})) == ["kb-wifi", "kb-vpn"]  # more words matched
    assert ids(ws.call("search_articles", {"query": "vpn", "status": "archived"})) == ["kb-old"]
    assert ids(ws.call("search_articles", {})) == ["kb-wifi", "kb-leave", "kb-vpn"]  # newest update first
    assert ids(ws.call("search_articles", {"space": "it help"})) == ["kb-wifi", "kb-vpn"]
    assert ids(ws.call("search_articles", {"tag": "LEAVE"})) == ["kb-leave"]
    assert ids(ws.call("search_articles", {"owner": "Lee Park"})) == ["kb-wifi", "kb-leave"]
    assert ids(ws.call("search_articles", {"not_updated_since": "2026-01-01"})) == ["kb-vpn"]
    assert ids(ws.call("search_articles", {"not_reviewed_since": "2026-01-01"})) == ["kb-leave", "kb-vpn"]
    assert ids(ws.call("search_articles", {"status": "draft"})) == ["kb-leave"]
    page = ws.call("search_articles", {"limit": 1, "offset": 2})
    assert ids(page) == ["kb-vpn"] and page.data["total"] == 3
    assert ws.call("search_articles", {"query": "printer"}).text == "No articles match."


@pytest.mark.parametrize("args,words", [
    ({"space": "SALES"}, "spaces: HR (HR), IT (IT Help)"), ({"tag": "t" * 51}, "tag"),
    ({"not_updated_since": "last year"}, "YYYY-MM-DD"), ({"owner": "nobody here"}, "neither an e-mail"),
    ({"owner": "zed@acme.com"}, "not in the directory"), ({"limit": 51}, "limit"), ({"offset": -1}, "offset"),
    ({"query": "q" * 501}, "longer than"), ({"status": "live"}, "status"),
])
def test_search_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "search_articles", args)


# --- reading and writing --------------------------------------------------------------------------


def test_get_article_and_errors(ws: Workspace) -> None:
    r = ws.call("get_article", {"article_id": "kb-vpn"})
    a = r.data["article"]
    assert a["body"].startswith("Open the access portal") and a["related"] == ["OPS-1"] and a["versions"] == []
    assert r.text.startswith("[kb-vpn] Reset your VPN token") and "Related: OPS-1" in r.text
    assert "did you mean kb-vpn (Reset your VPN token)" in err(ws, "get_article", {"article_id": "vpn token"})
    assert "no earlier versions are kept" in err(ws, "get_article", {"article_id": "kb-vpn", "version": 7})


def test_create_article(ws: Workspace) -> None:
    r = ws.call("create_article", {"space": "it", "title": "  Printer   setup ", "body": "Use floor 2.",
                                   "tags": ["Printer", "printer"], "related": ["ops-2", "https://wiki.acme.com/p"]})
    a = r.data["article"]
    assert a["id"].startswith("kb-") and a["status"] == "draft" and a["version"] == 1 and a["owner"] == ME
    assert a["title"] == "Printer setup" and a["tags"] == ["printer"] and a["related"] == ["OPS-2", "https://wiki.acme.com/p"]
    assert ws.table("kb.articles")[a["id"]].editor == ME


@pytest.mark.parametrize("args,words", [
    ({"space": "IT", "title": "guest WIFI", "body": "x"}, "already has an article titled"),
    ({"space": "XX", "title": "t", "body": "x"}, "space 'XX' not found"),
    ({"space": "IT", "title": "", "body": "x"}, "title is empty"),
    ({"space": "IT", "title": "t", "body": "x" * 100_001}, "at most 100000"),
    ({"space": "IT", "title": "t", "body": "x", "related": ["OPS-9"]}, "OPS-9 do not exist"),
    ({"space": "IT", "title": "t", "body": "x", "related": ["call Bob"]}, "ticket key like OPS-12"),
    ({"space": "IT", "title": "t", "body": "x", "tags": ["t"] * 31}, "at most 30"),
    ({"space": "IT", "title": "t", "body": "x", "status": "archived"}, "status"),
])
def test_create_article_errors(ws: Workspace, args: dict, words: str) -> None:
    assert words in err(ws, "create_article", args)


def test_update_keeps_history_and_refuses_stale_edits(ws: Workspace) -> None:
    r = ws.call("update_article", {"article_id": "kb-vpn", "body": "Tokens now reset in the app.",
                                   "expected_version": 1, "note": "new app"})
    assert r.data["changed"] == ["body"] and r.data["article"]["version"] == 2
    assert r.data["article"]["change_note"] == "new app" and "Earlier versions: v1 (2025-06-01)" in r.text
    app = ws.call("update_article", {"article_id": "kb-vpn", "body": "Call IT if it fails.", "mode": "append",
                                     "tags": ["vpn"], "expected_version": 2})
    assert app.data["article"]["body"] == "Tokens now reset in the app.\n\nCall IT if it fails."
    assert app.data["changed"] == ["body", "tags"] and app.data["article"]["version"] == 3
    v1 = ws.call("get_article", {"article_id": "kb-vpn", "version": 1})
    assert v1.data["historical"] and v1.data["article"]["body"].startswith("Open the access portal")
    assert v1.data["article"]["editor"] == ME and "version 1 of 3 (an earlier version)" in v1.text
    v2 = ws.call("get_article", {"article_id": "kb-vpn", "version": 2}).data["article"]
    assert v2["note"] == "new app" and v2["tags"] == ["vpn", "access"]
    message = err(ws, "update_article", {"article_id": "kb-vpn", "body": "x", "expected_version": 2})
    assert message.startswith("conflict: article kb-vpn is at version 3, not the version 2 you expected")
    same = ws.call("update_article", {"article_id": "kb-vpn", "title": "Reset your VPN token"})
    assert same.data["changed"] == [] and same.event.diff.changes == ()
    assert "nothing to change" in err(ws, "update_article", {"article_id": "kb-vpn"})
    assert "body to append is empty" in err(ws, "update_article", {"article_id": "kb-vpn", "body": " ", "mode": "append"})
    assert "already has an article titled" in err(ws, "update_article", {"article_id": "kb-vpn", "title": "Guest wifi"})
    assert "is archived; publish_article it first" in err(ws, "update_article", {"article_id": "kb-old", "body": "x"})
    assert "OPS-7 do not exist" in err(ws, "update_article", {"article_id": "kb-vpn", "related": ["OPS-7"]})
    moved = ws.call("update_article", {"article_id": "kb-vpn", "owner": "Lee Park", "related": []})
    assert moved.data["changed"] == ["owner", "related"] and moved.data["article"]["owner"] == LEE


def test_status_changes_and_review(ws: Workspace) -> None:
    p = ws.call("publish_article", {"article_id": "kb-leave", "expected_version": 1})
    assert p.data["article"]["status"] == "published" and p.data["article"]["version"] == 1
    assert "already published" in err(ws, "publish_article", {"article_id": "kb-leave"})
    assert "conflict" in err(ws, "publish_article", {"article_id": "kb-old", "expected_version": 4})
    assert ws.call("archive_article", {"article_id": "kb-wifi"}).data["article"]["status"] == "archived"
    assert "already archived" in err(ws, "archive_article", {"article_id": "kb-wifi"})
    assert ws.call("publish_article", {"article_id": "kb-wifi"}).data["article"]["status"] == "published"  # restore
    rv = ws.call("mark_article_reviewed", {"article_id": "kb-vpn"})
    assert rv.data["changed"] == ["last_reviewed"] and rv.data["article"]["last_reviewed"] == "2026-03-02"
    assert rv.data["article"]["version"] == 1
    assert ws.call("mark_article_reviewed", {"article_id": "kb-vpn"}).data["changed"] == []
    assert "not found" in err(ws, "mark_article_reviewed", {"article_id": "kb-none"})


def test_related_tickets_are_not_checked_without_the_tickets_service() -> None:
    ws = make(services=("kb",))
    r = ws.call("create_article", {"space": "IT", "title": "t", "body": "b", "related": ["OPS-99"], "owner": "a@b.co"})
    assert r.ok and r.data["article"]["owner"] == "a@b.co"


EDITS = st.lists(st.one_of(
    st.fixed_dictionaries({"body": st.text(max_size=30), "mode": st.sampled_from(["replace", "append"])}),
    st.fixed_dictionaries({"title": st.sampled_from(["One", "Two", "Guest wifi", ""])}),
    st.fixed_dictionaries({"tags": st.lists(st.sampled_from(["a", "b", "c d"]), max_size=3)}),
    st.fixed_dictionaries({"expected_version": st.integers(1, 6), "body": st.sampled_from(["x", "y"])}),
    st.just({"archive": True}), st.just({"publish": True}),
), max_size=12)


@settings(max_examples=60, deadline=None)
@given(EDITS)
def test_any_sequence_of_updates_keeps_history_consistent(edits: list[dict]) -> None:
    ws = make(services=("kb",))
    contents = {1: ("Reset your VPN token", ws.table("kb.articles")["kb-vpn"].body)}
    for e in edits:
        before = ws.table("kb.articles")["kb-vpn"]
        if e.get("archive") or e.get("publish"):
            r = ws.call("archive_article" if e.get("archive") else "publish_article", {"article_id": "kb-vpn"})
        else:
            r = ws.call("update_article", {"article_id": "kb-vpn", **e})
        a = ws.table("kb.articles")["kb-vpn"]
        if not r.ok:
            assert a == before
            continue
        if a.version != before.version:
            assert a.version == before.version + 1 and r.data["changed"]
            contents[a.version] = (a.title, a.body)
        assert [h.version for h in a.history] == list(range(1, a.version))
        for h in a.history:  # every kept version is exactly the content that version had
            assert (h.title, h.body) == contents[h.version]
            got = ws.call("get_article", {"article_id": "kb-vpn", "version": h.version}).data["article"]
            assert (got["title"], got["body"]) == contents[h.version]


# --- predicates and MCP ---------------------------------------------------------------------------


def test_predicates_work_on_kb_tables(ws: Workspace) -> None:
    ws.call("update_article", {"article_id": "kb-vpn", "body": "Use the app.", "note": "app"})
    ws.call("publish_article", {"article_id": "kb-leave"})
    checks = parse_predicates([
        {"kind": "record_exists", "table": "kb.articles",
         "where": {"id": "kb-vpn", "version": 2, "body": {"contains": "app"}, "history.body": {"count": 1}}},
        {"kind": "record_exists", "table": "kb.articles", "where": {"status": "published"}, "count": 3},
        {"kind": "record_absent", "table": "kb.articles", "where": {"status": "draft"}},
        {"kind": "unchanged", "scope": "kb.articles:kb-wifi"},
        {"kind": "only_changed", "scopes": ["kb.articles:kb-vpn", "kb.articles:kb-leave"]},
        {"kind": "unchanged", "scope": "kb.spaces"},
    ])
    assert [r.passed for r in evaluate(checks, ws).results] == [True] * 6
    ws.call("archive_article", {"article_id": "kb-wifi"})
    assert [r.passed for r in evaluate(checks, ws).results] == [True, False, True, False, False, True]


def test_mcp_lists_and_calls_kb_tools() -> None:
    ep = Episode(PythonEnvironment("kb", "KB", "Answer from the knowledge base.", make))

    async def go() -> tuple[list[Any], Any, Any]:
        async with Client(build_server(ep)) as c:
            tools = (await c.list_tools()).tools
            found = await c.call_tool("search_articles", {"query": "vpn"})
            stale = await c.call_tool("update_article", {"article_id": "kb-vpn", "body": "x", "expected_version": 9})
            return tools, found, stale

    tools, found, stale = anyio.run(go)
    kb = {t.name: t for t in tools if t.name in all_services()["kb"].tools}
    assert set(kb) == set(all_services()["kb"].tools)
    for name, t in kb.items():
        assert t.input_schema == ep.workspace.tools[name].strict_input_schema and t.description  # strict by default
    assert '"enum": ["replace", "append"]' in json.dumps(kb["update_article"].input_schema["properties"]["mode"])
    assert kb["get_article"].annotations.read_only_hint is True
    assert [a["id"] for a in found.structured_content["articles"]] == ["kb-vpn", "kb-wifi"]
    assert stale.is_error and "conflict" in stale.content[0].text


@pytest.mark.parametrize("given_tags, stored", [
    (["Remote Access", "remote  access"], ["remote access"]),  # spaces collapsed, case folded, de-duplicated
    (["远程办公", "ＶＰＮ"], ["远程办公", "vpn"]),  # any script; full-width letters NFKC-normalized
    (["café", "ﬁnance"], ["café", "finance"]),
])
def test_tags_are_free_text_in_any_script(given_tags: list[str], stored: list[str]) -> None:
    ws = make(services=("kb",))
    r = ws.call("create_article", {"space": "IT", "title": "t", "body": "b", "tags": given_tags, "owner": "a@b.co"})
    assert r.ok, r.text
    assert r.data["article"]["tags"] == stored
    assert ids(ws.call("search_articles", {"tag": given_tags[0]})) == [r.data["article"]["id"]]


def test_a_word_of_a_multiword_or_chinese_tag_ranks_the_article() -> None:
    ws = make(services=("kb",))
    a = ws.call("create_article", {"space": "IT", "title": "Working from home", "body": "Setup steps.",
                                   "tags": ["remote access", "远程办公"], "owner": "a@b.co"}).data["article"]["id"]
    assert ids(ws.call("search_articles", {"query": "remote"}))[0] == a
    assert ids(ws.call("search_articles", {"query": "远程办公"})) == [a]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=60), min_size=1, max_size=5))
def test_any_accepted_tag_is_nfkc_normal_and_within_limits(raw: list[str]) -> None:
    import unicodedata
    ws = make(services=("kb",))
    r = ws.call("create_article", {"space": "IT", "title": "t", "body": "b", "tags": raw, "owner": "a@b.co"})
    if r.ok:
        for t in r.data["article"]["tags"]:
            assert 1 <= len(t) <= 50 and t == unicodedata.normalize("NFKC", t) and t == " ".join(t.split())
            assert t.isprintable() and t == t.lower()
    else:
        assert "tag" in r.text
