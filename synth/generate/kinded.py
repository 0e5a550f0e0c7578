"""Kind-directed compositions: an environment drawn to be of a given task kind (`profiles.kinds.TaskKind`).

The graph follows the kind: its evidence media hold the figure (the party's document as a PDF, a photo, a
workbook or a voicemail, or a markdown document when the kind names no evidence; a second medium changes the
figure), a web page may add a published fee, and the kind's service families get one write-back each (a report,
a mail, a ticket comment, a meeting, a database row, a tracker cell, a to-do, a note) or, with none, the answer.
The turn structure decides whether the user is asked for a code (clarify) or asks one more thing after a first
report (multi), the days how many working days follow with the document corrected silently overnight, and a
safety element adds the workplace's rule against mailing outside. A kind without the files family reads its
evidence at a path the request gives, so no file search enters the solution; families the generator cannot
write to yet (finance, inventory, scheduler, crm, kb, feeds, integrations, code) and video are left out, which
keeps the drawn kind a relaxed match of the target (`kinds.matches`).
"""

from __future__ import annotations

import random

from ..procedural.builder import SpecBuilder, TemplateError
from ..procedural.world import WorldMaker
from ..spec import EnvironmentSpec
from . import kind_words as kw
from . import media_steps as ms
from . import steps as st
from .compose import _start
from .evidence_docs import document
from .profiles.kinds import TaskKind
from .wording import request
from .wording.phrases import GOALS
from .worlds import LOCALES, PROFESSIONS, draw_world, locale, profession

MAX_ATTEMPTS = 6
SUPPORTED = frozenset({"files", "mail", "contacts", "calendar", "tickets", "databases", "sheets", "web", "todo", "notes"})
"""The service families a kind-directed composition can use."""
REDO = (st.WriteReport, st.Notify, st.CommentTicket, ms.MailTo, ms.LogRow, ms.SheetRow)


class TotalIsDue(st.Step):
    """The markdown document's total is the figure (no other evidence changes it)."""

    service, consumes, produces = "derived", ("total",), ("due",)

    def setup(self, s: st.Story) -> None:
        s.produce("due", s.facts["total"], "files")
        s.facts["medium"] = "text"


class ReadKnownPath(st.Step):
    """Read the markdown document at the path the request gives."""

    service, consumes = "files", ("doc_path",)

    def act(self, s: st.Story) -> None:
        s.b.call("read_text_file", path=s.use("doc_path", "files"))


def _sources(kind: TaskKind, search: bool) -> list[st.Step]:
    media = [m for m in ms.MEDIA if m in kind.evidence]
    answer_only = not kind.services & (SUPPORTED - {"contacts", "web"})
    if not media and ("video" in kind.evidence or answer_only or (not search and "files" not in kind.services)):
        # evidence to read without a file service, the document a clip is about, or one whose figure no listing
        # shows (an answer-only task over a markdown document is passed by naming every figure a listing shows)
        media = ["pdf"]
    if not media:
        return [st.FindDocument(), st.ReadEvidence() if search else ReadKnownPath(), TotalIsDue()]
    doc = ms.MediaDocument(media[0])
    if not search:
        doc.act = lambda s: s.b.call(ms._READ[doc.medium], path=s.facts["doc_path"])  # type: ignore[method-assign]
    return [doc] + [ms.Adjustment(m) for m in media[1:3] + (["video"] if "video" in kind.evidence else [])]


def _sinks(kind: TaskKind, rng: random.Random) -> list[st.Step]:
    fam = kind.services & SUPPORTED
    person = None
    if {"mail", "calendar"} & fam:
        person = st.FindPerson() if "contacts" in fam else ms.NamedPerson()
    out: list[st.Step] = [person] if person else []
    if "mail" in fam:
        out.append(st.Notify() if "contacts" in fam else ms.MailTo())
    if "files" in fam:
        out.append(st.WriteReport())
    if "tickets" in fam:
        out += [st.FindTicket(), st.CommentTicket()]
    if "calendar" in fam:
        out.append(st.Schedule())
    make = {"databases": ms.LogRow, "sheets": ms.SheetRow, "todo": ms.TodoTask, "notes": ms.NoteDown}
    out += [make[f]() for f in sorted(fam) if f in make]
    return out


def plan(kind: TaskKind, rng: random.Random) -> tuple[list[st.Step], int, st.Step | None, bool]:
    """The steps (sources, sinks, a question, the safety rule), the days, the step a follow-up turn asks for, and
    whether the request names exact paths."""
    exact = "files" not in kind.services or rng.random() < 0.35
    graph = _sources(kind, search=not exact) + ([ms.PublishedFee()] if "web" in kind.services else [])
    sinks = _sinks(kind, rng)
    writes = [x for x in sinks if x.changes]
    carries = (st.Notify, ms.MailTo, ms.LogRow, ms.TodoTask, ms.NoteDown)
    if not writes or (kind.turns == "clarify" and not any(isinstance(x, carries) for x in writes)):
        sinks.append(ms.Answer())
    if kind.turns == "clarify":
        graph.append(st.AskCode())
    graph += sinks
    days = max(1, min(kind.days, 5))
    if days > 1 and not any(isinstance(x, REDO) for x in graph):
        days = 1
    follow = None
    if kind.turns == "multi" and days == 1:
        follow = ([x for x in graph if x.changes] or [x for x in graph if isinstance(x, ms.Answer)])[-1]
    if kind.safety:
        graph.append(st.HoldOutside())
    return graph, days, follow, exact


def _words(s: st.Story, rng: random.Random) -> str:
    """The request: the wording layer's goals, then this generator's goals and the evidence hints."""
    mine = sorted((g for g in s.goals if g.kind not in GOALS[s.lang] and g.stage == 0), key=lambda g: g.kind == "x_code")
    s.goals = [g for g in s.goals if g not in mine]
    extra = [kw.goal_text(s, g, rng) for g in mine]
    extra += [kw.evidence_text(s, m, path, rng) for m, path, _ in s.facts.get("evidence_notes", [])]
    if "fee" in s.facts:
        extra.append(rng.choice(kw.EVIDENCE[s.lang]["web"]))
    if any(g.stage == 0 for g in s.goals):
        text = request.render(s, rng)
    else:
        word = s.d.profession.doc_word[s.lang]
        doc = s.facts["doc_path"] if s.detail == "exact" else f"{s.facts['party']} {word} {s.facts['ref']}"
        text = rng.choice(kw.OPEN[s.lang]) + (f"关于{doc}：" if s.lang == "zh" else f"About {doc}: ")
    if s.detail == "exact" and s.facts["doc_path"] not in text:
        extra.insert(0, (f"文件在 {s.facts['doc_path']}" if s.lang == "zh" else f"the file is {s.facts['doc_path']}"))
    s.goals += mine
    sep = "" if s.lang == "zh" or text.endswith(" ") else "\n\n" if "\n- " in text else " "
    return (text + sep + kw.join(extra, s.lang)).strip()


def _follow_up(s: st.Story, step: st.Step, rng: random.Random) -> None:
    g = next(g for g in s.goals if g.stage == 1)
    goal = kw.goal_text(s, g, rng) if g.kind.startswith("x_") else request.goal_text(s, g, rng)
    said = rng.choice(kw.DONE[s.lang]).format(ref=s.facts["ref"], x=f"{s.facts['due']:,.2f}")
    s.b.say(said, followup=rng.choice(kw.FOLLOW[s.lang]).format(goal=goal.rstrip("?.。")))
    step.act(s)


def _later_day(s: st.Story, graph: list[st.Step], day: int) -> None:
    """Close the day, correct the document overnight (silently), and bring what carried the figure in line."""
    b, rng = s.b, s.rng
    old = s.facts["due"]
    said = " ".join(b.answers)
    b.answers.clear()
    b.end_stage(request.day_report(s, rng, old) + (" " + said if said else ""))
    fields, new_total = _revision(s)
    opens = st.working_day(b.ws.state.now, 1, s.d.world.user.timezone).replace(minute=rng.choice((0, 15, 30)))
    b.open_stage(f"day{day}", s.d.locale.date(opens.date()), opens_at=opens,
                 instructions=rng.choice(kw.DAYS[s.lang]).format(party=s.facts["party"], ref=s.facts["ref"]))
    b.stage_change([{"op": "patch", "table": "files.files", "key": s.facts["doc_path"], "fields": fields}],
                   announce=None, note=f"{s.facts['party']} corrected {s.facts['ref']} overnight")
    s.facts["due"] = round(new_total + sum(s.facts.get("adjustments", [])) + s.facts.get("fee", 0.0), 2)
    s.facts["total"] = new_total
    medium = s.facts["medium"]
    b.call("read_text_file" if medium == "text" else ms._READ[medium], path=s.facts["doc_path"])
    for x in graph:
        if isinstance(x, REDO):
            x.act(s, stale=old)  # type: ignore[call-arg]


def _revision(s: st.Story) -> tuple[dict[str, str], float]:
    """The fields of the document's file to patch overnight (a voicemail's transcript with its bytes) and its new
    total."""
    if s.facts["medium"] != "text":
        return ms.revised_document(s)
    total = ms.revise_lines(s)
    return {"content": document(s.d.profession.doc_kinds[0], s.facts["doc_facts"], s.d.locale, s.rng)[1]}, total


def _capability(kind: TaskKind, days: int, b: SpecBuilder, graph: list[st.Step]) -> str:
    if kind.safety:
        return "policy_compliance"
    if kind.turns == "clarify":
        return "clarification"
    if days > 1:
        return "dynamic_world"
    if kind.evidence & set(ms.MEDIA):
        return "media_evidence"
    return "document_from_data" if any(x.changes for x in graph) else "information_retrieval"


def _build_once(kind: TaskKind, seed: int, attempt: int, prof_id: str | None, loc_code: str | None,
                label: str | None) -> EnvironmentSpec:
    rng = random.Random(f"kinded:{kind.to_json()}:{seed}:{attempt}")
    prof = profession(prof_id) if prof_id else rng.choice(PROFESSIONS)
    loc = locale(loc_code) if loc_code else LOCALES[rng.choice(("en-US", "en-GB", "zh-CN"))]
    drawn = draw_world(prof, loc, rng)
    maker = WorldMaker(seed, f"kinded/{attempt}")
    rows = drawn.directory.rows
    phones = [r["phone"] for r in rows.values()]
    maker.phone = lambda *_: maker.rng.choice(phones)  # type: ignore[method-assign]
    b = SpecBuilder(maker, drawn.world, _start(rng, drawn.world.user.timezone), seed)
    b.rng = rng
    graph, days, follow, exact = plan(kind, rng)
    s = st.Story(b, drawn, rng, detail="exact" if exact else "findable")
    for x in graph:
        s.stage = 1 if x is follow else 0
        x.setup(s)
    s.stage = 0
    if not any(isinstance(x, (st.Notify, ms.MailTo)) for x in graph):
        for g in s.goals:
            if g.kind == "code":
                g.kind = "x_code"
    if kind.safety:
        b.use("mail")
    for row in b.data.get("contacts", {}).get("people", []):
        row.update({k: v for k, v in rows.get(row["email"], {}).items() if k in ("phone", "location")})
    if days > 1:
        b.open_stage("day1", loc.date(b.now.date()))
    cap = label or _capability(kind, days, b, graph)
    b.ask(_words(s, rng), f"{prof.label['en']}: {s.facts['party']} {s.facts['ref']}", cap, "kinded")
    b.persona = (f"{drawn.world.user.name}, {drawn.world.user.title}; " +
                 ("回答简短，只回答被问到的内容" if loc.language == "zh" else "answers briefly and only what is asked"))
    for x in graph:
        if x is not follow:
            x.act(s)
    if follow is not None:
        _follow_up(s, follow, rng)
    for day in range(2, days + 1):
        _later_day(s, graph, day)
    changed = {"files" if x.service == "sheets" else x.service for x in graph if x.changes}  # a workbook is a file
    if len(changed) >= 2 and s.flow and cap != "cross_service":
        b.capabilities.append("cross_service")
    if not b.answers:
        b.answer("已完成。" if loc.language == "zh" else "Done.")
    spec = b.build(f"{cap.replace('_', '-')}-kind-{prof.id.replace('_', '-')}-{seed}", "hard" if days > 2 else "medium")
    spec.metadata.update({"generator": "kinded", "graph": "+".join(type(x).__name__ for x in graph),
                          "profession": prof.id, "locale": loc.code, "language": loc.language, "data_flow": s.flow,
                          "detail": s.detail, "target_kind": kind.to_json()})
    return spec


def compose_kind(kind: TaskKind, seed: int, prof_id: str | None = None, loc_code: str | None = None,
                 capability: str | None = None) -> EnvironmentSpec:
    """An environment drawn to be of `kind` (a relaxed match: see the module docstring), determined by
    (kind, seed, profession, locale); `capability` labels it (else the kind decides: policy_compliance,
    clarification, dynamic_world, media_evidence, document_from_data or information_retrieval)."""
    problems = []
    for attempt in range(MAX_ATTEMPTS):
        try:
            return _build_once(kind, seed, attempt, prof_id, loc_code, capability)
        except TemplateError as e:
            problems.append(str(e))
    raise TemplateError(f"no composition fitted kind {kind.to_json()} seed {seed}: {'; '.join(problems)}")
