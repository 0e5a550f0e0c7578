"""Render a composition's goals into the user's request: a channel (chat, mail, forwarded thread,
voicemail), a tone, a level of detail, optional background, and goals joined the way people write."""

from __future__ import annotations

import random
from typing import Any, Sequence

from .phrases import (BACKGROUND, BALANCE, CLOSINGS, DAY_ASKS, DAY_HEADS, DAY_TAILS, FORWARD, FORWARD_ASKS,
                      FORWARD_LEADS, FORWARD_NOTES, GOALS, OPENERS, SIGNATURES, THEN)

CHANNELS = ("chat", "chat", "mail", "forward", "voicemail")


def _who(s: Any, p: Any, twin: Any, rng: random.Random) -> str:
    """A colleague named so that a namesake in another department can be told apart."""
    if s.lang == "zh":
        return rng.choice((f"{p.department}的{p.name}", f"{p.title}{p.name}", f"{p.name}（{p.title}）"))
    first = p.name.split()[0]
    forms = [f"{p.name} ({p.title})", f"{first} in {p.department}", f"our {p.title.lower()} {first}",
             f"{first} {p.name.split()[-1][0]}. from {p.department}"]
    if twin is None:
        forms.append(p.name)
    return rng.choice(forms)


def _possessive(name: str) -> str:
    """`name`'s, or `name`' where it ends in s (Summit Relocation Services' claim)."""
    return name + ("'" if name.endswith("s") else "'s")


LOWER_AFTER_COMMA = ("This", "The", "It", "It's", "We", "We've", "Our", "There", "That", "These", "Their", "They")
"""A background's first words that are lower-cased after an opener ending in a comma (never a name)."""


def _sentence_start(text: str) -> bool:
    """Whether what follows `text` begins a sentence (nothing before it, or a full stop, colon or line end)."""
    return not text.strip() or text.rstrip(" ").endswith((".", "!", "?", ":", "\n"))


def _doc(s: Any, rng: random.Random) -> str:
    d = s.d
    word = d.profession.doc_word[s.lang]
    if s.detail == "exact":
        return f" {s.facts['doc_path']} " if s.lang == "zh" else s.facts["doc_path"]
    if s.lang == "zh":
        return rng.choice((f"{s.facts['party']}最新的{word}", f"{s.facts['party']}的{word}（{s.facts['ref']}）",
                           f"{s.facts['ref']}这张{word}"))
    return rng.choice((f"the latest {word} from {s.facts['party']}",
                       f"{_possessive(s.facts['party'])} {word} {s.facts['ref']}",
                       f"{s.facts['ref']}", f"the {s.facts['party']} {word} that came in this month"))


def goal_text(s: Any, g: Any, rng: random.Random) -> str:
    """One goal in words."""
    lang = s.lang
    fig = rng.choice(BALANCE[lang]) if "due" in s.facts else s.d.profession.figure[lang]
    slots = {"doc": _doc(s, rng), "fig": fig, "party": s.facts.get("party", ""), "key": s.facts.get("ticket", ""),
             "path": g.slots.get("path", ""),
             "meeting": g.slots.get("meeting", ""), "word": g.slots.get("word", "")}
    if "person" in g.slots:
        slots["who"] = _who(s, g.slots["person"], g.slots.get("twin"), rng)
    if "contact" in g.slots:
        c = g.slots["contact"]
        slots["contact"] = c.name if lang == "zh" else c.name.split()[0]
    if "day" in g.slots:
        day = g.slots["day"]
        names = ("周一", "周二", "周三", "周四", "周五") if lang == "zh" else \
            ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
        slots["day"] = rng.choice((names[day.weekday()], s.d.locale.date(day.date()))) if lang == "en" else \
            rng.choice((names[day.weekday()], f"{day.month}月{day.day}日"))
    if s.detail == "exact" and "key" in slots and lang == "en":
        slots["key"] = s.facts.get("ticket", "")
    return rng.choice(GOALS[lang][g.kind]).format(**slots)


def _join(parts: list[str], lang: str, rng: random.Random, bullets: bool = True) -> str:
    if lang == "zh":
        return "；".join(parts) + "。"
    if len(parts) == 1:
        return parts[0] + ("" if parts[0].endswith("?") else ".")
    style = rng.random()
    if style < 0.4:
        return ", ".join(parts[:-1]) + ", and " + parts[-1] + "."
    if style < 0.7 or not bullets:
        return ". ".join([parts[0], *(p[0].upper() + p[1:] for p in parts[1:])]) + "."
    return "\n".join(f"- {p}" for p in parts)


def _body(s: Any, rng: random.Random, stage: int, bullets: bool = True) -> str:
    goals = [g for g in s.goals if g.stage == stage]
    # after the mail they qualify; a question reads best last
    order = {"code": 1, "outside": 1, "standing": 2, "answer": 3, "answer_compare": 3, "answer_ticket": 3}
    firsts = [g for g in goals if g.kind not in order]
    rng.shuffle(firsts)
    texts = [goal_text(s, g, rng) for g in firsts]
    for g in sorted((g for g in goals if g.kind in order), key=lambda g: order[g.kind]):
        texts.append(goal_text(s, g, rng))
    return _join(texts, s.lang, rng, bullets)


def render(s: Any, rng: random.Random, stage: int = 0, more: Sequence[Any] = ()) -> str:
    """The request for the goals of `stage`; `more` holds the batch's other stories (other parties' documents),
    each worded after the first as its own sentence."""
    lang = s.lang
    channel = rng.choice(CHANNELS)
    bullets = channel in ("mail", "forward")
    body = _body(s, rng, stage, bullets)
    for extra in more:
        lead = rng.choice(THEN[lang]).format(doc=_doc(extra, rng))
        rest = _body(extra, rng, stage, False)
        body += ("" if lang == "zh" else "\n" if "\n- " in body else " ") + lead + \
            rest
    manager = s.d.world.manager.name if lang == "zh" else s.d.world.manager.name.split()[0]
    weekday = rng.choice(("周一", "周二", "周三", "周四", "周五") if lang == "zh" else
                         ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"))
    background = rng.choice(BACKGROUND[lang]).format(party=s.facts.get("party", ""), manager=manager, day=weekday)
    me = s.d.world.user.name if lang == "zh" else s.d.world.user.name.split()[0]
    if channel == "forward" and s.d.parties:
        contact = s.party[1]
        note = rng.choice(FORWARD_NOTES[lang]).format(party=s.facts.get("party", ""))
        subject = s.facts.get("ref", "")
        ask = rng.choice(FORWARD_ASKS[lang]).format(goals=body)
        ask = ask[0].upper() + ask[1:]
        fwd = f"{contact.name} <{contact.email}>" if rng.random() < 0.5 else \
            f"{s.d.world.manager.name} <{s.d.world.manager.email}>"
        when = f"{weekday} {rng.randint(8, 17)}:{rng.choice(('05', '20', '42', '58'))}"
        return rng.choice(FORWARD_LEADS[lang]) + rng.choice(FORWARD[lang]).format(fwd=fwd, subject=subject, note=note,
                                                                                    ask=ask, when=when)
    opener = rng.choice(OPENERS[lang]["voicemail" if channel == "voicemail" else channel])
    opener = opener.format(len=f"0:{rng.randint(18, 59)}", me=me)
    if background and channel == "mail":  # in a mail the background is its own paragraph
        background += "\n\n"
    sep = "" if lang == "zh" else " "
    if background and lang != "zh" and not _sentence_start(opener) and background.split(" ", 1)[0] in LOWER_AFTER_COMMA:
        background = background[0].lower() + background[1:]  # "When you get a sec, this has been sitting..."
    lead = opener + (background + ("" if background.endswith("\n") else sep) if background and rng.random() < 0.5
                     else "")
    if lang != "zh" and _sentence_start(lead):
        body = body[0].upper() + body[1:]
    text = lead + body
    closing = rng.choice(CLOSINGS[lang])
    if closing and text.endswith((".", "。")) and "\n- " not in text:
        text = text[:-1] + closing
    if channel == "mail" and rng.random() < 0.5:
        title = s.d.world.user.title
        return text + "\n\n" + rng.choice(SIGNATURES[lang]).format(me=me, title=title)
    return text


def day_two(s: Any, rng: random.Random, notify: bool) -> str:
    """The next morning's instructions after the document changed (silently: the instructions only hint)."""
    lang = s.lang
    manager = s.d.world.manager.name if lang == "zh" else s.d.world.manager.name.split()[0]
    if not s.day_phrases:  # each day of one story asks differently
        s.day_phrases = rng.sample(DAY_ASKS[lang], len(DAY_ASKS[lang]))
    ask = s.day_phrases.pop().format(party=s.facts["party"], ref=s.facts["ref"], manager=manager)
    head = rng.choice(DAY_HEADS[lang])
    if not head and lang == "en":
        ask = ask[0].upper() + ask[1:]
    tail = rng.choice(DAY_TAILS[lang])
    if lang == "en" and tail and not ask.endswith("?"):  # a tail joins the ask's sentence
        ask = ask[:-1]
    elif lang == "en":
        tail = ""
    return head + ask + tail


def day_report(s: Any, rng: random.Random, figure: float) -> str:
    """The report that closes a day: what was done, with the figure as it stood."""
    if s.lang == "zh":
        return rng.choice(("今天的事情都处理完了", "今天已处理完毕", "都弄好了")) + f"：{s.facts['ref']} 目前为 {figure:,.2f}。"
    return rng.choice(("All done for today", "That's everything for today", "Wrapped up for the day")) + \
        f": {s.facts['ref']} currently stands at {figure:,.2f}."
