"""Documents that read like real documents, written procedurally from the facts a task needs.

`document(kind, facts, loc, rng) -> (title, markdown)` writes one document of a kind: itemised ones
(invoice, purchase order, quotation, expense report, fee note, usage bill, order receipt, patient
statement, repair quotation, itinerary, commission note, trip costing: `financial`), agreements and
letters (contract with numbered clauses, lease, offer letter, payslip, appointment letter: `letters`),
and reports (lab report, incident postmortem, meeting minutes, press release / article draft, syllabus,
property listing, media plan, delivery note: `reports`). Facts give at least `issuer`, `recipient`,
`ref` and `date` (text; `issued`, ISO, optional); itemised kinds also `lines` [(item, qty, unit)] and
`tax_rate`. Every derived figure is computed from the rows it sums, so the figures add up; a writer
records the ones it derived in `facts["_figures"]`. English and Chinese documents follow their own
office forms. `COMPANIONS` names, per profession pack, the other documents its work sits among.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from ..worlds.locales import Locale
from . import financial, letters, reports
from .base import Ctx, total_of

WRITERS: dict[str, Callable[[Ctx], tuple[str, str]]] = {**financial.WRITERS, **letters.WRITERS, **reports.WRITERS}
KINDS = tuple(sorted(WRITERS))
ITEMISED = tuple(sorted(financial.WRITERS))

COMPANIONS: dict[str, tuple[str, ...]] = {
    "accounting": ("minutes", "contract"), "hr": ("offer_letter", "payslip"), "legal": ("contract", "minutes"),
    "sales": ("contract", "minutes"), "marketing": ("media_plan", "press_release"), "support": ("minutes",),
    "engineering": ("postmortem", "minutes"), "research": ("lab_report", "minutes"), "clinic": ("appointment_letter",),
    "real_estate": ("listing", "lease"), "procurement": ("delivery_note", "contract"),
    "executive": ("minutes", "press_release"), "newsroom": ("article", "minutes"), "school": ("syllabus", "minutes"),
}
"""Per profession pack, the documents (beside its main one) that its shared folders hold."""


def document(kind: str, facts: dict[str, Any], loc: Locale, rng: random.Random | None = None) -> tuple[str, str]:
    """The document of `kind` stating `facts` (title, markdown text); an unknown kind is written as an invoice.

    `rng` is accepted for the common interface; a document's own details come from an rng seeded by its
    kind, reference and issuer, so re-issuing it with one fact changed changes only what that fact shows."""
    writer = WRITERS.get(kind, financial.itemised)
    if writer is financial.itemised and "lines" not in facts:
        raise ValueError(f"an itemised document ({kind}) needs facts['lines']; got {sorted(facts)}")
    return writer(Ctx(kind, facts, loc))


__all__ = ["COMPANIONS", "ITEMISED", "KINDS", "WRITERS", "document", "total_of"]
