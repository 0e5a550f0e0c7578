"""World events on database rows: a `patch` merges the given columns into the row's values (checked against the
schema, a bad value refused naming the column), so an agent's earlier `update_row` of other columns stays; a
`put` row is checked too; the guards still see the agent's edit of a row the world then patched; a recorded
world change replays exactly."""

from __future__ import annotations

import pytest
from test_service_databases import make, vals

from workspace_sim.core.errors import SpecError
from workspace_sim.predicates import evaluate, parse_predicates
from workspace_sim.record.lines import EventLine
from workspace_sim.record.replay import ReplayReport, replay_event


def _patch(values: dict, key: str = "e1") -> list[dict]:
    return [{"op": "patch", "table": "databases.rows", "key": key, "fields": {"values": values}}]


def test_a_patch_merges_the_given_columns_and_keeps_the_agents_edits() -> None:
    ws = make()
    assert ws.call("update_row", {"row_id": "e1", "values": vals({"Paid": True, "Note": "receipt filed"})}).ok
    ws.advance_clock(86_400)
    ev = ws.apply_world_change(_patch({"Amount": "45.50", "Category": "meals"}), note="finance corrected it")
    row = ws.table("databases.rows")["e1"]
    assert row.values == {"Name": "Taxi", "Amount": 45.5, "Category": "Meals", "Date": "2025-03-01",
                          "Paid": True, "Project": ["p1"], "Note": "receipt filed"}
    assert row.modified == ws.state.now
    assert set(next(iter(ev.diff)).fields) == {"modified", "values"}
    ws.apply_world_change(_patch({"Note": None}))  # null clears one column, as update_row does
    assert "Note" not in ws.table("databases.rows")["e1"].values and ws.table("databases.rows")["e1"].values["Paid"]


@pytest.mark.parametrize("values, words", [
    ({"Amount": "lots"}, "fields.values.Amount is a number; 'lots' is not one"),
    ({"Category": "Food"}, "fields.values.Category: 'Food' is not an option of 'Category'"),
    ({"Amout": 3}, "database 'expenses' has no property 'Amout'; did you mean 'Amount'?"),
    ({"Name": None}, "fields.values.Name: the title cannot be empty"),
    ({"Project": ["e1"]}, "no row 'e1' in database 'projects'"),
])
def test_a_bad_patch_is_refused_naming_the_column_and_nothing_changes(values: dict, words: str) -> None:
    ws = make()
    before = ws.content_hash
    with pytest.raises(SpecError, match="changes\\[0\\]") as e:
        ws.apply_world_change(_patch(values))
    assert words in str(e.value), str(e.value)
    assert ws.content_hash == before


def test_a_put_row_is_checked_against_the_schema() -> None:
    ws = make()
    row = {"id": "e9", "database": "expenses", "values": {"Name": "Hotel", "Amount": "x"}}
    with pytest.raises(SpecError, match="record.values.Amount is a number"):
        ws.apply_world_change([{"op": "put", "table": "databases.rows", "record": row}])
    ws.apply_world_change([{"op": "put", "table": "databases.rows",
                            "record": {**row, "values": {"Name": "Hotel", "Amount": "120", "Category": "travel"}}}])
    assert ws.table("databases.rows")["e9"].values == {"Name": "Hotel", "Amount": 120, "Category": "Travel"}


def test_the_guards_see_an_agent_edit_of_a_row_the_world_then_patched() -> None:
    guard = parse_predicates([{"kind": "only_changed", "scopes": ["databases.rows:e9*"]}])
    ws = make()
    ws.apply_world_change(_patch({"Amount": 50}))
    assert evaluate(guard, ws).passed  # the world's patch alone is not the agent's
    ws = make()
    assert ws.call("update_row", {"row_id": "e1", "values": vals({"Note": "mine"})}).ok
    ws.apply_world_change(_patch({"Amount": 50}))  # another column, after the agent's edit
    r = evaluate(guard, ws).results[0]
    assert not r.passed and "changed databases.rows:e1" in r.observed


def test_a_recorded_patch_replays_exactly() -> None:
    ws = make()
    ev = ws.apply_world_change(_patch({"Amount": 12, "Date": None}))
    again = make()
    report = ReplayReport("ep", "env")
    replay_event(again, EventLine.from_event(ev, "ep", 0), report, strict=True)
    assert not report.mismatches and again.content_hash == ws.content_hash
