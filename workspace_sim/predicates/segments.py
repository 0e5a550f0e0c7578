"""How the key-facts judge reads a text: normalisation, whole-word matching and the text's structure.

`normalise` folds what a fact and a text may spell differently (NFKC, case, thousands separators, trailing
decimal zeros, phone numbers however spaced); `spans` finds a fact as a whole word or number. `Layout` cuts a
text on its structure, not on characters: lines, list items and headings; sentences, whose ends skip
abbreviations ("Dr. Chen", "e.g. Acme") and list numbers ("1. Acme"); clauses, cut at a comma or a colon that
ends a phrase, never inside a URL, an e-mail address, a time (10:30:15), a ratio (3:1), an id (ABC:123) or a
number (3,5). Chinese and Japanese punctuation (，、；：。！？) cuts clauses and sentences without a space after it
and is never part of a number: "v3.0，4月5日" is "v3" then "4月5日", not the number "3,4". Question markers
("Q1:", "1.", "问题1：", "第一题") say which numbered question an answer item answers.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field

# full-width and ideographic punctuation, folded before NFKC to its ASCII mark and a space: a boundary it stays
# (NFKC alone makes "，" a bare "," that reads as a thousands or decimal separator between digits)
_FOLD = str.maketrans({"\uff0c": ", ", "\u3001": ", ", "\uff64": ", ", "\ufe50": ", ", "\ufe51": ", ",
                       "\uff1b": "; ", "\ufe54": "; ", "\uff1a": ": ", "\ufe55": ": ", "\u3002": ". ",
                       "\uff61": ". ", "\uff01": "! ", "\ufe57": "! ", "\uff1f": "? ", "\ufe56": "? "})
_THOUSANDS = re.compile(r"(?<!\d)\d{1,3}(?:[, '_]\d{3})+(?!\d)")
_TRAILING_ZEROS = re.compile(r"(?<=\d)\.(\d*?)0+(?!\d)")
# a phone number: international (+CC ...), with an area code in brackets, or three or more digit groups
_PHONE = re.compile(r"(?<![\w+])(?:\+\d{1,3}(?:[ \-]?\(\d{1,4}\))?(?:[ \-]?\d{1,5})+"
                    r"|\(\d{2,4}\)[ \-]?\d{2,5}(?:[ \-]\d{2,5})+|\d{2,5}(?:[ \-]\d{2,5}){2,})(?![\w:]|[.,]\d)")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_WORD = re.compile(r"(?<![^\W\d_])([^\W\d_]+)(?:['\u2019]s)?(?![^\W\d_])")
_POSSESSIVE = re.compile(r"(?<=[^\W\d_])['\u2019]s(?![^\W\d_])")
_SUFFIXES = ("ings", "ing", "ions", "ion", "ments", "ment", "ed", "ies", "es", "s")
# scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, kana, CJK ideographs, Hangul
# syllables with their particles): a fact next to one of these characters needs no word boundary
_UNSPACED_CLASS = ("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3000-\u30ff\u3100-\u312f\u3400-\u4dbf"
                   "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0002fa1f]")
_UNSPACED: re.Pattern[str] | None = None  # compiled on first use (~2 ms)


def _drop_zeros(m: re.Match[str]) -> str:
    return "." + m.group(1) if m.group(1) else ""


def _phone(m: re.Match[str]) -> str:
    s = m.group(0)
    digits = re.sub(r"\D", "", s)
    if s.startswith("+"):
        return "+" + digits if 7 <= len(digits) <= 15 else s
    groups = re.findall(r"\d+", s)
    if s.startswith("("):
        return digits if 7 <= len(digits) <= 15 else s
    if _ISO_DATE.search(s) or not 10 <= len(digits) <= 13 or len({len(g) for g in groups}) == 1:
        return s  # a date, a list of numbers of one size: not a phone number
    return digits


def fold(text: str) -> str:
    """NFKC with full-width punctuation kept as boundaries (its ASCII mark and a space), case kept."""
    return unicodedata.normalize("NFKC", text.translate(_FOLD))


def normalise(text: str) -> str:
    """Text as key facts compare it: full-width punctuation folded to its mark and a space (a boundary, never part
    of a number), NFKC, case-folded, whitespace runs collapsed to one space, ends trimmed, phone numbers to
    their digits ("+86 138 0013 8000" -> "+8613800138000"), thousands separators and trailing decimal zeros
    dropped ("42,000.00" -> "42000")."""
    t = " ".join(fold(text).casefold().split())
    t = _PHONE.sub(_phone, t)
    t = _THOUSANDS.sub(lambda m: re.sub(r"[, '_]", "", m.group(0)), t)
    return _TRAILING_ZEROS.sub(_drop_zeros, t)


@functools.lru_cache(maxsize=65536)  # pure; a text repeats its words
def stem(word: str) -> str:
    """A light, deterministic stem of one Latin-script word: one inflectional or -ion/-ment suffix and a final
    "e" dropped when at least four letters stay ("escalated", "escalates", "escalation", "escalations" and
    "escalating" are all "escalat"; "priorities" is "priority"). Words of other scripts are returned as given."""
    if not word.isascii():
        return word
    w = word
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 4 and not (suf == "s" and w.endswith("ss")):
            w = w[: -len(suf)] + ("y" if suf == "ies" else "")
            break
    if w.endswith("e") and len(w) >= 5:
        w = w[:-1]
    return w


@functools.lru_cache(maxsize=8192)  # pure; the same facts are prepared for every clause of every text judged
def prepare(text: str) -> str:
    """Normalised text with each Latin word stemmed and possessives dropped ("Dana's" -> "dana")."""
    return _WORD.sub(lambda m: stem(m.group(1)), normalise(text))


@functools.lru_cache(maxsize=8192)
def prepare_exact(text: str) -> str:
    """Normalised text with possessives dropped but no word stemmed: for wrong candidates, where "complete" is
    not "completed"."""
    return _POSSESSIVE.sub("", normalise(text))


def unspaced(c: str) -> bool:
    """Whether `c` belongs to a script written without spaces between words."""
    global _UNSPACED
    if _UNSPACED is None:
        _UNSPACED = re.compile(_UNSPACED_CLASS)
    return _UNSPACED.match(c) is not None


def bounded(t: str, i: int, j: int, f: str) -> bool:
    """Whether the match t[i:j] of fact f stands alone (not part of a longer word or number). Next to a
    character of a script written without spaces (Chinese, Japanese, Thai, Korean particles) no boundary is
    needed; a number never matches inside a longer one."""
    if f[0].isalnum() and i > 0 and not unspaced(f[0]):
        c = t[i - 1]
        if (c.isalnum() and not unspaced(c)) or (f[0].isdigit() and c in ".," and i > 1 and t[i - 2].isdigit()):
            return False
    if f[-1].isalnum() and j < len(t) and not unspaced(f[-1]):
        c = t[j]
        if (c.isalnum() and not unspaced(c)) or (f[-1].isdigit() and c in ".," and j + 1 < len(t) and t[j + 1].isdigit()):
            return False
    if f[0].isdigit() and i > 0 and t[i - 1].isdigit():
        return False
    if f[-1].isdigit() and j < len(t) and (t[j].isdigit() or (t[j] in ".," and j + 1 < len(t) and t[j + 1].isdigit())):
        return False
    return True


def spans(t: str, fact: str, exact: bool = False) -> list[tuple[int, int]]:
    """Where prepared text `t` states `fact` as a whole word or number (`exact`: `t` and the fact unstemmed)."""
    f = prepare_exact(fact) if exact else prepare(fact)
    out: list[tuple[int, int]] = []
    if not f:
        return out
    start = t.find(f)
    while start >= 0:
        if bounded(t, start, start + len(f), f):
            out.append((start, start + len(f)))
        start = t.find(f, start + 1)
    return out


# --- structure ------------------------------------------------------------------------------------------

# abbreviations whose period never ends a sentence / ends one only before a capital
_ALWAYS = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof", "e.g", "i.e", "eg", "ie", "vs", "cf", "viz", "approx"})
_SOFT = frozenset({"etc", "no", "nos", "inc", "ltd", "co", "corp", "jr", "sr", "st", "dept", "est", "fig", "al",
                   "ca", "vol", "pp", "min", "max", "ref", "tel", "ext", "mt", "ave", "rd", "jan", "feb", "mar",
                   "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mon", "tue", "wed", "thu",
                   "fri", "sat", "sun", "a.m", "p.m", "u.s", "u.k"})
_PROTECT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s<>\"]*[^\s<>\"'.,;:!?)\]}]|www\.[^\s<>\"]*[^\s<>\"'.,;:!?)\]}]"
                      r"|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_MARK = re.compile(r"(?P<s>[.!?](?=\s|$)|;)|(?P<c>,(?!\d)|(?<!\d),|:(?=\s|$)|\s[-\u2013\u2014]\s"
                   r"|\s(?:and|but|while|whereas)\s)", re.IGNORECASE)
_WORD_BEFORE = re.compile(r"[A-Za-z](?:[A-Za-z.]*[A-Za-z])?$")
_CN_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_NUM = r"(\d{1,3}|[一二三四五六七八九十])"
# where an answer item says which question it answers: "Q1:", "question 2", "问题1", "第3题" anywhere; "1." / "1)" /
# "(1)" / "一、" only where a line starts
_QUESTION_ANY = re.compile(r"(?<![\w])(?:q|question)\s*" + _NUM + r"(?=\s*[:.)\-]|\s*$)|(?<![\w])问题\s*" + _NUM
                           + r"(?![\d])|第\s*" + _NUM + r"\s*(?:题|问)", re.IGNORECASE)
_QUESTION_LEAD = re.compile(r"^[\s>*#\-]*(?:\(" + _NUM + r"\)|" + _NUM + r"\s*[.)、:](?!\d))")
# a list item: a bullet, a number or letter and a period or bracket, a markdown heading
_ITEM = re.compile(r"^(\s*)(?:[-*\u2022\u00b7\u25aa+]|\d{1,3}[.)](?!\d)|\(\d{1,3}\)|[A-Za-z][.)](?=\s)|#{1,6}|"
                   r"[一二三四五六七八九十]+、)\s*")
_LABEL = re.compile(r"^[^:]{1,40}:\s")
# labels that turn from the header's list to something else ("Others: ...", "其他：...")
_CONTRAST = re.compile(r"^\W*(?:others?|also|not|excluded|rest|remaining|else|alternatives?|runners?[- ]up|"
                       r"其他|其余|另外|不是|排除)\b", re.IGNORECASE)
# private marks for where a clause ends (after a label's colon: a weak end, "Standup: 10:30, review: 11:00" binds
# each time to its label) and where a sentence ends
_CLAUSE_CUT, _LABEL_CUT, _SENTENCE_CUT = "\ue000", "\ue002", "\ue001"
_CUT_WEIGHT = {_CLAUSE_CUT: 2, _LABEL_CUT: 1}


def _protected(line: str) -> list[tuple[int, int]]:
    if "://" not in line and "www." not in line and "@" not in line:
        return []
    return [m.span() for m in _PROTECT.finditer(line)]


def _terminal(line: str, p: int) -> bool:
    """Whether the period at line[p] ends a sentence (not an abbreviation's, not a list number's)."""
    head = line[: p + 1]
    if _QUESTION_LEAD.fullmatch(head) or re.match(r"^[\s>*#\-]*(?:[A-Za-z]|q\s*\d{1,3}|question\s*\d{1,3})\.$", head, re.I):
        return False  # "1. Acme", "Q1. ...", "a. Acme"
    m = _WORD_BEFORE.search(line, max(0, p - 24), p)
    if m is None:
        return True
    word = m.group(0).lower()
    rest = line[p + 1:].lstrip()
    nxt = rest[:1]
    if word in _ALWAYS:
        return False
    if word in _SOFT or re.fullmatch(r"(?:[a-z]\.)+[a-z]", word):
        return not (nxt.islower() or nxt.isdigit() or nxt in "#(")
    return True


def marked(line: str) -> str:
    """`line` with a private mark where each clause (U+E000, after a label's colon U+E002) or sentence (U+E001)
    ends."""
    guard = _protected(line)
    out, last = [], 0
    for m in _MARK.finditer(line):
        a = m.start()
        if any(x <= a < y for x, y in guard):
            continue
        if m.group("s") is not None:
            if m.group("s") == "." and not _terminal(line, a):
                continue
            cut = _SENTENCE_CUT
        else:
            cut = _LABEL_CUT if m.group("c").startswith(":") else _CLAUSE_CUT
        out.append(line[last:m.end()] + cut)
        last = m.end()
    out.append(line[last:])
    return "".join(out)


@dataclass
class Sentence:
    """One sentence of a line, prepared (normalised, stemmed) without its marks; `cuts`: offsets in `text` where
    a clause ends (`weights`: 1 after a label's colon, else 2); `exact`: the same sentence unstemmed (for wrong
    candidates, worked out when first asked)."""

    text: str
    cuts: tuple[int, ...]
    marked: str
    line: int
    first: bool
    weights: tuple[int, ...] = ()

    @functools.cached_property
    def _exact(self) -> tuple[str, tuple[int, ...]]:
        text, cuts, _ = _cut(prepare_exact(self.marked))
        return text, cuts

    @property
    def exact(self) -> str:
        return self._exact[0]

    @property
    def exact_cuts(self) -> tuple[int, ...]:
        return self._exact[1]

    def clauses(self, exact: bool = False) -> list[str]:
        """The sentence's clauses, in order."""
        t, cuts = (self.exact, self.exact_cuts) if exact else (self.text, self.cuts)
        edges = [0, *cuts, len(t)]
        return [t[a:b] for a, b in zip(edges, edges[1:]) if t[a:b].strip()]

    def between(self, lo: int, hi: int, exact: bool = False) -> int:
        """How far apart offsets lo and hi are in clause ends (a label's colon weighs half a comma)."""
        return sum(w for c, w in zip(self.exact_cuts if exact else self.cuts, self.weights) if lo < c <= hi)


_CUTS = re.compile(f"[{_CLAUSE_CUT}{_LABEL_CUT}]")


def _cut(prepared: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """The text without its clause marks, where they were, and their weights."""
    cuts, weights, removed = [], [], 0
    for m in _CUTS.finditer(prepared):
        cuts.append(m.start() - removed)
        weights.append(_CUT_WEIGHT[m.group(0)])
        removed += 1
    return (_CUTS.sub("", prepared) if cuts else prepared), tuple(cuts), tuple(weights)


@dataclass
class Line:
    """One line of a text: its sentences (indices into `Layout.sentences`), whether it is blank, its list marker
    (indent, or None when it is no list item), its question number when it starts by naming one."""

    raw: str
    sentences: list[int] = field(default_factory=list)
    blank: bool = False
    indent: int | None = None
    question: int | None = None
    label: bool = False
    contrast: bool = False
    header: bool = False  # ends with a colon: a list's header


def _line_question(raw: str) -> int | None:
    m = _QUESTION_LEAD.match(raw) or _QUESTION_ANY.match(raw.lstrip(" >*#-\t"))
    return question_number(next(g for g in m.groups() if g)) if m else None


def question_number(token: str) -> int:
    """The number of a question marker's number ("3" or "三")."""
    return int(token) if token.isdigit() else _CN_DIGITS[token]


class Layout:
    """A text cut on its structure: lines (list items, headings, question markers), sentences, clauses."""

    def __init__(self, text: str) -> None:
        self.lines: list[Line] = []
        self.sentences: list[Sentence] = []
        for raw in fold(text).splitlines():
            line = Line(raw, blank=not raw.strip())
            item = _ITEM.match(raw)
            line.indent = len(item.group(1)) if item else None
            line.question = _line_question(raw)
            body = raw[item.end():] if item else raw
            line.label, line.contrast = bool(_LABEL.match(body)), bool(_CONTRAST.match(body))
            line.header = body.rstrip().endswith(":")
            idx = len(self.lines)
            parts = marked(raw).split(_SENTENCE_CUT)
            first = True
            for part in parts:
                text, cuts, weights = _cut(prepare(part))
                if not text.strip():
                    continue
                line.sentences.append(len(self.sentences))
                self.sentences.append(Sentence(text, cuts, part, idx, first, weights))
                first = False
            self.lines.append(line)

    def block(self, index: int, by_question: bool = False) -> list[int]:
        """The sentences that belong to line `index` taken as a lead (a list item, a heading, or, `by_question`,
        the answer to the question the line starts by naming): the rest of its own line, then the lines under
        it: a list item's continuation lines and deeper items; a heading's lines up to a blank one (a list
        header's up to a label that turns away, "Others: ..."); a question's lines up to the next question."""
        lead = self.lines[index]
        out = list(lead.sentences[1:])
        for line in self.lines[index + 1:]:
            if by_question:
                if line.question is not None:
                    break
                if line.blank:
                    continue
            elif line.blank:
                break
            elif lead.indent is not None and line.indent is not None and line.indent <= lead.indent:
                break
            elif lead.header and line.contrast:
                break
            out.extend(line.sentences)
        return out


def question_spans(s: Sentence, exact: bool = False) -> list[tuple[int, int, int]]:
    """(start, end, question number) of each question marker in a prepared sentence."""
    t = s.exact if exact else s.text
    out = [(m.start(), m.end(), question_number(next(g for g in m.groups() if g))) for m in _QUESTION_ANY.finditer(t)]
    if s.first:
        m = _QUESTION_LEAD.match(t)
        if m and not any(a < m.end() and m.start() < b for a, b, _ in out):
            out.append((m.start(), m.end(), question_number(next(g for g in m.groups() if g))))
    return out


__all__ = ["Layout", "Line", "Sentence", "bounded", "fold", "marked", "normalise", "prepare", "prepare_exact",
           "question_number", "question_spans", "spans", "stem", "unspaced"]
