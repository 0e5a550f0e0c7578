"""Office prose for the procedural worlds' background text: sentences, short titles, paragraphs, nouns
and product names that read like a workplace's mail, tickets and notes, not lorem ipsum.

Drawn once with a fixed seed from phrase tables (who, what they did, to what, when or why), so every
process gets the same pools; worlds sample them with their own rng (`synth.procedural.world`).
"""

from __future__ import annotations

import random

SUBJECTS = ("The supplier", "Our auditor", "The finance team", "Facilities", "The client", "Legal", "The warehouse",
            "IT support", "The project board", "Procurement", "The landlord", "Payroll", "The regional office",
            "Customer success", "The courier", "The sales team", "Our account manager", "The design agency",
            "The insurer", "Head office", "The night shift", "The steering group", "Quality assurance", "The vendor")
VERBS = ("confirmed", "asked about", "pushed back on", "signed off", "is still reviewing", "flagged a problem with",
         "sent over", "wants to revisit", "approved", "has not returned", "updated", "queried", "chased us about",
         "raised concerns about", "shared comments on", "needs more time for", "has started work on", "re-sent")
OBJECTS = ("the revised delivery schedule", "the third-quarter forecast", "the renewal terms", "the onboarding checklist",
           "last month's usage report", "the draft statement of work", "the office move plan", "the travel policy changes",
           "the purchase requisition", "the security questionnaire", "the spring staffing plan", "the new expense categories",
           "the service level figures", "the training calendar", "the insurance certificate", "the stock count",
           "the meeting room bookings", "the parking allocation", "the holiday rota", "the printer lease",
           "the maintenance window", "the supplier scorecard", "the pricing sheet", "the customer survey results",
           "the fire drill schedule", "the laptop refresh", "the contract addendum", "the annual budget request")
TAILS = ("before the end of the week", "after Tuesday's call", "for the second time this month",
         "ahead of the board meeting", "so we can close the quarter", "pending the director's sign-off",
         "once the numbers are final", "in time for the audit", "at the team meeting", "this morning",
         "late yesterday", "while you were away", "without any changes", "with a few corrections", "")
FOLLOW = ("I've attached the latest version.", "The figures in the appendix are unchanged from the draft.",
          "Let me know if anything is missing.", "We'll pick it up again on Thursday.",
          "Nothing needs to be done on our side yet.", "The earlier version can be ignored.",
          "There is a short summary at the top.", "Most of the changes are in section two.",
          "They expect an answer by Friday.", "I've copied in the people who were on the last call.",
          "It's mostly formatting, but please have a look.", "The open questions are listed at the end.",
          "We agreed to keep the same format as last year.", "Two of the dates have moved.")
CLOSE = ("Thanks for your patience.", "Shout if you have questions.", "Happy to talk it through.",
         "More next week.", "No action needed for now.", "Speak soon.", "I'll keep you posted.", "")
TITLES = ("Question about {x}", "Update on {x}", "{X} needs a second look", "Follow-up on {x}", "Draft of {x}",
          "Changes to {x}", "Comments on {x}", "Reminder about {x}", "Sign-off needed on {x}", "{X} still outstanding",
          "Notes on {x}", "{X}: next steps", "Corrections to {x}", "{X} for review")
NOUNS = ("billing", "payroll", "onboarding", "warehouse", "invoicing", "analytics", "reporting", "scheduling",
         "inventory", "shipping", "returns", "procurement", "budget", "forecast", "renewal", "helpdesk", "training",
         "recruiting", "benefits", "compliance", "audit", "security", "facilities", "catering", "parking", "travel",
         "expenses", "pricing", "quotes", "contracts", "leases", "maintenance", "cleaning", "printing", "mailroom",
         "reception", "archive", "licensing", "hosting", "backups", "monitoring", "networking", "telephony",
         "intranet", "newsletter", "events", "sponsorship", "marketing", "branding", "website", "survey", "feedback",
         "quality", "testing", "planning", "staffing", "rota", "overtime", "timesheets", "pensions", "insurance",
         "claims", "refunds", "deliveries", "couriers", "suppliers", "vendors", "partners", "accounts", "ledger",
         "treasury", "tax", "grants", "donations", "alumni", "admissions", "enrolment", "lab", "clinic", "pharmacy",
         "radiology", "physio", "dental", "lettings", "tenancy", "valuation", "surveying", "logistics", "fleet",
         "depot", "packaging", "labelling", "sourcing", "tendering", "vetting", "payments", "collections", "credit",
         "statements", "onsite", "offsite", "relocation", "induction", "appraisal", "wellbeing", "safety", "firstaid",
         "fireplan", "sustainability", "recycling", "energy", "utilities", "cafeteria", "gym", "library", "studio")
BRANDS = ("Atlas", "Beacon", "Cobalt", "Dovetail", "Ember", "Fathom", "Granite", "Harbor", "Indigo", "Juniper",
          "Keystone", "Lumen", "Meridian", "Northstar", "Orchard", "Paragon", "Quarry", "Redwood", "Summit", "Tessera",
          "Umbra", "Vantage", "Willow", "Zephyr", "Alder", "Bramble", "Cinder", "Driftwood", "Evergreen", "Foxglove",
          "Glacier", "Heron", "Ironwood", "Jasper", "Kestrel", "Lantern", "Marlin", "Nimbus", "Onyx", "Pinnacle",
          "Quill", "Rook", "Sable", "Tundra", "Upland", "Verity", "Wren", "Yarrow", "Aster", "Bluebell", "Canopy",
          "Delta", "Equinox", "Falcon", "Gable", "Hollow", "Inlet", "Jetty", "Kite", "Larch", "Mosaic", "Nova")
MENTIONS = ("Customers on {p} asked for the export to include totals", "The {p} dashboard now shows the weekly figures",
            "Support tickets about {p} dropped after the last release", "Training for {p} starts with the finance team",
            "The {p} licence renews at the end of the quarter", "Our {p} rollout reached the regional offices",
            "Sales want a one-page overview of {p} for the trade fair", "The {p} onboarding guide needs new screenshots")


GREETINGS = ("Hi {u},", "Hello {u},", "{u},", "Morning {u},", "Hi {u}, quick one.", "Hi all,")
MAIL_TAILS = tuple(t for t in TAILS if t != "without any changes")  # a mail's next sentence may name changes
OUTSIDE_SUBJECTS = ("Our team", "Our legal department", "Our finance office", "The project lead here", "Our director")


def office_mail(rng: random.Random, user: str, sender: str, outside: bool = False) -> tuple[str, str]:
    """A background mail about one thing: its subject names what the body is about, the body greets `user` and is
    signed by `sender` (first names); from `outside` the organisation, the people it speaks of are the sender's."""
    x = rng.choice(OBJECTS)
    subject = rng.choice(TITLES).format(x=x, X=x[0].upper() + x[1:])
    who = rng.choice(OUTSIDE_SUBJECTS if outside else SUBJECTS)
    tail = rng.choice(MAIL_TAILS)
    lines = [rng.choice(GREETINGS).format(u=user), "",
             f"{who} {rng.choice(VERBS)} {x}" + (f" {tail}" if tail else "") + ". " + rng.choice(FOLLOW)]
    close = rng.choice(CLOSE)
    lines += ["", *([close] if close else []), sender]
    return subject, "\n".join(lines)


def _sentence(rng: random.Random) -> str:
    tail = rng.choice(TAILS)
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}" + (f" {tail}" if tail else "")


def _title(rng: random.Random) -> str:
    x = rng.choice(OBJECTS)
    return rng.choice(TITLES).format(x=x, X=x[0].upper() + x[1:])


def _paragraph(rng: random.Random) -> str:
    parts = [_sentence(rng) + ".", rng.choice(FOLLOW), rng.choice(CLOSE)]
    return " ".join(p for p in parts if p)


def _distinct(make, rng: random.Random, n: int) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    out: dict[str, None] = {}
    for _ in range(n * 20):
        out.setdefault(make(rng), None)
        if len(out) == n:
            break
    return tuple(out)


def sentences(n: int, seed: int = 20260302) -> tuple[str, ...]:
    """`n` distinct office sentences (no final period)."""
    return _distinct(_sentence, random.Random(f"sentences:{seed}"), n)


def titles(n: int, seed: int = 20260302) -> tuple[str, ...]:
    """`n` distinct short titles (a mail subject, a ticket, a heading)."""
    return _distinct(_title, random.Random(f"titles:{seed}"), n)


def paragraphs(n: int, seed: int = 20260302) -> tuple[str, ...]:
    """`n` distinct short paragraphs of two or three sentences."""
    return _distinct(_paragraph, random.Random(f"paragraphs:{seed}"), n)


def mention(rng: random.Random, product: str) -> str:
    """A sentence (no final period) that mentions `product` by name."""
    return rng.choice(MENTIONS).format(p=product)
