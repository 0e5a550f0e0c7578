"""`judged`: a rubric of criteria that the final answer or a written document must meet, decided by a judge.

The judge comes from the evaluation context (`EvalContext.judge`): a chat model with the fixed
prompt of judge.py when one is configured, else the deterministic key-facts check. The result
says which judge decided (`"judge": "model:<name>"` or `"key_facts"`), why each criterion passed or
failed, and, when a model failed and the key facts decided instead, why.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workspace_sim.predicates.actions import CLAIMS_FIELD, ClaimsMode, claims_problems, with_claims
from workspace_sim.predicates.base import EvalContext, PredicateBase, PredicateResult, or_shorthand
from workspace_sim.predicates.conditions import Condition, field_value
from workspace_sim.predicates.judge import Bound, CriterionVerdict, Rule, Verdict, combine_parts, normalise, split_rules
from workspace_sim.predicates.mail import MailSent
from workspace_sim.predicates.records import describe_where, matching


def _alternatives(v: Any, where: str) -> list[str]:
    alts = v if isinstance(v, list) else [v]
    if not alts:
        raise ValueError(f"{where} is an empty list of alternatives")
    for j, a in enumerate(alts):
        if not isinstance(a, str) or not normalise(a):
            raise ValueError(f"{where}[{j}] must be a non-blank string, got {a!r}"[:200])
    return alts


class BoundFact(BaseModel):
    """A value bound to its subject: `entity` and `value` (each a string or alternatives) must be stated together,
    in one clause or sentence, the value nearer this entity than any other the rubric binds, or under the entity
    where it leads (a list item, a heading line); with `question`, in the answer item numbered so."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    entity: list[str] = Field(description="The subject (a ticket, an account, a person): a string or alternatives.",
                              json_schema_extra=or_shorthand({"type": "string"}))
    value: list[str] = Field(description="Its value (a priority, a total, a date): a string or alternatives.",
                             json_schema_extra=or_shorthand({"type": "string"}))
    question: int | None = Field(None, ge=1, le=999, description=(
        "The number of the question (in the request) this fact answers: an answer item keyed by it (\"Q2: ...\", "
        "\"2. ...\", \"问题2：...\") states the value for the entity without naming it."))

    @field_validator("entity", "value", mode="before")
    @classmethod
    def _alts(cls, v: Any, info: Any) -> Any:
        return _alternatives(v, info.field_name)

    def rule(self) -> Bound:
        """The fact as judges see it."""
        return Bound(tuple(self.entity), tuple(self.value), self.question)


class Criterion(BaseModel):
    """One requirement in plain English, the key facts it is about, and whether it is negative (must not)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    requirement: str = Field(min_length=1, description="What the text must do (or, if negative, must not do).")
    key_facts: list[str | list[str] | BoundFact] = Field(
        description="Facts the deterministic judge looks for: each a string, a list of alternatives, or "
                    "{entity, value}, a value bound to its subject (stated together). Positive: every fact must "
                    "be stated; negative: none may be.")
    negative: bool = Field(False, description="Met when the text does NOT do what the requirement describes.")
    excludes: list[str | BoundFact] = Field(default_factory=list, description=(
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
            if isinstance(fact, (dict, BoundFact)):
                continue  # checked by BoundFact
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
            if isinstance(x, BoundFact):
                if any(isinstance(f, BoundFact) and f.rule() == x.rule() for f in self.key_facts):
                    raise ValueError(f"excludes[{j}] is also a key fact: a fact cannot be right and wrong")
                continue
            if not normalise(x):
                raise ValueError(f"excludes[{j}] is blank")
            for i, fact in enumerate(self.key_facts):
                if isinstance(fact, BoundFact):
                    continue
                if normalise(x) in {normalise(a) for a in (fact if isinstance(fact, list) else [fact])}:
                    raise ValueError(f"excludes[{j}] {x!r} is also key_facts[{i}]: a fact cannot be right and wrong")
        return self

    def rule(self) -> Rule:
        """The criterion as judges see it."""
        facts = tuple(f.rule() if isinstance(f, BoundFact) else tuple(f) if isinstance(f, list) else (f,)
                      for f in self.key_facts)
        return Rule(self.requirement, facts, self.negative,
                    tuple(x.rule() if isinstance(x, BoundFact) else x for x in self.excludes))


class RecordField(BaseModel):
    """A field of the record(s) located like `record_exists` does: `table`, then `key` or `where`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    table: str = Field(description="Table such as 'tickets.tickets'.")
    key: str | None = Field(None, description="The record's key.")
    where: dict[str, Condition] = Field(default_factory=dict, description="Conditions locating the record(s).")
    field: str = Field(description="Dotted path of the text field to judge, e.g. 'description'.")


class Target(BaseModel):
    """What is judged: "answer" (the final answer, the default), "transcript" (every assistant message, in order,
    as one document), "messages" (each assistant message a document), or one of `file`, `mail`, `record`, or
    `compare` (two or more targets shown together as documents A, B, ... for a rubric that compares them)."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=or_shorthand(
        {"enum": ["answer", "transcript", "messages"], "description": "Shorthand for {NAME: true}."}))
    answer: bool = False
    transcript: bool = False
    messages: bool = False
    file: str | None = Field(None, description="Path of a file whose content is judged.")
    mail: MailSent | None = Field(None, description="Selector (mail_sent's fields) of sent mail whose subject "
                                                    "and body are judged.")
    record: RecordField | None = None
    compare: list["Target"] | None = Field(None, min_length=2, description="Targets judged side by side, as "
                                                                           "Document A, Document B, ...")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if data in ("answer", "transcript", "messages"):
            return {data: True}
        if not isinstance(data, (dict, Target)):
            raise ValueError('target must be "answer", "transcript", "messages" or an object with one of file, mail, '
                             f'record, compare; got {data!r}'[:200])
        if isinstance(data, dict) and isinstance(data.get("mail"), dict):
            data = {**data, "mail": {**data["mail"], "kind": "mail_sent"}}
        return data

    @model_validator(mode="after")
    def _one(self) -> "Target":
        given = [n for n in ("file", "mail", "record", "compare") if getattr(self, n) is not None] + \
            [n for n in ("answer", "transcript", "messages") if getattr(self, n)]
        if len(given) != 1:
            raise ValueError('give exactly one of "answer", "transcript", "messages", file, mail, record, compare '
                             f"(got {', '.join(given) or 'none'})")
        return self

    @property
    def several(self) -> bool:
        """Whether this target may locate several documents (mail, records, messages)."""
        return self.mail is not None or self.record is not None or self.messages

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
        if self.compare is not None:
            return "side by side: " + "; ".join(f"{chr(65 + i)}) {t.describe()}" for i, t in enumerate(self.compare))
        if self.transcript:
            return "the whole conversation (every assistant message)"
        if self.messages:
            return "assistant message"
        return "the final answer"

    def documents(self, ctx: EvalContext) -> tuple[list[tuple[str, str]], str]:
        """The (label, text) pairs to judge, or none and why."""
        if self.answer:
            return ([("answer", ctx.answer)], "") if ctx.answer is not None else ([], "no final answer")
        if self.transcript or self.messages:
            said = [e.content or "" for e in ctx.events if e.kind == "message" and e.role == "assistant"]
            if ctx.answer is not None and (not said or said[-1] != ctx.answer):
                said.append(ctx.answer)  # the final answer, when the log does not hold it as a message
            if not said:
                return [], "the assistant said nothing"
            if self.transcript:
                return [("transcript", "\n\n".join(f"[message {i}]\n{m}" for i, m in enumerate(said, 1)))], ""
            return [(f"message {i}", m) for i, m in enumerate(said, 1)], ""
        if self.compare is not None:
            out = []
            for i, t in enumerate(self.compare):
                docs, why = t.documents(ctx)
                if not docs:
                    return [], f"document {chr(65 + i)} ({t.describe()}): {why}"
                body = "\n\n".join(text for _, text in docs)
                out.append(f"Document {chr(65 + i)} ({t.describe()}):\n{body}")
            return [("comparison", "\n\n".join(out))], ""
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


Target.model_rebuild()


def _mail_words(sel: MailSent) -> str:
    parts = [f"{n} {getattr(sel, n)}" for n in ("to", "cc", "recipients") if getattr(sel, n)]
    if sel.subject is not None:
        parts.append(f"subject {sel.subject.describe()}")
    if sel.in_reply_to:
        parts.append(f"in reply to {sel.in_reply_to}")
    return "sent mail" + (" with " + ", ".join(parts) if parts else "")


class Judged(PredicateBase):
    """The final answer (or the transcript, messages, a file, sent mail, a record field, or documents compared)
    meets every criterion of a rubric, per the judge."""

    kind: Literal["judged"] = "judged"
    target: Target = Field(default_factory=lambda: Target(answer=True), description=(
        '"answer", "transcript", "messages", or {file: PATH}, {mail: SELECTOR}, {record: {table, key|where, field}}, '
        "{compare: [TARGET, TARGET, ...]}."))
    criteria: list[Criterion] = Field(min_length=1)
    documents: Literal["any", "all", "together"] = Field("any", description=(
        "With several located documents: 'together' judges them as one text (their union: a wrong candidate in "
        "any of them counts, facts may be spread over them); 'any': some one document meets the rubric, and no "
        "document states a wrong candidate (negative criteria and excludes are judged over all of them); 'all': "
        "every one meets it."))
    claims: ClaimsMode = Field("checked", description=(
        "With an answer, transcript or messages target: every action the text says was done must be in the record "
        "of calls ('checked', the default: a promise such as \"I'll send it\" counts as not done; 'proposals': "
        "promises and offers allowed; 'unchecked'). Other targets are not checked."))

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        result = self._judge(ctx)
        t = self.target
        if t.answer or t.transcript or t.messages:
            return with_claims(result, claims_problems(ctx, "answer" if t.answer else "transcript", self.claims))
        return result

    def _judge(self, ctx: EvalContext) -> PredicateResult:
        rules = [c.rule() for c in self.criteria]
        what = self.target.describe()
        listed = "; ".join(f"{i}) {'NOT: ' if r.negative else ''}{r.requirement}" for i, r in enumerate(rules, 1))
        words = {"all": "every", "any": "some", "together": "together, the"}[self.documents]
        expected = (f"{words} {what} " if self.target.several else f"{what} ") + f"meets {len(rules)} criteria: {listed}"
        docs, why = self.target.documents(ctx)
        if not docs:
            return self.result(False, expected, why, details={"judge": None})
        if self.documents == "together" and len(docs) > 1:
            docs = [(f"{len(docs)} documents together",
                     "\n\n".join(f"[{label}]\n{text}" for label, text in docs))]
        judged: list[tuple[str, str, Verdict]] = []
        for label, text in docs:  # early stop: 'any' at the first document that passes, 'all' at the first that fails
            v = ctx.ask_judge(rules, text)
            judged.append((label, text, v))
            if v.not_judged or (self.documents == "any" and v.passed) or (self.documents == "all" and not v.passed):
                break
        union_note = ""
        if self.documents == "all":
            failing = [j for j in judged if not j[2].passed]
            ok, shown = not failing, (failing[0] if failing else judged[0])
        else:
            passing = [j for j in judged if j[2].passed]
            ok = bool(passing)
            shown = passing[0] if passing else max(judged, key=lambda j: sum(c.passed for c in j[2].criteria))
            if ok and len(docs) > 1:
                shown, union_note = self._wrong_anywhere(ctx, rules, docs, shown)
                ok = shown[2].passed
        label, text, verdict = shown
        if any(v.not_judged for _, _, v in judged):
            verdict = next(v for _, _, v in judged if v.not_judged)
            ok = False
        met = sum(c.passed for c in verdict.criteria)
        prefix = f"{label}: " if len(docs) > 1 else ""
        observed = f"{prefix}{met} of {len(rules)} criteria met"
        if verdict.not_judged:
            observed = f"not judged: {verdict.note}"
        elif not verdict.passed:
            observed += " (" + "; ".join(f"{i}) {c.reason}" for i, c in enumerate(verdict.criteria, 1) if not c.passed) + ")"
        if len(docs) > 1:
            observed += f"; {sum(j[2].passed for j in judged)} of {len(judged)} documents judged pass" + \
                (f" ({len(docs) - len(judged)} not needed)" if len(judged) < len(docs) else "")
        observed += union_note + f" [judge {verdict.judge}]"
        details = _details(judged, verdict)
        return self.result(ok, expected, observed, _children(rules, verdict), details)

    def _wrong_anywhere(self, ctx: EvalContext, rules: list[Rule], docs: list[tuple[str, str]],
                        shown: tuple[str, str, Verdict]) -> tuple[tuple[str, str, Verdict], str]:
        """With 'any', the passing document's verdict after checking every document for wrong candidates: its
        negative criteria and excludes are judged over all of them (one reply per candidate does not pass)."""
        derived, plan = split_rules(rules)
        negs = [i for i, r in enumerate(derived) if r.negative]
        if not negs:
            return shown, ""
        neg_rules = [derived[i] for i in negs]
        parts = [ctx.ask_judge(neg_rules, text) for _, text in docs]
        if any(p.not_judged for p in parts):
            bad = next(p for p in parts if p.not_judged)
            return (shown[0], shown[1], bad), ""
        verdicts = []  # per document: the derived rubric, positives taken as met (the passing document met them)
        for p in parts:
            it = iter(p.criteria)
            verdicts.append(Verdict(tuple(next(it) if k in negs else CriterionVerdict(True, f"met by {shown[0]}")
                                          for k in range(len(derived))), p.judge))
        combined = combine_parts(rules, plan, verdicts, [label for label, _ in docs])
        merged = tuple(c if c.passed is False else s for c, s in zip(combined, shown[2].criteria))
        v = Verdict(merged, shown[2].judge, shown[2].note, shown[2].cached)
        return (shown[0], shown[1], v), "" if v.passed else "; a wrong candidate is stated in another document"


def _children(rules: list[Rule], verdict: Verdict) -> list[PredicateResult]:
    return [PredicateResult("criterion", r.requirement, 1.0, v.passed, ("must not: " if r.negative else "") + r.requirement,
                            v.reason) for r, v in zip(rules, verdict.criteria)]


def _details(judged: list[tuple[str, str, Verdict]], shown: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {"judge": shown.judge}
    if shown.not_judged or any(v.not_judged for _, _, v in judged):
        out["not_judged"] = True
    notes = sorted({v.note for _, _, v in judged if v.note})
    if notes:
        out["judge_note"] = "; ".join(notes)
    if any(v.cached for _, _, v in judged):
        out["judge_cached"] = all(v.cached for _, _, v in judged)
    if len(judged) > 1:
        out["documents_judged"] = [{"document": label, "passed": v.passed, "judge": v.judge} for label, _, v in judged]
    return out


__all__ = ["BoundFact", "Criterion", "Judged", "RecordField", "Target"]
