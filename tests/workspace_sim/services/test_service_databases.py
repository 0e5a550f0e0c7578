"""Typed databases: schemas, rows validated against them, queries with filters and sorts, updates, initial data
checks, and predicates over rows through the generic record predicates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import call_error

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.predicates import evaluate, parse_predicates

SCHEMA = [{"name": "Name", "type": "title"}, {"name": "Amount", "type": "number"},
          {"name": "Category", "type": "select", "options": ["Meals", "Travel", "Office"]},
          {"name": "Tags", "type": "multi_select", "options": ["urgent", "client"]}, {"name": "Date", "type": "date"},
          {"name": "Owner", "type": "person"}, {"name": "Paid", "type": "checkbox"},
          {"name": "Project", "type": "relation", "relation": "projects"}, {"name": "Note", "type": "text"}]


def vals(d: dict) -> list[dict]:
    return [{"property": k, "value": v} for k, v in d.items()]


def make(rows: list[dict] | None = None) -> Workspace:
    return Workspace.create(WorkspaceConfig(services=["databases", "contacts"]), {
        "contacts": {"people": [{"email": "dana.reyes@example.com", "name": "Dana Reyes"}]},
        "databases": {"databases": [
            {"id": "projects", "title": "Projects", "properties": [{"name": "Name", "type": "title"}]},
            {"id": "expenses", "title": "Expenses", "properties": SCHEMA}],
            "rows": [{"id": "p1", "database": "projects", "values": {"Name": "Apollo"}},
                     {"id": "e1", "database": "expenses", "values": {"Name": "Taxi", "Amount": "30", "Category": "travel",
                                                                     "Date": "2025-03-01", "Project": ["p1"]}},
                     *(rows or [])]}})


def test_rows_are_stored_in_canonical_form_and_created_with_every_type() -> None:
    ws = make()
    assert ws.table("databases.rows")["e1"].values == {"Name": "Taxi", "Amount": 30, "Category": "Travel",
                                                        "Date": "2025-03-01", "Project": ["p1"]}
    r = ws.call("create_row", {"database": "Expenses", "values": vals({
        "Name": "Lunch", "Amount": 12.5, "Category": "meals", "Tags": ["client", "CLIENT"], "Date": "2025-03-02",
        "Owner": "Dana Reyes", "Paid": True, "Project": ["p1"], "Note": " with the client "})})
    assert r.ok and r.data["values"] == {"Name": "Lunch", "Amount": 12.5, "Category": "Meals", "Tags": ["client"],
                                         "Date": "2025-03-02", "Owner": "dana.reyes@example.com", "Paid": True,
                                         "Project": ["p1"], "Note": "with the client"}


@pytest.mark.parametrize("values,words", [
    ({"Amount": 3}, "needs its title property 'Name'"), ({"Name": "x", "Amount": "lots"}, "values.Amount is a number"),
    ({"Name": "x", "Category": "Food"}, "'Food' is not an option of 'Category'; the options are 'Meals'"),
    ({"Name": "x", "Date": "March 2"}, "values.Date is a date"), ({"Name": "x", "Paid": "yes"}, "checkbox"),
    ({"Name": "x", "Project": ["e1"]}, "no row 'e1' in database 'projects'"),
    ({"Name": "x", "Amout": 1}, "did you mean 'Amount'"), ({"Name": "x", "Owner": "Nobody Known"}, "values.Owner"),
])
def test_bad_values_are_refused_naming_the_property_and_nothing_changes(values: dict, words: str) -> None:
    ws = make()
    before = ws.content_hash
    assert words in call_error(ws, "create_row", {"database": "expenses", "values": vals(values)})
    assert ws.content_hash == before


def test_queries_filter_and_sort() -> None:
    ws = make([{"id": f"e{i}", "database": "expenses", "values": {"Name": f"Item {i}", "Amount": i * 10,
               "Category": "Meals" if i % 2 else "Office"}} for i in range(2, 7)])
    q = ws.call("query_database", {"database": "expenses", "filters": [{"property": "Category", "value": "meals"},
                                                                       {"property": "Amount", "op": "gte", "value": 30}],
                                   "sorts": [{"property": "Amount", "direction": "descending"}]})
    assert [r["id"] for r in q.data["rows"]] == ["e5", "e3"] and q.data["count"] == 2
    q = ws.call("query_database", {"database": "expenses", "filters": [{"property": "Date", "op": "is_not_empty"}]})
    assert [r["id"] for r in q.data["rows"]] == ["e1"]
    q = ws.call("query_database", {"database": "expenses", "sorts": [{"property": "Date"}], "limit": 2})
    assert q.data["rows"][0]["id"] == "e1" and q.data["count"] == 6 and "showing 2" in q.text
    assert "contains applies to text" in call_error(ws, "query_database", {"database": "expenses", "filters": [
        {"property": "Amount", "op": "contains", "value": 1}]})
    assert "no database 'budget'" in call_error(ws, "query_database", {"database": "budget"})


def test_a_property_given_twice_is_refused() -> None:
    ws = make()
    assert "given twice" in call_error(ws, "create_row", {"database": "expenses", "values": [
        {"property": "Name", "value": "a"}, {"property": "name", "value": "b"}]})


def test_update_changes_only_what_is_given_and_null_clears() -> None:
    ws = make()
    u = ws.call("update_row", {"row_id": "e1", "values": vals({"Paid": True, "Date": None})})
    assert u.data["changed"] == ["Date", "Paid"]
    assert ws.table("databases.rows")["e1"].values == {"Name": "Taxi", "Amount": 30, "Category": "Travel",
                                                        "Paid": True, "Project": ["p1"]}
    assert "title cannot be empty" in call_error(ws, "update_row", {"row_id": "e1", "values": vals({"Name": None})})
    assert "no row 'e9'" in call_error(ws, "update_row", {"row_id": "e9", "values": []})


def test_initial_rows_are_checked_against_the_schema() -> None:
    with pytest.raises(Exception, match="not an option of 'Category'"):
        make([{"id": "bad", "database": "expenses", "values": {"Name": "x", "Category": "Snacks"}}])
    with pytest.raises(Exception, match="database 'nope' does not exist"):
        make([{"id": "bad", "database": "nope", "values": {"Name": "x"}}])


def test_generic_record_predicates_read_rows() -> None:
    ws = make()
    ws.call("create_row", {"database": "expenses", "values": vals({"Name": "Lunch", "Amount": "12.50", "Category": "Meals"})})
    preds = parse_predicates([
        {"kind": "record_exists", "table": "databases.rows", "where": {"database": "expenses", "values.Amount": 12.5,
                                                                        "values.Category": "Meals"}, "new_only": True},
        {"kind": "record_exists", "table": "databases.rows", "where": {"values.Amount": {"gt": 100}}}])
    assert [r.passed for r in evaluate(preds, ws).results] == [True, False]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=12), st.sampled_from(["ascending", "descending"]))
def test_sorting_by_a_number_orders_every_row(amounts: list[int], direction: str) -> None:
    ws = make()
    for i, a in enumerate(amounts):
        ws.call("create_row", {"database": "expenses", "values": vals({"Name": f"n{i}", "Amount": a})})
    got = [r["values"]["Amount"] for r in ws.call("query_database", {"database": "expenses", "sorts": [
        {"property": "Amount", "direction": direction}], "limit": 200}).data["rows"]]
    assert got == sorted([*amounts, 30], reverse=direction == "descending")
