"""Mail triage and information-retrieval templates (mail, contacts, tickets, files)."""

from __future__ import annotations

import random
import re

from ..builder import Act, SpecBuilder
from . import template
from .common import (TOPICS, add_mail, add_project, add_ticket, background_mail, background_tickets, directory_key,
                     money)


def _asker_and_twin(b: SpecBuilder):  # type: ignore[no-untyped-def]
    """A colleague and, when the world has one, their look-alike (same first name)."""
    people = b.world.colleagues()
    for p in people:
        first = p.name.split()[0]
        twins = [q for q in people if q is not p and q.name.split()[0] == first]
        if twins:
            return p, twins[0]
    return people[0], people[1]


@template("mail_triage", "reply_with_figure")
def reply_with_figure(b: SpecBuilder, size: int = 1) -> Act:
    """Answer a colleague's question in thread with an approved figure that only an evidence file shows (a scanned
    approval memo, a screenshot of the budget app or a photo of the whiteboard); a draft's figure is in a text
    file and a look-alike asked a similar question."""
    from ..evidence_files import approval

    b.use("mail", "contacts", "files")
    background_mail(b, 3)
    asker, twin = _asker_and_twin(b)
    topic = b.rng.choice(TOPICS)
    quarter = f"Q{b.rng.randint(1, 4)}"
    figure = money(b.rng.uniform(1000, 90000))
    other = money(b.rng.uniform(1000, 90000))
    tag = b.rng.randint(10, 99)
    path, reader, _ = approval(b, topic, quarter, figure, other, f"/finance/{topic}-{quarter.lower()}-approval-{tag}")
    b.table("files", "files").append({"path": f"/finance/{topic}-draft-{tag}.md",
                                      "content": f"# {topic.capitalize()} draft\n\nProposed amount: {other}\n"})
    # the look-alike's question is the newest mail, so the asker's is not the first a listing shows
    add_mail(b, twin, f"{topic.capitalize()} numbers?", f"Hi, do you have the {topic} numbers for last year?", 0.15)
    mid = add_mail(b, asker, f"Question about {topic} {quarter}",
                   f"Hi {b.world.user.name.split()[0]},\n\nwhat is the approved {topic} amount for {quarter}? "
                   f"It should be in {path}.\n\nThanks,\n{asker.name.split()[0]}", 0.4, read=False)
    b.ask(f"{asker.name} ({asker.department}) asked me about the approved {topic} amount for {quarter}. Please reply "
          f"to that mail in its thread with the amount from the file they mention.",
          f"Reply to {asker.name}", "mail_triage", "reply_with_figure")

    def act() -> None:
        b.call("search_emails", query=f"from:{asker.email} {topic}")
        b.call("read_email", id=mid)
        b.call(reader, path=path)
        b.call("reply_email", id=mid, body=f"Hi {asker.name.split()[0]}, the approved {topic} amount for {quarter} "
               f"is {figure}.")
        b.check({"kind": "mail_sent", "to": [asker.email], "in_reply_to": mid, "body": {"contains": figure},
                 "description": f"replied to {asker.name} in thread with {figure}"})
        b.allow("mail.messages:msg-*")
        b.answer(f"I replied to {asker.name} with the approved amount, {figure}.")

    return act


@template("mail_triage", "archive_and_label")
def archive_and_label(b: SpecBuilder, size: int = 1) -> Act:
    """Archive and label every message from one automated sender; near-miss senders stay put."""
    b.use("mail", "contacts")
    background_mail(b, 3)
    ext = b.world.externals()[0]
    domain = ext.email.split("@")[1]
    sender = f"billing@{domain}"
    near = f"billing@{domain.split('.')[0]}-mail.{domain.split('.', 1)[1]}"
    label = b.rng.choice(("receipts", "invoices", "vendor-billing"))
    targets = []
    for _ in range(2 + size):
        targets.append(add_mail(b, sender, f"Your receipt #{b.rng.randint(10000, 99999)}",
                                f"Amount charged: {money(b.rng.uniform(10, 900))}", b.rng.uniform(0.5, 20),
                                read=b.rng.random() < 0.5))
    add_mail(b, near, f"Receipt #{b.rng.randint(10000, 99999)}", "Amount charged: 12.00", 3)
    add_mail(b, ext, f"Re: {b.rng.choice(TOPICS)}", b.maker.paragraph(), 2)
    b.ask(f"Please archive every message from {sender} and label each of them '{label}'.",
          f"Archive mail from {sender}", "mail_triage", "archive_and_label")

    def act() -> None:
        b.call("search_emails", query=f"from:{sender}")
        for mid in targets:
            b.call("move_email", id=mid, folder="archive")
            b.call("label_email", id=mid, add=[label])
            b.check({"kind": "record_exists", "table": "mail.messages",
                     "where": {"id": mid, "folder": "archive", "labels": {"includes": [label]}}})
            b.allow(f"mail.messages:{mid}")
        b.answer(f"Archived and labelled {len(targets)} messages from {sender}.")

    return act


@template("information_retrieval", "assignee_phone")
def assignee_phone(b: SpecBuilder, size: int = 1) -> Act:
    """Find who owns a ticket and look up their phone number in the directory (look-alikes included); the ticket is
    named by its title (searched) or its key (read at once)."""
    b.use("tickets", "contacts")
    project = b.rng.choice(("OPS", "WEB", "DATA", "INFRA"))
    add_project(b, project, f"{project.capitalize()} team")
    owner, twin = _asker_and_twin(b)
    if directory_key(owner) < directory_key(twin):  # the look-alike comes first in the directory, and its
        owner, twin = twin, owner                   # ticket first in the backlog: the owner is never listed first
    topic = b.rng.choice(TOPICS)
    add_ticket(b, project, f"{topic.capitalize()} {b.maker.word()} follow-up", "Open", "low", twin.email, [topic])
    background_tickets(b, project, 5)
    subject = f"{topic.capitalize()} {b.maker.word()} outage"
    key = add_ticket(b, project, subject, "In Progress", "high", owner.email, [topic])
    rows = b.table("contacts", "people")
    row = next(r for r in rows if r["email"] == owner.email)
    while any(r is not row and r["phone"] == row["phone"] for r in rows):  # the pool may repeat a number
        row["phone"] = b.maker.phone(owner.timezone)
    phone = row["phone"]
    others = sorted({r["phone"] for r in rows if r.get("phone") and r["phone"] != phone})
    names = sorted({p.name for p in b.world.people if p.name and p.email not in (owner.email, b.world.user.email)})
    by_key = b.rng.random() < 0.5
    if by_key:  # a link or a key pasted from a chat: no search needed
        ask = random.Random(f"wording:{b.seed}:owner").choice((
            f"Who is working on {key}, and what is their phone number?",
            f"I need to call whoever has {key} ('{subject}'). Who is it, and what's their number?",
            f"{key} - who's assigned to it? Give me their phone number too."))
    else:
        ask = random.Random(f"wording:{b.seed}:owner").choice((
        f"Who is working on the ticket '{subject}' in {project}, and what is their phone number?",
        f"I need to call whoever has the {project} ticket '{subject}'. Who is it, and what's their number?",
        f"The ticket '{subject}' in {project} - who's assigned to it? Give me their phone number too.",
        f"Can you find out who owns '{subject}' in {project} and how I can reach them by phone?"))
    b.ask(ask, f"Find the owner of {subject}", "information_retrieval", "assignee_phone")

    def act() -> None:
        if not by_key:
            b.call("search_tickets", query=subject, project=project)
        b.call("get_ticket", key=key)
        b.call("get_contact", email=owner.email)
        # the other numbers of the directory as excludes: an answer listing every phone it saw fails
        b.check({"kind": "judged", "target": "answer", "criteria": [
            {"requirement": f"Gives {owner.name}'s phone number", "key_facts": [phone], "excludes": others}],
            "description": f"the answer gives {phone}, and no other number of the directory"})
        # whole names, not key facts: the look-alike differs by a letter, which stemming would fold together, and
        # a name can be the start of the owner's double-barrelled one (Rose Griffith, Rose Griffith-Warren)
        named = {"kind": "answer", "condition": {"contains": owner.name, "ignore_case": True}}
        nobody_else = [{"kind": "not", "predicate": {"kind": "answer", "condition": {"regex": _whole_name(n)}}}
                       for n in names]
        b.check({"kind": "all", "predicates": [named, *nobody_else],
                 "description": f"the answer names {owner.name}, and nobody else (naming the whole team fails)"})
        b.answer(f"{owner.name} is working on {key}; their phone number is {phone}.")

    return act


def _whole_name(name: str) -> str:
    """An RE2 pattern finding `name` as a whole name, case folded (not the start of a double-barrelled one)."""
    return "(?i)(^|[^\\w-])" + re.sub(r"([.\\+*?()\[\]{}|^$])", r"\\\1", name) + "($|[^\\w-])"


@template("information_retrieval", "quoted_amount")
def quoted_amount(b: SpecBuilder, size: int = 1) -> Act:
    """Find the amount a supplier quoted in mail; a look-alike thread and an older quote are distractors."""
    b.use("mail", "contacts")
    background_mail(b, 4)
    ext = b.world.externals()[0]
    item = f"{b.maker.word()} {b.rng.choice(('licences', 'servers', 'laptops', 'workshops'))}"
    amount = money(b.rng.uniform(2000, 60000))
    old = money(b.rng.uniform(2000, 60000))
    add_mail(b, ext, f"Quote for {item} (superseded)", f"Our initial quote for {item} is {old}.", 12)
    add_mail(b, ext, f"Updated quote for {item}", f"Hello, our final quote for {item} is {amount}, valid 30 days.", 2)
    other = b.world.externals()[1]
    rival = money(b.rng.uniform(2000, 60000))
    # the rival's offer is the newest mail, so a listing shows its figure first, not the right quote's
    add_mail(b, other, f"Quote for {item}", f"We can offer {item} for {rival}.", 0.1)
    company = ext.email.split("@")[1]
    b.ask(f"What is the latest amount {ext.name} ({company}) quoted us for {item}?",
          f"Find the quote for {item}", "information_retrieval", "quoted_amount")

    def act() -> None:
        b.call("search_emails", query=f"from:{ext.email} quote")
        b.call("read_email", id=_find_id(b, f"Updated quote for {item}"))
        b.check({"kind": "judged", "target": "answer", "criteria": [  # an answer listing every quote fails
            {"requirement": f"Gives {ext.name}'s latest quote for {item}", "key_facts": [amount],
             "excludes": [old, rival]}], "description": f"the answer gives {amount}, not the superseded or the "
                                                        "other supplier's quote"})
        b.answer(f"{ext.name}'s latest quote for {item} is {amount}.")

    return act


def _find_id(b: SpecBuilder, subject: str) -> str:
    return next(r["id"] for r in b.data["mail"]["messages"] if r["subject"] == subject)
