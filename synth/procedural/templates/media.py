"""Evidence an agent has to look at: receipts photographed, a supplier form scanned, a chart in a report, an
invoice PDF, each rendered from the world's own records (synth/procedural/render.py), so the truth is known by
construction. The facts the task turns on exist only in the evidence: a receipt's merchant, date and total and a
scanned form's fields only in pixels (a text channel sees a placeholder), a chart's figures only in the image on
a page of their own, an invoice's total only in its PDF. How worn the evidence is (rotation, speckles, blur, low
contrast, cropped margins, a stamp over a figure) is drawn from the seed.
"""

from __future__ import annotations

import base64
import random
from datetime import timedelta
from typing import Any

from ..builder import Act, SpecBuilder, TemplateError
from .. import render
from ..evidence_files import attach, declare
from ..render import Line
from . import template
from .common import background_files, local

CAP = "media_evidence"
MERCHANTS = ("Green Leaf Bistro", "Harbour Taxi Co", "Station Coffee", "Northside Office Supply", "Metro Rail",
             "Copper Kettle Cafe", "Parkview Hotel", "Blue Door Pharmacy", "City Print Shop", "Riverside Diner")
ITEMS = {"Green Leaf Bistro": ("Pasta of the day", "Sparkling water", "Espresso", "Side salad"),
         "Harbour Taxi Co": ("Fare", "Airport surcharge", "Tip"), "Station Coffee": ("Flat white", "Croissant", "Muffin"),
         "Northside Office Supply": ("Printer paper", "Toner", "Notebooks"), "Metro Rail": ("Day ticket", "Seat reservation"),
         "Copper Kettle Cafe": ("Club sandwich", "Tea", "Soup"), "Parkview Hotel": ("Room, 1 night", "Breakfast", "City tax"),
         "Blue Door Pharmacy": ("Cold remedy", "Plasters"), "City Print Shop": ("Poster print", "Binding"),
         "Riverside Diner": ("Burger", "Fries", "Lemonade")}


def _ascii(names: list[str]) -> list[str]:
    """Names the built-in fonts draw (Latin letters without accents)."""
    return [n for n in names if n.isascii()]


def _level(b: SpecBuilder) -> str:
    return b.rng.choice(render.LEVELS)


def _file(b: SpecBuilder, path: str, raw: bytes, kind: str = "", facts: tuple[str, ...] = ()) -> None:
    attach(b, path, raw, kind, facts)


def _money(minor: int) -> str:
    return f"{minor // 100:,}.{minor % 100:02d}"


def _split(b: SpecBuilder, total: int, names: tuple[str, ...]) -> list[tuple[str, int]]:
    """A receipt's items (2-3 of the merchant's) whose prices add up to `total` minor units."""
    k = min(len(names), b.rng.randint(2, 3))
    picked = b.rng.sample(names, k)
    cuts = sorted(b.rng.sample(range(100, total - 100), k - 1))
    prices = [e - s for s, e in zip([0, *cuts], [*cuts, total])]
    return list(zip(picked, prices))


def receipt_image(b: SpecBuilder, merchant: str, when: str, total: int, level: str, number: str) -> Any:
    """A photographed till receipt: merchant, date, items, total (stamped over at the rough level), as an image."""
    lines = [Line(merchant.upper(), 22, True), Line(f"{b.rng.randint(2, 240)} {b.maker.word().capitalize()} Street", 16),
             Line(f"Receipt {number}   {when}", 16), Line("", 8)]
    lines += [Line(name, 17, right=_money(p)) for name, p in _split(b, total, ITEMS[merchant])]
    lines += [Line("", 6), Line("TOTAL", 21, True, right=_money(total)), Line("Paid by card. Thank you!", 15)]
    img, spans = render.paper(lines, width=b.rng.choice((400, 420, 440)))
    return render.degrade(img, level, b.seed * 7919 + int(number[-3:]), "PAID", spans[len(lines) - 2])


def receipt_png(b: SpecBuilder, merchant: str, when: str, total: int, level: str, number: str) -> bytes:
    """`receipt_image` as PNG."""
    return render.png_bytes(receipt_image(b, merchant, when, total, level, number))


@template(CAP, "receipts_into_expenses")
def receipts_into_expenses(b: SpecBuilder, size: int = 1) -> Act:
    """Photos of the user's trip receipts go into the Expenses database with the merchant, date and total as each
    receipt shows them, the ledger transaction it belongs to, and whether the ledger's amount matches; one
    receipt's total differs from its ledger entry, and the receipts' facts are only in their pixels. How many
    receipts there are varies, and the request may also want the mismatch reported to the colleague who keeps the
    ledger."""
    b.use("files", "finance", "databases", "contacts")
    me, colleague = b.world.user.email, b.world.colleagues()[0].email
    k = 2 + min(size, 2) - 1 + b.rng.randint(0, 2)
    keeper = b.world.colleagues()[-1] if b.rng.random() < 0.5 else None
    if keeper is not None:
        b.use("mail")
    merchants = b.rng.sample(MERCHANTS, k + 2)
    bad = b.rng.randrange(k)
    txs = b.table("finance", "transactions")
    receipts = []
    for i in range(k):
        day = (b.now - timedelta(days=b.rng.randint(2, 9))).date()
        total = b.rng.randint(900, 18_000)
        ledger = total
        if i == bad:  # the card statement booked a different amount than the till printed
            ledger = total + b.rng.choice((-1, 1)) * b.rng.choice((90, 900, 450, 1000))
        tid = f"txn-{b.rng.randint(1000, 9999)}{i}"
        txs.append({"id": tid, "date": day.isoformat(), "amount_minor": ledger, "currency": "USD",
                    "merchant": merchants[i], "category": "Travel", "spent_by": me, "status": "posted"})
        path = f"/receipts/IMG_{b.rng.randint(1000, 9999)}{i}.png"
        _file(b, path, receipt_png(b, merchants[i], day.isoformat(), total, _level(b), f"R-{b.rng.randint(10, 99)}{i:03d}"),
              "photo", (_money(total), day.isoformat(), merchants[i]))
        receipts.append((path, merchants[i], day.isoformat(), total, tid, i != bad))
    # no receipt: a colleague's spending at a receipt's merchant, and the user's own spending elsewhere
    twin = next(r for r in receipts if r[5])  # a receipt whose total the ledger has anyway (never the mismatch's)
    txs.append({"id": f"txn-{b.rng.randint(1000, 9999)}8", "date": twin[2], "amount_minor": twin[3],
                "currency": "USD", "merchant": twin[1], "category": "Travel", "spent_by": colleague, "status": "posted"})
    txs.append({"id": f"txn-{b.rng.randint(1000, 9999)}9", "date": (b.now - timedelta(days=3)).date().isoformat(),
                "amount_minor": b.rng.randint(900, 9000), "currency": "USD", "merchant": merchants[k],
                "category": "Meals", "spent_by": me, "status": "posted"})
    if len({t["id"] for t in txs}) != len(txs):
        raise TemplateError("transaction ids clashed")
    dbs = b.table("databases", "databases")
    dbs.append({"id": "expenses", "title": "Expenses", "properties": [
        {"name": "Name", "type": "title"}, {"name": "Date", "type": "date"}, {"name": "Amount", "type": "number"},
        {"name": "Transaction", "type": "text"},
        {"name": "Ledger", "type": "select", "options": ["Matches", "Mismatch"]}]})
    b.table("databases", "rows").append({"id": "row-old1", "database": "expenses", "values": {
        "Name": merchants[k + 1], "Date": (b.now - timedelta(days=40)).date().isoformat(), "Amount": 42.5,
        "Transaction": "txn-0001", "Ledger": "Matches"}})
    background_files(b, 2)
    b.ask(random.Random(f"wording:{b.seed}:receipts").choice((  # phrasings drawn apart from the task's own draws
        "I photographed my receipts from last week; they are in /receipts. Please add one row per receipt to the "
        "Expenses database: the merchant as Name, and the date and total as printed on the receipt, the id of my "
        "ledger transaction it belongs to, and Ledger set to Matches when the ledger has the same amount, or "
        "Mismatch when it does not.",
        "Last week's receipts are photographed in /receipts. For each one, add a row to the Expenses database with "
        "the merchant as Name, the printed date and total, the id of the ledger transaction it belongs to, and "
        "Ledger set to Matches if the ledger amount is the same, Mismatch if not.",
        "Could you log my receipts (photos in /receipts, from last week) in the Expenses database? One row each: "
        "Name is the merchant, then the date and total printed on it, my matching ledger transaction's id, and "
        "Ledger = Matches or Mismatch depending on whether the ledger amount agrees."))
          + (f" {keeper.name} keeps the ledger: email them any receipt that doesn't match it, with the transaction id."
             if keeper is not None else ""), "Receipts into Expenses", CAP, "receipts_into_expenses")

    def act() -> None:
        b.call("list_directory", path="/receipts")
        for path, *_ in receipts:
            b.call("read_media_file", path=path)
        b.call("list_transactions", spent_by="me", start_date=(b.now - timedelta(days=10)).date().isoformat())
        b.call("get_database", database="Expenses")
        for path, merchant, day, total, tid, ok in receipts:
            status = "Matches" if ok else "Mismatch"
            b.call("create_row", database="expenses", values=[
                {"property": "Name", "value": merchant}, {"property": "Date", "value": day},
                {"property": "Amount", "value": total / 100}, {"property": "Transaction", "value": tid},
                {"property": "Ledger", "value": status}])
            b.check({"kind": "record_exists", "table": "databases.rows", "new_only": True, "where": {
                "database": "expenses", "values.Name": {"contains": merchant.split()[0], "ignore_case": True},
                "values.Date": day, "values.Amount": total / 100, "values.Transaction": tid, "values.Ledger": status},
                "description": f"{merchant}'s receipt ({_money(total)} on {day}, {status.lower()} {tid})"})
        b.check({"kind": "record_exists", "table": "databases.rows", "new_only": True, "where": {"database": "expenses"},
                 "count": {"equals": k}, "description": f"exactly {k} new expense rows, one per receipt"})
        b.guard({"kind": "record_exists", "table": "databases.rows", "maintain": True, "where": {
            "id": "row-old1", "values.Amount": 42.5}, "description": "the older expense row is left as it was"})
        b.allow("databases.rows:*")
        wrong = receipts[bad]
        if keeper is not None:
            b.call("send_email", _free=("subject",), to=[keeper.email], subject="Receipt not matching the ledger",
                   body=f"Hi {keeper.name.split()[0]}, the {wrong[1]} receipt of {wrong[2]} says {_money(wrong[3])}, "
                        f"but ledger transaction {wrong[4]} has a different amount.")
            b.check({"kind": "mail_sent", "to": [keeper.email], "only_recipients": True,
                     "body": {"contains": wrong[4]}, "description": f"{keeper.name} was told about {wrong[4]}"})
            for t in (r[4] for r in receipts if r[5]):
                b.guard({"kind": "tool_not_called", "tool": "send_email", "args": {"body": {"contains": t}},
                         "description": f"only the mismatch was reported ({t} matches the ledger)"})
            b.allow("mail.messages:msg-*")
        b.answer(f"Added {k} receipts to Expenses. {wrong[1]}'s receipt says {_money(wrong[3])} but the ledger "
                 f"({wrong[4]}) has a different amount, so it is marked Mismatch; the others match.")

    return act


def _form_jpeg(b: SpecBuilder, fields: list[tuple[str, str]], level: str, title: str) -> bytes:
    lines = [Line(title, 24, True), Line("Please print clearly. Return to Accounts Payable.", 14), Line("", 10)]
    for label, value in fields:
        lines += [Line(label, 14), Line("   " + value, 22, True), Line("", 4)]
    lines += [Line("", 10), Line("Signature: ______________________", 16)]
    img, spans = render.paper(lines, width=640, margin=36)
    img = render.degrade(img, level, b.seed * 104729 + len(title), "RECEIVED", spans[4])
    return render.jpeg_bytes(img, quality=82)


@template(CAP, "scanned_form_to_database")
def scanned_form_to_database(b: SpecBuilder, size: int = 1) -> Act:
    """Two supplier registration forms were scanned (PDF pages that are only images); the supplier not yet in the
    Vendors database is added with the tax id, payment terms, contact and start date exactly as on its form."""
    b.use("files", "databases", "contacts")
    companies = _ascii(list(b.rng.sample(b.maker.pools.companies, 12)))
    if len(companies) < 4:
        raise TemplateError("too few plain company names")
    new, known, *others = companies
    terms = ("Net 15", "Net 30", "Net 45", "Net 60")
    def form(name: str) -> dict:
        slug = "".join(c for c in name.lower() if c.isalnum())[:14]
        start = (b.now + timedelta(days=b.rng.randint(5, 40))).date().isoformat()
        return {"name": name, "tax": f"{b.rng.choice(('DE', 'FR', 'NL', 'IE'))}{b.rng.randint(100_000_000, 999_999_999)}",
                "terms": b.rng.choice(terms), "contact": f"{b.rng.choice(('ap', 'billing', 'accounts'))}@{slug}.example",
                "start": start}
    f_new, f_known = form(new), form(known)
    dbs = b.table("databases", "databases")
    props = [{"name": "Name", "type": "title"}, {"name": "Tax ID", "type": "text"},
             {"name": "Terms", "type": "select", "options": list(terms)}, {"name": "Contact", "type": "text"},
             {"name": "Start", "type": "date"}]
    dbs.append({"id": "vendors", "title": "Vendors", "properties": props})
    rows = b.table("databases", "rows")
    for i, f in enumerate([f_known, *(form(o) for o in others[:2])]):
        rows.append({"id": f"row-v{i + 1}", "database": "vendors", "values": {
            "Name": f["name"], "Tax ID": f["tax"], "Terms": f["terms"], "Contact": f["contact"], "Start": f["start"]}})
    scans = []
    for f in b.rng.sample([f_new, f_known], 2):
        fields = [("Company name", f["name"]), ("VAT / tax id", f["tax"]), ("Payment terms", f["terms"]),
                  ("Accounts contact (email)", f["contact"]), ("Supply starts on", f["start"])]
        path = f"/scans/scan-{b.rng.randint(10000, 99999)}.pdf"
        _file(b, path, render.scan_pdf(_form_jpeg(b, fields, _level(b), "SUPPLIER REGISTRATION FORM"), "Scan"),
              "scan", (f["tax"], f["contact"], f["start"]))
        scans.append(path)
    background_files(b, 2)
    b.ask(random.Random(f"wording:{b.seed}:scans").choice((
        "Two supplier registration forms were scanned into /scans. One of the suppliers is already in our Vendors "
        "database; please add the other one, with its tax id, payment terms, accounts contact and start date exactly "
        "as written on its form.",
        "There are two scanned supplier registration forms in /scans, and only one of those suppliers is in the "
        "Vendors database so far. Add the missing one with the tax id, payment terms, accounts contact and start date "
        "exactly as its form gives them.",
        "Can you register the new supplier from the scans in /scans? Of the two forms there, one supplier already "
        "exists in Vendors; add the other with its tax id, payment terms, accounts contact and start date, written "
        "exactly as on the form.")), "Supplier from a scanned form", CAP, "scanned_form_to_database")

    def act() -> None:
        b.call("list_directory", path="/scans")
        for p in scans:
            b.call("read_pdf", path=p)
        b.call("query_database", database="Vendors")
        b.call("create_row", database="vendors", values=[
            {"property": "Name", "value": f_new["name"]}, {"property": "Tax ID", "value": f_new["tax"]},
            {"property": "Terms", "value": f_new["terms"]}, {"property": "Contact", "value": f_new["contact"]},
            {"property": "Start", "value": f_new["start"]}])
        b.check({"kind": "record_exists", "table": "databases.rows", "new_only": True, "where": {
            "database": "vendors", "values.Name": {"contains": f_new["name"].split()[0], "ignore_case": True},
            "values.Tax ID": {"regex": "^\\s*" + f_new["tax"] + "\\s*$"}, "values.Terms": f_new["terms"],
            "values.Contact": {"equals": f_new["contact"], "ignore_case": True}, "values.Start": f_new["start"]},
            "description": f"{f_new['name']} added as on its form (tax id {f_new['tax']}, {f_new['terms']})"})
        b.check({"kind": "record_exists", "table": "databases.rows", "new_only": True, "where": {"database": "vendors"},
                 "count": {"equals": 1}, "description": f"only the new supplier added ({known} is already there)"})
        b.allow("databases.rows:*")
        b.answer(f"{known} was already in Vendors; I added {f_new['name']} (tax id {f_new['tax']}, {f_new['terms']}, "
                 f"contact {f_new['contact']}, starting {f_new['start']}).")

    return act


REGIONS = ("North", "South", "East", "West", "Central")
METRICS = (("New customers", "customers"), ("Support tickets closed", "tickets"), ("Trial sign-ups", "sign-ups"))


@template(CAP, "chart_answer_from_report")
def chart_answer_from_report(b: SpecBuilder, size: int = 1) -> Act:
    """Answer which region led a metric in a month, and with how many, from the chart of the quarterly report PDF
    (a page that is only the chart image); last quarter's report, whose text layer has its own figures, is a
    distractor. The request names the report's file or only its folder, and wants the answer itself or mailed to
    the colleague who asked."""
    b.use("files")
    named, asker = b.rng.random() < 0.5, None
    if b.rng.random() < 0.5:
        b.use("mail", "contacts")
        asker = b.world.colleagues()[-1]
    metric, unit = b.rng.choice(METRICS)
    regions = b.rng.sample(REGIONS, 3 + min(size, 2) - 1)
    q = (b.now.month - 1) // 3  # the quarter before this one
    year = b.now.year if q else b.now.year - 1
    q = q or 4
    months = [("Jan", "Feb", "Mar"), ("Apr", "May", "Jun"), ("Jul", "Aug", "Sep"), ("Oct", "Nov", "Dec")][q - 1]
    values = b.rng.sample(range(40, 400), len(regions) * 3)
    series = {r: values[i * 3:i * 3 + 3] for i, r in enumerate(regions)}
    m = b.rng.randrange(3)
    top = max(regions, key=lambda r: series[r][m])
    figure = series[top][m]
    chart = render.photo_png(render.bar_chart_image(f"{metric} by region, Q{q} {year}", months, series, unit),
                             _level(b), b.seed * 31 + q)
    text = [(f"Quarterly operations review: Q{q} {year}", 16, "B"),
            (f"{b.maker.paragraph(3)}", 11, ""),
            (f"Figure 1 (next page) shows {metric.lower()} per region for each month of the quarter. "
             f"{b.maker.sentence()}.", 11, "")]
    path = f"/reports/ops-review-q{q}-{year}.pdf"
    _file(b, path, render.report_pdf(text, chart, f"Q{q} {year} review"), "chart", (str(figure),))
    pq, py = (q - 1, year) if q > 1 else (4, year - 1)
    old = {r: b.rng.randint(40, 400) for r in regions}
    old_top = max(regions, key=lambda r: old[r])
    _file(b, f"/reports/ops-review-q{pq}-{py}.pdf", render.text_pdf(
        [(f"Quarterly operations review: Q{pq} {py}", 16, "B"),
         ("; ".join(f"{r}: {old[r]} {unit} in the last month" for r in regions) + ".", 11, "")], f"Q{pq} {py} review"))
    background_files(b, 2)
    month = months[m]
    if old[old_top] == figure:
        raise TemplateError("last quarter's figure equals the answer")
    where = path if named else "in /reports"
    ask = random.Random(f"wording:{b.seed}:chart").choice((
        f"In the Q{q} {year} operations review ({where}), which region had the most {metric.lower()} in {month}, "
        f"and how many?",
        f"Which region topped {metric.lower()} in {month}, and with how many? It's in the Q{q} {year} operations "
        f"review ({where}).",
        f"Quick question from the Q{q} {year} operations review ({where}): for {month}, which region had the "
        f"highest {metric.lower()}, and what was the number?"))
    if asker is not None:
        ask = (f"{asker.name} ({asker.department}) asked me this; please email them the answer. " + ask)
    b.ask(ask, f"Read the Q{q} chart", CAP, "chart_answer_from_report")

    def act() -> None:
        if not named:
            b.call("list_directory", path="/reports")
        b.call("read_pdf", path=path)
        others = [r for r in regions if r != top]
        said = f"{top} had the most {metric.lower()} in {month}: {figure}."
        if asker is not None:
            b.call("send_email", _free=("subject",), to=[asker.email], subject=f"{metric} in {month}",
                   body=f"Hi {asker.name.split()[0]}, {said}")
            b.allow("mail.messages:msg-*")
        b.check({"kind": "judged", "target": "answer" if asker is None else {"mail": {"to": [asker.email]}},
                 "criteria": [
            {"requirement": f"Names the region with the most {metric.lower()} in {month}",
             "key_facts": [{"entity": LEADS, "value": top}],
             "excludes": [{"entity": LEADS, "value": r} for r in others]},
            {"requirement": f"Gives its figure for {month}", "key_facts": [str(figure)]},
            {"requirement": "Gives last quarter's figure as the answer", "negative": True,
             "key_facts": [str(old[old_top])]},
        ], "description": f"{top} led {month} with {figure} {unit}"})
        b.answer(said if asker is None else f"I emailed {asker.name}: {said}")

    return act


LEADS = ["most", "highest", "led", "leads", "top", "largest", "biggest"]


def invoice_pdf(vendor: str, number: str, issued: str, due: str, items: list[tuple[str, int]], corrects: str = "") -> bytes:
    """A supplier's invoice with a text layer: header, lines, total; a corrected one says which it replaces."""
    total = sum(p for _, p in items)
    head = f"CORRECTED INVOICE {number} (replaces {corrects})" if corrects else f"INVOICE {number}"
    blocks = [(vendor, 18, "B"), (head, 14, "B"), (f"Issued {issued}. Payment due {due}.", 11, "")]
    blocks += [(f"{name}: {_money(p)} USD", 11, "") for name, p in items]
    blocks += [(f"Total due: {_money(total)} USD", 13, "B")]
    if corrects:
        blocks.append((f"This invoice corrects an error on invoice {corrects}, which is void.", 11, ""))
    return render.text_pdf(blocks, head)


@template(CAP, "invoice_to_budget_over_days", weight=2)
def invoice_to_budget_over_days(b: SpecBuilder, size: int = 1) -> Act:
    """Two or three days with the budget workbook: day one enters a supplier invoice's total (from the PDF's text
    layer) in its row, under a standing rule to keep it in step with the invoices; overnight a corrected invoice
    replaces it silently, and day two enters a second supplier's invoice and, by the rule, the corrected total. Day
    one's invoice may be named by its path or only by its folder; day two may also ask what is left of the first
    supplier's budget to be mailed to a colleague (the corrected figure); a third day may bring a third invoice."""
    b.use("files", "contacts")
    named, tell, third = b.rng.random() < 0.5, b.rng.random() < 0.5, b.rng.random() < 0.5
    if tell:
        b.use("mail")
    vendors = _ascii(list(b.rng.sample(b.maker.pools.companies, 10)))[:4]
    if len(vendors) < 4:
        raise TemplateError("too few plain company names")
    from workspace_sim.media.sheets import write_xlsx

    budgets = [b.rng.randint(20, 90) * 1000 for _ in vendors]
    rows = [["Supplier", "Budget", "Invoiced", "Remaining"]]
    rows += [[v, budgets[i], None, f"=B{i + 2}-C{i + 2}"] for i, v in enumerate(vendors)]
    book = f"/finance/budget-{b.now.year}.xlsx"
    _file(b, book, write_xlsx(None, book, "Costs", "A1", rows))
    first, second, last = b.rng.sample(range(len(vendors)), 3)

    def items() -> list[tuple[str, int]]:
        return [(f"{b.maker.word().capitalize()} services", b.rng.randint(1500, 9000) * 100 + b.rng.choice((0, 50))),
                ("Expenses", b.rng.randint(50, 900) * 100)]
    inv1, inv2, inv3 = items(), items(), items()
    fix = list(inv1)
    fix[0] = (fix[0][0], fix[0][1] - b.rng.randint(3, 40) * 100)
    num1, num2, num3 = (f"INV-{b.rng.randint(1000, 4999)}", f"INV-{b.rng.randint(5000, 9999)}",
                        f"INV-{b.rng.randint(10000, 19999)}")
    num_fix = f"{num1}-C"
    issued = (b.now - timedelta(days=3)).date().isoformat()
    due = (b.now + timedelta(days=27)).date().isoformat()
    slug = lambda v: "".join(c for c in v.lower() if c.isalnum())[:16]  # noqa: E731
    p1, p2, p3 = (f"/invoices/{slug(vendors[i])}-{n}.pdf" for i, n in ((first, num1), (second, num2), (last, num3)))
    pfix = f"/invoices/{slug(vendors[first])}-{num_fix}.pdf"
    _file(b, p1, invoice_pdf(vendors[first], num1, issued, due, inv1), "pdf", (_money(sum(p for _, p in inv1)),))
    _file(b, p2, invoice_pdf(vendors[second], num2, issued, due, inv2), "pdf", (_money(sum(p for _, p in inv2)),))
    if third:
        _file(b, p3, invoice_pdf(vendors[last], num3, issued, due, inv3), "pdf", (_money(sum(p for _, p in inv3)),))
    declare(b, pfix, "pdf", (_money(sum(p for _, p in fix)),))  # arrives overnight
    t1, t2, t3, tfix = (sum(p for _, p in x) / 100 for x in (inv1, inv2, inv3, fix))
    background_files(b, 2)
    where = f"it is {p1}" if named else "it is in /invoices"
    b.ask(f"Please enter the total of {vendors[first]}'s invoice ({where}) in the Invoiced column of its "
          f"row on the Costs sheet of {book}. From now on, keep that cell in step with their invoices: if they send "
          f"a corrected one, the corrected total is what counts.", "Invoices into the budget", CAP,
          "invoice_to_budget_over_days")
    days = [local(b, 1, 9)]
    while len(days) < (3 if third else 2):
        while days[-1].weekday() >= 5:
            days[-1] += timedelta(days=1)
        days.append(days[-1] + timedelta(days=1))
    while days[-1].weekday() >= 5:
        days[-1] += timedelta(days=1)
    plan = _Budget(b, book, vendors, budgets, b.world.colleagues()[0])

    def act() -> None:
        b.open_stage("day-1", f"{b.now:%A %d %B}")
        b.call("read_sheet", path=book, sheet="Costs")
        if not named:
            b.call("list_directory", path="/invoices")
        plan.enter(first, p1, num1, t1, "day one")
        b.end_stage(f"Entered {vendors[first]}'s invoice {num1}, {t1:,.2f} USD, in {plan.cell(first)} of the Costs "
                    "sheet.")
        ask = f" Then email {plan.mate.name} how much of {vendors[first]}'s budget is left." if tell else ""
        b.open_stage("day-2", f"{days[0]:%A %d %B}", days[0],
                     f"Good morning. Today please enter {vendors[second]}'s invoice in the budget the same way.{ask}")
        fix_raw = invoice_pdf(vendors[first], num_fix, days[0].date().isoformat(), due, fix, corrects=num1)
        b.stage_change([{"op": "put", "table": "files.files", "record": {
            "path": pfix, "content": base64.b64encode(fix_raw).decode(), "encoding": "base64"}}],
            note=f"{vendors[first]} sent a corrected invoice")
        b.call("list_directory", path="/invoices")
        plan.enter(second, p2, num2, t2, "day two")
        b.call("read_pdf", path=pfix, _recalls=True)
        b.call("write_sheet", _recalls=True, _stale={"path": book, "sheet": "Costs", "start": plan.cell(first),
                                                    "rows": [[t1]]},
               path=book, sheet="Costs", start=plan.cell(first), rows=[[tfix]])
        b.check({"kind": "file", "path": book, "sheet_cell": {"sheet": "Costs", "cell": plan.cell(first),
                                                              "value": {"equals": tfix}},
                 "description": f"the standing rule held: {plan.cell(first)} has the corrected total of {num_fix} "
                                f"({tfix:,.2f})"}, weight=3)
        said = (f"Entered {vendors[second]}'s invoice {num2}, {t2:,.2f} USD, in {plan.cell(second)}. "
                f"{vendors[first]} sent a corrected invoice {num_fix} overnight, so {plan.cell(first)} now has its "
                f"total, {tfix:,.2f} USD.")
        if tell:
            said += plan.tell_left(first, tfix, t1)
        b.allow(f"files:{book}")
        if third:
            b.end_stage(said)
            b.open_stage("day-3", f"{days[1]:%A %d %B}", days[1],
                         f"Morning! {vendors[last]}'s invoice is in as well; please enter it the same way.")
            b.call("list_directory", path="/invoices")
            plan.enter(last, p3, num3, t3, "day three")
            said = f"Entered {vendors[last]}'s invoice {num3}, {t3:,.2f} USD, in {plan.cell(last)}."
        b.answer(said)

    return act


class _Budget:
    """The budget workbook's rows and the colleague who follows them: entering an invoice, telling what is left."""

    def __init__(self, b: SpecBuilder, book: str, vendors: list[str], budgets: list[int], mate: Any) -> None:
        self.b, self.book, self.vendors, self.budgets, self.mate = b, book, vendors, budgets, mate

    def cell(self, i: int) -> str:
        return f"C{i + 2}"

    def enter(self, i: int, path: str, number: str, total: float, day: str) -> None:
        """Read the invoice and write its total into the supplier's Invoiced cell (checked on that day)."""
        self.b.call("read_pdf", path=path)
        self.b.call("write_sheet", path=self.book, sheet="Costs", start=self.cell(i), rows=[[total]])
        self.b.check({"kind": "file", "path": self.book, "sheet_cell": {
            "sheet": "Costs", "cell": self.cell(i), "value": {"equals": total}},
            "description": f"{self.vendors[i]}'s invoice {number} ({total:,.2f}) in {self.cell(i)} on {day}"},
            weight=2)

    def tell_left(self, i: int, total: float, stale: float) -> str:
        """Mail the colleague what is left of supplier i's budget after `total` (`stale`: before the correction)."""
        left, old = self.budgets[i] - total, self.budgets[i] - stale
        vendor, mate = self.vendors[i], self.mate
        body = lambda x: f"Hi {mate.name.split()[0]}, {x:,.2f} USD of the {vendor} budget is left."  # noqa: E731
        self.b.call("send_email", _free=("subject",), _stale={"to": [mate.email], "subject": f"{vendor} budget",
                                                             "body": body(old)},
                    to=[mate.email], subject=f"{vendor} budget", body=body(left))
        self.b.check({"kind": "mail_sent", "to": [mate.email], "only_recipients": True,
                      "body": {"contains_any": [f"{left:,.2f}", f"{left:.2f}"]},
                      "description": f"{mate.name} was told what is left of {vendor}'s budget after the correction "
                                     f"({left:,.2f})"}, weight=2)
        self.b.allow("mail.messages:msg-*")
        return f" {mate.name} knows {left:,.2f} USD of the {vendor} budget is left."
