"""File organisation and documents-from-data templates."""

from __future__ import annotations

import json

from ..builder import Act, SpecBuilder
from . import template
from .common import TOPICS, background_files, money, unique_names


@template("file_management", "archive_by_year")
def archive_by_year(b: SpecBuilder, size: int = 1) -> Act:
    """Move one year's reports into an archive folder; other years (look-alike names) stay. How many documents the
    year has varies, and the archive may already exist (an earlier year archived there), so it is not created."""
    b.use("files")
    background_files(b, 3)
    kind = b.rng.choice(("invoices", "receipts", "minutes", "statements"))
    base = f"/{b.rng.choice(('finance', 'admin', 'office'))}/{kind}"
    if any(r["path"].startswith(base + "/") for r in b.table("files", "files")):
        base += f"-{b.rng.randint(2, 99)}"
    year = b.rng.choice((2023, 2024, 2025))
    n = 2 * size + b.rng.randint(2, 4)
    parties = unique_names(b, n, lambda: b.rng.choice(b.maker.pools.companies).split()[0].lower().strip(",."))
    moving, staying = [], []
    for i, party in enumerate(parties):
        y = year if i % 2 == 0 else b.rng.choice((year - 1, year + 1))
        month = b.rng.randint(1, 12)
        path = f"{base}/{y}-{month:02d}-{party}.txt"
        amount = money(b.rng.uniform(80, 9000))
        b.table("files", "files").append({"path": path, "content": f"{kind[:-1].capitalize()} {party} {y}-{month:02d}\nTotal: {amount}\n"})
        (moving if y == year else staying).append((path, amount))
    dest = f"{base}/archive/{year}"
    existing = b.rng.random() < 0.4
    if existing:  # last year's clean-up made the folder; it holds one older document of that year already
        b.table("files", "files").append({"path": f"{dest}/{year}-01-opening-balance.txt",
                                          "content": f"Opening balance {year}\n"})
        ask = f"Please move all {year} {kind} in {base} into {dest}, the archive folder we started for {year}."
    else:
        ask = f"Please move all {year} {kind} in {base} into a new folder {dest}."
    b.ask(ask + " Leave the other years where they are.", f"Archive {year} {kind}", "file_management",
          "archive_by_year")

    def act() -> None:
        b.call("list_directory", path=base)
        if not existing:
            b.call("create_directory", path=dest)
        for path, amount in moving:
            name = path.rsplit("/", 1)[1]
            b.call("move_file", source=path, destination=f"{dest}/{name}")
            b.check({"kind": "file", "path": f"{dest}/{name}", "content": {"contains": f"Total: {amount}"}})
            b.check({"kind": "file", "path": path, "exists": False})
        if existing:
            b.guard({"kind": "file", "path": f"{dest}/{year}-01-opening-balance.txt", "maintain": True,
                     "content": {"contains": "Opening balance"}, "description": "what was archived before stays"})
        b.allow(f"files:{dest}*", f"files:{base}/archive", *[f"files:{p}" for p, _ in moving])
        b.answer(f"Moved {len(moving)} {year} {kind} to {dest}.")

    return act


@template("file_management", "rename_term")
def rename_term(b: SpecBuilder, size: int = 1) -> Act:
    """Replace a product's old name with its new one in exactly the documents that mention it."""
    b.use("files")
    background_files(b, 3)
    old = b.maker.brand()
    new = b.maker.brand()
    while new == old:
        new = b.maker.brand()
    folder = f"/docs/{b.rng.choice(TOPICS)}-{b.rng.randint(1, 99)}"
    words = unique_names(b, 2 + 2 * size + b.rng.randint(0, 2), b.maker.word)  # how many mention it varies
    edits = []
    for i, w in enumerate(words):
        path = f"{folder}/{w}.md"
        if i % 2 == 0:
            line = f"{b.maker.mention(old)}."
            b.table("files", "files").append({"path": path, "content": f"# {w.capitalize()}\n\n{line}\n\n{b.maker.paragraph(1)}\n"})
            edits.append((path, line))
        else:
            b.table("files", "files").append({"path": path, "content": f"# {w.capitalize()}\n\n{b.maker.paragraph(2)}\n"})
    b.ask(f"Our product {old} has been renamed to {new}. Update every document in {folder} that mentions {old} "
          f"so it says {new} instead; do not touch anything else.", f"Rename {old} to {new}", "file_management",
          "rename_term")

    def act() -> None:
        b.call("grep", pattern=old, path=folder, fixed_string=True)
        for path, line in edits:
            b.call("edit_file", path=path, edits=[{"old_text": line, "new_text": line.replace(old, new)}])
            b.check({"kind": "file", "path": path, "content": {"contains": line.replace(old, new), "not_contains": old}})
            b.allow(f"files:{path}")
        b.answer(f"Updated {len(edits)} documents from {old} to {new}.")

    return act


def _sales_rows(b: SpecBuilder, n: int) -> tuple[list[str], list[tuple[str, str, float]]]:
    regions = unique_names(b, 4, lambda: b.rng.choice(("North", "South", "East", "West", "Central", "Coastal", "Alpine")))
    rows = []
    for _ in range(n):
        rows.append((f"2026-0{b.rng.randint(1, 2)}-{b.rng.randint(10, 28)}", b.rng.choice(regions),
                     round(b.rng.uniform(100, 5000), 2)))
    return regions, rows


@template("document_from_data", "region_total_report")
def region_total_report(b: SpecBuilder, size: int = 1) -> Act:
    """Total one region's sales from a CSV (other regions are distractors) into a Markdown report."""
    b.use("files")
    background_files(b, 2)
    regions, rows = _sales_rows(b, 8 + 4 * size)
    region = b.rng.choice(sorted({r for _, r, _a in rows}))  # a region with at least one sale
    tag = b.rng.randint(1, 999)
    src = f"/data/sales-{tag}.csv"
    csv = "date,region,amount\n" + "".join(f"{d},{r},{a:.2f}\n" for d, r, a in rows)
    b.table("files", "files").append({"path": src, "content": csv})
    total = sum(a for _, r, a in rows if r == region)
    count = sum(1 for _, r, _a in rows if r == region)
    report = f"/reports/{region.lower()}-sales-{tag}.md"
    b.ask(f"From {src}, work out the total sales amount for the {region} region and write it to {report} "
          f"as a short Markdown report (include the total with two decimals and the number of sales).",
          f"{region} sales report", "document_from_data", "region_total_report")

    def act() -> None:
        b.call("read_text_file", path=src)
        b.call("create_directory", path="/reports")
        b.call("write_file", path=report, content=f"# {region} sales\n\nTotal: {money(total)}\nSales: {count}\n")
        b.check({"kind": "file", "path": report, "content": {"contains": money(total)}})
        b.check({"kind": "file", "path": report, "content": {"regex": rf"\b{count}\b"}})
        b.guard({"kind": "unchanged", "scope": f"files:{src}", "description": "the source data is untouched"})
        b.allow(f"files:{report}", "files:/reports")
        b.answer(f"The {region} total is {money(total)} over {count} sales; the report is at {report}.")

    return act


@template("document_from_data", "expense_summary_json")
def expense_summary_json(b: SpecBuilder, size: int = 1) -> Act:
    """Summarise an expenses CSV and one photographed receipt not yet in it into JSON: the total (the receipt's
    amount is only in its pixels) and the CSV's largest item."""
    from ..evidence_files import attach
    from .. import render
    from .media import MERCHANTS, receipt_image

    b.use("files")
    background_files(b, 2)
    items = unique_names(b, 6 + 3 * size, lambda: b.rng.choice(TOPICS) + " " + b.maker.word())
    amounts = [round(b.rng.uniform(20, 2500), 2) for _ in items]
    while len(set(amounts)) != len(amounts):
        amounts = [round(b.rng.uniform(20, 2500), 2) for _ in items]
    tag = b.rng.randint(1, 999)
    src = f"/finance/expenses-{tag}.csv"
    b.table("files", "files").append({"path": src, "content": "item,amount\n" + "".join(
        f"{i},{a:.2f}\n" for i, a in zip(items, amounts))})
    receipt = b.rng.randint(900, max(1000, min(18_000, int(max(amounts) * 100) - 100)))  # below the largest item
    merchant = b.rng.choice(MERCHANTS)
    when = (b.now.date()).isoformat()
    rpath = f"/finance/receipts/IMG_{b.rng.randint(1000, 9999)}.jpg"  # a phone's photo
    total = round(sum(amounts) + receipt / 100, 2)
    photo = receipt_image(b, merchant, when, receipt, b.rng.choice(("clean", "worn", "rough")),
                          f"R-{b.rng.randint(10, 99)}{tag:03d}")
    attach(b, rpath, render.jpeg_bytes(photo, quality=85), "photo", [money(receipt / 100)], [money(total)])
    largest = items[amounts.index(max(amounts))]
    out = f"/finance/summary-{tag}.json"
    b.ask(f"Summarise {src} into {out}: a JSON object with \"total\" (the sum of amount, two decimals, plus the "
          f"total of the receipt I photographed today, {rpath}, which is not in the CSV yet) and \"largest_item\" "
          f"(the item of the CSV with the highest amount).", "Expense summary", "document_from_data",
          "expense_summary_json")

    def act() -> None:
        b.call("read_text_file", path=src)
        b.call("read_media_file", path=rpath)
        b.call("write_file", path=out, content=json.dumps({"total": round(total, 2), "largest_item": largest}))
        b.check({"kind": "file", "path": out,
                 "json_field": {"path": "total", "value": {"equals": total, "tolerance": 0.005}},
                 "description": f"the total ({money(total)}) includes the receipt's {money(receipt / 100)}"})
        b.check({"kind": "file", "path": out, "json_field": {"path": "largest_item", "value": largest}})
        b.guard({"kind": "unchanged", "scope": f"files:{src}", "description": "the source data is untouched"})
        b.allow(f"files:{out}")
        b.answer(f"Total {money(total)} (with the receipt's {money(receipt / 100)}); the largest item is {largest}.")

    return act
