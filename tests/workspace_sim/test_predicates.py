"""Every predicate kind, passing and failing, with reasons; conditions; load-time validation."""

from __future__ import annotations

import pytest

from workspace_sim import SpecError, Workspace, WorkspaceConfig
from workspace_sim.predicates import Condition, evaluate, parse_predicates

DATA = {"files": {"files": [
    {"path": "/data/sales.csv", "content": "region,amount\nnorth,10\nsouth,5\n"},
    {"path": "/data/cfg.json", "content": '{"owner": "ana", "limits": [{"max": 3}]}'},
    {"path": "/keep/readme.md", "content": "keep me"},
]}}


@pytest.fixture
def ws() -> Workspace:
    return Workspace.create(WorkspaceConfig(services=["files"]), DATA)


def check(ws: Workspace, pred: dict, answer: str | None = None) -> tuple[bool, str]:
    ev = evaluate(parse_predicates([pred]), ws, answer)
    r = ev.results[0]
    assert r.expected and r.observed
    return r.passed, r.reason


def test_conditions() -> None:
    c = Condition.model_validate
    assert c("x").check("x") and not c("x").check("y")
    assert c({"contains": "Total", "ignore_case": True}).check("the total is")
    assert c({"regex": r"\d{3}"}).check("a123") and not c({"regex": r"^\d+$"}).check("a1")
    assert c({"one_of": ["a", "b"]}).check("b")
    assert c({"gte": 2, "lt": 5}).check(4) and not c({"gte": 2, "lt": 5}).check(5)
    assert c({"gte": 2}).check("3") and not c({"gte": 2}).check("abc")
    assert c(15).check("15.0") and c({"equals": 0.1 + 0.2}).check(0.3)
    assert c({"after": "2026-03-01T00:00:00+00:00"}).check("2026-03-02T10:00:00+01:00")
    assert not c({"before": "2026-03-01T00:00:00+00:00"}).check("2026-03-02T00:00:00+00:00")
    assert c({"includes": ["a@x.com"]}).check(["a@x.com", "b@x.com"]) and not c({"includes": ["c"]}).check(["a"])
    assert c({"count": {"gte": 2}}).check([1, 2]) and c({"exists": False}).check(None)
    assert c("2026-03-02T09:00:00Z").check("2026-03-02T10:00:00+01:00")
    with pytest.raises(ValueError):
        c({})
    with pytest.raises(ValueError):
        c({"regex": "("})
    with pytest.raises(ValueError):
        c({"bogus": 1})


def test_file_content_kinds(ws: Workspace) -> None:
    assert check(ws, {"kind": "file", "path": "/data/sales.csv", "content": {"contains": "north"}})[0]
    ok, why = check(ws, {"kind": "file", "path": "/data/sales.csv", "content": {"contains": "east"}})
    assert not ok and "north" in why
    assert check(ws, {"kind": "file", "path": "/data/cfg.json", "json_field": {"path": "limits.0.max", "value": 3}})[0]
    ok, why = check(ws, {"kind": "file", "path": "/data/cfg.json", "json_field": {"path": "owner", "value": "bo"}})
    assert not ok and "'ana'" in why
    assert check(ws, {"kind": "file", "path": "/data/sales.csv",
                      "csv_cell": {"row": {"region": "south"}, "column": "amount", "value": 5}})[0]
    assert not check(ws, {"kind": "file", "path": "/data/sales.csv",
                          "csv_cell": {"row": {"region": "south"}, "column": "amount", "value": 6}})[0]
    assert check(ws, {"kind": "file", "path": "/data/sales.csv", "csv_rows": 2})[0]
    assert not check(ws, {"kind": "file", "path": "/data/missing.csv"})[0]
    assert check(ws, {"kind": "file", "path": "/data/missing.csv", "exists": False})[0]
    ws.call("write_file", {"path": "/data/cfg.json", "content": "{broken"})
    ok, why = check(ws, {"kind": "file", "path": "/data/cfg.json", "json_field": {"path": "owner", "value": "ana"}})
    assert not ok and "not valid JSON" in why


def test_record_exists_and_absent(ws: Workspace) -> None:
    p = {"kind": "record_exists", "table": "files.files", "where": {"path": {"regex": "^/data/"}}, "count": 2}
    assert check(ws, p)[0]
    ok, why = check(ws, {"kind": "record_exists", "table": "files.files", "where": {"path": "/x", "size": 3}})
    assert not ok and "closest" in why
    assert check(ws, {"kind": "record_exists", "table": "files.files", "where": {"path": "/data/sales.csv"}, "new_only": False})[0]
    assert not check(ws, {"kind": "record_exists", "table": "files.files", "where": {"path": "/data/sales.csv"}, "new_only": True})[0]
    assert check(ws, {"kind": "record_absent", "table": "files.files", "where": {"path": {"contains": "tmp"}}})[0]
    assert not check(ws, {"kind": "record_absent", "table": "files.files", "where": {"path": {"contains": "data"}}})[0]


def test_unchanged_and_only_changed(ws: Workspace) -> None:
    ws.call("write_file", {"path": "/data/report.md", "content": "total 15"})
    assert check(ws, {"kind": "unchanged", "scope": "files:/keep/*"})[0]
    ok, why = check(ws, {"kind": "unchanged", "scope": "files"})
    assert not ok and "/data/report.md" in why
    assert check(ws, {"kind": "only_changed", "scopes": ["files:/data/report.md"]})[0]
    ws.call("delete_file", {"path": "/keep/readme.md"})
    ok, why = check(ws, {"kind": "only_changed", "scopes": ["files:/data/*"]})
    assert not ok and "removed files.files:/keep/readme.md" in why
    assert check(ws, {"kind": "unchanged", "scope": "mail"})[0]
    assert check(ws, {"kind": "unchanged", "scope": "files.files:/data/sales*"})[0]


def test_tool_called_and_not_called(ws: Workspace) -> None:
    ws.call("read_text_file", {"path": "/data/sales.csv"})
    ws.call("delete_file", {"path": "/nope"})  # a failed attempt
    assert check(ws, {"kind": "tool_called", "tool": "read_text_file", "args": {"path": {"contains": "sales"}}})[0]
    assert not check(ws, {"kind": "tool_called", "tool": "read_*", "args": {"path": "/data/cfg.json"}})[0]
    assert not check(ws, {"kind": "tool_called", "tool": "delete_file"})[0]
    assert check(ws, {"kind": "tool_called", "tool": "delete_file", "successful": False})[0]
    assert not check(ws, {"kind": "tool_not_called", "tool": "delete_*"})[0]
    assert check(ws, {"kind": "tool_not_called", "tool": "move_file"})[0]
    assert check(ws, {"kind": "tool_called", "tool": "*", "count": {"gte": 2}, "successful": False})[0]


def test_answer(ws: Workspace) -> None:
    p = {"kind": "answer", "condition": {"regex": r"\b15\b"}}
    assert check(ws, p, "The total is 15.")[0]
    assert not check(ws, p, "The total is 150.")[0]
    ok, why = check(ws, p, None)
    assert not ok and "no final answer" in why


def test_logic_and_weights(ws: Workspace) -> None:
    yes = {"kind": "file", "path": "/data/sales.csv"}
    no = {"kind": "file", "path": "/nope"}
    assert check(ws, {"kind": "all", "predicates": [yes, yes]})[0]
    assert not check(ws, {"kind": "all", "predicates": [yes, no]})[0]
    assert check(ws, {"kind": "any", "predicates": [no, yes]})[0]
    assert check(ws, {"kind": "not", "predicate": no})[0]
    ev = evaluate(parse_predicates([dict(yes, weight=3), dict(no, weight=1, description="report exists")]), ws)
    assert ev.score == 0.75 and not ev.passed and ev.vector() == [True, False]
    assert ev.results[1].description == "report exists"
    j = ev.to_json()
    assert j["results"][1]["passed"] is False and "expected" in j["results"][1]


@pytest.mark.parametrize("doc,path", [
    ({"kind": "file"}, "predicates[0]"),  # neither path nor path_glob
    ({"kind": "file", "path": "/x", "weight": -1}, "predicates[0].weight"),  # 0 is informational
    ({"kind": "only_changed", "scopes": ["bad scope"]}, "predicates[0].scopes"),
    ({"kind": "all", "predicates": [{"kind": "answer"}]}, "predicates[0].predicates[0].condition"),
    ({"kind": "mystery"}, "predicates[0].kind"),
    ("text", "predicates[0]"),
])
def test_malformed_predicates_name_their_path(doc, path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError) as e:
        parse_predicates([doc])
    assert e.value.path == path, str(e.value)


def test_predicates_never_execute_code(ws: Workspace) -> None:
    with pytest.raises(SpecError):
        parse_predicates([{"kind": "file", "path": "/x", "content": {"__import__": "os"}}])
