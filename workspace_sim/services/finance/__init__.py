"""Finance: a ledger of transactions, the invoices they settle, and expense reports and claims made of them.

Modelled on an accounting ledger with expense management (QuickBooks, Xero, Expensify as people use them).
Money is integer minor units plus an ISO 4217 code (`workspace_sim.text.money`); amounts in different
currencies are never converted, so a report or claim is in one currency and its stated total must equal
its transactions' sum (expenses add, refunds subtract). An expense claim asks a named approver (someone
other than the user) to repay the user's own spending; each transaction is claimed at most once.
Reconciliation matches a payment to an open invoice of exactly its amount and currency (payable invoices
with expenses, receivable ones with income); both sides then point at each other.
"""

from __future__ import annotations

from .records import INVOICES, REPORTS, SERVICE, TRANSACTIONS, Invoice, Report, Transaction
from .tools import (
    list_transactions, get_transaction, list_invoices, get_invoice, list_expense_reports, submit_expense_report,
    submit_expense_claim, reconcile_transaction
)

SERVICE.add_tools(
    list_transactions, get_transaction, list_invoices, get_invoice, list_expense_reports, submit_expense_report,
    submit_expense_claim, reconcile_transaction,
)

__all__ = ["SERVICE", "TRANSACTIONS", "INVOICES", "REPORTS", "Transaction", "Invoice", "Report"]
