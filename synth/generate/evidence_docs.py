"""Evidence documents for compositions: `document(kind, facts, locale, rng) -> (title, text)`.

The document generators of `synth.generate.documents` (invoices, contracts, lab reports with real
structure) are used when that package is present; until then an itemised statement is written here:
a heading, the parties, a reference and date, a table of line items whose amounts add up to the
subtotal, tax and total the facts carry. Either way the text states exactly the facts it was given.
"""

from __future__ import annotations

import random
from typing import Any

from .worlds.locales import Locale

KIND_TITLES = {
    "en": {"invoice": "Invoice", "credit_note": "Credit note", "statement": "Statement of account",
           "expense_claim": "Expense claim", "fee_note": "Fee note", "quote": "Quotation", "order_form": "Order form",
           "order_receipt": "Order receipt", "cloud_bill": "Usage invoice", "purchase_order": "Purchase order",
           "billing_statement": "Patient billing statement", "repair_quote": "Repair quotation",
           "itinerary": "Travel itinerary and costs", "commission_note": "Commission note",
           "trip_letter": "School trip costing"},
    "zh": {"invoice": "发票", "credit_note": "红字发票", "statement": "对账单", "expense_claim": "费用报销单",
           "fee_note": "律师费账单", "quote": "报价单", "order_form": "订购单", "order_receipt": "订单明细",
           "cloud_bill": "云服务账单", "purchase_order": "采购订单", "billing_statement": "费用清单",
           "repair_quote": "维修报价单", "itinerary": "行程及费用单", "commission_note": "约稿单",
           "trip_letter": "研学活动费用单"},
}
LABELS = {
    "en": ("From", "To", "Reference", "Date", "Item", "Qty", "Unit price", "Amount", "Subtotal", "Tax", "Total",
           "Payment terms: 30 days from the date above.", "Notes"),
    "zh": ("开具方", "接收方", "编号", "日期", "项目", "数量", "单价", "金额", "小计", "税额", "合计",
           "付款条件：自上述日期起30日内付款。", "备注"),
}


def itemised(kind: str, facts: dict[str, Any], loc: Locale, rng: random.Random) -> tuple[str, str]:
    """An itemised document: facts give issuer, recipient, ref, date (text), lines [(item, qty, unit)],
    tax_rate and optional note; the amounts are computed here, so they add up."""
    lang = loc.language
    lab = LABELS[lang]
    head = KIND_TITLES[lang].get(kind, KIND_TITLES[lang]["invoice"])
    title = f"{head} {facts['ref']}"
    rows = [f"| {lab[4]} | {lab[5]} | {lab[6]} | {lab[7]} |", "|---|---:|---:|---:|"]
    for item, qty, unit in facts["lines"]:
        rows.append(f"| {item} | {qty} | {loc.money(unit)} | {loc.money(qty * unit)} |")
    sub = round(sum(q * u for _, q, u in facts["lines"]), 2)
    tax = round(sub * facts.get("tax_rate", 0.0), 2)
    text = [f"# {title}", "", f"**{lab[0]}:** {facts['issuer']}  ", f"**{lab[1]}:** {facts['recipient']}  ",
            f"**{lab[2]}:** {facts['ref']}  ", f"**{lab[3]}:** {facts['date']}", "", *rows, "",
            f"{lab[8]}: {loc.money(sub)}  "]
    if tax:
        text.append(f"{lab[9]} ({facts['tax_rate'] * 100:.0f}%): {loc.money(tax)}  ")
    text += [f"**{lab[10]}: {loc.money(sub + tax)}**", "", lab[11]]
    if facts.get("note"):
        text += ["", f"{lab[12]}: {facts['note']}"]
    return title, "\n".join(text) + "\n"


def total_of(facts: dict[str, Any]) -> float:
    """The total an itemised document with these facts shows."""
    sub = round(sum(q * u for _, q, u in facts["lines"]), 2)
    return round(sub + round(sub * facts.get("tax_rate", 0.0), 2), 2)


def document(kind: str, facts: dict[str, Any], loc: Locale, rng: random.Random) -> tuple[str, str]:
    """The document of `kind` stating `facts` (title, markdown text)."""
    return itemised(kind, facts, loc, rng)
