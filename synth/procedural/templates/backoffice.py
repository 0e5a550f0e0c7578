"""Back-office templates: an expense claim checked against the ledger and the travel calendar, a reorder decision from
stock, lead times and a supplier's mail, and a failing scheduled job diagnosed from its history and fixed."""

from __future__ import annotations

import random
from datetime import timedelta

from workspace_sim.text.money import format_minor

from ..builder import Act, SpecBuilder
from . import template
from .common import add_event, add_mail, background_mail, local

CITIES = ("Berlin", "Lisbon", "Chicago", "Osaka", "Toronto", "Madrid", "Dublin", "Austin")
TRIP_SPEND = (("Travel", ("Lufthansa", "Uber", "Rail Europe", "Airport Express")),
              ("Lodging", ("Hotel Adlon", "Marriott", "Hilton Garden Inn")), ("Meals", ("Bistro 21", "Cafe Central")))


@template("back_office", "expense_claim_from_trip")
def expense_claim_from_trip(b: SpecBuilder, size: int = 1) -> Act:
    """Claim the user's own spending during last week's trip (dates from the calendar) for the manager's approval,
    with the exact total; spending before the trip, a colleague's spending on the trip and an already-claimed
    transaction stay out. The trip's dates are on the calendar or in the travel agency's booking confirmation; the
    approver is named, or is 'my manager' (found in the user's directory entry)."""
    dates, named = b.rng.choice(("calendar", "booking")), b.rng.random() < 0.5
    b.use("finance", "contacts", "calendar" if dates == "calendar" else "mail")
    me, boss = b.world.user, b.world.manager
    city = b.rng.choice(CITIES)
    nights = 1 + min(size, 3)
    start = local(b, -8, 7)
    if dates == "calendar":
        add_event(b, f"Trip to {city}", start, 60 * 24 * nights + 600, me.email, [me.email])
        add_event(b, f"{city} client workshop", start + timedelta(days=1, hours=2), 120, me.email, [me.email])
    else:
        agency = f"bookings@{b.rng.choice(('travelwise', 'tripdesk', 'corporatetravel'))}.example"
        back = start + timedelta(days=nights)
        earlier = b.rng.choice([c for c in CITIES if c != city])
        add_mail(b, agency, f"Booking confirmed: {earlier}", f"Your trip to {earlier} is booked: outbound "
                 f"{(start - timedelta(days=40)).date().isoformat()}, return "
                 f"{(start - timedelta(days=38)).date().isoformat()}.", 45)
        add_mail(b, agency, f"Booking confirmed: {city}", f"Your trip to {city} is booked: outbound "
                 f"{start.date().isoformat()}, return {back.date().isoformat()}. Have a good trip!", 14)
    currency = b.rng.choice(("EUR", "USD", "GBP"))
    txs = b.table("finance", "transactions")
    claim_ids, total = [], 0
    for i in range(2 + nights):
        category, merchants = TRIP_SPEND[i % len(TRIP_SPEND)]
        minor = b.rng.randint(1500, 60000)
        tid = b.next_id("txn")
        day = (start + timedelta(days=min(i, nights))).date()
        txs.append({"id": tid, "date": day.isoformat(), "amount_minor": minor, "currency": currency,
                    "merchant": b.rng.choice(merchants), "category": category, "spent_by": me.email,
                    "description": f"{city} trip"})
        claim_ids.append(tid)
        total += minor
    other = b.rng.choice([p for p in b.world.colleagues() if p is not boss])
    txs.append({"id": b.next_id("txn"), "date": (start.date() + timedelta(days=1)).isoformat(), "amount_minor":
                b.rng.randint(1500, 9000), "currency": currency, "merchant": "Cafe Central", "category": "Meals",
                "spent_by": other.email, "description": f"{city} trip"})
    txs.append({"id": b.next_id("txn"), "date": (start.date() - timedelta(days=3)).isoformat(), "amount_minor":
                b.rng.randint(1500, 9000), "currency": currency, "merchant": b.rng.choice(("Uber", "Bistro 21")),
                "category": "Travel", "spent_by": me.email})
    claimed = b.next_id("txn")
    txs.append({"id": claimed, "date": start.date().isoformat(), "amount_minor": 2500, "currency": currency,
                "merchant": "Airport Express", "category": "Travel", "spent_by": me.email, "status": "submitted",
                "claim_id": "claim-old", "approver": boss.email})
    b.table("finance", "reports").append({"id": "claim-old", "kind": "claim", "title": "Airport transfer",
                                          "transaction_ids": [claimed], "total_minor": 2500, "currency": currency,
                                          "status": "pending_approval", "approver": boss.email})
    who = boss.name if named else "my manager"
    cal = "my calendar" if dates == "calendar" else "the travel agency's booking confirmation"
    b.ask(random.Random(f"wording:{b.seed}:claim").choice((  # phrasings drawn apart from the task's own draws
        f"Please submit an expense claim for what I spent on my {city} trip last week (the dates are in {cal}) "
        f"to {who} for approval, with the correct total. Only my own spending during the trip, and nothing "
        "I've already claimed.",
        f"Can you claim my {city} trip expenses from last week? Send the claim to {who} for approval with the "
        f"right total: only what I spent during the trip ({cal} has the dates), nothing already claimed.",
        f"I still haven't claimed last week's {city} trip. Put in a claim to {who} covering my own spending "
        f"on the trip days (see {cal}) - skip anything I've claimed before - with the correct total.",
        f"Expenses from the {city} trip last week need claiming: just my spending between the trip dates in "
        f"{cal}, minus anything already claimed, sent to {who} for approval.")),
          f"Claim the {city} trip", "back_office", "expense_claim_from_trip")

    def act() -> None:
        end = start + timedelta(days=nights + 1)
        if dates == "calendar":
            b.call("list_events", start=(start - timedelta(days=2)).isoformat(), end=end.isoformat(), query=city)
        else:
            b.call("search_emails", query=f"booking {city}")
        if not named:
            b.call("get_contact", email=me.email)
        b.call("list_transactions", start_date=start.date().isoformat(),
               end_date=(start + timedelta(days=nights)).date().isoformat(), spent_by="me", unclaimed=True)
        text = format_minor(total, currency)
        b.call("submit_expense_claim", title=f"{city} trip", transaction_ids=claim_ids, total=text,
               approver=boss.name, currency=currency, _free=("title",))
        b.check({"kind": "record_exists", "table": "finance.reports", "new_only": True, "where": {
            "kind": "claim", "approver": boss.email, "currency": currency, "total_minor": total,
            "transaction_ids": {"includes": claim_ids, "count": {"equals": len(claim_ids)}}},
            "description": f"one claim of the {len(claim_ids)} trip transactions, {text} {currency}, to {boss.name}"})
        b.allow("finance.reports:*", *(f"finance.transactions:{t}" for t in claim_ids))
        b.answer(f"Submitted a claim for the {city} trip: {len(claim_ids)} transactions, {text} {currency}, "
                 f"waiting for {boss.name}'s approval. {other.name}'s spending, the earlier ride and the airport "
                 "transfer you already claimed are not in it.")

    return act


PARTS = ("Hex bolt M8", "Steel bracket", "Cable tie pack", "Hinge set", "Wall anchor", "Gasket ring", "Drawer slide",
         "Caster wheel", "Shelf pin", "Cord clip")


@template("back_office", "reorder_from_supplier_mail")
def reorder_from_supplier_mail(b: SpecBuilder, size: int = 1) -> Act:
    """Order the reorder quantity of each product at or below its threshold that has no open order, doubling it where
    the lead time is over two weeks, and one supplier's mail announces a longer lead time that the records lack."""
    b.use("inventory", "mail", "contacts")
    background_mail(b, 2)
    suppliers = b.rng.sample(("Acme Parts", "Globex Supply", "Initech Components", "Umbrella Hardware"), 2)
    names = b.rng.sample(PARTS, 4 + min(size, 3) + 2)
    rows = b.table("inventory", "products")
    low: list[dict] = []
    for i, name in enumerate(names):
        sku = f"{name.split()[0][:3].upper()}-{100 + i}"
        threshold = b.rng.randint(10, 40)
        row = {"sku": sku, "name": name, "category": "Hardware", "reorder_threshold": threshold,
               "reorder_quantity": b.rng.choice((50, 100, 200)), "unit_cost_minor": b.rng.randint(20, 900),
               "unit_price_minor": b.rng.randint(1000, 3000), "supplier": suppliers[i % 2],
               "lead_time_days": b.rng.choice((5, 7, 10, 21)), "location": b.rng.choice(("Aisle 3", "Aisle 7"))}
        row["stock"] = b.rng.randint(0, threshold) if i < 2 + min(size, 3) else threshold + b.rng.randint(5, 40)
        rows.append(row)
        if row["stock"] <= threshold:
            low.append(row)
    covered = low.pop()  # an open order already covers it
    b.table("inventory", "purchase_orders").append({"id": "po-open-1", "sku": covered["sku"], "quantity":
                                                    covered["reorder_quantity"], "supplier": covered["supplier"],
                                                    "created": b.ago(days=2).isoformat()})
    rows.append({"sku": "OLD-999", "name": "Legacy latch", "stock": 0, "reorder_threshold": 5, "reorder_quantity": 20,
                 "supplier": suppliers[0], "discontinued": True})
    slow = low[0]
    new_lead = b.rng.choice((18, 25, 30))
    rep = b.maker.person(f"{b.maker.word()}.example", "external")
    add_mail(b, rep.email, f"Lead times for {slow['name']}", f"Hello,\n\nplease note that from this week our lead time "
             f"for {slow['name']} ({slow['sku']}) is {new_lead} days, because of a materials shortage. Other items are "
             f"unchanged.\n\nBest regards,\n{rep.name}\n{slow['supplier']}", 0.5, read=False)
    b.ask("Please restock: for every product at or below its reorder threshold, order its reorder quantity from its "
          "supplier, but double the quantity when the supplier's lead time is over 14 days (check my mail: suppliers "
          "sometimes announce new lead times before our records have them). Skip anything that already has an open "
          "order, and discontinued items.", "Restock low products", "back_office", "reorder_from_supplier_mail")

    def act() -> None:
        b.call("search_emails", query="lead time")
        b.call("list_products", below_reorder=True)
        b.call("list_purchase_orders", status="open")
        orders = []
        for row in low:
            lead = new_lead if row is slow else row["lead_time_days"]
            qty = row["reorder_quantity"] * (2 if lead > 14 else 1)
            b.call("create_purchase_order", sku=row["sku"], quantity=qty)
            orders.append(f"{qty} x {row['sku']}")
            b.check({"kind": "record_exists", "table": "inventory.purchase_orders", "new_only": True, "where": {
                "sku": row["sku"], "quantity": qty, "supplier": row["supplier"]},
                "description": f"{qty} of {row['sku']} ordered from {row['supplier']} (lead time {lead} days)"})
        b.check({"kind": "record_exists", "table": "inventory.purchase_orders", "new_only": True, "where": {},
                 "count": {"equals": len(low)}, "description": f"exactly {len(low)} new purchase orders"})
        b.allow("inventory.purchase_orders:*")
        b.answer(f"Ordered {', '.join(orders)}. {covered['sku']} already has an open order, and {slow['sku']} is "
                 f"doubled because {slow['supplier']} now needs {new_lead} days.")

    return act


@template("back_office", "fix_failing_job")
def fix_failing_job(b: SpecBuilder, size: int = 1) -> Act:
    """A scheduled job keeps failing; its run history shows why (runs outgrowing the timeout, or starting before the
    upstream job has finished), and the fix is the matching change to that job alone, kept enabled."""
    b.use("scheduler", "contacts")
    me = b.world.user.email
    jobs, runs = b.table("scheduler", "jobs"), b.table("scheduler", "runs")
    kind = b.rng.choice(("timeout", "upstream"))
    topic = b.rng.choice(("sales", "billing", "inventory", "payroll", "marketing"))
    up_id, job_id = "job-extract", "job-report"
    jobs.append({"id": up_id, "name": f"{topic.capitalize()} extract", "schedule": "0 1 * * *",
                 "action": f"python extract.py --dataset {topic}", "owner": me, "tags": ["nightly", topic],
                 "timeout_minutes": 180})
    timeout = b.rng.choice((30, 45, 60))
    jobs.append({"id": job_id, "name": f"{topic.capitalize()} report", "schedule": "30 1 * * *",
                 "action": f"python report.py --dataset {topic}", "owner": me, "tags": ["nightly", topic],
                 "timeout_minutes": timeout})
    jobs.append({"id": "job-backup", "name": "Database backup", "schedule": "0 3 * * 0", "action": "pg_dump all",
                 "tags": ["ops"], "timeout_minutes": 60, "enabled": False})
    runs.append({"id": "run-b1", "job_id": "job-backup", "started": b.ago(days=20).isoformat(), "status": "failed",
                 "error": "disk full on /backups", "finished": b.ago(days=20).isoformat()})
    days = 3 + min(size, 3)
    longest = 0
    for d in range(days, 0, -1):
        base = local(b, -d, 1)
        up_took = b.rng.randint(40, 80)
        runs.append({"id": f"run-u{d}", "job_id": up_id, "started": base.isoformat(),
                     "finished": (base + timedelta(minutes=up_took)).isoformat(), "status": "success"})
        start = base + timedelta(minutes=30)
        if kind == "timeout":
            took = timeout - 8 + 4 * (days - d) if d > 2 else timeout
            longest = max(longest, took)
            failed = took >= timeout
            runs.append({"id": f"run-r{d}", "job_id": job_id, "started": start.isoformat(),
                         "finished": (start + timedelta(minutes=took)).isoformat(),
                         "status": "timeout" if failed else "success",
                         "error": f"killed after {timeout} minutes (timeout_minutes={timeout})" if failed else "",
                         "output": f"processed {b.rng.randint(10, 90)}k rows in {took} minutes"})
        else:
            failed = d <= 2 or up_took > 30
            runs.append({"id": f"run-r{d}", "job_id": job_id, "started": start.isoformat(),
                         "finished": (start + timedelta(minutes=1)).isoformat(),
                         "status": "failed" if failed else "success",
                         "error": (f"input /data/{topic}/extract.parquet is not ready: job '{topic.capitalize()} "
                                   "extract' is still running") if failed else ""})
    name = f"{topic.capitalize()} report"
    b.ask(f"The '{name}' job keeps failing. Please look at its run history, fix the cause in the job itself, and "
          "keep it scheduled. Don't touch the other jobs.", f"Fix the {name} job", "back_office", "fix_failing_job")

    def act() -> None:
        b.call("list_jobs", status="failing")
        b.call("get_job_history", job=name)
        if kind == "timeout":
            new = max(timeout * 2, longest + 30)
            b.call("update_job", job=job_id, timeout_minutes=new)
            b.check({"kind": "record_exists", "table": "scheduler.jobs", "where": {
                "id": job_id, "timeout_minutes": {"gte": longest + 15}, "enabled": True},
                "description": f"the timeout is raised well above the runs' {longest}+ minutes"})
            b.answer(f"The {name} runs were taking longer and longer and hit the {timeout}-minute timeout; I raised "
                     f"it to {new} minutes.")
        else:
            b.call("get_job", job=f"{topic.capitalize()} extract")
            b.call("update_job", job=job_id, depends_on=[up_id])
            b.check({"kind": "record_exists", "table": "scheduler.jobs", "where": {
                "id": job_id, "depends_on": {"includes": [up_id]}, "enabled": True},
                "description": "the report now waits for the extract job"})
            b.answer(f"The {name} started at 01:30 while the extract (01:00, up to 80 minutes) was still running; it "
                     "now depends on the extract job, so it waits for it.")
        b.allow(f"scheduler.jobs:{job_id}")

    return act
