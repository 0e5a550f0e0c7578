"""The `file` predicate reads every format its target can have: `csv_rows` and `csv_cell` read an xlsx workbook's
sheet (through the reader read_sheet uses) as they read a CSV file, so a `count: 0` "no bad row" check fails when
the bad row is in the workbook; a check that cannot read a file's format fails saying so, never seeing nothing."""

from __future__ import annotations

import pytest
from media_samples import b64, text_pdf

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.predicates import evaluate, parse_predicates

ROWS = [["invoice", "status", "amount"], ["INV-1", "paid", 120], ["INV-2", "bad", 80.5], ["INV-3", "paid", 40.0]]


@pytest.fixture
def ws() -> Workspace:
    w = Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": [
        {"path": "/data/invoices.csv", "content": "invoice,status,amount\nINV-1,paid,120\nINV-2,bad,80.5\n"},
        {"path": "/data/letter.pdf", "content": b64(text_pdf(["Dear Dana"])), "encoding": "base64"}]}})
    assert w.call("write_sheet", {"path": "/data/invoices.xlsx", "rows": ROWS}).ok
    assert w.call("write_sheet", {"path": "/data/invoices.xlsx", "sheet": "March", "start": "A1",
                                  "rows": [["invoice", "status"], ["INV-9", "paid"], [None, None], ["INV-10", "paid"]]}).ok
    return w


def _verdicts(ws: Workspace, docs: list[dict]) -> list[tuple[bool, str]]:
    return [(r.passed, r.observed) for r in evaluate(parse_predicates(docs), ws).results]


def test_csv_rows_sees_the_bad_row_of_a_workbook(ws: Workspace) -> None:
    no_bad = {"where": {"status": "bad"}, "count": 0}
    got = _verdicts(ws, [
        {"kind": "file", "path": "/data/invoices.xlsx", "csv_rows": no_bad},
        {"kind": "file", "path": "/data/invoices.csv", "csv_rows": no_bad},
        {"kind": "file", "path": "/data/invoices.xlsx", "csv_rows": {"where": {"status": "bad"}, "count": 1}},
        {"kind": "file", "path": "/data/invoices.xlsx", "csv_rows": 3},
        {"kind": "file", "path": "/data/invoices.xlsx", "csv_rows": {"where": {"amount": {"gt": 100}}, "count": 1}},
    ])
    assert got[0] == (False, "1 of 3 rows match") and got[1] == (False, "1 of 2 rows match")
    assert [ok for ok, _ in got[2:]] == [True, True, True]


def test_csv_cell_and_a_named_sheet_of_a_workbook(ws: Workspace) -> None:
    got = _verdicts(ws, [
        {"kind": "file", "path": "/data/invoices.xlsx", "csv_cell": {"row": {"invoice": "INV-2"}, "column": "amount",
                                                                     "value": 80.5}},
        {"kind": "file", "path": "/data/invoices.xlsx", "csv_cell": {"row": {"invoice": "INV-3"}, "column": "amount",
                                                                     "value": "40"}},
        {"kind": "file", "path": "/data/invoices.xlsx", "sheet": "March", "csv_rows": 2},  # the empty row skipped
        {"kind": "file", "path": "/data/invoices.xlsx", "sheet": "April", "csv_rows": 0},
    ])
    assert [ok for ok, _ in got[:3]] == [True, True, True]
    assert not got[3][0] and "no sheet 'April'" in got[3][1]


@pytest.mark.parametrize("doc, words", [
    ({"path": "/data/letter.pdf", "csv_rows": {"where": {"status": "bad"}, "count": 0}},
     "cannot be read as rows: /data/letter.pdf is application/pdf"),
    ({"path": "/data/invoices.xlsx", "content": {"not_contains": "bad"}}, "cannot be read as text"),
    ({"path": "/data/invoices.xlsx", "json_field": {"path": "status", "value": "ok"}}, "cannot be read as text"),
])
def test_a_check_that_cannot_read_the_format_fails_saying_so(ws: Workspace, doc: dict, words: str) -> None:
    (ok, observed), = _verdicts(ws, [{"kind": "file", **doc}])
    assert not ok and words in observed, observed


COSTS = [["Cost report Q2", None, None], ["Supplier", "Invoiced", "Paid"], ["Acme", 1200.5, True],
         ["Borealis", 80, False], [None, None, None], ["Cobalt", 40, True], ["Cobalt", 45, False]]


def _lookup(**cell: object) -> dict:
    return {"kind": "file", "path": "/data/costs.xlsx", "sheet_cell": {"sheet": "Costs", "header_row": 2, **cell}}


def test_sheet_cell_looks_a_cell_up_by_header_and_row(ws: Workspace) -> None:
    assert ws.call("write_sheet", {"path": "/data/costs.xlsx", "sheet": "Costs", "rows": COSTS}).ok
    got = _verdicts(ws, [
        _lookup(row_where={"Supplier": "Acme"}, column="Invoiced", value=1200.5),
        _lookup(row_where={"Supplier": "Acme"}, column="Invoiced", value=1200),
        _lookup(row_where={"Supplier": {"contains": "real"}}, column="Paid", value=False),
        _lookup(row_where={"Supplier": "Cobalt", "Paid": False}, column="Invoiced", value={"gt": 44}),
        {"kind": "file", "path": "/data/invoices.csv",
         "sheet_cell": {"row_where": {"invoice": "INV-2"}, "column": "amount", "value": "80.5"}},
    ])
    assert [ok for ok, _ in got] == [True, False, True, True, True]
    assert got[1][1] == "cell B3 = 1200.5"  # the address the lookup found is named
    # moving the row does not break the check: a fixed address would
    moved = [COSTS[0], COSTS[1], COSTS[3], COSTS[2]]
    assert ws.call("write_sheet", {"path": "/data/costs.xlsx", "sheet": "Costs", "rows": moved}).ok
    assert _verdicts(ws, [_lookup(row_where={"Supplier": "Acme"}, column="Invoiced", value=1200.5)])[0][0]


@pytest.mark.parametrize("cell, words", [
    ({"row_where": {"Supplier": "Acme"}, "column": "Owed"},
     "no column headed 'Owed' in row 2 (its headers: 'Supplier', 'Invoiced', 'Paid')"),
    ({"row_where": {"Vendor": "Acme"}, "column": "Invoiced"}, "no column headed 'Vendor'"),
    ({"row_where": {"Supplier": "Dynamo"}, "column": "Invoiced"}, "no row where Supplier equals 'Dynamo'"),
    ({"row_where": {"Supplier": "Cobalt"}, "column": "Invoiced"},
     "2 rows match where Supplier equals 'Cobalt' (rows 6, 7); the lookup needs exactly one"),
    ({"row_where": {"Supplier": "Acme"}, "column": "Invoiced", "header_row": 9}, "no header row 9"),
])
def test_a_lookup_that_finds_no_single_cell_fails_saying_why(ws: Workspace, cell: dict, words: str) -> None:
    assert ws.call("write_sheet", {"path": "/data/costs.xlsx", "sheet": "Costs", "rows": COSTS}).ok
    (ok, observed), = _verdicts(ws, [_lookup(value=1, **cell)])
    assert not ok and words in observed, observed


def test_a_repeated_header_is_ambiguous_and_a_pdf_cannot_be_looked_up(ws: Workspace) -> None:
    dup = [["Supplier", "Total", "Total"], ["Acme", 1, 2]]
    assert ws.call("write_sheet", {"path": "/data/dup.xlsx", "rows": dup}).ok
    got = _verdicts(ws, [
        {"kind": "file", "path": "/data/dup.xlsx", "sheet_cell": {"row_where": {"Supplier": "Acme"}, "column": "Total",
                                                                   "value": 1}},
        {"kind": "file", "path": "/data/letter.pdf", "sheet_cell": {"row_where": {"a": 1}, "column": "b", "value": 1}},
    ])
    assert got[0] == (False, "column header 'Total' is ambiguous: columns B, C of row 1 are headed so")
    assert not got[1][0] and "sheet_cell reads xlsx workbooks and CSV files" in got[1][1]


@pytest.mark.parametrize("cell", [{"value": 1}, {"cell": "B2", "row_where": {"a": 1}, "column": "b", "value": 1},
                                  {"row_where": {"a": 1}, "value": 1}, {"cell": "B2", "column": "b", "value": 1}])
def test_a_sheet_cell_needs_an_address_or_a_whole_lookup(cell: dict) -> None:
    with pytest.raises(ValueError, match="cell|row_where"):
        parse_predicates([{"kind": "file", "path": "/a.xlsx", "sheet_cell": cell}])
