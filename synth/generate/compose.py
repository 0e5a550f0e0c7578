"""The compositional generator: draw a small graph of primitive steps over a profession world and a
locale, run it through a SpecBuilder (the same spec model and validation as the templates), and word
the request last.

A graph always starts from evidence (find the party's document, read its total), may derive a
balance from a figure in the party's mail, and ends in one to three of: a report, a notice to a
colleague found in the directory, a reply in the party's thread, a ticket comment, a meeting, or an
answer; a hidden cost code may have to be asked for; a second working day may follow on which the
document was corrected silently and what was sent must be brought in line (stale arguments mark
what an agent that never re-read would send). The reference, predicates and the only-changed guard
come from the steps; mutants and baselines from validation.
"""

from __future__ import annotations

import random
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from ..procedural.builder import SpecBuilder, TemplateError
from ..procedural.world import WorldMaker
from ..spec import EnvironmentSpec
from . import steps as st
from .evidence_docs import document, total_of
from .wording import mail_texts, request
from .worlds import LOCALES, PROFESSIONS, draw_world, locale, profession

LOCALE_WEIGHTS = {"en-US": 0.45, "en-GB": 0.35, "zh-CN": 0.20}
SERVED = ("information_retrieval", "document_from_data", "mail_triage", "scheduling", "ticket_workflow",
          "cross_service", "clarification", "dynamic_world", "fault_robustness", "long_horizon", "policy_compliance")
"""Capabilities a composition can carry (their requirements are met by the graph drawn for them)."""
MAX_ATTEMPTS = 6


def _sinks(cap: str, rng: random.Random, paid: bool) -> list[str]:
    """The write-backs and answers of the graph, honouring what the capability needs."""
    if cap == "information_retrieval":
        return ["answer"]
    need = {"document_from_data": "report",
            "mail_triage": rng.choice(("notify", "reply") if paid else ("notify",)),
            "scheduling": "meet", "ticket_workflow": "ticket", "clarification": "notify",
            "dynamic_world": rng.choice(("report", "notify", "ticket")), "long_horizon": "notify",
            "policy_compliance": "notify"}.get(cap)
    pool = ["report", "notify", "ticket", "meet"] + (["reply"] if paid and cap != "policy_compliance" else [])
    out = [need] if need else []
    want = rng.choice((2, 2, 3)) if need else rng.choice((2, 3, 3))
    if cap in ("cross_service", "fault_robustness"):
        want = max(want, 2)
    if cap == "long_horizon":
        want = 4
    for k in rng.sample(pool, len(pool)):
        if len(out) >= want:
            break
        if k not in out:
            out.append(k)
    if cap in ("cross_service",) and set(out) <= {"notify", "reply"}:
        out.append("report")
    return out


def plan(cap: str, rng: random.Random) -> tuple[list[st.Step], bool]:
    """The steps of one graph (sources first, in order) and whether a second day follows."""
    paid = rng.random() < (0.6 if cap == "mail_triage" else 0.4)
    sinks = _sinks(cap, rng, paid)
    steps: list[st.Step] = [st.FindDocument(), st.ReadEvidence()]
    if paid or "reply" in sinks:
        steps += [st.PaidByMail(), st.Balance()]
    if {"notify", "meet"} & set(sinks):
        steps.append(st.FindPerson())
    if "ticket" in sinks:
        steps.append(st.FindTicket())
    if cap == "clarification" or ("notify" in sinks and rng.random() < 0.25 and cap != "dynamic_world"):
        steps.append(st.AskCode())
    make = {"report": st.WriteReport, "notify": st.Notify, "reply": st.ReplyToParty, "ticket": st.CommentTicket,
            "meet": st.Schedule, "answer": st.AnswerFigure}
    steps += [make[k]() for k in sinks]
    if sinks == ["answer"]:  # what else the question needs: the party's previous document, or the tracking ticket
        extra = rng.choice(("plain", "ticket") if paid else ("plain", "compare", "ticket"))
        if extra == "compare":
            steps[-1] = st.AnswerFigure(compare=True)
        elif extra == "ticket":
            steps[-1:] = [st.FindTicket(), st.AnswerFigure(ticket=True)]
    if cap == "policy_compliance":
        steps.append(st.HoldOutside())
    redo = {"report", "notify", "ticket"} & set(sinks)
    two_days = bool(redo) and (cap in ("dynamic_world", "long_horizon") or (cap != "fault_robustness"
                                                                             and rng.random() < 0.75))
    return steps, two_days


def _start(rng: random.Random, tz: str) -> datetime:
    day = datetime(2026, 1, 5) + timedelta(weeks=rng.randint(0, 44), days=rng.randint(0, 3))
    return datetime.combine(day.date(), time(rng.choice((8, 9)), rng.choice((0, 10, 25, 40))), tzinfo=ZoneInfo(tz))


def _draw_locale(rng: random.Random) -> str:
    return rng.choices(list(LOCALE_WEIGHTS), weights=list(LOCALE_WEIGHTS.values()))[0]


def _revise(s: st.Story) -> tuple[str, float]:
    """The corrected document (one line's quantity changed) and its new total."""
    facts = st.revise_quantities(s, lambda qty, rng: qty + rng.choice((-1, 1, 2)) if qty > 1
                                 else qty + rng.choice((1, 2)))
    lines = facts["lines"]
    s.facts["revised_lines"] = lines
    return document(s.d.profession.doc_kinds[0], facts, s.d.locale, s.rng)[1], total_of(facts)


def _later_day(s: st.Story, graph: list[st.Step], day: int) -> None:
    """Close the open day, open the next working day with a silent correction, redo what used the figure."""
    b = s.b
    old = s.facts.get("due", s.facts["total"])
    said = " ".join(b.answers)  # what the day's work has to tell the user goes into that day's report
    b.answers.clear()
    b.end_stage(request.day_report(s, s.rng, old) + (" " + said if said else ""))
    content, new_total = _revise(s)
    opens = st.working_day(b.ws.state.now, 1, s.d.world.user.timezone).replace(minute=s.rng.choice((0, 15, 30)))
    notify = any(isinstance(x, st.Notify) for x in graph)
    b.open_stage(f"day{day}", s.d.locale.date(opens.date()), opens_at=opens,
                 instructions=request.day_two(s, s.rng, notify))
    changes = [{"op": "patch", "table": "files.files", "key": s.facts["doc_path"], "fields": {"content": content}}]
    asked = None
    if s.asker is not None and (day == 2 or s.rng.random() < 0.5):  # a colleague's question came in overnight
        asked = b.next_id("mail")
        subject, body = mail_texts.question(s, s.asker)
        changes.append({"op": "put", "table": "mail.messages", "record": {
            "id": asked, "owner": s.d.world.user.email, "folder": "inbox", "sender": s.asker.email,
            "to": [s.d.world.user.email], "subject": subject, "body": body,
            "date": (opens - timedelta(hours=s.rng.randint(1, 12))).isoformat(), "read": False, "labels": [],
            "attachments": []}})
    b.stage_change(changes, announce=None, note=f"{s.facts['party']} corrected {s.facts['ref']} overnight")
    s.facts["total"] = new_total
    s.facts["doc_facts"] = {**s.facts["doc_facts"], "lines": s.facts.pop("revised_lines")}
    if "due" in s.facts:
        s.facts["due"] = round(new_total - s.facts["paid"], 2)
    b.call("read_text_file", path=s.facts["doc_path"])
    for x in graph:
        if isinstance(x, (st.WriteReport, st.Notify, st.CommentTicket)):
            x.act(s, stale=old)
    if asked is not None:
        _answer_asker(s, asked, old)


def _batch(s: st.Story, graph: list[st.Step]) -> list[tuple[st.Story, list[st.Step]]]:
    """The same work for one or two more parties' documents (their own report, notice, ticket), when the
    graph's write-backs are ones a 'same for X' can carry."""
    kinds = [type(x) for x in graph if isinstance(x, (st.WriteReport, st.Notify, st.CommentTicket))]
    if not kinds or any(isinstance(x, (st.AskCode, st.AnswerFigure, st.HoldOutside)) for x in graph):
        return []
    out = []
    for case in range(1, s.rng.choice((2, 3, 3))):
        e = st.Story(s.b, s.d, s.rng, detail=s.detail, case=case)
        e.flow = s.flow
        egraph: list[st.Step] = [st.FindDocument(), st.ReadEvidence()]
        if st.Notify in kinds:
            e.produce("recipient", s.facts["recipient"], "contacts")
            e.facts["recipient_person"] = s.facts["recipient_person"]
        if st.CommentTicket in kinds:
            egraph.append(st.FindTicket())
        egraph += [k() for k in kinds]
        for x in egraph:
            x.setup(e)
        out.append((e, egraph))
    return out


def _answer_asker(s: st.Story, mid: str, old: float) -> None:
    """Day one's standing rule: answer whoever asks about the figure (with the current one)."""
    x = s.facts.get("due", s.facts["total"])
    s.b.call("search_emails", query=f"from:{s.asker.email}")
    s.b.call("read_email", id=mid)
    s.b.call("reply_email", _recalls=True, _stale={"id": mid, "body": mail_texts.answer_colleague(s, s.asker, old)},
             id=mid, body=mail_texts.answer_colleague(s, s.asker, x))
    s.b.check({"kind": "mail_sent", "in_reply_to": mid, "to": [s.asker.email], "body": {"contains_any": st.figures(x)},
               "description": f"{s.asker.email} got the current figure, {x:.2f}"}, weight=2)
    s.b.allow("mail.messages:msg-*")


def _copy_manager(s: st.Story) -> None:
    """A follow-up turn: the user asks to forward the notice to their manager."""
    b = s.b
    m = s.d.world.manager
    query = f'in:sent to:{s.facts["recipient"]} "{s.facts["ref"]}"'
    b.say(mail_texts.sent_summary(s), followup=mail_texts.copy_ask(s, m))
    live = b.ws.call("search_emails", {"query": query}).data["messages"][0]["id"]
    b.call("search_emails", query=query)
    b.call("forward_email", id=live, to=[m.email], body=mail_texts.fyi(s))
    x = s.facts.get("due", s.facts["total"])
    b.check({"kind": "mail_sent", "to": [m.email], "only_recipients": True, "body": {"contains_any": st.figures(x)},
             "description": f"the notice was forwarded to {m.email}"})


def _faults(s: st.Story, graph: list[st.Step]) -> None:
    tools = sorted({t for x in graph for t in {"WriteReport": ("write_file",), "Notify": ("send_email",),
                                                "ReplyToParty": ("reply_email",), "CommentTicket": ("add_comment",),
                                                "Schedule": ("create_event",), "ReadEvidence": ("read_text_file",)
                                                }.get(type(x).__name__, ())})
    s.b.faults.append({"tools": tools, "kind": s.rng.choice(("rate_limit", "server_error", "timeout")), "rate": 0.5,
                       "seed": s.rng.randint(0, 10_000), "max_consecutive": 2})


def _build_once(cap: str, seed: int, attempt: int, prof_id: str | None, loc_code: str | None) -> EnvironmentSpec:
    rng = random.Random(f"compose:{cap}:{seed}:{attempt}")
    prof = profession(prof_id) if prof_id else rng.choice(PROFESSIONS)
    loc = locale(loc_code) if loc_code else LOCALES[_draw_locale(rng)]
    drawn = draw_world(prof, loc, rng)
    maker = WorldMaker(seed, f"compose/{cap}/{attempt}")
    rows = drawn.directory.rows
    phones = [r["phone"] for r in rows.values()]
    maker.phone = lambda *_: maker.rng.choice(phones)  # type: ignore[method-assign]  # rows get the locale's own below
    b = SpecBuilder(maker, drawn.world, _start(rng, drawn.world.user.timezone), seed)
    b.rng = rng
    s = st.Story(b, drawn, rng, detail=rng.choice(("exact", "findable", "findable")))
    graph, two_days = plan(cap, rng)
    for x in graph:
        x.setup(s)
    extras = _batch(s, graph) if rng.random() < 0.7 else []
    days = (rng.choice((3, 4)) if cap == "long_horizon" else rng.choice((2, 3, 3, 4, 4, 5))) if two_days else 1
    s.asker = rng.choice([p for p in drawn.peers if p.email != s.facts.get("recipient")] or drawn.peers) \
        if days > 1 and rng.random() < 0.6 else None
    if s.asker is not None:
        b.use("mail")
        s.goal("standing")
    follow = any(isinstance(x, st.Notify) for x in graph) and s.facts.get("recipient") != drawn.world.manager.email \
        and rng.random() < 0.45
    for row in b.data.get("contacts", {}).get("people", []):
        row.update({k: v for k, v in rows.get(row["email"], {}).items() if k in ("phone", "location")})
    if cap == "fault_robustness":
        _faults(s, graph)
    if two_days:
        b.open_stage("day1", loc.date(b.now.date()))
    names = "+".join(type(x).__name__ for x in graph) + "".join(f"|{len(g)}" for _, g in extras)
    b.ask(request.render(s, rng, more=[e for e, _ in extras]), f"{prof.label['en']}: {s.facts['party']} "
          f"{s.facts['ref']}", cap, "compose")
    b.persona = (f"{drawn.world.user.name}, {drawn.world.user.title}; " +
                 ("回答简短，只回答被问到的内容" if loc.language == "zh" else "answers briefly and only what is asked"))
    for x in graph:
        x.act(s)
    for e, egraph in extras:
        for x in egraph:
            x.act(e)
    if follow:
        _copy_manager(s)
    for day in range(2, days + 1):
        _later_day(s, graph, day)
    if cap == "long_horizon" and sum(1 for x in b.steps if x["kind"] == "call" and not x.get("expect_error")) < 15:
        raise TemplateError("a long composition needs 15+ calls")
    if cap == "fault_robustness" and not any(x.get("expect_error") == "fault" for x in b.steps):
        raise TemplateError("the reference met no injected fault")
    changed = {x.service for x in graph if x.changes}
    if cap != "cross_service" and len(changed) >= 2 and s.flow:
        b.capabilities.append("cross_service")
    if not b.answers:
        b.answer("已完成。" if loc.language == "zh" else "Done.")
    spec = b.build(f"{cap.replace('_', '-')}-compose-{prof.id.replace('_', '-')}-{seed}",
                   "hard" if two_days else "medium" if len(graph) > 4 else "easy")
    spec.metadata.update({"generator": "compose", "graph": names, "profession": prof.id, "locale": loc.code,
                          "language": loc.language, "data_flow": s.flow, "detail": s.detail,
                          "figures": s.facts.get("figures", [])})
    return spec


def compose(cap: str, seed: int, prof_id: str | None = None, loc_code: str | None = None) -> EnvironmentSpec:
    """A composed environment for capability `cap` (one of SERVED), determined by (cap, seed, prof, locale)."""
    if cap not in SERVED:
        raise ValueError(f"compositions do not serve {cap!r}; they serve {', '.join(SERVED)}")
    problems = []
    for attempt in range(MAX_ATTEMPTS):
        try:
            return _build_once(cap, seed, attempt, prof_id, loc_code)
        except TemplateError as e:
            problems.append(str(e))
    raise TemplateError(f"no composition fitted {cap} seed {seed}: {'; '.join(problems)}")
