"""The records of the inventory: products by SKU, purchase orders to suppliers, and the log of stock movements."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from workspace_sim.text.money import MAX_MINOR, currency_code, to_minor
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.text.validation import record_id

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


def _money(data: Any, pairs: tuple[tuple[str, str], ...]) -> Any:
    """Let initial data give amounts in major units (`unit_cost`); store them in minor units (`unit_cost_minor`)."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    for major, minor in pairs:
        if major in data:
            if minor in data:
                raise ValueError(f"give {major} or {minor}, not both")
            data[minor] = to_minor(data.pop(major), data.get("currency") or "USD", major)
    return data


class Product(Record):
    """A stocked item. `stock` is units on hand (never negative); at or below `reorder_threshold` it needs
    reordering. `lead_time_days` is how long its supplier takes to deliver; `sync_status` says whether the record
    agrees with the sales channels (storefront, marketplace) it is published to."""

    key_field = "sku"
    sku: str
    name: str
    category: str = ""
    stock: int = Field(0, ge=0, le=MAX_STOCK)
    reorder_threshold: int = Field(0, ge=0, le=MAX_STOCK)
    reorder_quantity: int = Field(0, ge=0, le=MAX_STOCK)
    unit_cost_minor: int = Field(0, ge=0, le=MAX_MINOR)
    unit_price_minor: int = Field(0, ge=0, le=MAX_MINOR)
    currency: str = "USD"
    supplier: str = ""
    lead_time_days: int = Field(0, ge=0, le=365)
    location: str = ""
    sync_status: SyncStatus = "synced"
    discontinued: bool = False
    updated: datetime | None = None

    @model_validator(mode="before")
    @classmethod
    def _amounts(cls, data: Any) -> Any:
        return _money(data, (("unit_cost", "unit_cost_minor"), ("unit_price", "unit_price_minor")))

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

    @field_validator("currency", mode="before")
    @classmethod
    def _currency(cls, v: object) -> str:
        return currency_code(v)

    @property
    def needs_reorder(self) -> bool:
        """Whether stock is at or below the reorder threshold (and the product is still sold)."""
        return not self.discontinued and self.stock <= self.reorder_threshold


class PurchaseOrder(Record):
    """An order of `quantity` units of one product from a supplier; receiving it adds them to stock once."""

    id: str
    sku: str
    quantity: int = Field(ge=1, le=MAX_STOCK)
    supplier: str
    unit_cost_minor: int = Field(0, ge=0, le=MAX_MINOR)
    currency: str = "USD"
    status: OrderStatus = "open"
    expected: date | None = None
    ordered_by: str | None = None
    notes: str = Field("", max_length=MAX_TEXT)
    created: datetime | None = None
    received: datetime | None = None

    @model_validator(mode="before")
    @classmethod
    def _amounts(cls, data: Any) -> Any:
        return _money(data, (("unit_cost", "unit_cost_minor"),))

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

    @field_validator("currency", mode="before")
    @classmethod
    def _currency(cls, v: object) -> str:
        return currency_code(v)

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

    id: str
    sku: str
    change: int
    stock_after: int = Field(ge=0)
    reason: str = ""
    po_id: str | None = None
    by: str | None = None
    at: datetime | None = None

    @field_validator("sku", mode="before")
    @classmethod
    def _sku(cls, v: object) -> str:
        return sku_code(v)
