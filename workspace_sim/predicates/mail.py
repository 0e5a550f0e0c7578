"""Predicates on mail the user sent during the episode."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workspace_sim.predicates.base import EvalContext, PredicateBase, PredicateResult, short
from workspace_sim.predicates.conditions import Condition


class MailSent(PredicateBase):
    """The user sent mail (during the episode) meeting the conditions."""

    kind: Literal["mail_sent"] = "mail_sent"
    to: list[str] = Field(default_factory=list, description="Addresses that must all be in To.")
    cc: list[str] = Field(default_factory=list, description="Addresses that must all be in Cc.")
    recipients: list[str] = Field(default_factory=list, description="Addresses in To, Cc or Bcc.")
    only_recipients: bool = Field(False, description="No recipient beyond those named.")
    subject: Condition | None = None
    body: Condition | None = None
    attachments: list[str] = Field(default_factory=list, description="File paths that must be attached.")
    in_reply_to: str | None = Field(None, description="Id of the message this must answer.")
    count: Condition | None = Field(None, description="How many sent messages must match (default >= 1).")

    def _match(self, m: object) -> list[str]:
        misses = []
        every = {a.lower() for a in [*m.to, *m.cc, *m.bcc]}  # type: ignore[attr-defined]
        to = {a.lower() for a in m.to}  # type: ignore[attr-defined]
        cc = {a.lower() for a in m.cc}  # type: ignore[attr-defined]
        if any(a.lower() not in to for a in self.to):
            misses.append(f"to={sorted(to)}")
        if any(a.lower() not in cc for a in self.cc):
            misses.append(f"cc={sorted(cc)}")
        if any(a.lower() not in every for a in self.recipients):
            misses.append(f"recipients={sorted(every)}")
        named = {a.lower() for a in [*self.to, *self.cc, *self.recipients]}
        if self.only_recipients and every - named:
            misses.append(f"extra recipients {sorted(every - named)}")
        if self.subject is not None and not self.subject.check(m.subject):  # type: ignore[attr-defined]
            misses.append(f"subject={m.subject!r}")  # type: ignore[attr-defined]
        if self.body is not None and not self.body.check(m.body):  # type: ignore[attr-defined]
            misses.append(f"body={short(m.body, 80)}")  # type: ignore[attr-defined]
        if any(p not in m.attachments for p in self.attachments):  # type: ignore[attr-defined]
            misses.append(f"attachments={m.attachments}")  # type: ignore[attr-defined]
        if self.in_reply_to is not None and m.in_reply_to != self.in_reply_to:  # type: ignore[attr-defined]
            misses.append(f"in_reply_to={m.in_reply_to!r}")  # type: ignore[attr-defined]
        return misses

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        sent = [m for m in ctx.added("mail.messages") if m.owner == ctx.user and m.folder == "sent"]
        parts = []
        for name in ("to", "cc", "recipients", "attachments"):
            if getattr(self, name):
                parts.append(f"{name} {getattr(self, name)}")
        if self.subject:
            parts.append(f"subject {self.subject.describe()}")
        if self.body:
            parts.append(f"body {self.body.describe()}")
        if self.in_reply_to:
            parts.append(f"in reply to {self.in_reply_to}")
        expected = "sent mail" + (" with " + ", ".join(parts) if parts else "")
        scored = [(m, self._match(m)) for m in sent]
        hits = [m for m, miss in scored if not miss]
        if self.count is not None:
            expected += f", count {self.count.describe()}"
            ok = self.count.check(len(hits))
        else:
            ok = bool(hits)
        if hits:
            observed = f"{len(hits)} matching of {len(sent)} sent"
        elif not sent:
            observed = "no mail was sent"
        else:
            best = min(scored, key=lambda x: len(x[1]))
            observed = f"{len(sent)} sent, none matching; closest {best[0].id}: " + "; ".join(best[1])
        return self.result(ok, expected, observed)
