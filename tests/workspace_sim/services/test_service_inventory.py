"""The inventory: products and filters, stock that never goes negative (a hypothesis run of adjustments), purchase
orders from known suppliers received exactly once, unknown SKUs as invalid arguments, initial data, predicates."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import call_error, verdict

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError

ME = "me@acme.com"
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
PRODUCTS = [
    {"sku": "WID-100", "name": "Blue widget", "category": "Widgets", "stock": 8, "reorder_threshold": 10,
     "reorder_quantity": 50, "unit_cost": "2.50", "unit_price": "6.00", "supplier": "Acme Parts", "lead_time_days": 7,
     "location": "Warehouse A"},
    {"sku": "wid-200", "name": "Red widget", "category": "Widgets", "stock": 40, "reorder_threshold": 10,
     "unit_cost": "2.75", "unit_price": "6.50", "supplier": "Acme Parts", "lead_time_days": 7, "location": "Warehouse B",
     "sync_status": "error"},
    {"sku": "GAD-1", "name": "Gadget", "category": "Gadgets", "stock": 3, "reorder_threshold": 3, "unit_cost": "19.99",
     "unit_price": "49", "currency": "EUR", "supplier": "Globex Supply", "lead_time_days": 21,
     "location": "Warehouse A"},
    {"sku": "OLD-9", "name": "Legacy part", "stock": 0, "reorder_threshold": 5, "supplier": "Acme Parts",
     "discontinued": True},
]
ORDERS = [{"id": "po-1", "sku": "GAD-1", "quantity": 10, "supplier": "Globex Supply", "unit_cost": "19.99",
           "currency": "EUR", "created": "2026-02-27T10:00:00+00:00"}]


def make(products: list | None = None, orders: list | None = None) -> Workspace:
    cfg = WorkspaceConfig(services=["inventory"], user=ME, now=NOW, timezone="Europe/Berlin")
    return Workspace.create(cfg, {"inventory": {"products": PRODUCTS if products is None else products,
                                                "purchase_orders": ORDERS if orders is None else orders}})


@pytest.fixture
def ws() -> Workspace:
    return make()


err = call_error


def skus(r) -> list[str]:  # type: ignore[no-untyped-def]
    return [p["sku"] for p in r.data["products"]]


def test_initial_data(ws: Workspace) -> None:
    p = ws.table("inventory.products")
    assert sorted(p) == ["GAD-1", "OLD-9", "WID-100", "WID-200"] and p["GAD-1"].unit_cost_minor == 1999
    assert ws.table("inventory.purchase_orders")["po-1"].expected.isoformat() == "2026-03-20"  # 27 Feb + 21 days


def test_list_and_filter(ws: Workspace) -> None:
    assert skus(ws.call("list_products", {})) == ["GAD-1", "WID-100", "WID-200"]
    r = ws.call("list_products", {"below_reorder": True})
    assert skus(r) == ["GAD-1", "WID-100"] and r.data["products"][0]["on_order"] == 10
    assert "REORDER" in r.text and "10 on order" in r.text
    assert skus(ws.call("list_products", {"include_discontinued": True, "below_reorder": True})) == [
        "GAD-1", "WID-100"]  # discontinued products never need reordering
    assert skus(ws.call("list_products", {"supplier": "acme parts"})) == ["WID-100", "WID-200"]
    assert skus(ws.call("list_products", {"location": "warehouse a", "category": "Widgets"})) == ["WID-100"]
    assert skus(ws.call("list_products", {"sync_status": "error"})) == ["WID-200"]
    assert skus(ws.call("list_products", {"query": "red"})) == ["WID-200"]
    g = ws.call("get_product", {"sku": "gad-1"}).data
    assert g["product"]["unit_price"] == "49.00" and [o["id"] for o in g["open_orders"]] == ["po-1"]


def test_unknown_sku_is_an_invalid_argument(ws: Workspace) -> None:
    assert err(ws, "get_product", {"sku": "WID-10"}) == (
        "invalid_argument: unknown SKU 'WID-10'; did you mean WID-100 (Blue widget), WID-200 (Red widget)?")
    assert "invalid_argument: unknown SKU 'gadget'" in err(ws, "adjust_stock", {"sku": "gadget", "change": 1,
                                                                                "reason": "x"})
    assert "must be 1-40 letters" in err(ws, "get_product", {"sku": "a b"})


def test_adjust_stock(ws: Workspace) -> None:
    r = ws.call("adjust_stock", {"sku": "wid-100", "change": -3, "reason": "Cycle count: 3 damaged"})
    assert r.ok and r.data["product"]["stock"] == 5 and r.data["recent_movements"][0]["change"] == -3
    assert err(ws, "adjust_stock", {"sku": "WID-100", "change": -6, "reason": "sale"}) == (
        "invalid_argument: WID-100 has 5 in stock; a change of -6 would make it -1, and stock is never negative")
    assert "change is 0" in err(ws, "adjust_stock", {"sku": "WID-100", "change": 0, "reason": "x"})
    assert "reason is empty" in err(ws, "adjust_stock", {"sku": "WID-100", "change": 1, "reason": " "})


def test_purchase_orders(ws: Workspace) -> None:
    r = ws.call("create_purchase_order", {"sku": "WID-100", "quantity": 50, "notes": "Quote Q-17"})
    assert r.ok, r.text
    o = r.data["order"]
    assert (o["supplier"], o["total_cost"], o["expected"], r.data["on_order"]) == ("Acme Parts", "125.00", "2026-03-09", 50)
    alt = ws.call("create_purchase_order", {"sku": "WID-100", "quantity": 5, "supplier": "globex supply",
                                            "unit_cost": "2.40"})
    assert alt.data["order"]["supplier"] == "Globex Supply" and alt.data["order"]["unit_cost"] == "2.40"
    assert "not one the inventory buys from; did you mean Acme Parts?" in err(
        ws, "create_purchase_order", {"sku": "WID-100", "quantity": 5, "supplier": "Acme Part"})
    assert "discontinued" in err(ws, "create_purchase_order", {"sku": "OLD-9", "quantity": 5})
    assert "greater than or equal to 1" in err(ws, "create_purchase_order", {"sku": "WID-100", "quantity": 0})
    assert "more than 2 decimal places" in err(ws, "create_purchase_order", {"sku": "WID-100", "quantity": 1,
                                                                             "unit_cost": "2.555"})
    got = ws.call("receive_purchase_order", {"id": o["id"]})
    assert got.data["product"]["stock"] == 58 and got.data["recent_movements"][0]["po_id"] == o["id"]
    assert "already received" in err(ws, "receive_purchase_order", {"id": o["id"]})
    assert ws.table("inventory.products")["WID-100"].stock == 58
    assert ws.call("cancel_purchase_order", {"id": alt.data["order"]["id"], "reason": "duplicate"}).ok
    assert "already cancelled" in err(ws, "receive_purchase_order", {"id": alt.data["order"]["id"]})
    assert [x["id"] for x in ws.call("list_purchase_orders", {"status": "open"}).data["orders"]] == ["po-1"]
    assert "not found" in err(ws, "receive_purchase_order", {"id": "po-404"})


@pytest.mark.parametrize("products,orders,where,words", [
    ([{"sku": "A", "name": "x", "stock": -1}], [], "data.inventory.products[0]", "greater than or equal to 0"),
    ([{"sku": "A", "name": "x", "unit_cost": "1.234"}], [], "data.inventory.products[0]", "decimal places"),
    ([{"sku": "A", "name": "x", "currency": "DOLLARS"}], [], "data.inventory.products[0]", "ISO 4217"),
    ([{"sku": "A", "name": "x"}], [{"id": "p", "sku": "B", "quantity": 1, "supplier": "s"}],
     "data.inventory.purchase_orders[p].sku", "does not exist"),
])
def test_bad_initial_data(products: list, orders: list, where: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        make(products, orders)
    assert str(info.value).startswith(where) and words in str(info.value), str(info.value)


def test_generic_predicates_see_products(ws: Workspace) -> None:
    ws.call("create_purchase_order", {"sku": "WID-100", "quantity": 50})
    assert verdict(ws, {"kind": "record_exists", "table": "inventory.purchase_orders", "new_only": True,
                        "where": {"sku": "WID-100", "quantity": {"gte": 42}, "supplier": "Acme Parts"}})
    assert verdict(ws, {"kind": "unchanged", "scope": "inventory.products"})
    assert verdict(ws, {"kind": "only_changed", "scopes": ["inventory.purchase_orders"]})
    assert verdict(ws, {"kind": "record_absent", "table": "inventory.purchase_orders", "where": {"sku": "WID-200"}})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.integers(-12, 12).filter(bool), min_size=1, max_size=12))
def test_stock_never_goes_negative_and_the_log_adds_up(changes: list[int]) -> None:
    ws = make()
    stock = 8
    for c in changes:
        r = ws.call("adjust_stock", {"sku": "WID-100", "change": c, "reason": "count"})
        assert r.ok == (stock + c >= 0)
        stock += c if r.ok else 0
        assert ws.table("inventory.products")["WID-100"].stock == stock >= 0
    moves = ws.table("inventory.movements").values()
    assert 8 + sum(m.change for m in moves) == stock
