"""The inventory's tools: list and read products, adjust stock, and order from suppliers and receive the orders."""

from __future__ import annotations

import difflib
from datetime import timedelta
from typing import Annotated, Any

from pydantic import Field

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import Conflict, InvalidArgument, NotFound
from workspace_sim.text.money import AmountInput, format_minor, to_minor
from workspace_sim.text.folding import fold
from workspace_sim.core.registry import tool
from workspace_sim.text.render import render_list
from workspace_sim.text.search_terms import matches_all, query_terms
from workspace_sim.text.validation import as_argument, clean_text, one_line, zone
from .records import (
    MOVEMENTS, ORDERS, PRODUCTS, MAX_STOCK, MAX_TEXT, Movement, OrderStatus, Product, PurchaseOrder, SyncStatus,
    sku_code,
)

MAX_QUERY, MAX_REASON = 500, 300


# --- lookups and arguments ------------------------------------------------------------------------


def _product(ctx: ToolContext, sku: str) -> Product:
    """A product by SKU (any case); an unknown SKU is an invalid argument naming close SKUs or product names."""
    code = as_argument(sku_code, sku)
    p = ctx.get(PRODUCTS, code)
    if p is None:
        names = {x.sku: x.name for x in ctx.values(PRODUCTS)}
        close = difflib.get_close_matches(code, list(names), n=3, cutoff=0.6)
        close += [s for s, n in names.items() if fold(sku.strip()) and fold(sku.strip()) in fold(n)]
        hints = [f"{s} ({names[s]})" for s in dict.fromkeys(close)][:5]
        hint = f"; did you mean {', '.join(hints)}?" if hints else "; list_products shows the SKUs"
        raise InvalidArgument(f"unknown SKU {sku.strip()!r}{hint}")
    return p


def _order(ctx: ToolContext, ref: str) -> PurchaseOrder:
    o = ctx.get(ORDERS, ref.strip()) if ref.strip() else None
    if o is None:
        close = difflib.get_close_matches(ref.strip(), ctx.keys(ORDERS), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; list_purchase_orders shows them"
        raise NotFound(f"purchase order {ref.strip()!r} not found{hint}")
    return o


def _suppliers(ctx: ToolContext) -> dict[str, str]:
    """Every supplier named by a product or an order, folded name -> name."""
    out: dict[str, str] = {}
    for x in (*ctx.values(PRODUCTS), *ctx.values(ORDERS)):
        if x.supplier:
            out.setdefault(fold(x.supplier), x.supplier)
    return out


def _supplier(ctx: ToolContext, value: str) -> str:
    text = " ".join(value.split())
    known = _suppliers(ctx)
    if fold(text) in known:
        return known[fold(text)]
    close = difflib.get_close_matches(text, list(known.values()), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else f"suppliers: {', '.join(sorted(known.values())) or 'none'}"
    raise NotFound(f"supplier {text!r} is not one the inventory buys from; {hint}")


def _on_order(ctx: ToolContext) -> dict[str, int]:
    out: dict[str, int] = {}
    for o in ctx.values(ORDERS):
        if o.status == "open":
            out[o.sku] = out.get(o.sku, 0) + o.quantity
    return out


# --- output ---------------------------------------------------------------------------------------


def product_json(p: Product, on_order: int = 0) -> dict[str, Any]:
    """A product with its money as exact decimal text, units on order and whether it needs reordering."""
    return {"sku": p.sku, "name": p.name, "category": p.category, "stock": p.stock,
            "reorder_threshold": p.reorder_threshold, "reorder_quantity": p.reorder_quantity,
            "needs_reorder": p.needs_reorder, "on_order": on_order,
            "unit_cost": format_minor(p.unit_cost_minor, p.currency), "unit_price": format_minor(p.unit_price_minor,
                                                                                                  p.currency),
            "currency": p.currency, "supplier": p.supplier, "lead_time_days": p.lead_time_days, "location": p.location,
            "sync_status": p.sync_status, "discontinued": p.discontinued}


def order_json(o: PurchaseOrder) -> dict[str, Any]:
    return {"id": o.id, "sku": o.sku, "quantity": o.quantity, "supplier": o.supplier,
            "unit_cost": format_minor(o.unit_cost_minor, o.currency), "currency": o.currency,
            "total_cost": format_minor(o.unit_cost_minor * o.quantity, o.currency), "status": o.status,
            "expected": o.expected.isoformat() if o.expected else None, "ordered_by": o.ordered_by, "notes": o.notes,
            "created": o.created.isoformat() if o.created else None,
            "received": o.received.isoformat() if o.received else None}


def movement_json(m: Movement) -> dict[str, Any]:
    return {"id": m.id, "sku": m.sku, "change": m.change, "stock_after": m.stock_after, "reason": m.reason,
            "po_id": m.po_id, "by": m.by, "at": m.at.isoformat() if m.at else None}


def _product_line(d: dict[str, Any]) -> str:
    flag = " REORDER" if d["needs_reorder"] else ""
    ordered = f", {d['on_order']} on order" if d["on_order"] else ""
    gone = " (discontinued)" if d["discontinued"] else ""
    return (f"{d['sku']} {d['name']}{gone}: {d['stock']} in stock (reorder at {d['reorder_threshold']}){ordered}{flag}; "
            f"cost {d['unit_cost']} price {d['unit_price']} {d['currency']}; supplier {d['supplier'] or 'none'}, "
            f"lead time {d['lead_time_days']} days; {d['location'] or 'no location'}; sync {d['sync_status']}")


def _order_line(d: dict[str, Any]) -> str:
    return (f"{d['id']} {d['quantity']} x {d['sku']} from {d['supplier']} [{d['status']}] "
            f"{d['total_cost']} {d['currency']}, expected {d['expected'] or 'unknown'}")


def _render_product(data: dict) -> str:
    lines = [_product_line(data["product"])]
    lines.append(f"Open purchase orders ({len(data['open_orders'])}):")
    lines += [f"- {_order_line(o)}" for o in data["open_orders"]]
    lines.append(f"Recent stock movements ({len(data['recent_movements'])}):")
    lines += [f"- {m['at']} {m['change']:+d} -> {m['stock_after']} {m['reason']}" for m in data["recent_movements"]]
    return "\n".join(lines)


def _product_view(ctx: ToolContext, p: Product) -> dict[str, Any]:
    orders = [o for o in ctx.values(ORDERS) if o.sku == p.sku]
    moves = sorted((m for m in ctx.values(MOVEMENTS) if m.sku == p.sku), key=lambda m: (m.at, m.id), reverse=True)
    return {"product": product_json(p, sum(o.quantity for o in orders if o.status == "open")),
            "open_orders": [order_json(o) for o in orders if o.status == "open"],
            "recent_movements": [movement_json(m) for m in moves[:10]]}


# --- reading --------------------------------------------------------------------------------------


@tool(read_only=True, render=render_list("products", _product_line, "No products match."))
def list_products(
    ctx: ToolContext, query: str = "", category: str | None = None, supplier: str | None = None,
    location: str | None = None, below_reorder: bool = False, sync_status: SyncStatus | None = None,
    include_discontinued: bool = False, limit: Annotated[int, Field(ge=1, le=200)] = 50,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """List products by SKU with stock, reorder threshold, units on order, cost and price, supplier and lead time,
    filtered by words, category, supplier, location, sync status, or stock at or below the reorder threshold.

    Args:
        query: Words or "quoted phrases" that must all appear in the SKU, name, category, supplier or location.
        category: Only this category (case-insensitive).
        supplier: Only products from this supplier (case-insensitive).
        location: Only products kept at this location (case-insensitive), e.g. Warehouse A.
        below_reorder: Only products whose stock is at or below their reorder threshold.
        sync_status: Only synced, pending or error products.
        include_discontinued: Also list discontinued products.
        limit: Most products to return (1-200).
        offset: Matching products to skip (for paging).
    """
    terms = query_terms(query, MAX_QUERY)
    on_order = _on_order(ctx)
    hits = []
    for p in ctx.values(PRODUCTS):
        if p.discontinued and not include_discontinued or below_reorder and not p.needs_reorder:
            continue
        if category is not None and fold(p.category) != fold(" ".join(category.split())):
            continue
        if supplier is not None and fold(p.supplier) != fold(" ".join(supplier.split())):
            continue
        if location is not None and fold(p.location) != fold(" ".join(location.split())):
            continue
        if sync_status is not None and p.sync_status != sync_status:
            continue
        if matches_all(terms, p.sku, p.name, p.category, p.supplier, p.location):
            hits.append(p)
    return {"total": len(hits), "offset": offset, "limit": limit,
            "products": [product_json(p, on_order.get(p.sku, 0)) for p in hits[offset:offset + limit]]}


@tool(read_only=True, render=_render_product)
def get_product(ctx: ToolContext, sku: str) -> dict:
    """Get one product with all its fields, its open purchase orders and its ten latest stock movements.

    Args:
        sku: The product's SKU, e.g. WID-100 (any case).
    """
    return _product_view(ctx, _product(ctx, sku))


@tool(read_only=True, render=render_list("orders", _order_line, "No purchase orders match."))
def list_purchase_orders(
    ctx: ToolContext, status: OrderStatus | None = None, sku: str | None = None, supplier: str | None = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 50, offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """List purchase orders, newest first, with filters.

    Args:
        status: Only open, received or cancelled orders.
        sku: Only orders of this product.
        supplier: Only orders from this supplier (case-insensitive).
        limit: Most orders to return (1-200).
        offset: Matching orders to skip (for paging).
    """
    code = _product(ctx, sku).sku if sku is not None else None
    hits = [o for o in ctx.values(ORDERS) if (status is None or o.status == status) and (code is None or o.sku == code)
            and (supplier is None or fold(o.supplier) == fold(" ".join(supplier.split())))]
    hits.sort(key=lambda o: (o.created, o.id), reverse=True)
    return {"total": len(hits), "offset": offset, "limit": limit,
            "orders": [order_json(o) for o in hits[offset:offset + limit]]}


# --- changes --------------------------------------------------------------------------------------


def _move(ctx: ToolContext, p: Product, change: int, reason: str, po_id: str | None) -> Product:
    after = p.stock + change
    if after < 0:
        raise InvalidArgument(f"{p.sku} has {p.stock} in stock; a change of {change} would make it {after}, and stock "
                              "is never negative")
    if after > MAX_STOCK:
        raise InvalidArgument(f"{p.sku} would hold {after} units; at most {MAX_STOCK} are allowed")
    p = ctx.put(PRODUCTS, p.evolve(stock=after, updated=ctx.now))  # type: ignore[assignment]
    ctx.put(MOVEMENTS, Movement(id=ctx.new_id("mov"), sku=p.sku, change=change, stock_after=after, reason=reason,
                                po_id=po_id, by=ctx.user, at=ctx.now))
    return p


@tool(render=_render_product)
def adjust_stock(ctx: ToolContext, sku: str, change: int, reason: str) -> dict:
    """Add units to or take units from a product's stock (after a count, damage, a sale or a return), with the reason
    logged. Stock never goes below zero: a change that would is refused. Use receive_purchase_order for deliveries.

    Args:
        sku: The product's SKU.
        change: Units to add (positive) or remove (negative), e.g. -3.
        reason: Why, e.g. Cycle count found 3 damaged.
    """
    p = _product(ctx, sku)
    if change == 0:
        raise InvalidArgument("change is 0; give the number of units to add (positive) or remove (negative)")
    why = one_line(reason, "reason", MAX_REASON, required=True)
    return _product_view(ctx, _move(ctx, p, change, why, None))


@tool(render=lambda d: _order_line(d["order"]))
def create_purchase_order(
    ctx: ToolContext, sku: str, quantity: Annotated[int, Field(ge=1, le=MAX_STOCK)], supplier: str | None = None,
    unit_cost: AmountInput | None = None, notes: str = "",
) -> dict:
    """Order units of a product from a supplier (the product's own by default). The order is open and expected after
    the product's lead time; receive_purchase_order adds it to stock when it arrives.

    Args:
        sku: The product's SKU.
        quantity: Units to order (1 or more).
        supplier: Supplier name; by default the product's supplier. It must be one the inventory buys from.
        unit_cost: Price per unit agreed with the supplier, in major units of the product's currency; by default the
            product's unit cost.
        notes: Notes for the order, e.g. a quote reference.
    """
    p = _product(ctx, sku)
    if p.discontinued:
        raise InvalidArgument(f"{p.sku} ({p.name}) is discontinued; it is no longer ordered")
    who = _supplier(ctx, supplier) if supplier is not None else p.supplier
    if not who:
        raise InvalidArgument(f"{p.sku} has no supplier on record; name the supplier")
    cost = as_argument(to_minor, unit_cost, p.currency, "unit_cost") if unit_cost is not None else p.unit_cost_minor
    expected = ctx.now.astimezone(zone(ctx.config.timezone)).date() + timedelta(days=p.lead_time_days)
    o = PurchaseOrder(id=ctx.new_id("po"), sku=p.sku, quantity=quantity, supplier=who, unit_cost_minor=cost,
                      currency=p.currency, expected=expected, ordered_by=ctx.user,
                      notes=clean_text(notes, "notes", MAX_TEXT), created=ctx.now)
    ctx.put(ORDERS, o)
    return {"order": order_json(o), "stock": p.stock, "on_order": _on_order(ctx).get(p.sku, 0)}


@tool(render=_render_product)
def receive_purchase_order(ctx: ToolContext, id: str) -> dict:
    """Record that an open purchase order arrived in full: its units are added to the product's stock once. Receiving
    an order twice, or a cancelled one, is refused.

    Args:
        id: The purchase order id, e.g. po-0001ab12.
    """
    o = _order(ctx, id)
    if o.status != "open":
        when = f" at {o.received.isoformat()}" if o.received else ""
        raise Conflict(f"purchase order {o.id} is already {o.status}{when}; its units were not added again")
    p = _product(ctx, o.sku)
    ctx.put(ORDERS, o.evolve(status="received", received=ctx.now))
    p = _move(ctx, p, o.quantity, f"received {o.id} from {o.supplier}", o.id)
    return _product_view(ctx, p)


@tool(render=lambda d: _order_line(d["order"]))
def cancel_purchase_order(ctx: ToolContext, id: str, reason: str = "") -> dict:
    """Cancel an open purchase order (nothing is added to stock). Received or cancelled orders are refused.

    Args:
        id: The purchase order id.
        reason: Why it is cancelled; added to the order's notes.
    """
    o = _order(ctx, id)
    if o.status != "open":
        raise Conflict(f"purchase order {o.id} is {o.status}; only open orders can be cancelled")
    why = one_line(reason, "reason", MAX_REASON)
    notes = "\n".join(x for x in (o.notes, f"Cancelled: {why}" if why else "") if x)
    o = ctx.put(ORDERS, o.evolve(status="cancelled", notes=notes[:MAX_TEXT]))  # type: ignore[assignment]
    return {"order": order_json(o)}
