"""What every document writer shares: the context it writes in, markdown tables, totals that add up,
tax by country, amounts in Chinese capital numerals, and a decoration rng derived from the facts.

A writer's own details (addresses, account numbers, clause choices) come from `Ctx.rng`, seeded from
the document's kind, reference and issuer, never from the caller's rng: a document re-issued with one
line changed (a silent correction overnight) differs from the first only where the facts differ.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Sequence

from ..worlds.locales import Locale


@dataclass
class Ctx:
    """One document being written: its facts, locale, language, and its own seeded rng."""

    kind: str
    facts: dict[str, Any]
    loc: Locale
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"doc:{self.kind}:{self.facts.get('ref', '')}:{self.facts.get('issuer', '')}")

    @property
    def zh(self) -> bool:
        return self.loc.language == "zh"

    @property
    def colon(self) -> str:
        return "：" if self.zh else ":"

    def t(self, en: str, zh: str) -> str:
        """The English or the Chinese text, by the document's language."""
        return zh if self.zh else en

    def pick(self, en: Sequence[str], zh: Sequence[str]) -> str:
        return self.rng.choice(list(zh if self.zh else en))

    def money(self, x: float) -> str:
        return self.loc.money(x)

    def issued(self) -> date:
        """The document's date (facts' `issued`, ISO), or a date drawn for it."""
        raw = self.facts.get("issued")
        return date.fromisoformat(raw) if raw else date(2026, 3, 2) + timedelta(days=self.rng.randint(0, 200))

    def day(self, d: date) -> str:
        return self.loc.date(d)

    def after(self, days: int) -> str:
        """The date `days` after the document's date, as the locale writes it."""
        return self.loc.date(self.issued() + timedelta(days=days))

    def person(self) -> str:
        """A plausible signatory name of the locale (not one of the world's people: a name on paper)."""
        g = self.rng.choice(self.loc.given)[0]
        s = self.rng.choice(self.loc.surnames)[0]
        return self.loc.full_name(g, s)

    def phone(self) -> str:
        return self.loc.phone(self.rng, self.rng.choice(self.loc.cities)[2])

    def address(self) -> str:
        return self.loc.address(self.rng)


def table(head: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[int] = ()) -> list[str]:
    """A markdown table; columns in `right` are right-aligned."""
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---:" if i in right else "---" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def cents(x: float) -> float:
    return round(x + 1e-9, 2)


def line_amounts(lines: Sequence[tuple[str, int, float]]) -> list[float]:
    return [cents(q * u) for _, q, u in lines]


def subtotal(lines: Sequence[tuple[str, int, float]]) -> float:
    """The subtotal of item lines: the sum of their amounts."""
    return cents(sum(line_amounts(lines)))


def tax_of(sub: float, rate: float) -> float:
    return cents(sub * rate)


def total_of(facts: dict[str, Any]) -> float:
    """The total an itemised document with these facts shows (subtotal plus tax at `tax_rate`)."""
    sub = subtotal(facts["lines"])
    return cents(sub + tax_of(sub, facts.get("tax_rate", 0.0)))


TAX_NAMES = {"en-US": "Sales tax", "en-GB": "VAT", "zh-CN": "增值税"}

_DIGITS = "零壹贰叁肆伍陆柒捌玖"
_UNITS = ("", "拾", "佰", "仟")
_BIG = ("", "万", "亿")


def _upper_int(n: int) -> str:
    if n == 0:
        return "零"
    groups = []
    while n:
        groups.append(n % 10000)
        n //= 10000
    out = ""
    for gi in range(len(groups) - 1, -1, -1):
        g = groups[gi]
        if g == 0:
            continue
        part, zero = "", False
        for pos in range(3, -1, -1):
            dgt = g // (10 ** pos) % 10
            if dgt == 0:
                zero = bool(out or part)
                continue
            if zero:
                part += "零"
                zero = False
            part += _DIGITS[dgt] + _UNITS[pos]
        out += part + _BIG[gi]
    return out


def rmb_upper(amount: float) -> str:
    """An amount in Chinese capital numerals as invoices print it (人民币大写): 壹仟贰佰叁拾肆元伍角整."""
    fen_total = int(round(amount * 100))
    yuan, rest = divmod(fen_total, 100)
    jiao, fen = divmod(rest, 10)
    text = _upper_int(yuan) + "元"
    if jiao == 0 and fen == 0:
        return text + "整"
    if jiao:
        text += _DIGITS[jiao] + "角"
    elif yuan:
        text += "零"
    if fen:
        text += _DIGITS[fen] + "分"
    else:
        text += "整"
    return text
