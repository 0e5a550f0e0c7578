"""Behaviour and errors of every files tool."""

from __future__ import annotations

import pytest
from support import call_error

from workspace_sim import Workspace, WorkspaceConfig


@pytest.fixture
def ws() -> Workspace:
    return Workspace.create(
        WorkspaceConfig(services=["files"]),
        {"files": {"files": [
            {"path": "/docs/notes.md", "content": "alpha\nbeta\ngamma\n"},
            {"path": "/docs/sub/deep.txt", "content": "deep beta\n"},
            {"path": "/data/q1.csv", "content": "region,amount\nnorth,10\nsouth,5\n"},
            {"path": "/img/logo.png", "content": "iVBORw0KGgo=", "encoding": "base64"},
        ]}},
    )


err = call_error


def test_parent_folders_are_created_at_load(ws: Workspace) -> None:
    assert set(ws.table("files.folders")) == {"/docs", "/docs/sub", "/data", "/img"}


def test_read_text_file_head_tail(ws: Workspace) -> None:
    assert ws.call("read_text_file", {"path": "/docs/notes.md"}).data["content"] == "alpha\nbeta\ngamma\n"
    assert ws.call("read_text_file", {"path": "docs/notes.md", "head": 1}).text == "alpha\n"
    assert ws.call("read_text_file", {"path": "/docs/notes.md", "tail": 2}).data["content"] == "beta\ngamma\n"
    assert "not both" in err(ws, "read_text_file", {"path": "/docs/notes.md", "head": 1, "tail": 1})
    assert "not_found" in err(ws, "read_text_file", {"path": "/docs/note.md"})
    assert "did you mean /docs/notes.md" in err(ws, "read_text_file", {"path": "/docs/note.md"})
    assert "binary" in err(ws, "read_text_file", {"path": "/img/logo.png"})
    assert "is a folder" in err(ws, "read_text_file", {"path": "/docs"})


@pytest.mark.parametrize("bad,words", [
    ("../etc/passwd", "escapes"), ("/docs/../../etc", "escapes"), ("/a\x00b", "NUL"), ("C:\\x", "backslash"),
    ("/%2e%2e/x", "percent"), ("~/x", "home"), ("", "empty"), ("/a\ud800", "surrogate"), ("/a\nb", "control"),
    ("/\uff0e\uff0e/etc", "look-alike"),
])
def test_hostile_paths_are_refused(ws: Workspace, bad: str, words: str) -> None:
    before = ws.content_hash
    assert words in err(ws, "read_text_file", {"path": bad})
    assert words in err(ws, "write_file", {"path": bad, "content": "x"})
    assert ws.content_hash == before


def test_dotdot_inside_the_root_is_fine(ws: Workspace) -> None:
    assert ws.call("read_text_file", {"path": "/docs/sub/../notes.md"}).ok


def test_read_multiple_files_reports_per_file_errors(ws: Workspace) -> None:
    r = ws.call("read_multiple_files", {"paths": ["/docs/notes.md", "/nope", "../x"]})
    assert r.ok
    files = r.data["files"]
    assert files[0]["content"].startswith("alpha")
    assert "not found" in files[1]["error"] and "escapes" in files[2]["error"]
    assert "empty" in err(ws, "read_multiple_files", {"paths": []})


def test_write_file_creates_and_overwrites(ws: Workspace) -> None:
    r = ws.call("write_file", {"path": "/docs/new.txt", "content": "hi"})
    assert r.ok and r.data == {"path": "/docs/new.txt", "size": 2, "created": True}
    assert [c.kind for c in r.diff] == ["added"]
    r2 = ws.call("write_file", {"path": "/docs/new.txt", "content": "hello"})
    assert r2.data["created"] is False and r2.diff.changes[0].fields["content"] == ("hi", "hello")
    assert "create_directory" in err(ws, "write_file", {"path": "/nofolder/x.txt", "content": ""})
    assert "is a folder" in err(ws, "write_file", {"path": "/docs", "content": ""})
    assert "content" in err(ws, "write_file", {"path": "/docs/x"})


def test_edit_file_exact_edits_dry_run_and_errors(ws: Workspace) -> None:
    before = ws.content_hash
    r = ws.call("edit_file", {"path": "/docs/notes.md", "edits": [{"old_text": "beta", "new_text": "BETA"}], "dry_run": True})
    assert r.ok and "-beta\n+BETA" in r.data["diff"] and ws.content_hash == before
    r = ws.call("edit_file", {"path": "/docs/notes.md", "edits": [{"old_text": "beta", "new_text": "BETA"}]})
    assert r.ok and ws.table("files.files")["/docs/notes.md"].content == "alpha\nBETA\ngamma\n"
    assert "-beta" in r.diff.changes[0].text_diff()
    assert "not found" in err(ws, "edit_file", {"path": "/docs/notes.md", "edits": [{"old_text": "zeta", "new_text": ""}]})
    ws.call("write_file", {"path": "/docs/rep.txt", "content": "a a"})
    assert "occurs 2 times" in err(ws, "edit_file", {"path": "/docs/rep.txt", "edits": [{"old_text": "a", "new_text": "b"}]})
    assert "edits" in err(ws, "edit_file", {"path": "/docs/notes.md", "edits": []})
    assert "old_text" in err(ws, "edit_file", {"path": "/docs/notes.md", "edits": [{"old": "x"}]})


def test_create_directory_is_idempotent_and_makes_parents(ws: Workspace) -> None:
    r = ws.call("create_directory", {"path": "/a/b/c"})
    assert r.data["created"] == ["/a", "/a/b", "/a/b/c"]
    assert ws.call("create_directory", {"path": "/a/b/c"}).data["created"] == []
    assert "is a file" in err(ws, "create_directory", {"path": "/docs/notes.md/x"})


def test_list_directory_and_tree(ws: Workspace) -> None:
    r = ws.call("list_directory", {"path": "/docs"})
    assert [e["name"] for e in r.data["entries"]] == ["notes.md", "sub"]
    assert "[DIR] sub" in r.text and "[FILE] notes.md" in r.text
    tree = ws.call("directory_tree", {"path": "/", "exclude_patterns": ["img"]}).data["tree"]
    assert [e["name"] for e in tree] == ["data", "docs"]
    assert tree[1]["children"][0]["children"] == [{"name": "deep.txt", "type": "file"}]
    assert "not found" in err(ws, "list_directory", {"path": "/zzz"})
    assert "is a file" in err(ws, "list_directory", {"path": "/docs/notes.md"})


def test_move_file_and_folder(ws: Workspace) -> None:
    assert ws.call("move_file", {"source": "/docs/notes.md", "destination": "/data/notes.md"}).ok
    assert "/data/notes.md" in ws.table("files.files") and "/docs/notes.md" not in ws.table("files.files")
    r = ws.call("move_file", {"source": "/docs", "destination": "/archive"})
    assert r.ok and "/archive/sub/deep.txt" in ws.table("files.files") and "/archive/sub" in ws.table("files.folders")
    assert "already exists" in err(ws, "move_file", {"source": "/data/q1.csv", "destination": "/data/notes.md"})
    assert "into itself" in err(ws, "move_file", {"source": "/archive", "destination": "/archive/sub/x"})
    assert "not found" in err(ws, "move_file", {"source": "/ghost", "destination": "/g2"})


def test_delete_file_and_empty_folder(ws: Workspace) -> None:
    assert ws.call("delete_file", {"path": "/docs/sub/deep.txt"}).ok
    assert ws.call("delete_file", {"path": "/docs/sub"}).ok
    assert "not empty" in err(ws, "delete_file", {"path": "/docs"})
    assert "root" in err(ws, "delete_file", {"path": "/"})
    assert "not found" in err(ws, "delete_file", {"path": "/docs/sub"})


def test_search_files_glob(ws: Workspace) -> None:
    assert ws.call("search_files", {"pattern": "*.csv"}).data["matches"] == ["/data/q1.csv"]
    assert ws.call("search_files", {"pattern": "docs/**/*.txt"}).data["matches"] == ["/docs/sub/deep.txt"]
    assert ws.call("search_files", {"pattern": "*", "path": "/docs", "exclude_patterns": ["sub"]}).data["matches"] == ["/docs/notes.md"]


def test_grep_lines_and_limits(ws: Workspace) -> None:
    r = ws.call("grep", {"pattern": "beta"})
    assert [(m["path"], m["line"]) for m in r.data["matches"]] == [("/docs/notes.md", 2), ("/docs/sub/deep.txt", 1)]
    assert ws.call("grep", {"pattern": "BETA", "ignore_case": True, "include": "*.md"}).data["matches"][0]["line"] == 2
    assert ws.call("grep", {"pattern": "beta", "max_results": 1}).data["truncated"] is True
    assert ws.call("grep", {"pattern": "a.b", "fixed_string": True}).data["matches"] == []
    assert "regular expression" in err(ws, "grep", {"pattern": "("})


def test_catastrophic_regex_is_cut_off(ws: Workspace) -> None:
    ws.call("write_file", {"path": "/docs/evil.txt", "content": "a" * 40 + "!"})
    r = ws.call("grep", {"pattern": "(a+)+$", "path": "/docs/evil.txt"})
    assert r.ok or "too long" in r.error.message


def test_get_file_info(ws: Workspace) -> None:
    info = ws.call("get_file_info", {"path": "/data/q1.csv"}).data
    assert info["type"] == "file" and info["size"] == 31 and info["mime_type"] == "text/csv"
    assert ws.call("get_file_info", {"path": "/docs"}).data["entries"] == 2
    assert ws.call("get_file_info", {"path": "/img/logo.png"}).data["encoding"] == "base64"
