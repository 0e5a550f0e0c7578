"""Evidence gathering and reporting: read enough of the records (CRM accounts, knowledge-base articles), then
answer in free text that a `judged` rubric grades by its key facts, with `records_read` proving the reading."""

from __future__ import annotations

from datetime import timedelta

from ..builder import Act, SpecBuilder, TemplateError
from . import template
from .common import add_mail, background_mail, unique_names

INDUSTRIES = ("Logistics", "Retail", "Healthcare", "Energy", "Media", "Manufacturing", "Finance", "Education")
TIERS = ("Enterprise", "Mid-Market", "Strategic")


def add_account(b: SpecBuilder, name: str, owner: str, status: str, revenue: int, renewal_days: int | None) -> str:
    """A CRM account (USD revenue in whole dollars); returns its id."""
    b.use("crm", "contacts")
    aid = b.next_id("acc")
    slug = "".join(c for c in name.lower() if c.isalnum())[:20] or "account"
    b.table("crm", "accounts").append({
        "id": aid, "name": name, "domain": f"{slug}.example", "industry": b.rng.choice(INDUSTRIES),
        "tier": b.rng.choice(TIERS), "annual_revenue": revenue, "currency": "USD", "owner": owner, "status": status,
        "renewal_date": (b.now + timedelta(days=renewal_days)).date().isoformat() if renewal_days is not None else None,
        "created": b.ago(days=400).isoformat(),
    })
    return aid


def add_activity(b: SpecBuilder, account: str, days_ago: float, author: str, kind: str = "call") -> str:
    """A logged activity on an account; returns its id."""
    xid = b.next_id("act")
    subject = {"call": "Call about", "meeting": "Meeting on", "email": "Email on", "note": "Note on"}[kind]
    b.table("crm", "activities").append({
        "id": xid, "type": kind, "subject": f"{subject} {b.maker.word()} {b.rng.choice(('pricing', 'renewal', 'usage', 'support'))}",
        "body": b.maker.sentence(), "account_id": account, "author": author, "occurred": b.ago(days=days_ago).isoformat(),
    })
    return xid


@template("evidence_report", "crm_account_review")
def crm_account_review(b: SpecBuilder, size: int = 1) -> Act:
    """Review the user's renewal-due accounts (a look-alike account is someone else's): total revenue, the largest,
    the one not contacted for 60+ days (set to at risk); read most of the accounts' histories first."""
    b.use("crm", "contacts")
    me, colleague = b.world.user.email, b.world.colleagues()[0].email
    n = 4 + min(size, 3) + b.rng.randint(0, 2)  # how many of the user's accounts are due varies
    names = unique_names(b, n + 3, lambda: b.rng.choice(b.maker.pools.companies))
    revenues = b.rng.sample(range(40, 990), n + 3)
    stale_i = b.rng.randrange(n)
    targets, latest = [], []
    for i in range(n):
        aid = add_account(b, names[i], me, "renewal_due", revenues[i] * 10_000, b.rng.randint(20, 80))
        recent = b.rng.uniform(75, 140) if i == stale_i else b.rng.uniform(2, 40)
        for extra in range(b.rng.randint(0, 2)):  # older history that is not the latest contact
            add_activity(b, aid, recent + b.rng.uniform(10, 60) * (extra + 1), colleague, b.rng.choice(("call", "email")))
        latest.append(add_activity(b, aid, recent, me, b.rng.choice(("call", "meeting", "email"))))
        targets.append(aid)
    # a look-alike of one target, renewal due too but owned by a colleague, and silent for months; not of the
    # largest or the silent one, so that naming the look-alike never matches those answers' key facts
    biggest_i = max(range(n), key=lambda i: revenues[i])
    twin_of = b.rng.choice([i for i in range(n) if i not in (stale_i, biggest_i)])
    twin = add_account(b, f"{names[twin_of]} Holdings", colleague, "renewal_due", revenues[n] * 10_000, 30)
    add_activity(b, twin, b.rng.uniform(90, 160), colleague)
    for j in (n + 1, n + 2):  # the user's accounts in other states
        aid = add_account(b, names[j], me, b.rng.choice(("active", "at_risk", "prospect")), revenues[j] * 10_000,
                          b.rng.randint(100, 300))
        add_activity(b, aid, b.rng.uniform(70, 200), me)
    amounts = {a: revenues[i] * 10_000 for i, a in enumerate(targets)}
    total = sum(amounts.values())
    biggest = max(targets, key=lambda a: amounts[a])
    name_of = dict(zip(targets, names))
    stale = targets[stale_i]
    keep = [a for a in targets if a != stale]
    need = n - 2
    b.ask(f"Before the pipeline meeting, please review my accounts that are due for renewal (status renewal due, owned "
          f"by me): go through each one's recent activity, then tell me their combined annual revenue, which one is the "
          f"largest, and which one nobody has been in touch with for over 60 days. Set that one's status to at risk; "
          f"leave the other accounts' statuses as they are.", "Review renewal-due accounts", "evidence_report",
          "crm_account_review")

    def act() -> None:
        b.call("search_accounts", status="renewal_due", owner="me")
        for aid in targets:
            b.call("get_account", account_id=aid)
        b.call("update_account", account_id=stale, status="at_risk")
        b.check({"kind": "record_exists", "table": "crm.accounts", "where": {"id": stale, "status": "at_risk"},
                 "description": f"{name_of[stale]} (no contact for 60+ days) is at risk"})
        b.check({"kind": "records_read", "table": "crm.activities", "keys": latest, "at_least": need,
                 "description": f"the latest activity of at least {need} of the {n} renewal-due accounts was read"})
        b.check({"kind": "judged", "target": "answer", "criteria": [
            {"requirement": "States the combined annual revenue of the user's renewal-due accounts",
             "key_facts": [[str(total), f"{total:,}"]]},
            {"requirement": "Names the largest renewal-due account by annual revenue",
             "key_facts": [{"entity": LARGEST, "value": name_of[biggest]}],
             "excludes": [{"entity": LARGEST, "value": name_of[a]} for a in targets if a != biggest]},
            {"requirement": "Names the account nobody has contacted for over 60 days",
             "key_facts": [{"entity": SILENT, "value": name_of[stale]}],
             "excludes": [{"entity": SILENT, "value": name_of[a]} for a in targets if a != stale]},
        ], "description": "the review states the total, the largest and the silent account"})
        for aid in b.rng.sample(keep, 2):
            b.guard({"kind": "record_exists", "table": "crm.accounts", "where": {"id": aid, "status": "renewal_due"},
                     "maintain": True, "description": f"{name_of[aid]} stays renewal due"})
        b.allow(f"crm.accounts:{stale}")
        b.answer(f"Your {n} renewal-due accounts bring in {total:,} USD a year in total; the largest is "
                 f"{name_of[biggest]} ({amounts[biggest]:,} USD). Nobody has been in touch with {name_of[stale]} for "
                 f"over 60 days, so I set it to at risk.")

    return act


# how an answer names the largest account and the silent one: a bound fact pairs the name with one of these
LARGEST = ["largest", "biggest", "highest revenue", "most revenue"]
SILENT = ["60 days", "in touch", "contacted", "no contact", "not been contacted"]


# (topic, title, what is measured, unit, low, high)
POLICIES = (
    ("travel", "Travel expenses", "hotel limit per night", "EUR", 120, 260),
    ("equipment", "Home office equipment", "equipment allowance per year", "EUR", 300, 900),
    ("training", "Training and conferences", "training budget per person per year", "EUR", 800, 3000),
    ("meals", "Client meals", "meal limit per guest", "EUR", 40, 120),
    ("relocation", "Relocation support", "relocation allowance", "EUR", 2000, 9000),
    ("mobile", "Mobile phones", "phone allowance every two years", "EUR", 250, 700),
)


def add_article(b: SpecBuilder, space: str, title: str, body: str, owner: str, updated_days: float,
                tags: list[str], status: str = "published", reviewed_days: float | None = None) -> str:
    """A knowledge-base article; returns its id."""
    b.use("kb", "contacts")
    spaces = b.table("kb", "spaces")
    if not any(s["key"] == space for s in spaces):
        spaces.append({"key": space, "name": {"HR": "People and policies", "IT": "IT help", "FIN": "Finance"}.get(space, space)})
    aid = f"kb-{b.rng.randint(1000, 9999)}{b.next_id('a')[-3:]}"
    b.table("kb", "articles").append({
        "id": aid, "space": space, "title": title, "body": body, "owner": owner, "status": status, "tags": tags,
        "created": b.ago(days=updated_days + 30).isoformat(), "updated": b.ago(days=updated_days).isoformat(),
        "last_reviewed": b.ago(days=reviewed_days).date().isoformat() if reviewed_days is not None else None,
    })
    return aid


def policy_articles(b: SpecBuilder) -> dict:
    """A current policy article, its stale predecessor, an exceptions article naming the approver, and
    unrelated articles; returns what a template needs to ask about and check them."""
    topic, title, measure, unit, lo, hi = b.rng.choice(POLICIES)
    current, old = b.rng.sample(range(lo, hi), 2)
    approver = b.rng.choice(b.world.colleagues()[1:])
    owner = b.world.colleagues()[0].email
    year = b.now.year
    cur_id = add_article(b, "HR", f"{title} policy", f"# {title} policy ({year})\n\n{b.maker.paragraph()}\n\n"
                         f"The {measure} is {unit} {current}. This version replaces the {year - 2} policy.\n",
                         owner, b.rng.uniform(5, 40), [topic, "policy"], reviewed_days=b.rng.uniform(1, 20))
    old_id = add_article(b, "HR", f"{title} policy {year - 2}", f"# {title} policy ({year - 2})\n\n{b.maker.paragraph()}\n\n"
                         f"The {measure} is {unit} {old}.\n", owner, b.rng.uniform(420, 700), [topic, "policy"],
                         reviewed_days=b.rng.uniform(400, 700))
    exc_id = add_article(b, "HR", f"{title}: exceptions and approvals",
                         f"Requests above the {topic} policy limits need written approval from {approver.name} "
                         f"({approver.title}, {approver.email}) before the expense is made.\n\n{b.maker.paragraph()}\n",
                         owner, b.rng.uniform(20, 90), [topic, "approvals"])
    add_article(b, "HR", f"{title} policy {year - 4}", f"The {measure} was {unit} {b.rng.randint(lo, hi)}.\n", owner,
                b.rng.uniform(900, 1200), [topic], status="archived")
    for other in b.rng.sample([p for p in POLICIES if p[0] != topic], 3):
        add_article(b, b.rng.choice(("HR", "IT", "FIN")), f"{other[1]}: frequently asked questions",
                    b.maker.paragraph(), owner, b.rng.uniform(1, 300), [other[0]])
    if len({a["id"] for a in b.table("kb", "articles")}) != len(b.table("kb", "articles")):
        raise TemplateError("article ids clashed")
    return {"topic": topic, "title": title, "measure": measure, "unit": unit, "current": current, "old": old,
            "approver": approver, "cur_id": cur_id, "old_id": old_id, "exc_id": exc_id}


@template("evidence_report", "kb_answer_with_citations")
def kb_answer_with_citations(b: SpecBuilder, size: int = 1) -> Act:
    """Answer a colleague's policy question from the knowledge base citing article ids, in their mail's thread or,
    when they asked in person, by a new mail; a stale version of the policy sits next to the current one, the
    approver is in a second article, and when the colleague also wants to reach the approver their phone comes from
    the directory."""
    b.use("mail", "contacts", "kb")
    asked, reach = b.rng.choice(("mail", "in_person")), b.rng.random() < 0.5
    background_mail(b, 3)
    kb = policy_articles(b)
    asker = b.world.colleagues()[-1]
    twin = next((p for p in b.world.colleagues() if p is not asker and p.name.split()[0] == asker.name.split()[0]),
                b.world.colleagues()[-2])
    add_mail(b, twin, f"{kb['topic'].capitalize()} question", f"Do you know where the {kb['topic']} forms are?", 1.2)
    approver = kb["approver"]
    phone = next(r["phone"] for r in b.table("contacts", "people") if r["email"] == approver.email)
    mid = None
    if asked == "mail":
        mid = add_mail(b, asker, f"{kb['title']}: what is the limit?",
                       f"Hi {b.world.user.name.split()[0]},\n\nwhat is the {kb['measure']} under our current "
                       f"{kb['topic']} policy, and who approves exceptions?"
                       + (" What's their phone number, in case I need to call them?" if reach else "")
                       + f"\n\nThanks,\n{asker.name.split()[0]}", 0.3,
                       read=False)
        b.ask(f"{asker.name} mailed me a question about the {kb['topic']} policy. Please answer them in that thread "
              "from the knowledge base (the current policy, not an old one), citing the ids of the articles you used.",
              f"Answer {asker.name} from the knowledge base", "evidence_report", "kb_answer_with_citations")
    else:
        b.ask(f"{asker.name} ({asker.department}) asked me in the corridor what the "
              f"{kb['measure']} is under our current {kb['topic']} policy and who approves exceptions"
              + (", and how to reach that person by phone" if reach else "") + ". Please email them the answer "
              "from the knowledge base (the current policy, not an old one), citing the ids of the articles you used.",
              f"Answer {asker.name} from the knowledge base", "evidence_report", "kb_answer_with_citations")

    def act() -> None:
        unit = kb["unit"]
        if mid is not None:
            b.call("search_emails", query=f"from:{asker.email} is:unread")
            b.call("read_email", id=mid)
        b.call("search_articles", query=f"{kb['topic']} policy")
        b.call("get_article", article_id=kb["cur_id"])
        b.call("get_article", article_id=kb["exc_id"])
        if reach:
            b.call("get_contact", email=approver.email)
        body = (f"Hi {asker.name.split()[0]}, the {kb['measure']} is {unit} {kb['current']} (see {kb['cur_id']}). "
                f"Exceptions are approved by {approver.name} (see {kb['exc_id']})"
                + (f"; you can reach them on {phone}." if reach else "."))
        if mid is not None:
            b.call("reply_email", id=mid, body=body)
        else:
            b.call("send_email", _free=("subject",), to=[asker.email], subject=f"{kb['title']}: the limit", body=body)
        target = {"to": [asker.email], "in_reply_to": mid} if mid is not None else {"to": [asker.email]}
        b.check({"kind": "judged", "target": {"mail": target},
                 "documents": "together", "criteria": [  # every reply judged as one: one per candidate fails
            {"requirement": f"States the current {kb['measure']}", "key_facts": [str(kb["current"])]},
            {"requirement": "Says who approves exceptions", "key_facts": [[approver.name, approver.email]]},
            {"requirement": "Cites the current policy article by its id", "key_facts": [kb["cur_id"]],
             "excludes": [kb["old_id"]]},
            {"requirement": "Cites the exceptions article by its id", "key_facts": [kb["exc_id"]]},
            {"requirement": "Gives the outdated limit of the old policy as the answer", "negative": True,
             "key_facts": [str(kb["old"])]},
            *([{"requirement": "Gives the approver's phone number", "key_facts": [phone]}] if reach else []),
        ], "description": "the reply answers from the current article and cites both"})
        b.check({"kind": "records_read", "table": "kb.articles", "keys": [kb["cur_id"], kb["exc_id"]],
                 "description": "both articles the answer rests on were read"})
        b.allow("mail.messages:msg-*")
        b.answer(f"I {'replied to' if mid else 'emailed'} {asker.name}: {unit} {kb['current']} ({kb['cur_id']}), "
                 f"exceptions approved by {approver.name} ({kb['exc_id']})" + (f", on {phone}." if reach else "."))

    return act
