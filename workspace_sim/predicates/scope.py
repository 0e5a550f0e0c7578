"""Collateral-damage predicates: `unchanged(scope)` and `only_changed(scopes)`, judged on what the agent changed
(`EvalContext.agent_diff`): the world's own changes between turns or days (world events) are not the agent's.

A scope is a service ('mail'), a table ('tickets.tickets'), a table with a key glob
('tickets.tickets:OPS-1*'), or the files shorthand 'files:/reports/*' (files and folders whose
path matches; '*' also crosses folders).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Callable, Literal

from pydantic import Field, field_validator

from workspace_sim.core.diff import RecordChange
from workspace_sim.core.memos import remember
from workspace_sim.predicates.base import EvalContext, PredicateBase, PredicateResult


# scope -> (what to compare: "table" or "service", its value, the key pattern's matcher or None); a predicate
# tests its scopes against every change of every run judged, so each scope is parsed and compiled once
_PARSED: dict[str, tuple[str, str, Callable[[str], Any] | None]] = {}


def _parsed(scope: str) -> tuple[str, str, Callable[[str], Any] | None]:
    hit = _PARSED.get(scope)
    if hit is None:
        target, _, glob = scope.partition(":")
        # fnmatchcase(name, glob) is exactly this compiled pattern's match (fnmatch caches it the same way); a
        # glob without a wildcard or a set matches its own text alone, so it is compared, not compiled
        if not glob:
            match = None
        elif "*" in glob or "?" in glob or "[" in glob:
            match = re.compile(fnmatch.translate(glob)).match
        else:
            match = _literal(glob)
        if target == "files" and glob:
            hit = ("service", "files", match)
        else:
            hit = ("table" if "." in target else "service", target, match)
        remember(_PARSED, scope, hit, 4096)
    return hit


def _literal(glob: str) -> Callable[[str], Any]:
    """The matcher of a glob with no wildcard: True for its own text, None (no match) for any other key."""
    return lambda key: True if key == glob else None


def in_scope(change: RecordChange, scope: str) -> bool:
    """Whether a record change falls inside a scope string."""
    field, target, match = _PARSED.get(scope) or _parsed(scope)
    if (change.table if field == "table" else change.service) != target:
        return False
    return match is None or match(change.key) is not None


# scopes -> whether a change falls inside any of them; only_changed tests every change of every run judged
# against all its scopes, so they are grouped once by the table or service they name
_COVERS: dict[tuple[str, ...], Callable[[RecordChange], bool]] = {}


def covered_by(scopes: tuple[str, ...]) -> Callable[[RecordChange], bool]:
    """A test of whether a change falls inside any of `scopes`: `any(in_scope(change, s) for s in scopes)`."""
    hit = _COVERS.get(scopes)
    if hit is not None:
        return hit
    by_table: dict[str, list[Callable[[str], Any]] | None] = {}
    by_service: dict[str, list[Callable[[str], Any]] | None] = {}
    for scope in scopes:
        field, target, match = _parsed(scope)
        group = by_table if field == "table" else by_service
        if match is None:
            group[target] = None  # the whole table or service
        elif group.get(target, []) is not None:
            group.setdefault(target, []).append(match)

    def covers(change: RecordChange) -> bool:
        for group, name in ((by_table, change.table), (by_service, change.service)):
            if name in group:
                matches = group[name]
                if matches is None:
                    return True
                key = change.key
                for match in matches:
                    if match(key) is not None:
                        return True
        return False

    return remember(_COVERS, scopes, covers, 1024)


def _check_scope(v: str) -> str:
    target = v.partition(":")[0]
    if not target or any(c.isspace() for c in target):
        raise ValueError(f"bad scope {v!r}: use 'service', 'service.table', 'service.table:KEYGLOB' or 'files:/GLOB'")
    return v


def _listing(changes: list[RecordChange]) -> str:
    shown = ", ".join(f"{c.kind} {c.table}:{c.key}" for c in changes[:5])
    return shown + (f" and {len(changes) - 5} more" if len(changes) > 5 else "")


class Unchanged(PredicateBase):
    """The agent changed nothing inside `scope` between the start and the end (world events' changes aside)."""

    kind: Literal["unchanged"] = "unchanged"
    scope: str

    _v = field_validator("scope")(lambda cls, v: _check_scope(v))

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        hit = [c for c in ctx.agent_diff if in_scope(c, self.scope)]
        return self.result(not hit, f"no change in {self.scope}", _listing(hit) if hit else "no change")


class OnlyChanged(PredicateBase):
    """Every change the agent made lies inside one of `scopes` (nothing else was touched; world events' changes
    aside, though an agent's edit of a record the world added or changed counts)."""

    kind: Literal["only_changed"] = "only_changed"
    scopes: list[str] = Field(min_length=1)

    @field_validator("scopes")
    @classmethod
    def _v(cls, v: list[str]) -> list[str]:
        return [_check_scope(s) for s in v]

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        covers = covered_by(tuple(self.scopes))
        outside = [c for c in ctx.agent_diff if not covers(c)]
        return self.result(not outside, f"changes only in {', '.join(self.scopes)}",
                           f"also changed: {_listing(outside)}" if outside else "no change outside")
