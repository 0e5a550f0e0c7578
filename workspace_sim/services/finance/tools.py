"""The finance ledger's tools: list and read transactions and invoices, submit expense reports and claims, and
reconcile payments against invoices."""

from __future__ import annotations

import difflib
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import Field

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import Conflict, InvalidArgument, NotFound
from workspace_sim.text.money import CURRENCIES, AmountInput, currency_code, format_minor, to_minor
from workspace_sim.text.folding import fold
from workspace_sim.text.people import PEOPLE, resolve_address
from workspace_sim.core.registry import tool
from workspace_sim.text.render import render_list
from workspace_sim.text.search_terms import matches_all, query_terms
from workspace_sim.text.validation import as_argument, clean_text, iso_date, one_line
from .records import (
    INVOICES, REPORTS, TRANSACTIONS, MAX_NAME, MAX_TEXT, TX_TYPES, Invoice, InvoiceKind, InvoiceStatus, Report,
    ReportKind, SPENDING, Transaction, TxStatus, TxType, signed, total_problem,
)

MAX_QUERY, MAX_IDS = 500, 500
CLAIMABLE = ("pending", "posted")


# --- lookups and arguments ------------------------------------------------------------------------


def _close(ref: str, keys: list[str]) -> str:
    close = difflib.get_close_matches(ref.strip(), keys, n=3, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _transaction(ctx: ToolContext, ref: str) -> Transaction:
    t = ctx.get(TRANSACTIONS, ref.strip()) if ref.strip() else None
    if t is None:
        hint = _close(ref, ctx.keys(TRANSACTIONS)) or "; use list_transactions to find transaction ids"
        raise NotFound(f"transaction {ref.strip()!r} not found{hint}")
    return t


def _invoice(ctx: ToolContext, ref: str) -> Invoice:
    """An invoice by id or by its number (any case)."""
    text = ref.strip()
    inv = ctx.get(INVOICES, text) if text else None
    if inv is None:
        inv = next((x for x in ctx.values(INVOICES) if fold(x.number) == fold(text)), None)
    if inv is None:
        hint = _close(text, [*ctx.keys(INVOICES), *(x.number for x in ctx.values(INVOICES))])
        raise NotFound(f"invoice {text!r} not found{hint or '; use list_invoices to find invoices'}")
    return inv


def _day(value: str | None, what: str) -> date | None:
    return iso_date(value, what, "2026-03-31") if value is not None else None


def _person(ctx: ToolContext, value: str, what: str) -> str:
    """A person's address from an address, a directory name or 'me'; with contacts, someone in the directory."""
    if value.strip().lower() == "me":
        return ctx.user
    email = resolve_address(ctx, value, what)
    if ctx.has_service("contacts") and email != ctx.user and ctx.get(PEOPLE, email) is None:
        raise NotFound(f"{what} {email} is not in the directory{_close(email, ctx.keys(PEOPLE))}")
    return email


def _ids(values: list[str], what: str) -> list[str]:
    if not values:
        raise InvalidArgument(f"{what} is empty; list the transaction ids (from list_transactions)")
    if len(values) > MAX_IDS:
        raise InvalidArgument(f"{what} has {len(values)} entries; at most {MAX_IDS} are allowed")
    ids = [v.strip() for v in values]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise InvalidArgument(f"{what} lists {', '.join(twice)} more than once")
    return ids


# --- output ---------------------------------------------------------------------------------------


def transaction_json(t: Transaction) -> dict[str, Any]:
    """A transaction with its amount as exact decimal text."""
    return {"id": t.id, "date": t.date.isoformat(), "amount": format_minor(t.amount_minor, t.currency),
            "amount_minor": t.amount_minor, "currency": t.currency, "type": t.type, "status": t.status,
            "merchant": t.merchant, "category": t.category, "description": t.description, "customer": t.customer,
            "supplier": t.supplier, "spent_by": t.spent_by, "approver": t.approver, "reference": t.reference,
            "claim_id": t.claim_id, "invoice_id": t.invoice_id}


def invoice_json(i: Invoice) -> dict[str, Any]:
    return {"id": i.id, "number": i.number, "kind": i.kind, "counterparty": i.counterparty,
            "amount": format_minor(i.amount_minor, i.currency), "amount_minor": i.amount_minor, "currency": i.currency,
            "issued": i.issued.isoformat() if i.issued else None, "due": i.due.isoformat() if i.due else None,
            "status": i.status, "description": i.description, "transaction_id": i.transaction_id}


def report_json(r: Report) -> dict[str, Any]:
    return {"id": r.id, "kind": r.kind, "title": r.title, "transaction_ids": list(r.transaction_ids),
            "total": format_minor(r.total_minor, r.currency), "total_minor": r.total_minor, "currency": r.currency,
            "status": r.status, "approver": r.approver, "submitted_by": r.submitted_by, "notes": r.notes,
            "submitted": r.submitted.isoformat() if r.submitted else None}


def _tx_line(d: dict[str, Any]) -> str:
    party = d["supplier"] or d["customer"]
    extra = "".join(f", {k} {d[v]}" for k, v in (("category", "category"), ("by", "spent_by"), ("ref", "reference"),
                                                  ("claim", "claim_id"), ("invoice", "invoice_id")) if d[v])
    return (f"{d['id']} {d['date']} {d['type']} {d['amount']} {d['currency']} [{d['status']}] "
            f"{d['merchant'] or party or '-'}{f' ({party})' if party and d['merchant'] else ''}{extra}"
            + (f" — {d['description']}" if d["description"] else ""))


def _invoice_line(d: dict[str, Any]) -> str:
    due = f", due {d['due']}" if d["due"] else ""
    paid = f", paid by {d['transaction_id']}" if d["transaction_id"] else ""
    return (f"{d['id']} {d['number']} {d['kind']} {d['counterparty']} {d['amount']} {d['currency']} "
            f"[{d['status']}]{due}{paid}")


def _report_line(d: dict[str, Any]) -> str:
    who = f", approver {d['approver']}" if d["approver"] else ""
    return (f"{d['id']} {d['kind']} '{d['title']}' {d['total']} {d['currency']} [{d['status']}] "
            f"({len(d['transaction_ids'])} transactions{who})")


def _render_transactions(data: dict) -> str:
    text = render_list("transactions", _tx_line, "No transactions match.")(data)
    if data["transactions"]:
        if data["totals"]:
            text += ("\nNet spending of all matches (expenses less refunds, as a report of them states it): "
                     + ", ".join(f"{v} {c}" for c, v in data["totals"].items()))
        text += "\nBy type: " + "; ".join(f"{t} " + ", ".join(f"{v} {c}" for c, v in by.items())
                                          for t, by in data["totals_by_type"].items())
    return text


# --- reading --------------------------------------------------------------------------------------


@tool(read_only=True, render=_render_transactions)
def list_transactions(
    ctx: ToolContext, start_date: str | None = None, end_date: str | None = None, type: TxType | None = None,
    status: TxStatus | None = None, category: str | None = None, merchant: str | None = None,
    counterparty: str | None = None, spent_by: str | None = None, currency: str | None = None,
    min_amount: AmountInput | None = None, max_amount: AmountInput | None = None, unclaimed: bool = False,
    query: str = "", limit: Annotated[int, Field(ge=1, le=200)] = 50, offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """List ledger transactions in date order (oldest first) with filters, and totals of all matches per currency:
    `totals` is the net spending (expenses less refunds), the total an expense report or claim of exactly those
    transactions must state; `totals_by_type` gives each type's sum (income and transfers are not spending). Void
    transactions are listed but counted in no total.
    Amounts in different currencies are never added together.

    Args:
        start_date: Only transactions on or after this date (YYYY-MM-DD).
        end_date: Only transactions on or before this date (YYYY-MM-DD).
        type: Only this type: expense, income, refund or transfer.
        status: Only this status: pending, posted, submitted, approved, rejected, reconciled or void.
        category: Only this category (case-insensitive), e.g. Travel.
        merchant: Only merchants whose name contains this text (case-insensitive).
        counterparty: Only transactions whose customer or supplier contains this text (case-insensitive).
        spent_by: Only spending by this person: an address, a directory name or 'me'.
        currency: Only this ISO 4217 currency, e.g. EUR.
        min_amount: Smallest amount, in major units of each transaction's own currency (e.g. 100 or "1,250.00").
        max_amount: Largest amount, in major units.
        unclaimed: Only transactions in no expense claim yet.
        query: Words or "quoted phrases" that must all appear in the merchant, description, category, reference,
            customer or supplier.
        limit: Most transactions to return (1-200).
        offset: Matching transactions to skip (for paging).
    """
    lo, hi = _day(start_date, "start_date"), _day(end_date, "end_date")
    if lo and hi and hi < lo:
        raise InvalidArgument(f"end_date {hi} is before start_date {lo}")
    code = as_argument(currency_code, currency) if currency is not None else None
    low = as_argument(to_minor, min_amount, "KWD", "min_amount") if min_amount is not None else None
    high = as_argument(to_minor, max_amount, "KWD", "max_amount") if max_amount is not None else None
    who = _person(ctx, spent_by, "spent_by") if spent_by is not None else None
    terms = query_terms(query, MAX_QUERY)
    hits = []
    for t in ctx.values(TRANSACTIONS):
        if lo and t.date < lo or hi and t.date > hi or type and t.type != type or status and t.status != status:
            continue
        if category is not None and fold(t.category) != fold(category.strip()):
            continue
        if merchant is not None and fold(" ".join(merchant.split())) not in fold(t.merchant):
            continue
        if counterparty is not None and fold(" ".join(counterparty.split())) not in fold(t.counterparty):
            continue
        if who is not None and t.spent_by != who or code is not None and t.currency != code:
            continue
        milli = t.amount_minor * 10 ** (3 - CURRENCIES[t.currency])  # in thousandths, to compare with the bounds
        if low is not None and milli < low or high is not None and milli > high:
            continue
        if unclaimed and t.claim_id is not None:
            continue
        if matches_all(terms, t.merchant, t.description, t.category, t.reference, t.customer, t.supplier):
            hits.append(t)
    hits.sort(key=lambda t: (t.date, t.id))
    net: dict[str, int] = {}
    by_type: dict[str, dict[str, int]] = {}
    for t in hits:
        if t.status == "void":  # cancelled: listed, counted in no total (a report refuses it)
            continue
        if t.type in SPENDING:  # as a report counts them: expenses add, refunds subtract
            net[t.currency] = net.get(t.currency, 0) + signed(t)
        of = by_type.setdefault(t.type, {})
        of[t.currency] = of.get(t.currency, 0) + t.amount_minor
    return {"total": len(hits), "offset": offset, "limit": limit,
            "totals": {c: format_minor(v, c) for c, v in sorted(net.items())},
            "totals_by_type": {k: {c: format_minor(v, c) for c, v in sorted(by_type[k].items())}
                               for k in TX_TYPES if k in by_type},
            "transactions": [transaction_json(t) for t in hits[offset:offset + limit]]}


@tool(read_only=True)
def get_transaction(ctx: ToolContext, id: str) -> dict:
    """Get one transaction with all its fields, and the claim and invoice it is linked to.

    Args:
        id: The transaction id, e.g. txn-0001 (from list_transactions).
    """
    t = _transaction(ctx, id)
    claim = ctx.get(REPORTS, t.claim_id) if t.claim_id else None
    inv = ctx.get(INVOICES, t.invoice_id) if t.invoice_id else None
    return {"transaction": transaction_json(t), "claim": report_json(claim) if claim else None,
            "invoice": invoice_json(inv) if inv else None}


@tool(read_only=True, render=render_list("invoices", _invoice_line, "No invoices match."))
def list_invoices(
    ctx: ToolContext, status: InvoiceStatus | None = None, kind: InvoiceKind | None = None,
    counterparty: str | None = None, currency: str | None = None, due_before: str | None = None, query: str = "",
    limit: Annotated[int, Field(ge=1, le=200)] = 50, offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """List invoices, soonest due first, with filters.

    Args:
        status: Only open, paid or void invoices.
        kind: payable (suppliers billed us) or receivable (we billed customers).
        counterparty: Only invoices whose supplier or customer contains this text (case-insensitive).
        currency: Only this ISO 4217 currency.
        due_before: Only invoices due on or before this date (YYYY-MM-DD).
        query: Words that must all appear in the number, counterparty or description.
        limit: Most invoices to return (1-200).
        offset: Matching invoices to skip (for paging).
    """
    code = as_argument(currency_code, currency) if currency is not None else None
    before = _day(due_before, "due_before")
    terms = query_terms(query, MAX_QUERY)
    hits = [i for i in ctx.values(INVOICES)
            if (status is None or i.status == status) and (kind is None or i.kind == kind)
            and (counterparty is None or fold(" ".join(counterparty.split())) in fold(i.counterparty))
            and (code is None or i.currency == code) and (before is None or (i.due is not None and i.due <= before))
            and matches_all(terms, i.number, i.counterparty, i.description)]
    hits.sort(key=lambda i: (i.due is None, i.due or date.max, i.id))
    return {"total": len(hits), "offset": offset, "limit": limit,
            "invoices": [invoice_json(i) for i in hits[offset:offset + limit]]}


@tool(read_only=True)
def get_invoice(ctx: ToolContext, invoice: str) -> dict:
    """Get one invoice with all its fields and the payment it was reconciled with.

    Args:
        invoice: The invoice id or its number, e.g. INV-1042.
    """
    i = _invoice(ctx, invoice)
    t = ctx.get(TRANSACTIONS, i.transaction_id) if i.transaction_id else None
    return {"invoice": invoice_json(i), "transaction": transaction_json(t) if t else None}


@tool(read_only=True, render=render_list("reports", _report_line, "No reports match."))
def list_expense_reports(
    ctx: ToolContext, kind: ReportKind | None = None, status: Literal["submitted", "pending_approval", "approved",
                                                                      "rejected"] | None = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 50, offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """List submitted expense reports and claims, newest first.

    Args:
        kind: report (a record of spending) or claim (a request to be repaid); both if omitted.
        status: Only submitted, pending_approval, approved or rejected ones.
        limit: Most to return (1-200).
        offset: Matching ones to skip (for paging).
    """
    hits = sorted((r for r in ctx.values(REPORTS) if (kind is None or r.kind == kind)
                   and (status is None or r.status == status)), key=lambda r: (r.submitted, r.id), reverse=True)
    return {"total": len(hits), "offset": offset, "limit": limit,
            "reports": [report_json(r) for r in hits[offset:offset + limit]]}


# --- changes --------------------------------------------------------------------------------------


def _report(ctx: ToolContext, kind: ReportKind, title: str, transaction_ids: list[str], total: AmountInput,
            currency: str | None, notes: str, approver: str | None) -> tuple[Report, list[Transaction]]:
    """A new report or claim after every check (nothing is stored)."""
    text = one_line(title, "title", MAX_NAME, required=True)
    ids = _ids(transaction_ids, "transaction_ids")
    txs = [_transaction(ctx, i) for i in ids]
    code = as_argument(currency_code, currency) if currency is not None else txs[0].currency
    amount = as_argument(to_minor, total, code, "total")
    problem = total_problem(list(txs), ids, amount, code)
    if problem:
        raise InvalidArgument(problem)
    rid = ctx.new_id("claim" if kind == "claim" else "rep")
    report = Report(id=rid, kind=kind, title=text, transaction_ids=ids, total_minor=amount, currency=code,
                    status="pending_approval" if kind == "claim" else "submitted", approver=approver,
                    submitted_by=ctx.user, notes=clean_text(notes, "notes", MAX_TEXT), submitted=ctx.now)
    return report, txs


@tool()
def submit_expense_report(
    ctx: ToolContext, title: str, transaction_ids: list[str], total: AmountInput, currency: str | None = None,
    notes: str = "",
) -> dict:
    """Submit an expense report to finance: a titled record of spending transactions (expenses, less refunds) in one
    currency, whose total you state; a total that does not match the transactions' sum is refused with the right sum.
    It changes no transaction (use submit_expense_claim to be repaid).

    Args:
        title: The report's title, e.g. March client visits.
        transaction_ids: Ids of the transactions it covers (from list_transactions).
        total: Their total in major units, e.g. 1234.50 or "1,234.50" (expenses minus refunds).
        currency: ISO 4217 code of the total; by default the transactions' currency.
        notes: Notes for finance.
    """
    report, _ = _report(ctx, "report", title, transaction_ids, total, currency, notes, None)
    ctx.put(REPORTS, report)
    return {"report": report_json(report)}


@tool()
def submit_expense_claim(
    ctx: ToolContext, title: str, transaction_ids: list[str], total: AmountInput, approver: str,
    currency: str | None = None, notes: str = "",
) -> dict:
    """Claim your own spending back: submit transactions you paid (expenses, less refunds; one currency) to an
    approver, who must be someone else. The stated total must match their sum; each transaction can be claimed once,
    and becomes submitted with that approver.

    Args:
        title: The claim's title, e.g. Berlin trip 3-5 March.
        transaction_ids: Ids of your transactions to claim (from list_transactions, e.g. with unclaimed=true).
        total: Their total in major units, e.g. 412.80 (expenses minus refunds).
        approver: Who approves it: an address or a name from the directory, e.g. Dana Reyes.
        currency: ISO 4217 code of the total; by default the transactions' currency.
        notes: Notes for the approver, e.g. the trip's purpose.
    """
    who = _person(ctx, approver, "approver")
    if who == ctx.user:
        raise InvalidArgument("you cannot approve your own claim; name your manager or another approver")
    report, txs = _report(ctx, "claim", title, transaction_ids, total, currency, notes, who)
    others = [f"{t.id} ({t.spent_by})" for t in txs if t.spent_by not in (None, ctx.user)]
    if others:
        raise InvalidArgument(f"{', '.join(others)} were spent by someone else; you can claim only your own spending")
    taken = [f"{t.id} (in {t.claim_id})" for t in txs if t.claim_id is not None]
    if taken:
        raise Conflict(f"{', '.join(taken)} are already claimed; a transaction is claimed once")
    wrong = [f"{t.id} ({t.status})" for t in txs if t.status not in CLAIMABLE]
    if wrong:
        raise InvalidArgument(f"{', '.join(wrong)} cannot be claimed; only pending or posted transactions can")
    ctx.put(REPORTS, report)
    for t in txs:
        ctx.put(TRANSACTIONS, t.evolve(status="submitted", approver=who, claim_id=report.id))
    return {"claim": report_json(report)}


@tool()
def reconcile_transaction(ctx: ToolContext, transaction_id: str, invoice: str) -> dict:
    """Match a payment to the invoice it settles: a supplier's payable invoice with an expense, a customer's
    receivable invoice with income. The amount and currency must be exactly the invoice's; a mismatch is refused with
    the difference. The transaction becomes reconciled and the invoice paid.

    Args:
        transaction_id: The payment's transaction id.
        invoice: The invoice id or number.
    """
    t, inv = _transaction(ctx, transaction_id), _invoice(ctx, invoice)
    if t.status == "reconciled":
        raise Conflict(f"transaction {t.id} is already reconciled with invoice {t.invoice_id}")
    if inv.status != "open":
        paid = f" by {inv.transaction_id}" if inv.transaction_id else ""
        raise Conflict(f"invoice {inv.number} is {inv.status}{paid}; only open invoices can be reconciled")
    if t.status == "void":
        raise InvalidArgument(f"transaction {t.id} is void")
    want = "expense" if inv.kind == "payable" else "income"
    if t.type != want:
        raise InvalidArgument(f"invoice {inv.number} is {inv.kind}, so it is settled by {want}, but {t.id} is "
                              f"{t.type}")
    if t.currency != inv.currency:
        raise InvalidArgument(f"currencies differ: {t.id} is in {t.currency}, invoice {inv.number} in {inv.currency} "
                              "(amounts are never converted)")
    if t.amount_minor != inv.amount_minor:
        diff = format_minor(abs(t.amount_minor - inv.amount_minor), t.currency)
        raise InvalidArgument(f"amounts differ: {t.id} is {format_minor(t.amount_minor, t.currency)} {t.currency}, "
                              f"invoice {inv.number} is {format_minor(inv.amount_minor, inv.currency)} {inv.currency} "
                              f"(off by {diff})")
    t = ctx.put(TRANSACTIONS, t.evolve(status="reconciled", invoice_id=inv.id))  # type: ignore[assignment]
    inv = ctx.put(INVOICES, inv.evolve(status="paid", transaction_id=t.id))  # type: ignore[assignment]
    party = fold(inv.counterparty)
    agrees = bool(party) and (party in fold(t.counterparty) or party in fold(t.merchant)
                              or fold(t.counterparty or t.merchant or "-") in party)
    return {"transaction": transaction_json(t), "invoice": invoice_json(inv), "counterparty_matches": agrees}
