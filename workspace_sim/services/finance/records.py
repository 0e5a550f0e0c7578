"""The records of the finance ledger: transactions, invoices, and the expense reports and claims made of them.

Money is an integer of the currency's minor unit next to an ISO 4217 code (`workspace_sim.text.money`); initial
data may give `amount` in major units instead (converted exactly once on load).

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`TRANSACTIONS`, `INVOICES`, `REPORTS`).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.text.folding import fold
from workspace_sim.text.money import Currency, MinorAmount, format_minor, major_to_minor
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.validation import record_id, tag

TxType = Literal["expense", "income", "refund", "transfer"]
TxStatus = Literal["pending", "posted", "submitted", "approved", "rejected", "reconciled", "void"]
TX_TYPES: tuple[str, ...] = ("expense", "income", "refund", "transfer")
TX_STATUSES: tuple[str, ...] = ("pending", "posted", "submitted", "approved", "rejected", "reconciled", "void")
InvoiceKind = Literal["payable", "receivable"]
InvoiceStatus = Literal["open", "paid", "void"]
ReportKind = Literal["report", "claim"]
ReportStatus = Literal["submitted", "pending_approval", "approved", "rejected"]
MAX_NAME, MAX_TEXT, MAX_REF = 200, 5_000, 100


def line(value: str, what: str, limit: int, empty: str = "") -> str:
    """One line of text, spaces collapsed, at most `limit` characters; with `empty`, an empty one is refused with
    that message."""
    text = " ".join(value.split())
    if len(text) > limit:
        raise ValueError(f"{what} is {len(text)} characters long; at most {limit} are allowed")
    if empty and not text:
        raise ValueError(empty)
    return text


def _email(v: object, what: str) -> str | None:
    return None if v is None or v == "" else normalize_email(v, what)


class Transaction(Record):
    """A ledger entry: money spent, received, refunded or moved on a date. `customer` or `supplier` names the other
    party; `spent_by` is the employee whose card or pocket paid; `claim_id` the expense claim it is in;
    `invoice_id` the invoice it was reconciled against."""

    id: str = Field(description="The transaction's id, e.g. txn-0001.")
    date: Annotated[date, Field(description="The day the money moved.")]  # Annotated: the field is named like its type
    amount_minor: MinorAmount = Field(
        description=("The amount in the currency's minor unit (cents for USD); initial data may give amount in "
                     "major units."))
    currency: Currency = Field("USD", description="The ISO 4217 currency code.")
    merchant: str = Field("", description="Where the money was spent (a card transaction's merchant).")
    category: str = Field("", description="The spending category, e.g. travel or software.")
    description: str = Field("", max_length=MAX_TEXT, description="What the transaction was for.")
    type: TxType = Field("expense",
        description="expense (money out), income (money in), refund (money back) or transfer (between own accounts).")
    status: TxStatus = Field("posted",
        description=("pending, posted, submitted, approved, rejected (in an expense claim), reconciled (with "
                     "invoice_id) or void."))
    customer: str = Field("", description="The customer who paid (income); empty when a supplier is named or none.")
    supplier: str = Field("", description="The supplier who was paid; empty when a customer is named or none.")
    spent_by: str | None = Field(None,
        description="The e-mail address of the employee whose card or pocket paid; None for the company's.")
    approver: str | None = Field(None, description="The e-mail address of who approved it; None when no one has.")
    reference: str = Field("", description="An outside reference: a bank reference, a receipt or order number.")
    claim_id: str | None = Field(None, description="The id of the expense claim it is in; None when unclaimed.")
    invoice_id: str | None = Field(None,
        description="The id of the invoice it was reconciled against; None unless reconciled.")

    @model_validator(mode="before")
    @classmethod
    def _money(cls, data: Any) -> Any:
        return major_to_minor(data, ("amount", "amount_minor"))

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "transaction id", "txn-0001")


    @field_validator("merchant", "customer", "supplier")
    @classmethod
    def _names(cls, v: str) -> str:
        return line(v, "merchant/customer/supplier", MAX_NAME)

    @field_validator("category")
    @classmethod
    def _category(cls, v: str) -> str:
        return tag(v, "category") if v.strip() else ""

    @field_validator("reference")
    @classmethod
    def _reference(cls, v: str) -> str:
        return line(v, "reference", MAX_REF)

    @field_validator("spent_by", "approver", mode="before")
    @classmethod
    def _people(cls, v: object) -> str | None:
        return _email(v, "spent_by/approver")

    @model_validator(mode="after")
    def _check(self) -> "Transaction":
        if self.customer and self.supplier:
            raise ValueError(f"transaction {self.id} names both a customer and a supplier; give one")
        if self.status == "reconciled" and self.invoice_id is None:
            raise ValueError(f"transaction {self.id} is reconciled but names no invoice_id")
        if self.invoice_id is not None and self.status != "reconciled":
            raise ValueError(f"transaction {self.id} has an invoice_id but status {self.status}, not reconciled")
        return self

    @property
    def counterparty(self) -> str:
        """The customer or supplier, whichever is set."""
        return self.customer or self.supplier


class Invoice(Record):
    """An invoice: payable (a supplier billed us) or receivable (we billed a customer); `transaction_id` is the
    payment it was reconciled with."""

    id: str = Field(description="The invoice's id, e.g. inv-0001.")
    number: str = Field(description="The invoice number printed on it.")
    kind: InvoiceKind = Field("payable",
        description="payable (a supplier billed us) or receivable (we billed a customer).")
    counterparty: str = Field(description="The supplier or customer on the other side.")
    amount_minor: MinorAmount = Field(
        description="The amount due in the currency's minor unit; initial data may give amount in major units.")
    currency: Currency = Field("USD", description="The ISO 4217 currency code.")
    issued: date | None = Field(None, description="The day it was issued.")
    due: date | None = Field(None, description="The day payment is due.")
    status: InvoiceStatus = Field("open", description="open (unpaid), paid or void.")
    description: str = Field("", max_length=MAX_TEXT, description="What the invoice is for.")
    transaction_id: str | None = Field(None,
        description="The id of the payment it was reconciled with; None unless paid that way.")

    @model_validator(mode="before")
    @classmethod
    def _money(cls, data: Any) -> Any:
        return major_to_minor(data, ("amount", "amount_minor"))

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "invoice id", "inv-0001")

    @field_validator("number")
    @classmethod
    def _number(cls, v: str) -> str:
        return line(v, "invoice number", MAX_REF, "invoice number is empty")

    @field_validator("counterparty")
    @classmethod
    def _party(cls, v: str) -> str:
        return line(v, "counterparty", MAX_NAME, "invoice counterparty (the supplier or customer) is empty")


    @model_validator(mode="after")
    def _check(self) -> "Invoice":
        if self.issued and self.due and self.due < self.issued:
            raise ValueError(f"invoice {self.id} is due before it was issued")
        if self.transaction_id is not None and self.status != "paid":
            raise ValueError(f"invoice {self.id} has a transaction_id but status {self.status}, not paid")
        return self


class Report(Record):
    """An expense report (a record of spending submitted to finance) or an expense claim (a request to be repaid,
    waiting for its approver), over ledger transactions in one currency whose sum is `total_minor`."""

    id: str = Field(description="The report's id, e.g. rep-0001.")
    kind: ReportKind = Field("report",
        description="report (spending submitted to finance) or claim (a request to be repaid).")
    title: str = Field(description="The report's title.")
    transaction_ids: list[str] = Field(min_length=1, max_length=500,
        description="The ids of the transactions it covers, each once.")
    total_minor: MinorAmount = Field(
        description="The stated total in minor units (expenses add, refunds subtract); initial data may give total.")
    currency: Currency = Field("USD", description="The one ISO 4217 currency of all its transactions.")
    status: ReportStatus = Field("submitted",
        description="submitted, pending_approval (a claim waiting for its approver), approved or rejected.")
    approver: str | None = Field(None, description="The e-mail address of who is to approve it (a claim needs one).")
    submitted_by: str | None = Field(None, description="The e-mail address of who submitted it.")
    notes: str = Field("", max_length=MAX_TEXT, description="Free-text notes for the approver.")
    submitted: datetime | None = Field(None, description="When it was submitted.")

    @model_validator(mode="before")
    @classmethod
    def _money(cls, data: Any) -> Any:
        return major_to_minor(data, ("total", "total_minor"))

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "report id", "rep-0001")

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        return line(v, "title", MAX_NAME, "report title is empty")


    @field_validator("approver", "submitted_by", mode="before")
    @classmethod
    def _people(cls, v: object) -> str | None:
        return _email(v, "approver/submitted_by")

    @model_validator(mode="after")
    def _check(self) -> "Report":
        if self.kind == "claim" and self.approver is None:
            raise ValueError(f"claim {self.id} needs an approver")
        if len(set(self.transaction_ids)) != len(self.transaction_ids):
            raise ValueError(f"report {self.id} lists a transaction twice")
        return self


SPENDING = ("expense", "refund")


def signed(t: Transaction) -> int:
    """A spending transaction's amount as it counts in a report: expenses add, refunds subtract."""
    return -t.amount_minor if t.type == "refund" else t.amount_minor


def total_problem(txs: list[Transaction | None], ids: list[str], total: int, currency: str) -> str | None:
    """Why these transactions cannot make a report of `total` in `currency`, or None."""
    missing = [i for i, t in zip(ids, txs) if t is None]
    if missing:
        return f"transaction(s) {', '.join(missing)} do not exist"
    found = [t for t in txs if t is not None]
    wrong = [f"{t.id} ({t.type})" for t in found if t.type not in SPENDING]
    if wrong:
        return f"{', '.join(wrong)} are not spending; a report covers expenses and refunds"
    void = [t.id for t in found if t.status == "void"]
    if void:
        return f"{', '.join(void)} are void"
    currencies = sorted({t.currency for t in found})
    if len(currencies) > 1:
        by = {c: format_minor(sum(signed(t) for t in found if t.currency == c), c) for c in currencies}
        return (f"the transactions are in {' and '.join(currencies)} ({', '.join(f'{v} {c}' for c, v in by.items())}); "
                "amounts are never converted, so submit one report per currency")
    if currencies[0] != currency:
        return f"the transactions are in {currencies[0]}, not {currency}"
    actual = sum(signed(t) for t in found)
    if actual != total:
        return (f"the total {format_minor(total, currency)} {currency} does not match the transactions' sum "
                f"{format_minor(actual, currency)} {currency} (off by {format_minor(abs(actual - total), currency)})")
    return None


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Check the links between transactions, invoices and reports agree (both sides of a reconciliation, a claim's
    transactions, currencies and totals), and fill report times."""
    txs, invoices, reports = tables.get(TRANSACTIONS), tables.get(INVOICES), tables.get(REPORTS)
    if txs is None or invoices is None or reports is None:
        return
    numbers: dict[str, str] = {}
    for key, inv in invoices.items():
        assert isinstance(inv, Invoice)
        where = f"data.finance.invoices[{key}]"
        number = fold(inv.number)
        if number in numbers:
            raise SpecError(f"{where}.number", f"{inv.number!r} is also the number of invoice {numbers[number]}")
        numbers[number] = key
        if inv.transaction_id is not None:
            t = txs.get(inv.transaction_id)
            if t is None or t.invoice_id != key:  # type: ignore[attr-defined]
                raise SpecError(f"{where}.transaction_id", f"transaction {inv.transaction_id!r} is not reconciled "
                                f"with this invoice (its invoice_id must be {key})")
    for key, t in txs.items():
        assert isinstance(t, Transaction)
        where = f"data.finance.transactions[{key}]"
        if t.invoice_id is not None:
            inv = invoices.get(t.invoice_id)
            if inv is None or inv.transaction_id != key:  # type: ignore[attr-defined]
                raise SpecError(f"{where}.invoice_id", f"invoice {t.invoice_id!r} does not name this transaction")
        if t.claim_id is not None:
            rep = reports.get(t.claim_id)
            if rep is None or rep.kind != "claim" or key not in rep.transaction_ids:  # type: ignore[attr-defined]
                raise SpecError(f"{where}.claim_id", f"claim {t.claim_id!r} does not exist or does not list it")
    for key, rep in list(reports.items()):
        assert isinstance(rep, Report)
        where = f"data.finance.reports[{key}]"
        problem = total_problem([txs.get(i) for i in rep.transaction_ids], rep.transaction_ids, rep.total_minor,
                                rep.currency)
        if problem:
            raise SpecError(f"{where}.transaction_ids", problem)
        reports[key] = rep.evolve(submitted=rep.submitted or config.now, submitted_by=rep.submitted_by or config.user)


SERVICE = Service("finance", {"transactions": Transaction, "invoices": Invoice, "reports": Report},
                  title="Finance", prepare=_prepare)
TRANSACTIONS, INVOICES, REPORTS = SERVICE.table("transactions"), SERVICE.table("invoices"), SERVICE.table("reports")
