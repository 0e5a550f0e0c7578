"""Evidence documents for compositions: `document(kind, facts, locale, rng) -> (title, text)`.

The writers are those of `synth.generate.documents` (invoices, purchase orders, contracts, lab reports,
minutes... with real structure, in English and Chinese office forms); this module is the interface the
steps use, and adds the companion documents a team's folder holds beside the one a task is about (the
contract with the supplier, the delivery note for the order, the lab report the reagents were for),
which make the folder read like a real share without touching the task's facts.
"""

from __future__ import annotations

import random
from typing import Any

from .documents import COMPANIONS, document, total_of
from .worlds.locales import Locale
from .worlds.maker import Drawn

__all__ = ["companion", "document", "total_of"]

PREFIX = {"contract": "CON", "lease": "TA", "offer_letter": "OFR", "payslip": "PAY", "appointment_letter": "APT",
          "lab_report": "LR", "postmortem": "PM", "minutes": "MIN", "article": "ED", "press_release": "PR",
          "syllabus": "SYL", "listing": "LST", "media_plan": "MP", "delivery_note": "DN"}


def _slug(text: str) -> str:
    return "-".join("".join(ch for ch in w if ch.isalpha()) for w in text.lower().split() if any(
        ch.isalpha() for ch in w)) or "doc"


def companion(d: Drawn, party: str, party_en: str, facts: dict[str, Any]) -> tuple[str, str]:
    """A companion document of the pack about `party` (path, text): its path holds no digits, so a search
    for the task's document number never finds it."""
    loc: Locale = d.locale
    rng = random.Random(f"companion:{facts['ref']}:{party_en}")  # its own draws: the story's stream is untouched
    kind = rng.choice(COMPANIONS.get(d.profession.id, ("minutes",)))
    letters = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(2))
    cfacts: dict[str, Any] = {"issuer": party, "recipient": d.world.organisation.name, "date": facts["date"],
                              "issued": facts.get("issued"), "ref": f"{PREFIX.get(kind, 'DOC')}-{letters}{rng.randint(10, 99)}",
                              "lines": facts["lines"]}
    if kind == "minutes":
        cfacts["topic"] = d.profession.meeting[loc.language]
    _, text = document(kind, cfacts, loc)
    folder = d.profession.folder
    return f"{folder}/{kind.replace('_', '-')}-{_slug(party_en)}.md", text
