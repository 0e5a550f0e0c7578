"""Steps over evidence media and the services the first compositions left out, for kind-directed compositions
(`synth.generate.kinded`).

`MediaDocument` puts the party's document in a medium (a text PDF, a photographed statement, a workbook, a
voicemail) beside an older one of theirs and another party's; `Adjustment` adds a second piece of evidence in
another medium that changes the figure (an extra receipt photo, a voicemail about a deposit, a credit note, a row
of an adjustments workbook); `PublishedFee` adds a fee published on the party's web page. The figure the sinks
carry is `due`: the document's total plus and minus those. Sinks write it into a database row, a tracker
workbook's cell, a to-do, a note, a mail to a named colleague, or the answer. Media text is English where the
medium cannot set Chinese (PDF core fonts, the built-in image font, the English voices): a zh-CN world's supplier
writes in English, as suppliers abroad do; workbooks keep the world's language.
"""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

from ..procedural import render, speech
from ..procedural.evidence_files import declare
from ..procedural.render import Line
from .evidence_docs import total_of
from .steps import Step, Story, figures, revise_quantities

MEDIA = ("pdf", "image", "sheet", "audio")
_EXT = {"pdf": "pdf", "image": "png", "sheet": "xlsx", "audio": "wav", "video": "png"}
_READ = {"pdf": "read_pdf", "image": "read_media_file", "sheet": "read_sheet", "audio": "read_media_file"}


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() and c.isascii() else "-" for c in text.lower())
    return "-".join(p for p in out.split("-") if p) or "doc"


def _en_party(s: Story, name: str) -> str:
    """The party's name as its own documents write it (the English name in a Chinese world's media)."""
    zh, en = s.d.profession.parties[s.lang], s.d.profession.parties["en"]
    return en[zh.index(name) % len(en)] if name in zh else name


def _amount(x: float, cur: str) -> str:
    return f"{x:,.2f} {cur}"


def render_document(s: Story, medium: str, facts: dict[str, Any]) -> bytes:
    """The itemised document of `facts` in `medium` (its total is `total_of(facts)`)."""
    cur = s.d.locale.currency
    lines = facts["lines"]
    sub = round(sum(q * u for _, q, u in lines), 2)
    tax = round(total_of(facts) - sub, 2)
    head = f"{s.d.profession.doc_word['en'].upper()} {facts['ref']}"
    if medium == "sheet":
        from workspace_sim.media.sheets import write_xlsx
        rows: list[list[Any]] = [[facts["issuer"], facts["ref"], facts["date"]], ["Item", "Qty", "Unit", "Amount"]]
        rows += [[n, q, u, round(q * u, 2)] for n, q, u in lines]
        rows += [["Subtotal", None, None, sub], ["Tax", None, None, tax], ["Total", None, None, total_of(facts)]]
        return write_xlsx(None, "doc.xlsx", "Statement", "A1", rows)
    if medium == "pdf":
        blocks = [(facts["issuer_en"], 16, "B"), (head, 13, "B"), (f"Date: {facts['date_en']}", 11, "")]
        blocks += [(f"{n}: {q} x {u:,.2f} = {_amount(q * u, cur)}", 11, "") for n, q, u in lines]
        blocks += [(f"Subtotal: {_amount(sub, cur)}", 11, ""), (f"Tax: {_amount(tax, cur)}", 11, ""),
                   (f"Total: {_amount(total_of(facts), cur)}", 13, "B")]
        return render.text_pdf(blocks, head)
    if medium == "image":
        drawn = [Line(facts["issuer_en"].upper()[:34], 20, True), Line(head[:36], 16), Line(facts["date_en"], 15),
                 Line("", 6)]
        drawn += [Line(f"{q} x {n}"[:30], 15, right=f"{q * u:,.2f}") for n, q, u in lines]
        drawn += [Line("Tax", 15, right=f"{tax:,.2f}"), Line("TOTAL", 19, True, right=_amount(total_of(facts), cur))]
        img, _ = render.paper(drawn, width=s.rng.choice((420, 440, 460)))
        return render.png_bytes(render.degrade(img, s.rng.choice(("clean", "worn")), s.rng.randint(0, 10_000)))
    return speech.speak(document_script(s, facts), s.rng.choice(("en-us", "en-gb")))


def document_script(s: Story, facts: dict[str, Any]) -> str:
    """What the accounts desk says in the voicemail of `facts` (its transcript)."""
    head = f"{s.d.profession.doc_word['en'].upper()} {facts['ref']}"
    return (f"Hello, this is the accounts desk at {facts['issuer_en']}. About {head.lower()}: "
            f"the total comes to {total_of(facts):,.2f} {s.d.locale.currency}. Thank you, goodbye.")


def _file(s: Story, path: str, raw: bytes, transcript: str | None = None) -> None:
    """Store `raw` at `path`, dated yesterday; a generated clip with its script as the transcript."""
    s.b.use("files")
    s.b.table("files", "files").append({"path": path, "content": base64.b64encode(raw).decode(), "encoding": "base64",
                                         "created": s.b.ago(days=1).isoformat(), "modified": s.b.ago(days=1).isoformat(),
                                         **({"transcript": transcript} if transcript is not None else {})})


class MediaDocument(Step):
    """The party's current document in a medium, among an older one of theirs and another party's."""

    service, produces = "files", ("doc_path", "party", "ref", "total", "doc_facts", "due")

    def __init__(self, medium: str) -> None:
        self.medium = medium

    def setup(self, s: Story) -> None:
        b, d, rng = s.b, s.d, s.rng
        party = s.party[0] if self.medium == "sheet" else _en_party(s, s.party[0])
        other = _en_party(s, s.other[0])
        while True:
            ref_n = rng.randint(1000, 9899)
            numbers = (ref_n, ref_n - rng.randint(7, 60), ref_n + rng.randint(1, 9))
            if not set(numbers) & d.taken:
                d.taken.update(numbers)
                break
        lang = "en" if self.medium != "sheet" else s.lang
        docs = []
        for who, n, age in ((party, numbers[0], 0), (party, numbers[1], 1), (other, numbers[2], 0)):
            items = rng.sample(d.profession.items[lang], rng.randint(2, 4))
            lines = [(name, rng.randint(1, 6), round(rng.uniform(lo, hi), 2)) for name, lo, hi in items]
            when = (b.now.date() - timedelta(days=rng.randint(2, 9) + 31 * age))
            facts = {"issuer": who, "issuer_en": _en_party(s, who), "recipient": d.world.organisation.name,
                     "ref": f"{d.profession.queue[0]}-{n}", "date": d.locale.date(when), "date_en": when.isoformat(),
                     "lines": lines, "tax_rate": {"en-GB": 0.2, "zh-CN": 0.06}.get(d.locale.code, 0.0)}
            path = f"{d.profession.folder}/{when.year}-{when.month:02d}/{_slug(_en_party(s, who))}-{n}." \
                f"{_EXT[self.medium]}"
            _file(s, path, render_document(s, self.medium, facts),
                  document_script(s, facts) if self.medium == "audio" else None)
            docs.append((path, facts))
        path, facts = docs[0]
        declare(b, path, {"image": "photo", "audio": "voicemail"}.get(self.medium, self.medium),
                [f"{total_of(facts):.2f}"])
        for name, value in (("doc_path", path), ("party", party), ("ref", facts["ref"]), ("total", total_of(facts)),
                            ("doc_facts", facts), ("due", total_of(facts))):
            s.produce(name, value, "files")
        s.facts["medium"] = self.medium

    def act(self, s: Story) -> None:
        s.b.call("search_files", pattern=f"*{s.facts['ref'].split('-')[-1]}*", path=s.d.profession.folder)
        s.b.call(_READ[self.medium], path=s.facts["doc_path"])


def revise_lines(s: Story) -> float:
    """Correct the document's facts overnight (one line's quantity changed, to a total not seen before); returns
    the new total."""
    facts = revise_quantities(s, lambda qty, rng: qty + rng.choice((1, 2)) if qty < 3 else qty - 1)
    s.facts["doc_facts"] = facts
    return total_of(facts)


def revised_document(s: Story) -> tuple[dict[str, str], float]:
    """The document corrected overnight (`revise_lines`): the file fields to patch (its bytes as base64 in its
    medium, and a voicemail's new transcript) and its new total."""
    total = revise_lines(s)
    fields = {"content": base64.b64encode(render_document(s, s.facts["medium"], s.facts["doc_facts"])).decode()}
    if s.facts["medium"] == "audio":
        fields["transcript"] = document_script(s, s.facts["doc_facts"])
    return fields, total


class Adjustment(Step):
    """A second piece of evidence in another medium that changes the figure: a receipt photo of an extra charge
    (image, added), a voicemail about a deposit already paid (audio) or a credit note (pdf), taken off, or an
    adjustments workbook's row for the document (sheet, added), or a recorded call as a clip (video, added): the
    simulator has no video reader, so a clip is its keyframes (PNG, one shows the agreed extra charge) and its
    soundtrack (WAV), declared as video evidence. Another party's piece sits beside it."""

    service, consumes, produces = "files", ("ref", "total"), ("due",)

    def __init__(self, medium: str) -> None:
        self.medium = medium

    def setup(self, s: Story) -> None:
        rng, cur, ref = s.rng, s.d.locale.currency, s.facts["ref"]
        sign = -1 if self.medium in ("audio", "pdf") else 1
        amount = round(s.facts["total"] * rng.choice((0.1, 0.15, 0.2, 0.25, 0.3)) + rng.randint(1, 40), 2)
        decoy = round(amount * rng.choice((0.5, 1.6, 2.1)) + 3, 2)
        folder = {"image": "/receipts", "audio": "/voicemail", "pdf": "/credit-notes", "sheet": "/shared",
                  "video": f"/recordings/{_slug(ref)}-call"}[self.medium]
        self.path = f"{folder}/{_slug(ref)}-{self.medium}.{_EXT[self.medium]}"
        if self.medium == "video":
            self.path = self._clip(s, folder, ref, amount, decoy, cur)
        other_ref = f"{ref.rsplit('-', 1)[0]}-{int(ref.rsplit('-', 1)[1]) + rng.randint(11, 40)}"
        if self.medium == "sheet":
            from workspace_sim.media.sheets import write_xlsx
            rows = [["Reference", "Adjustment", "Reason"], [other_ref, decoy, "late delivery"],
                    [ref, amount, "carriage"], [f"{ref}-OLD", round(decoy / 2, 2), "void"]]
            _file(s, self.path, write_xlsx(None, "a.xlsx", "Adjustments", "A1", rows))
        elif self.medium != "video":
            for r, x, path in ((ref, amount, self.path), (other_ref, decoy, f"{folder}/{_slug(other_ref)}-{self.medium}"
                                                                               f".{_EXT[self.medium]}")):
                _file(s, path, self._render(s, r, x, cur), self._script(r, x, cur) if self.medium == "audio" else None)
        declare(s.b, self.path, {"image": "photo", "audio": "voicemail"}.get(self.medium, self.medium),
                [f"{amount:.2f}"])
        s.facts.setdefault("adjustments", []).append(sign * amount)
        s.facts["due"] = round(s.facts["due"] + sign * amount, 2)
        s.where["due"] = "files"
        s.facts.setdefault("evidence_notes", []).append((self.medium, self.path, sign))

    def _clip(self, s: Story, folder: str, ref: str, amount: float, decoy: float, cur: str) -> str:
        """The clip's keyframes and soundtrack; returns the frame that shows the agreed charge."""
        slides = [("CALL RECORDING", f"Re: {ref}"), ("PROPOSED", f"Extra charge {decoy:,.2f} {cur}"),
                  ("AGREED", f"Extra charge {amount:,.2f} {cur}")]
        self.frames = [f"{folder}/frame-{i + 1:02d}.png" for i in range(len(slides))]
        for path, (head, line) in zip(self.frames, slides):
            img, _ = render.paper([Line(head, 22, True), Line("", 8), Line(line, 18)], width=480)
            _file(s, path, render.png_bytes(img))
        self.track = f"{folder}/soundtrack.wav"
        said = f"This is the call about {ref}. We first proposed {decoy:,.2f}, and in the end we agreed on the " \
               "figure on the last slide."
        _file(s, self.track, speech.speak(said, "en-us"), said)
        return self.frames[-1]

    def _render(self, s: Story, ref: str, x: float, cur: str) -> bytes:
        if self.medium == "image":
            img, _ = render.paper([Line("RECEIPT", 20, True), Line(f"Re: {ref}", 16), Line("", 6),
                                   Line("Extra charge", 16, right=f"{x:,.2f}"), Line("TOTAL", 19, True,
                                                                                    right=f"{x:,.2f} {cur}")])
            return render.png_bytes(img)
        if self.medium == "pdf":
            return render.text_pdf([("CREDIT NOTE", 15, "B"), (f"Against {ref}", 12, ""),
                                    (f"Credit: {x:,.2f} {cur}", 13, "B")], f"Credit note {ref}")
        return speech.speak(self._script(ref, x, cur), s.rng.choice(("en-us", "en-gb")))

    @staticmethod
    def _script(ref: str, x: float, cur: str) -> str:
        """What the party says in the deposit voicemail (its transcript)."""
        return f"Hi, it's about {ref}. We have already received a deposit of {x:,.2f} {cur} on it, so please take " \
               "that off. Thanks."

    def act(self, s: Story) -> None:
        if self.medium == "video":
            for path in [self.track, *self.frames]:
                s.b.call("read_media_file", path=path)
            return
        s.b.call(_READ[self.medium], path=self.path)


class PublishedFee(Step):
    """The party publishes a handling fee on its web page (another party's page and an older notice nearby):
    the fee is added to the figure."""

    service, consumes, produces = "web", ("party", "due"), ("due",)

    def setup(self, s: Story) -> None:
        b, rng = s.b, s.rng
        b.use("web")
        fee = round(rng.uniform(12, 90), 2)
        party, other = _en_party(s, s.facts["party"]), _en_party(s, s.other[0])
        self.query = f"{party} handling fee"
        self.url = f"https://www.{_slug(party)}.example/fees"
        pages = b.table("web", "pages")
        when = b.ago(days=rng.randint(3, 20)).isoformat()
        for url, who, x, kind in ((self.url, party, fee, "price_list"),
                                  (f"https://www.{_slug(other)}.example/fees", other, round(fee + 17.5, 2), "price_list"),
                                  (f"https://news.example/{_slug(party)}-fees-2019", party, round(fee / 2, 2), "news")):
            pages.append({"url": url, "title": f"{who}: handling fees" if kind != "news" else f"{who} fees (2019)",
                          "kind": kind, "authority": "official" if kind != "news" else "community",
                          "published": when, "updated": when,
                          "content": f"{who} charges a handling fee of {x:,.2f} {s.d.locale.currency} per order."})
        s.facts["fee"] = fee
        s.facts["due"] = round(s.facts["due"] + fee, 2)
        s.where["due"] = "web"

    def act(self, s: Story) -> None:
        s.b.call("web_search", query=self.query)
        s.b.call("fetch_page", url=self.url)


class NamedPerson(Step):
    """The colleague to tell is named in the request, with their address (no directory look-up)."""

    service, produces = "user", ("recipient",)

    def setup(self, s: Story) -> None:
        p = s.rng.choice([s.d.world.manager] + list(s.d.peers))
        s.produce("recipient", p.email, "user")
        s.facts["recipient_person"] = p


def _code(s: Story) -> str:
    return " ({{fact:code}})" if "code" in s.facts else ""


def _code_check(s: Story, predicate: dict[str, Any]) -> None:
    if "code" in s.facts:
        s.b.check({**predicate, "description": f"it carries the code {s.facts['code']}"})


class MailTo(Step):
    """Mail the figure to the named colleague, and nobody else."""

    service, consumes, changes = "mail", ("recipient", "due"), True

    def setup(self, s: Story) -> None:
        s.b.use("mail")
        s.goal("x_mail", person=s.facts["recipient_person"])

    def act(self, s: Story, stale: float | None = None) -> None:
        x, to = s.use("due", "mail"), s.use("recipient", "mail")
        subject = f"{s.facts['ref']}"
        body = (f"{s.facts['ref']} ({s.facts['party']}): {x:,.2f} {s.d.locale.currency}" + _code(s))
        extra = {"_stale": {"to": [to], "subject": subject, "body": body.replace(f"{x:,.2f}", f"{stale:,.2f}")},
                 "_recalls": True} if stale is not None else {}
        s.b.call("send_email", _free=("subject",), to=[to], subject=subject, body=body, **extra)
        s.b.check({"kind": "mail_sent", "to": [to], "only_recipients": True, "body": {"contains_any": figures(x)},
                   "description": f"{to} was told {x:.2f}"}, weight=2 if stale is not None else None)
        if stale is None:
            _code_check(s, {"kind": "mail_sent", "to": [to], "body": {"contains": s.facts.get("code", "")}})
        s.b.allow("mail.messages:msg-*")


class LogRow(Step):
    """Add the document's row (reference, party, amount) to the team's register database; a later day brings
    the row's amount in line."""

    service, consumes, changes = "databases", ("ref", "due"), True

    def setup(self, s: Story) -> None:
        b = s.b
        b.use("databases")
        self.db = _slug(s.d.profession.queue[1]).replace("-", "_")[:40] or "register"
        self.title = f"{s.d.profession.queue[2]}登记簿" if s.lang == "zh" else f"{s.d.profession.queue[1]} register"
        b.table("databases", "databases").append({"id": self.db, "title": self.title, "properties": [
            {"name": "Name", "type": "title"}, {"name": "Party", "type": "text"}, {"name": "Amount", "type": "number"},
            {"name": "Note", "type": "text"}]})
        b.table("databases", "rows").append({"id": "row-old1", "database": self.db, "values": {
            "Name": f"{s.facts['ref']}-OLD", "Party": s.other[0], "Amount": 100.0, "Note": ""}})
        self.row_id: str | None = None
        s.goal("x_row", db=self.title)

    def act(self, s: Story, stale: float | None = None) -> None:
        x = s.use("due", "databases")
        ref = s.facts["ref"]
        if self.row_id is None:
            s.b.call("get_database", database=self.db)
            data = s.b.call("create_row", database=self.db, values=[
                {"property": "Name", "value": ref}, {"property": "Party", "value": s.facts["party"]},
                {"property": "Amount", "value": x}, {"property": "Note", "value": _code(s).strip(" ()")}])
            self.row_id = data["id"]
        else:
            s.b.call("query_database", database=self.db)
            s.b.call("update_row", _recalls=True, _stale={"row_id": self.row_id, "values": [
                {"property": "Amount", "value": stale}]}, row_id=self.row_id, values=[{"property": "Amount", "value": x}])
        s.b.check({"kind": "record_exists", "table": "databases.rows", "where": {
            "database": self.db, "values.Name": ref, "values.Amount": x},
            "description": f"{self.title} has {ref} at {x:.2f}"}, weight=2 if stale is not None else None)
        if stale is None:
            _code_check(s, {"kind": "record_exists", "table": "databases.rows", "where": {
                "database": self.db, "values.Name": ref, "values.Note": {"contains": s.facts.get("code", "")}}})
        s.b.allow("databases.rows:*")


class SheetRow(Step):
    """Enter the figure in the document's row of the team's tracker workbook (other rows stay)."""

    service, consumes, changes = "sheets", ("ref", "due"), True

    def setup(self, s: Story) -> None:
        from workspace_sim.media.sheets import write_xlsx
        ref = s.facts["ref"]
        prefix, n = ref.rsplit("-", 1)
        refs = [f"{prefix}-{int(n) - 13}", f"{prefix}-{int(n) + 21}"]
        refs.insert(s.rng.randint(0, 2), ref)
        rows: list[list[Any]] = [["Reference", "Party", "Amount"]]
        rows += [[r, s.facts["party"] if r == ref else s.other[0], None if r == ref else
                  round(s.rng.uniform(200, 900), 2)] for r in refs]
        self.cell = f"C{refs.index(ref) + 2}"
        self.path = f"/shared/{_slug(s.d.profession.queue[1])}-tracker.xlsx"
        _file(s, self.path, write_xlsx(None, self.path, "Tracker", "A1", rows))
        s.goal("x_sheet", path=self.path)

    def act(self, s: Story, stale: float | None = None) -> None:
        x = s.use("due", "sheets")
        if stale is None:
            s.b.call("read_sheet", path=self.path)
        extra = {"_stale": {"path": self.path, "rows": [[stale]], "sheet": "Tracker", "start": self.cell},
                 "_recalls": True} if stale is not None else {}
        s.b.call("write_sheet", path=self.path, rows=[[x]], sheet="Tracker", start=self.cell, **extra)
        s.b.check({"kind": "file", "path": self.path, "sheet_cell": {"sheet": "Tracker", "cell": self.cell,
                   "value": {"equals": x}}, "description": f"{self.path} {self.cell} holds {x:.2f}"},
                  weight=2 if stale is not None else None)
        s.b.allow(f"files:{self.path}")


class TodoTask(Step):
    """Put a to-do to pay or settle the document, with the amount in its notes."""

    service, consumes, changes = "todo", ("ref", "due"), True

    def setup(self, s: Story) -> None:
        s.b.use("todo")
        s.goal("x_todo")

    def act(self, s: Story) -> None:
        x = s.use("due", "todo")
        ref = s.facts["ref"]
        s.b.call("create_task", _free=("title",), title=f"Settle {ref} ({s.facts['party']})",
                 notes=f"{x:,.2f} {s.d.locale.currency}{_code(s)}")
        s.b.check({"kind": "record_exists", "table": "todo.tasks", "new_only": True, "where": {
            "title": {"contains": ref}, "notes": {"contains_any": figures(x)}},
            "description": f"a to-do for {ref} notes {x:.2f}"})
        _code_check(s, {"kind": "record_exists", "table": "todo.tasks", "new_only": True, "where": {
            "notes": {"contains": s.facts.get("code", "")}}})
        s.b.allow("todo.tasks:*")


class NoteDown(Step):
    """Keep a note of the figure (title: the reference)."""

    service, consumes, changes = "notes", ("ref", "due"), True

    def setup(self, s: Story) -> None:
        s.b.use("notes")
        s.goal("x_note")

    def act(self, s: Story) -> None:
        x = s.use("due", "notes")
        ref = s.facts["ref"]
        s.b.call("create_note", title=ref, body=f"{s.facts['party']}: {x:,.2f} {s.d.locale.currency}{_code(s)}")
        s.b.check({"kind": "record_exists", "table": "notes.notes", "new_only": True, "where": {
            "title": {"contains": ref}, "body": {"contains_any": figures(x)}},
            "description": f"a note on {ref} states {x:.2f}"})
        _code_check(s, {"kind": "record_exists", "table": "notes.notes", "new_only": True, "where": {
            "body": {"contains": s.facts.get("code", "")}}})
        s.b.allow("notes.notes:*")


class Answer(Step):
    """Tell the user the figure (and the code they gave, when asked for one) in the final answer."""

    service, consumes = "answer", ("due",)

    def setup(self, s: Story) -> None:
        s.goal("answer", ref=s.facts["ref"])

    def act(self, s: Story) -> None:
        from .wording import mail_texts
        x = s.use("due", "answer")
        s.b.check({"kind": "answer", "condition": {"contains_any": figures(x)}, "description": f"the answer gives {x:.2f}"})
        if "code" in s.facts:
            s.b.check({"kind": "answer", "condition": {"contains": s.facts["code"]},
                       "description": f"the answer gives the code {s.facts['code']}"})
        s.b.answer(mail_texts.answer(s, x) + _code(s))
