"""The mail service's search query language: Gmail-style operators parsed into terms, and their matcher."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from workspace_sim.core.errors import InvalidArgument
from workspace_sim.text.folding import fold
from .names import folder_name

if TYPE_CHECKING:
    from .records import Message

MAX_QUERY = 2000


_OPERATORS = {
    "from": "from:alice", "to": "to:bob@example.com", "cc": "cc:carol", "bcc": "bcc:dave",
    "subject": 'subject:"quarterly report"', "label": "label:urgent", "in": "in:inbox", "is": "is:unread",
    "has": "has:attachment", "after": "after:2026-03-01", "before": "before:2026-03-31",
    "filename": "filename:report.pdf", "thread": "thread:msg-0001abcd",
}
_IS = ("read", "unread", "starred")
_DATE = re.compile(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})")
_OP = re.compile(r"([A-Za-z_]+):")


@dataclass(frozen=True)
class Term:
    """One search condition: an operator (or 'text') with its parsed value, possibly negated."""

    op: str
    value: Any
    negate: bool = False


def _quoted(query: str, i: int) -> tuple[str, int]:
    j = query.find('"', i + 1)
    if j < 0:
        raise InvalidArgument(f"query: the double quote at position {i} is never closed")
    value = query[i + 1:j]
    if not value.strip():
        raise InvalidArgument(f"query: empty quoted phrase at position {i}")
    return value, j + 1


def _op_value(op: str, raw: str, tz: ZoneInfo) -> Any:
    v = raw.strip()
    if op == "is":
        if v.lower() not in _IS:
            raise InvalidArgument(f"query: is:{v} is not supported; use one of {', '.join('is:' + x for x in _IS)}")
        return v.lower()
    if op == "has":
        if v.lower() not in ("attachment", "attachments"):
            raise InvalidArgument(f"query: has:{v} is not supported; use has:attachment")
        return "attachment"
    if op in ("after", "before"):
        m = _DATE.fullmatch(v)
        try:
            if m is None:
                raise ValueError
            d = date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            raise InvalidArgument(
                f"query: {op}:{v} is not a valid date; use YYYY-MM-DD, e.g. {_OPERATORS[op]}"
            ) from None
        return datetime(d.year, d.month, d.day, tzinfo=tz)
    if op == "in":
        if v.lower() == "anywhere":
            return "anywhere"
        try:
            return folder_name(v)
        except ValueError as e:
            raise InvalidArgument(f"query: in:{v}: {e}") from None
    return fold(v)


def parse_query(query: str, tz: ZoneInfo) -> list[Term]:
    """Parse the search syntax into terms (all must match); a malformed query is an InvalidArgument.

    Terms: `from:`, `to:` (To, Cc or Bcc), `cc:`, `bcc:`, `subject:`, `label:`, `in:folder`
    (`in:anywhere` includes trash), `is:read|unread|starred`, `has:attachment`, `after:`/`before:`
    (YYYY-MM-DD, local midnight; after is inclusive, before exclusive), `filename:`, `thread:`,
    "quoted phrases" and free words; a leading '-' negates a term. Operator values may be quoted.
    """
    if len(query) > MAX_QUERY:
        raise InvalidArgument(f"query is longer than {MAX_QUERY} characters; search for fewer terms")
    terms: list[Term] = []
    i, n = 0, len(query)
    while i < n:
        if query[i].isspace():
            i += 1
            continue
        negate = query[i] == "-" and i + 1 < n and not query[i + 1].isspace()
        if negate:
            i += 1
        if query[i] in "(){}":
            raise InvalidArgument(
                f"query: grouping with {query[i]!r} (position {i}) is not supported; "
                "terms separated by spaces must all match"
            )
        if query[i] == '"':
            phrase, i = _quoted(query, i)
            terms.append(Term("text", fold(phrase), negate))
            continue
        m = _OP.match(query, i)
        if m:
            op = m[1].lower()
            i = m.end()
            if i < n and query[i] == '"':
                raw, i = _quoted(query, i)
            else:
                j = i
                while j < n and not query[j].isspace():
                    j += 1
                raw, i = query[i:j], j
            if op not in _OPERATORS:
                close = difflib.get_close_matches(op, list(_OPERATORS), n=1, cutoff=0.6)
                hint = f"did you mean {close[0]}:? " if close else ""
                raise InvalidArgument(
                    f"query: unknown operator {op + ':'!r}; {hint}supported: {', '.join(o + ':' for o in _OPERATORS)}; "
                    'to search for text containing a colon, put it in double quotes'
                )
            if not raw.strip():
                raise InvalidArgument(f"query: {op}: needs a value, e.g. {_OPERATORS[op]}")
            terms.append(Term(op, _op_value(op, raw, tz), negate))
            continue
        j = i
        while j < n and not query[j].isspace() and query[j] != '"':
            j += 1
        word, i = query[i:j], j
        if word == "OR":
            raise InvalidArgument("query: OR is not supported; all terms must match, so run one search per alternative")
        if word != "AND":
            terms.append(Term("text", fold(word), negate))
    return terms


class Matcher:
    """Evaluates terms against messages; display names of the addresses count as their text too."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self._folded_names = {a: fold(n) for a, n in names.items()}

    def _addr(self, address: str, v: str) -> bool:
        return v in address or v in self._folded_names.get(address, "")

    def test(self, m: "Message", t: Term) -> bool:
        op, v = t.op, t.value
        if op == "text":
            hit = v in m.folded_text() or any(self._addr(a, v) for a in (m.sender, *m.to, *m.cc, *m.bcc))
        elif op == "from":
            hit = self._addr(m.sender, v)
        elif op == "to":
            hit = any(self._addr(a, v) for a in [*m.to, *m.cc, *m.bcc])
        elif op in ("cc", "bcc"):
            hit = any(self._addr(a, v) for a in getattr(m, op))
        elif op == "subject":
            hit = v in fold(m.subject)
        elif op == "label":
            hit = any(fold(x) == v for x in m.labels)
        elif op == "in":
            hit = v == "anywhere" or fold(m.folder) == fold(v)
        elif op == "is" and v in ("read", "unread"):
            hit = m.read == (v == "read")
        elif op == "is":  # starred
            hit = any(fold(x) == "starred" for x in m.labels)
        elif op == "has":
            hit = bool(m.attachments)
        elif op == "after":
            hit = m.date >= v
        elif op == "before":
            hit = m.date < v
        elif op == "filename":
            hit = any(v in fold(p) for p in m.attachments)
        else:  # thread
            hit = fold(m.thread_id) == v
        return hit != t.negate
