"""Inventory: products by SKU with stock and reorder thresholds, purchase orders to suppliers, and a stock log.

Modelled on an inventory system (Shopify's stock, Zoho Inventory, a warehouse's WMS as people use them).
Stock is whole units and never negative; a product needs reordering when its stock is at or below its
reorder threshold. Unit cost and price are money (`workspace_sim.text.money`: minor units plus ISO 4217).
A purchase order names one product, a quantity and a supplier the inventory already buys from; it is
expected after the product's lead time, and receiving it adds its units to stock exactly once. Every
stock change is logged as a movement. An unknown SKU is an invalid argument naming close SKUs.
"""

from __future__ import annotations

from .records import MOVEMENTS, ORDERS, PRODUCTS, SERVICE, Movement, Product, PurchaseOrder
from .tools import (
    list_products, get_product, list_purchase_orders, adjust_stock, create_purchase_order,
    receive_purchase_order, cancel_purchase_order
)

SERVICE.add_tools(
    list_products, get_product, list_purchase_orders, adjust_stock, create_purchase_order, receive_purchase_order,
    cancel_purchase_order,
)

__all__ = ["SERVICE", "PRODUCTS", "ORDERS", "MOVEMENTS", "Product", "PurchaseOrder", "Movement"]
