"""CRM reports: accounts or deals exported as CSV, filtered as the search tools filter them, optionally saved as a
file."""

from __future__ import annotations

import csv
import io
import types
import typing
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, Unavailable, pydantic_error_message
from workspace_sim.core.registry import Tool, ToolHints, make_tool, tool
from workspace_sim.text.money import format_minor
from .records import ACCOUNTS, DEALS, Account, Deal
from .views import money_text
from .lookups import last_contacts
from .tools import find_accounts, search_accounts
from .deals import find_deals, search_deals

MAX_EXPORT_ROWS = 10_000
# the search tools whose arguments a report's filters are: their arguments models, built from the same functions the
# service registers (the service is assembled after this module, in the package)
_SEARCHES: dict[str, Tool] = {fn.__name__: make_tool(fn, "crm", ToolHints(True, False, True))
                              for fn in (search_accounts, search_deals)}


ACCOUNT_COLUMNS: dict[str, Callable[[Account, ToolContext], Any]] = {
    "id": lambda a, c: a.id, "name": lambda a, c: a.name, "domain": lambda a, c: a.domain,
    "industry": lambda a, c: a.industry, "tier": lambda a, c: a.tier,
    "annual_revenue": lambda a, c: money_text(a.annual_revenue_minor, a.currency), "currency": lambda a, c: a.currency,
    "owner": lambda a, c: a.owner, "status": lambda a, c: a.status,
    "renewal_date": lambda a, c: a.renewal_date.isoformat() if a.renewal_date else None,
    "last_contact": lambda a, c: (t.isoformat() if (t := last_contacts(c).get(a.id)) else None),
    "open_deals": lambda a, c: sum(d.is_open and d.account_id == a.id for d in c.values(DEALS)),
    "description": lambda a, c: a.description,
}


DEAL_COLUMNS: dict[str, Callable[[Deal, ToolContext], Any]] = {
    "id": lambda d, c: d.id, "name": lambda d, c: d.name, "account_id": lambda d, c: d.account_id,
    "account_name": lambda d, c: getattr(c.get(ACCOUNTS, d.account_id), "name", ""),
    "amount": lambda d, c: format_minor(d.amount_minor, d.currency), "currency": lambda d, c: d.currency,
    "stage": lambda d, c: d.stage, "probability": lambda d, c: d.probability,
    "close_date": lambda d, c: d.close_date.isoformat() if d.close_date else None, "owner": lambda d, c: d.owner,
    "next_step": lambda d, c: d.next_step,
}


DEFAULT_COLUMNS = {"accounts": ["id", "name", "tier", "status", "annual_revenue", "currency", "owner", "renewal_date"],
                   "deals": ["id", "name", "account_name", "stage", "amount", "currency", "close_date", "owner"]}


class _Filters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(k for k in data if k not in cls.model_fields)
            if unknown:
                raise ValueError(f"unknown filter(s) {', '.join(map(repr, unknown))}; use {', '.join(cls.model_fields)}")
        return data


def _filters_model() -> type[BaseModel]:
    """The filters of export_report, made from the filter arguments of search_accounts and search_deals (paging
    and sort aside), each optional; which of them a report takes is checked when it runs."""
    uses: dict[str, list[tuple[str, Any]]] = {}
    for search in ("search_accounts", "search_deals"):
        for name, info in _SEARCHES[search].args_model.model_fields.items():
            if name not in ("limit", "offset", "sort"):
                uses.setdefault(name, []).append((search.removeprefix("search_").capitalize(), info))
    fields: dict[str, Any] = {}
    for name, found in uses.items():
        kinds = tuple(dict.fromkeys(a for _, info in found for a in
                                    (typing.get_args(info.annotation) if typing.get_origin(info.annotation) in
                                     (typing.Union, types.UnionType) else (info.annotation,))))
        texts = dict.fromkeys(info.description or "" for _, info in found)
        text = next(iter(texts)) if len(texts) == 1 else " ".join(f"{w}: {info.description}" for w, info in found)
        fields[name] = (typing.Optional[typing.Union[kinds]], Field(None, description=text))  # type: ignore[valid-type]
    return create_model("ReportFilters", __base__=_Filters, __doc__="Filters of a report, as the search tools take them.",
                        **fields)  # type: ignore[call-overload]


def _report_filters(report: str, filters: dict[str, Any]) -> dict[str, Any]:
    """`filters` checked against the search tool's own arguments (less paging and sort)."""
    search = _SEARCHES["search_accounts" if report == "accounts" else "search_deals"]
    allowed = [n for n in search.args_model.model_fields if n not in ("limit", "offset", "sort")]
    unknown = sorted(k for k in filters if k not in allowed)
    if unknown:
        raise InvalidArgument(f"unknown filter(s) {', '.join(map(repr, unknown))} for a {report} report; "
                              f"use {', '.join(allowed)}")
    try:
        checked = search.args_model.model_validate(filters)
    except ValidationError as e:
        raise InvalidArgument(f"invalid filters: {pydantic_error_message(e, 'filters')}") from None
    return {k: getattr(checked, k) for k in filters}


ReportFilters = _filters_model()


def _render_report(data: dict) -> str:
    where = f"; saved to {data['path']}" if data.get("path") else ""
    return f"{data['report'].capitalize()} report: {data['rows']} rows, columns {', '.join(data['columns'])}{where}\n" \
           + data["csv"]


@tool(read_only=False, render=_render_report)
def export_report(
    ctx: ToolContext, report: Literal["accounts", "deals"], columns: list[str] = [],
    filters: ReportFilters | None = None, sort: str = "", path: str | None = None,
) -> dict:
    """Export a report over accounts or deals as CSV text (a header row, then one row per record; money as exact
    decimal text). With path given and the files service present, the CSV is also saved there as a file.

    Args:
        report: What each row is: accounts or deals.
        columns: Columns in order. Accounts: id, name, domain, industry, tier, annual_revenue, currency, owner, status,
            renewal_date, last_contact, open_deals, description. Deals: id, name, account_id, account_name, amount, currency, stage,
            probability, close_date, owner, next_step. Empty gives a standard set.
        filters: The filters search_accounts or search_deals take, e.g. {"status": "renewal_due", "tier": "Enterprise"};
            none if omitted.
        sort: Sort field as in search_accounts / search_deals, e.g. -annual_revenue; their default if empty.
        path: File path to save the CSV to, e.g. /reports/renewals.csv; not saved if omitted.
    """
    known = ACCOUNT_COLUMNS if report == "accounts" else DEAL_COLUMNS
    cols = list(columns) or DEFAULT_COLUMNS[report]
    bad = [c for c in cols if c not in known]
    if bad:
        raise InvalidArgument(f"unknown column(s) {', '.join(map(repr, bad))} for a {report} report; "
                              f"use {', '.join(known)}")
    if len(set(cols)) != len(cols):
        raise InvalidArgument("columns lists a column twice")
    given = {} if filters is None else {k: v for k in filters.model_fields_set if (v := getattr(filters, k)) is not None}
    args = _report_filters(report, given)
    if sort.strip():
        args["sort"] = sort
    rows = find_accounts(ctx, **args) if report == "accounts" else find_deals(ctx, **args)
    if len(rows) > MAX_EXPORT_ROWS:
        raise InvalidArgument(f"the report has {len(rows)} rows; at most {MAX_EXPORT_ROWS} can be exported; "
                              "narrow the filters")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(cols)
    for r in rows:
        writer.writerow(["" if (v := known[c](r, ctx)) is None else v for c in cols])  # type: ignore[arg-type]
    text = out.getvalue()
    saved = None
    if path is not None:
        if not ctx.has_tool("write_file"):
            raise Unavailable("this workspace has no files service to save the report in; leave path out to get the "
                              "CSV text")
        saved = ctx.invoke("write_file", path=path, content=text)["path"]
    return {"report": report, "columns": cols, "rows": len(rows), "ids": [r.id for r in rows], "csv": text,
            "path": saved}
