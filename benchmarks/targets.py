"""A figure's target, read from its note ("target >= 50,000", "target <= 40 us, >= 500x"), checked.

Notes are written for people; this reads the two forms they use: a bound on the value
(`target <= 20 us`, `target >= 100/s`) and a bound on the ratio to the same-run baseline
(`>= 500x`), except for figures whose unit is itself `x`, where `< 2x` bounds the value. A figure
with neither has no target.
"""

from __future__ import annotations

import re
from typing import Any

_BOUND = re.compile(r"(<=|>=|<|>)\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(x\b)?")


def ratio(figure: dict[str, Any]) -> float | None:
    """How many times better than its baseline the figure is (below 1: worse), or None without one."""
    base, value = figure.get("baseline"), figure.get("value")
    if not base or not value:
        return None
    lower = figure.get("better", "higher" if "/s" in figure.get("unit", "") else "lower") == "lower"
    return base / value if lower else value / base


def check(figure: dict[str, Any]) -> tuple[bool | None, str]:
    """(met, the target as written) for a figure; met is None when the note names no target."""
    note = figure.get("note") or ""
    at = note.find("target")
    if at < 0:
        return None, ""
    text = note[at + len("target"):].strip(" :")
    bounds = _BOUND.findall(text)
    if not bounds:
        return None, ""
    met = True
    for op, number, is_ratio in bounds:
        limit = float(number.replace(",", ""))
        if is_ratio and figure.get("unit") != "x":  # a figure measured in x is bounded by its value
            r = ratio(figure)
            if r is None:
                continue
            observed = r
        else:
            observed = float(figure["value"])
        met = met and {"<=": observed <= limit, ">=": observed >= limit, "<": observed < limit,
                       ">": observed > limit}[op]
    return met, text
