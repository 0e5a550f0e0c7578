"""`judged`: a rubric of criteria that the final answer or a written document must meet, decided by a judge.

The judge comes from the evaluation context (`EvalContext.judge`): a chat model with the fixed
prompt of judge.py when one is configured, else the deterministic key-facts check. The result
says which judge decided (`"judge": "model:<name>"` or `"key_facts"`), why each criterion passed or
failed, and, when a model failed and the key facts decided instead, why.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .base import EvalContext, PredicateBase, PredicateResult
from .conditions import Condition, field_value
from .judge import Rule, Verdict, normalise
from .mail import MailSent
from .records import describe_where, matching


class Criterion(BaseModel):
    """One requirement in plain English, the key facts it is about, and whether it is negative (must not)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    requirement: str = Field(min_length=1, description="What the text must do (or, if negative, must not do).")
    key_facts: list[str | list[str]] = Field(
        description="Facts the deterministic fallback looks for: each a string or a list of alternatives. "
                    "Positive: every fact must be stated; negative: none may be.")
    negative: bool = Field(False, description="Met when the text does NOT do what the requirement describes.")
    excludes: list[str] = Field(default_factory=list, description=(
        "Wrong candidates (the other names, the other totals): a positive criterion is not met when the text "
        "states any of them, so an answer listing every candidate does not pass. Not with negative."))

    @field_validator("requirement")
    @classmethod
    def _requirement(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("requirement is blank")
        return v.strip()

    @field_validator("key_facts", mode="before")
    @classmethod
    def _facts(cls, v: Any) -> Any:
        if not isinstance(v, list) or not v:
            raise ValueError("key_facts must be a non-empty list (the fallback judge needs them; a criterion "
                             "without facts would pass or fail by default)")
        for i, fact in enumerate(v):
            alts = fact if isinstance(fact, list) else [fact]
            if not alts:
                raise ValueError(f"key_facts[{i}] is an empty list of alternatives")
            for j, a in enumerate(alts):
                where = f"key_facts[{i}]" + (f"[{j}]" if isinstance(fact, list) else "")
                if not isinstance(a, str):
                    raise ValueError(f"{where} must be a string, got {type(a).__name__}")
                if not normalise(a):
                    raise ValueError(f"{where} is blank")
        return v

    @model_validator(mode="after")
    def _excludes(self) -> "Criterion":
        if self.excludes and self.negative:
            raise ValueError("excludes is for positive criteria; a negative one already fails on its key facts")
        for j, x in enumerate(self.excludes):
            if not normalise(x):
                raise ValueError(f"excludes[{j}] is blank")
            for i, fact in enumerate(self.key_facts):
                if normalise(x) in {normalise(a) for a in (fact if isinstance(fact, list) else [fact])}:
                    raise ValueError(f"excludes[{j}] {x!r} is also key_facts[{i}]: a fact cannot be right and wrong")
        return self

    def rule(self) -> Rule:
        """The criterion as judges see it."""
        facts = tuple(tuple(f) if isinstance(f, list) else (f,) for f in self.key_facts)
        return Rule(self.requirement, facts, self.negative, tuple(self.excludes))


class RecordField(BaseModel):
    """A field of the record(s) located like `record_exists` does: `table`, then `key` or `where`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    table: str = Field(description="Table such as 'tickets.tickets'.")
    key: str | None = Field(None, description="The record's key.")
    where: dict[str, Condition] = Field(default_factory=dict, description="Conditions locating the record(s).")
    field: str = Field(description="Dotted path of the text field to judge, e.g. 'description'.")


class Target(BaseModel):
    """What is judged: "answer" (the final answer, the default), or one of `file`, `mail`, `record`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    answer: bool = False
    file: str | None = Field(None, description="Path of a file whose content is judged.")
    mail: MailSent | None = Field(None, description="Selector (mail_sent's fields) of sent mail whose subject "
                                                    "and body are judged.")
    record: RecordField | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if data == "answer":
            return {"answer": True}
        if not isinstance(data, (dict, Target)):
            raise ValueError(f'target must be "answer" or an object with one of file, mail, record; got {data!r}'[:200])
        if isinstance(data, dict) and isinstance(data.get("mail"), dict):
            data = {**data, "mail": {**data["mail"], "kind": "mail_sent"}}
        return data

    @model_validator(mode="after")
    def _one(self) -> "Target":
        given = [n for n in ("file", "mail", "record") if getattr(self, n) is not None] + (["answer"] if self.answer else [])
        if len(given) != 1:
            raise ValueError(f"give exactly one of \"answer\", file, mail, record (got {', '.join(given) or 'none'})")
        return self

    def describe(self) -> str:
        """The judged text in words."""
        if self.file is not None:
            return f"file {self.file}"
        if self.mail is not None:
            return _mail_words(self.mail)
        if self.record is not None:
            r = self.record
            where = f"{r.table} record {r.key}" if r.key is not None else describe_where(r.table, r.where)
            return f"{r.field} of {where}"
        return "the final answer"

    def documents(self, ctx: EvalContext) -> tuple[list[tuple[str, str]], str]:
        """The (label, text) pairs to judge, or none and why."""
        if self.answer:
            return ([("answer", ctx.answer)], "") if ctx.answer is not None else ([], "no final answer")
        if self.file is not None:
            f = ctx.final.table("files.files").get(self.file)
            if f is None:
                return [], f"no file at {self.file}"
            if f.encoding != "utf-8":
                return [], f"{self.file} is not a text file"
            return [(self.file, f.content)], ""
        if self.mail is not None:
            sent = [m for m in ctx.added("mail.messages") if m.owner == ctx.user and m.folder == "sent"]
            hits = [m for m in sent if not self.mail._match(m)]
            if not hits:
                return [], "no mail was sent" if not sent else f"none of {len(sent)} sent mail matches the selector"
            return [(m.id, f"Subject: {m.subject}\n\n{m.body}") for m in hits], ""
        r = self.record
        assert r is not None
        table = ctx.final.table(r.table)
        pool = ([table[r.key]] if r.key in table else []) if r.key is not None else list(table.values())
        recs = matching(pool, r.where)
        if not recs:
            return [], "no such record"
        out = []
        for x in recs:
            v = field_value(x, r.field)
            out.append((x.record_key(), v if isinstance(v, str) else "" if v is None else str(v)))
        return out, ""


def _mail_words(sel: MailSent) -> str:
    parts = [f"{n} {getattr(sel, n)}" for n in ("to", "cc", "recipients") if getattr(sel, n)]
    if sel.subject is not None:
        parts.append(f"subject {sel.subject.describe()}")
    if sel.in_reply_to:
        parts.append(f"in reply to {sel.in_reply_to}")
    return "sent mail" + (" with " + ", ".join(parts) if parts else "")


class Judged(PredicateBase):
    """The final answer (or a file, sent mail or record field) meets every criterion of a rubric, per the judge."""

    kind: Literal["judged"] = "judged"
    target: Target = Field(default_factory=lambda: Target(answer=True),
                           description='"answer", or {file: PATH}, {mail: SELECTOR} or {record: {table, key|where, field}}.')
    criteria: list[Criterion] = Field(min_length=1)
    documents: Literal["any", "all"] = Field(
        "any", description="With several located documents: some ('any') or every ('all') one must meet the rubric.")

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        rules = [c.rule() for c in self.criteria]
        what = self.target.describe()
        listed = "; ".join(f"{i}) {'NOT: ' if r.negative else ''}{r.requirement}" for i, r in enumerate(rules, 1))
        expected = (f"{'every' if self.documents == 'all' else 'some'} {what} " if self.target.mail or self.target.record
                    else f"{what} ") + f"meets {len(rules)} criteria: {listed}"
        docs, why = self.target.documents(ctx)
        if not docs:
            return self.result(False, expected, why, details={"judge": None})
        judged = [(label, text, ctx.judge.judge(rules, text)) for label, text in docs]
        failing = [j for j in judged if not j[2].passed]
        if self.documents == "all":
            ok, shown = not failing, (failing[0] if failing else judged[0])
        else:
            passing = [j for j in judged if j[2].passed]
            ok = bool(passing)
            shown = passing[0] if passing else max(judged, key=lambda j: sum(c.passed for c in j[2].criteria))
        label, text, verdict = shown
        met = sum(c.passed for c in verdict.criteria)
        observed = f"{label if len(docs) > 1 else ''}{': ' if len(docs) > 1 else ''}{met} of {len(rules)} criteria met"
        if not verdict.passed:
            observed += " (" + "; ".join(f"{i}) {c.reason}" for i, c in enumerate(verdict.criteria, 1) if not c.passed) + ")"
        if len(docs) > 1:
            observed += f"; {len(judged) - len(failing)} of {len(docs)} documents pass"
        observed += f" [judge {verdict.judge}]"
        return self.result(ok, expected, observed, _children(rules, verdict), _details(judged, verdict))


def _children(rules: list[Rule], verdict: Verdict) -> list[PredicateResult]:
    return [PredicateResult("criterion", r.requirement, 1.0, v.passed, ("must not: " if r.negative else "") + r.requirement,
                            v.reason) for r, v in zip(rules, verdict.criteria)]


def _details(judged: list[tuple[str, str, Verdict]], shown: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {"judge": shown.judge}
    notes = sorted({v.note for _, _, v in judged if v.note})
    if notes:
        out["judge_note"] = "; ".join(notes)
    if any(v.cached for _, _, v in judged):
        out["judge_cached"] = all(v.cached for _, _, v in judged)
    if len(judged) > 1:
        out["documents_judged"] = [{"document": label, "passed": v.passed, "judge": v.judge} for label, _, v in judged]
    return out


__all__ = ["Criterion", "Judged", "RecordField", "Target"]
