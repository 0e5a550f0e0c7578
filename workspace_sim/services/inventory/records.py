"""The records of the inventory: products by SKU, purchase orders to suppliers, and the log of stock movements.

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`PRODUCTS`, `ORDERS`, `MOVEMENTS`).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.text.money import Currency, MinorAmount, major_to_minor
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.validation import record_id, zone

SyncStatus = Literal["synced", "pending", "error"]
OrderStatus = Literal["open", "received", "cancelled"]
MAX_NAME, MAX_TEXT, MAX_STOCK = 200, 2_000, 10**9
_SKU = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,39}$")


def sku_code(value: object, what: str = "sku") -> str:
    """An upper-case SKU: 1-40 letters, digits, '.', '_', '/' or '-', starting with a letter or digit."""
    text = value.strip().upper() if isinstance(value, str) else ""
    if not _SKU.match(text):
        raise ValueError(f"{what} {value!r} must be 1-40 letters, digits, '.', '_', '/' or '-' (e.g. WID-100)")
    return text


def _line(value: str, what: str, required: bool = False) -> str:
    text = " ".join(value.split())
    if required and not text:
        raise ValueError(f"{what} is empty")
    if len(text) > MAX_NAME:
        raise ValueError(f"{what} is {len(text)} characters long; at most {MAX_NAME} are allowed")
    return text


class Product(Record):
    """A stocked item. `stock` is units on hand (never negative); at or below `reorder_threshold` it needs
    reordering. `lead_time_days` is how long its supplier takes to deliver; `sync_status` says whether the record
    agrees with the sales channels (storefront, marketplace) it is published to."""

    key_field = "sku"
    sku: str = Field(description="The stock-keeping unit, the product's key.")
    name: str = Field(description="The product's name.")
    category: str = Field("", description="The product's category.")
    stock: int = Field(0, ge=0, le=MAX_STOCK, description="Units on hand (never negative).")
    reorder_threshold: int = Field(0, ge=0, le=MAX_STOCK,
        description="At or below this many units the product needs reordering.")
    reorder_quantity: int = Field(0, ge=0, le=MAX_STOCK, description="How many units a reorder usually buys.")
    unit_cost_minor: MinorAmount = Field(0,
        description="What one unit costs us, in the currency's minor unit; initial data may give unit_cost.")
    unit_price_minor: MinorAmount = Field(0,
        description="What one unit sells for, in the currency's minor unit; initial data may give unit_price.")
    currency: Currency = Field("USD", description="The ISO 4217 currency of its cost and price.")
    supplier: str = Field("", description="Who supplies it.")
    lead_time_days: int = Field(0, ge=0, le=365, description="How many days its supplier takes to deliver.")
    location: str = Field("", description="Where it is stored, e.g. a bin.")
    sync_status: SyncStatus = Field("synced",
        description="Whether the record agrees with the sales channels it is published to: synced, pending or error.")
    discontinued: bool = Field(False, description="Whether it is no longer sold or reordered.")
    updated: datetime | None = Field(None, description="When the record last changed.")

    @model_validator(mode="before")
    @classmethod
    def _amounts(cls, data: Any) -> Any:
        return major_to_minor(data, ("unit_cost", "unit_cost_minor"), ("unit_price", "unit_price_minor"))

    @field_validator("sku", mode="before")
    @classmethod
    def _sku(cls, v: object) -> str:
        return sku_code(v)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _line(v, "product name", required=True)

    @field_validator("category", "supplier", "location")
    @classmethod
    def _lines(cls, v: str) -> str:
        return _line(v, "category/supplier/location")


    @property
    def needs_reorder(self) -> bool:
        """Whether stock is at or below the reorder threshold (and the product is still sold)."""
        return not self.discontinued and self.stock <= self.reorder_threshold


class PurchaseOrder(Record):
    """An order of `quantity` units of one product from a supplier; receiving it adds them to stock once."""

    id: str = Field(description="The order's id.")
    sku: str = Field(description="The product ordered.")
    quantity: int = Field(ge=1, le=MAX_STOCK, description="How many units are ordered.")
    supplier: str = Field(description="Who the order is placed with.")
    unit_cost_minor: MinorAmount = Field(0,
        description="The agreed cost of one unit in minor units; initial data may give unit_cost.")
    currency: Currency = Field("USD", description="The ISO 4217 currency of the cost.")
    status: OrderStatus = Field("open", description="open, received (added to stock once) or cancelled.")
    expected: date | None = Field(None, description="The day delivery is expected.")
    ordered_by: str | None = Field(None, description="The e-mail address of who placed it.")
    notes: str = Field("", max_length=MAX_TEXT, description="Free-text notes.")
    created: datetime | None = Field(None, description="When it was placed.")
    received: datetime | None = Field(None, description="When it was received; None until then.")

    @model_validator(mode="before")
    @classmethod
    def _amounts(cls, data: Any) -> Any:
        return major_to_minor(data, ("unit_cost", "unit_cost_minor"))

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "purchase order id", "po-0001")

    @field_validator("sku", mode="before")
    @classmethod
    def _sku(cls, v: object) -> str:
        return sku_code(v)

    @field_validator("supplier")
    @classmethod
    def _supplier(cls, v: str) -> str:
        return _line(v, "supplier", required=True)


    @field_validator("ordered_by", mode="before")
    @classmethod
    def _who(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "ordered_by")

    @model_validator(mode="after")
    def _check(self) -> "PurchaseOrder":
        if (self.status == "received") != (self.received is not None) and self.received is not None:
            raise ValueError(f"purchase order {self.id} has a received time but status {self.status}")
        return self


class Movement(Record):
    """One change of a product's stock: an adjustment (counted, damaged, sold) or a receipt of a purchase order."""

    id: str = Field(description="The movement's id.")
    sku: str = Field(description="The product whose stock changed.")
    change: int = Field(description="Units added (positive) or taken away (negative).")
    stock_after: int = Field(ge=0, description="Units on hand after the change.")
    reason: str = Field("", description="Why the stock changed, e.g. counted, damaged, sold.")
    po_id: str | None = Field(None, description="The purchase order received, for a receipt; None for an adjustment.")
    by: str | None = Field(None, description="The e-mail address of who made the change.")
    at: datetime | None = Field(None, description="When it happened.")

    @field_validator("sku", mode="before")
    @classmethod
    def _sku(cls, v: object) -> str:
        return sku_code(v)


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Check purchase orders and movements name existing products, and fill times and expected delivery dates."""
    products, orders, moves = tables.get(PRODUCTS), tables.get(ORDERS), tables.get(MOVEMENTS)
    if products is None or orders is None or moves is None:
        return
    tz = zone(config.timezone)
    for key, p in list(products.items()):
        products[key] = p.evolve(updated=p.updated or config.now)  # type: ignore[attr-defined]
    for key, o in list(orders.items()):
        assert isinstance(o, PurchaseOrder)
        product = products.get(o.sku)
        if product is None:
            raise SpecError(f"data.inventory.purchase_orders[{key}].sku", f"product {o.sku!r} does not exist")
        created = o.created or config.now
        expected = o.expected or (created.astimezone(tz).date() + timedelta(days=product.lead_time_days))  # type: ignore[attr-defined]
        received = o.received or (config.now if o.status == "received" else None)
        orders[key] = o.evolve(created=created, expected=expected, received=received)
    for key, m in moves.items():
        if m.sku not in products:  # type: ignore[attr-defined]
            raise SpecError(f"data.inventory.movements[{key}].sku", f"product {m.sku!r} does not exist")  # type: ignore[attr-defined]


SERVICE = Service("inventory", {"products": Product, "purchase_orders": PurchaseOrder, "movements": Movement},
                  title="Inventory", prepare=_prepare)
PRODUCTS, ORDERS, MOVEMENTS = SERVICE.table("products"), SERVICE.table("purchase_orders"), SERVICE.table("movements")
