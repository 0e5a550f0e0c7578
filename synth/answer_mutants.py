"""Wrong but plausible reports: mutants of a read-only task's final answer, each of which good answer checks reject.

A report task (the solution changes nothing, its predicates read the answer) had only the filler answer as a
mutant, so a wrong report that reads well was never tried. `answer_mutants` makes, from the reference's own answer:

- `answer_swap`: an entity it names (a person's name or address, a record's key, a value of a record field such
  as an account or product name) swapped for the most similar other one of the world (the look-alike);
- `answer_number`: a figure changed wherever it is stated (its last whole digit: 1,200.00 becomes 1,201.00);
- `answer_drop`: the sentence (or line) stating a fact left out (the fact itself when it is the only sentence);
- `answer_extra`: a wrong candidate added beside the right one ("Also: <the look-alike>");
- `answer_sink`: everything of that kind listed after the answer (every person, every key of the table...).

Only the facts the answer checks are about are mutated: an entity or figure the answer names that also occurs in
what the answer-reading predicates test (their conditions, key facts and excludes; not their descriptions). A
name the report mentions in passing (the ticket a phone number was found on) is no fact the checks must bind, so
changing it says nothing about them; the look-alike of a checked entity, added beside it or listed with all its
kind, is exactly the wrong candidate a kitchen-sink report would carry. Which entity and which figure is drawn
from the candidates with a generator seeded from the spec's seed and id, so the same spec always gets the same
mutants; each is one string operation (validation's cost is a run).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from .mutants import Mutant, ValueIndex, _nearest
from .spec import EnvironmentSpec

_NUMBER = re.compile(r"(?<![\w.,-])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w-]|[.,]\d)|(?<![\w.,-])\d+(?:\.\d+)?(?![\w-]|[.,]\d)")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}:\d{2}\b")
_SENTENCE = re.compile(r"[^\n]*?(?:[.;!?](?=\s|$)|\n|$)")  # up to a full stop before a space (not 1.5)
MAX_SINK = 60  # entities listed by the kitchen-sink mutant at most
MIN_ENTITY = 4  # shorter values (codes, flags) are too likely to occur by chance inside other words


@dataclass(frozen=True)
class _Entity:
    """A value of the world named in the answer, its kind (for the description) and the others of its kind."""

    text: str
    kind: str
    pool: tuple[str, ...]


_PROSE = frozenset({"description", "requirement", "kind", "target", "stage", "weight", "maintain"})


def checked_text(predicates: list[dict[str, Any]]) -> str:
    """What the answer-reading predicates test, as one lower-cased text: every string of an `answer` predicate or a
    `judged` one on the answer (inside all / any / at_least / not too), but their prose (descriptions,
    requirements)."""
    out: list[str] = []

    def strings(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                strings(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                if k not in _PROSE:
                    strings(x)

    def walk(p: Any) -> None:
        if not isinstance(p, dict):
            return
        kind = p.get("kind")
        if kind in ("all", "any", "at_least"):
            for c in p.get("predicates") or []:
                walk(c)
        elif kind == "not":
            walk(p.get("predicate"))
        elif kind == "answer" or kind == "judged" and p.get("target", "answer") in ("answer", {"answer": True}):
            strings(p)

    for p in predicates:
        walk(p)
    return "\n".join(out).lower()


def _entities(spec: EnvironmentSpec, answer: str, index: ValueIndex, checked: str) -> list[_Entity]:
    """The world's values the answer names (whole words) and the checks test (`checked`), with the other values of
    their kind; people's names and addresses first, then record keys, then record field values."""
    people = [p for p in spec.world.people if p.email.lower() != spec.user.lower()]
    kinds: list[tuple[str, list[str]]] = [("person", [p.name for p in people if p.name]),
                                          ("address", [p.email for p in people])]
    kinds += [(f"{t} key", keys) for t, keys in index.keys.items()]
    kinds += [(f"{name} value", values) for name, values in sorted(index.vocab.items()) if len(values) > 1]
    out: list[_Entity] = []
    taken: set[str] = set()
    for kind, pool in kinds:
        pool = sorted({v for v in pool if isinstance(v, str) and len(v) >= MIN_ENTITY and "\n" not in v})
        if len(pool) < 2:
            continue
        for v in pool:
            if v.lower() not in taken and _checks(v, checked) and _named(v, answer):
                taken.add(v.lower())
                out.append(_Entity(v, kind, tuple(pool)))
    return out


_LINK = re.compile(r"https?://\S+|(?<![\w.])/[\w.-]+(?:/[\w.-]+)+")


def _checks(value: str, checked: str) -> bool:
    """Whether the checks test `value`: a link (URL, path) anywhere in them, anything else as a whole word outside
    the links they name (the 2023 of an archive URL is not a figure the checks ask for)."""
    v = value.lower()
    if _LINK.fullmatch(v):
        return v in checked
    unlinked = _UNLINKED.get(checked)
    if unlinked is None:  # every value of a spec is tested against the same checks
        _UNLINKED.clear()
        unlinked = _UNLINKED[checked] = _LINK.sub(" ", checked)
    return _named(v, unlinked)


_UNLINKED: dict[str, str] = {}  # the latest checks text -> with its links blanked


def _named(value: str, text: str) -> bool:
    """Whether `value` occurs in `text` as a whole word (not inside a longer word or number): the regex
    `(?<![\\w@.-])VALUE(?![\\w@-]|\\.\\w)`, tested occurrence by occurrence (no pattern compiled per value)."""
    if not value:
        return re.search(r"(?<![\w@.-])(?![\w@-]|\.\w)", text) is not None
    n, end = len(value), len(text)
    at = text.find(value)
    while at != -1:
        j = at + n
        if (at == 0 or not (_word(text[at - 1]) or text[at - 1] in "@.-")) and (j == end or not (
                _word(text[j]) or text[j] in "@-" or (text[j] == "." and j + 1 < end and _word(text[j + 1])))):
            return True
        at = text.find(value, at + 1)
    return False


def _word(c: str) -> bool:
    """Whether `c` is a regex word character (\\w: a letter, digit or other numeric, or _)."""
    return c.isalnum() or c == "_"


def _swap(text: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w@.-]){re.escape(old)}(?![\w@-]|\.\w)", lambda _m: new, text)


def _numbers(answer: str) -> list[re.Match[str]]:
    """The figures of the answer (not the digits of dates, times, ids or addresses)."""
    masked = _DATE.sub(lambda m: "#" * len(m.group(0)), answer)
    return list(_NUMBER.finditer(masked))


def _bumped(figure: str) -> str:
    """The figure with its last whole digit changed (9 becomes 8, any other digit goes up by one)."""
    whole = figure.split(".", 1)[0]
    i = max(j for j, ch in enumerate(whole) if ch.isdigit())
    d = int(whole[i])
    return figure[:i] + str(d - 1 if d == 9 else d + 1) + figure[i + 1:]


def _without(answer: str, start: int, end: int) -> str:
    """The answer with the sentence (or line) holding [start, end) left out; when it is the only sentence, the fact
    itself left out wherever it is stated."""
    units = [m for m in _SENTENCE.finditer(answer) if m.group(0).strip()]
    if len(units) > 1:
        for m in units:
            if m.start() <= start < m.end():
                return (answer[:m.start()] + answer[m.end():]).strip()
    return _swap(answer, answer[start:end], "").strip()


def answer_mutants(spec: EnvironmentSpec, answer: str | None, index: ValueIndex, at: int,
                   root: str = "reference") -> list[Mutant]:
    """The wrong reports made from `answer` (the filled final answer of the solution at `root`), each replacing it
    after step `at` (the end); see the module docstring. Empty when the answer names nothing to change."""
    if not answer or not answer.strip():
        return []
    rng = random.Random(f"answer-mutants:{spec.seed}:{spec.id}:{root}")
    path = f"{root}.final_answer"
    out: list[Mutant] = []

    def add(kind: str, text: str, what: str) -> None:
        if text.strip() != answer.strip():
            out.append(Mutant(kind, at, (), text, path, f"the final answer {what}"))

    checked = checked_text(spec.predicates)
    entities = _entities(spec, answer, index, checked)
    if entities:
        e = entities[rng.randrange(len(entities))]
        other = _nearest(e.text, [v for v in e.pool if v.lower() != e.text.lower()])
        add("answer_swap", _swap(answer, e.text, other), f"with {e.text!r} swapped for {other!r} (another {e.kind})")
        add("answer_extra", f"{answer}\nAlso: {other}.", f"with a wrong candidate added ({other!r}, another {e.kind})")
        rest = [v for v in e.pool if v.lower() != e.text.lower()][:MAX_SINK]
        add("answer_sink", f"{answer}\nAll of them: " + "; ".join(rest) + ".",
            f"followed by every {e.kind} ({len(rest)} listed)")
        where = _named_at(answer, e.text)
        if where is not None:
            add("answer_drop", _without(answer, *where), f"without the sentence naming {e.text!r}")
    figures = [m for m in _numbers(answer) if _checks(m.group(0).replace(",", ""), checked.replace(",", ""))]
    if figures:
        m = figures[rng.randrange(len(figures))]
        changed = _bumped(m.group(0))
        same = [f for f in figures if f.group(0) == m.group(0)]  # the fact changes wherever the report states it
        text = answer
        for f in reversed(same):
            text = text[:f.start()] + changed + text[f.end():]
        add("answer_number", text, f"with the figure {m.group(0)!r} changed to {changed!r}")
        if not entities:
            add("answer_drop", _without(answer, m.start(), m.end()), f"without the sentence stating {m.group(0)!r}")
    return out


def _named_at(text: str, value: str) -> tuple[int, int] | None:
    m = re.search(rf"(?<![\w@.-]){re.escape(value)}(?![\w@-]|\.\w)", text)
    return (m.start(), m.end()) if m else None
