"""Mutants of a reference solution: a state-changing step dropped, an argument changed to a plausible
wrong value, a collateral action added; in a multi-day scenario also a day's step done a day late (after
its stage closed) and a day's report replaced by filler. Good predicates reject every one of them.

Argument changes model real agent mistakes: another record of the same table (preferring the most
similar key, i.e. the look-alike), another person's address, a time an hour off, another value of
the same field (a different status), a number off by one, a list missing its last element, and
every free-text argument of a step replaced by filler.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable, Sequence

from workspace_sim.core.records import Record
from workspace_sim.core.state import State

from .spec import FACT_PLACEHOLDER, CallStep, EndStageStep, EnvironmentSpec, ReferenceSolution

FILLER = "n/a"


@dataclass(frozen=True)
class Mutant:
    """An altered reference: steps from index `at` are replaced by `steps`; `path` names the change.

    A `break_maintained` mutant appends one call, or (`patch`, when no tool can make the change)
    a direct change to the guarded record, after the whole solution."""

    # "drop_step" | "change_arg" | "collateral" | "change_answer" | "break_maintained" | "defer_step" | "change_report"
    # | "answer_swap" | "answer_number" | "answer_drop" | "answer_extra" | "answer_sink" (synth.answer_mutants)
    kind: str
    at: int
    steps: tuple[Any, ...]
    final_answer: str | None
    path: str
    description: str
    patch: tuple[dict[str, Any], ...] = ()


class ValueIndex:
    """What plausible wrong values exist in a start state: keys per table, field vocabularies, people."""

    def __init__(self, state: State, people: Iterable[str]) -> None:
        self.table_of: dict[str, str] = {}
        self.keys: dict[str, list[str]] = {}
        vocab: dict[str, set[str]] = {}
        for tname in sorted(state.tables.keys()):
            table = state.tables[tname]
            keys = sorted(table.keys())
            self.keys[tname] = keys
            for k in keys:
                self.table_of.setdefault(k, tname)
                rec = table[k]
                for fname, v in rec.__dict__.items():
                    if isinstance(v, str) and 0 < len(v) <= 40 and fname != rec.key_field:
                        vocab.setdefault(fname, set()).add(v)
        self.vocab = {k: sorted(v) for k, v in vocab.items()}
        self.people = sorted({p.lower() for p in people})

    def alternatives(self, name: str, value: str) -> list[tuple[str, str]]:
        """Plausible wrong replacements of a string argument `name`=`value`, with what they mean."""
        table = self.table_of.get(value)
        if table is not None and len(self.keys[table]) > 1:
            return [(_nearest(value, self.keys[table]), f"another {table} record")]
        if "@" in value and value.lower() in self.people and len(self.people) > 1:
            return [(_nearest(value.lower(), self.people), "another person")]
        t = _as_datetime(value)
        if t is not None:
            return [((t + timedelta(hours=1)).isoformat(), "a time one hour later")]
        if value.startswith("/") and len(value) > 1:
            head, _, last = value.rpartition("/")
            stem, dot, ext = last.partition(".")
            return [(f"{head}/{stem}-copy{dot}{ext}", "a different path")]
        options = self.vocab.get(name)
        if options and value in options and len(options) > 1:
            return [(options[(options.index(value) + 1) % len(options)], f"another {name} value")]
        return []


def _as_datetime(value: str) -> datetime | None:
    if len(value) < 16 or value[4:5] != "-" or "T" not in value and " " not in value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _nearest(value: str, pool: Sequence[str]) -> str:
    """The pool member most like `value` (longest common prefix, then common suffix), not itself."""
    best, score = None, (-1, -1)
    for cand in pool:
        if cand == value:
            continue
        prefix = len(os.path.commonprefix([cand, value]))
        suffix = len(os.path.commonprefix([cand[::-1], value[::-1]]))
        if (prefix, suffix) > score:
            best, score = cand, (prefix, suffix)
    return best if best is not None else value


def _arg_mutations(args: dict[str, Any], index: ValueIndex, facts: dict[str, str], free: Sequence[str] = ()
                   ) -> tuple[list[tuple[dict[str, Any], str, str]], dict[str, Any] | None]:
    """Per-argument mutants [(new args, arg path, meaning)] and the all-free-text-filled args (or None).

    An argument that is exactly a {{fact:NAME}} placeholder is mutated as the fact's value (the
    agent asked, then used the wrong record anyway). Arguments named in `free` are left alone."""
    out: list[tuple[dict[str, Any], str, str]] = []
    free_changed = False

    def alternatives(name: str, value: str) -> list[tuple[str, str]]:
        m = FACT_PLACEHOLDER.fullmatch(value)
        return index.alternatives(name, facts[m.group(1)]) if m and m.group(1) in facts else index.alternatives(name, value)

    def fill_free(value: Any) -> Any:
        nonlocal free_changed
        if isinstance(value, str):
            if value and value != FILLER:
                free_changed = True
                return FILLER
            return value
        if isinstance(value, list):
            return [fill_free(v) for v in value]
        if isinstance(value, dict):
            return {k: fill_free(v) for k, v in value.items()}
        return value

    filled = dict(args)
    for name, value in args.items():
        if isinstance(value, bool) or value is None or name in free:
            continue
        if isinstance(value, (int, float)):
            out.append(({**args, name: value + 1}, name, "a value off by one"))
        elif isinstance(value, str):
            alts = alternatives(name, value)
            for alt, meaning in alts:
                out.append(({**args, name: alt}, name, meaning))
            if not alts and "{{" not in value:
                filled[name] = fill_free(value)
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            alts = alternatives(name, value[0])
            for alt, meaning in alts:
                out.append(({**args, name: [alt, *value[1:]]}, f"{name}[0]", meaning))
            if len(value) > 1:
                out.append(({**args, name: value[:-1]}, name, "the last element left out"))
            if not alts:
                filled[name] = fill_free(value)
        elif isinstance(value, (list, dict)):
            filled[name] = fill_free(value)
    return out, (filled if free_changed else None)


# Collateral actions: for a tool, candidate argument sets that touch a record the reference left alone.
# A maker gets (final state, touched (table, key) pairs, the user's address).
CollateralMaker = Callable[[State, set[tuple[str, str]], str], list[dict[str, Any]]]


def _untouched(state: State, table: str, touched: set[tuple[str, str]]) -> list[Record]:
    t = state.table(table)
    return [t[k] for k in sorted(t.keys()) if (table, k) not in touched]


def _spread(items: list[Any], n: int = 2) -> list[Any]:
    """Up to n items spread over the list (the middle first), so picks are not always the first."""
    if len(items) <= n:
        return items
    mid = len(items) // 2
    return [items[mid], items[-1]][:n]


COLLATERAL: dict[str, CollateralMaker] = {
    "delete_file": lambda s, t, u: [{"path": r.path} for r in _spread(_untouched(s, "files.files", t))],
    "write_file": lambda s, t, u: [{"path": r.path, "content": "overwritten"}
                                   for r in _spread([r for r in _untouched(s, "files.files", t) if r.encoding == "utf-8"])],
    "delete_email": lambda s, t, u: [{"id": r.id} for r in _spread(
        [r for r in _untouched(s, "mail.messages", t) if r.owner == u and r.folder not in ("trash", "drafts")])],
    "transition_ticket": lambda s, t, u: [{"key": r.key, "status": st, "comment": "closing"}
                                          for r in _spread(_untouched(s, "tickets.tickets", t))
                                          for st in _next_statuses(s, r)[:1]],
    "add_comment": lambda s, t, u: [{"key": r.key, "body": "bump"} for r in _spread(_untouched(s, "tickets.tickets", t))],
    "delete_event": lambda s, t, u: [{"id": r.id} for r in _spread(
        [r for r in _untouched(s, "calendar.events", t) if r.organizer == u])],
}


def _next_statuses(state: State, ticket: Any) -> list[str]:
    project = state.table("tickets.projects").get(getattr(ticket, "project", ""))
    workflow = getattr(project, "workflow", None) or {}
    return list(workflow.get(ticket.status, []))


def stage_of_steps(steps: Sequence[Any]) -> list[int]:
    """The index of the stage (working day) each step belongs to: an end_stage step closes its own stage."""
    out, stage = [], 0
    for step in steps:
        out.append(stage)
        if isinstance(step, EndStageStep):
            stage += 1
    return out


def make_mutants(
    spec: EnvironmentSpec, changed_steps: Sequence[int], start: State, final: State, tools: Iterable[str],
    touched: set[tuple[str, str]], answer_checked: bool, solution: ReferenceSolution | None = None,
    root: str = "reference", checked_reports: Iterable[int] = (), index: ValueIndex | None = None,
) -> list[Mutant]:
    """Every mutant of a solution (the reference unless given; `root` is its field path): drops and
    argument changes of the state-changing steps (indices in `changed_steps`; `free` arguments are
    left alone), collateral actions on records outside `touched`, and a filler final answer when
    predicates read the answer. In a multi-day scenario, each state-changing step of a day but the last
    is also moved past the end_stage that closes its day (the work done a day late), and the report of each
    day in `checked_reports` (stage indices whose predicates read the day's report) is replaced by filler.
    `start`/`final` are the solution's start and end states; `index`, the start's ValueIndex when the caller has
    made it."""
    steps = list(solution.steps if solution is not None else spec.reference.steps)
    answer = solution.final_answer if solution is not None else spec.reference.final_answer
    if index is None:
        index = ValueIndex(start, [p.email for p in spec.world.people])
    facts = {f.name: f.value for f in spec.user_simulator.facts}
    out: list[Mutant] = []
    for i in changed_steps:
        step = steps[i]
        out.append(Mutant("drop_step", i, tuple(steps[i + 1:]), answer, f"{root}.steps[{i}]",
                          f"step {i} ({step.tool}) left out"))
    for i in changed_steps:
        step = steps[i]
        per_arg, free = _arg_mutations(step.args, index, facts, step.free)
        for args, arg_path, meaning in per_arg:
            new = CallStep(tool=step.tool, args=args, expect_error=step.expect_error, free=step.free, note=step.note)
            out.append(Mutant("change_arg", i, (new, *steps[i + 1:]), answer, f"{root}.steps[{i}].args.{arg_path}",
                              f"{step.tool} with {arg_path} changed to {meaning}"))
        if free is not None:
            new = CallStep(tool=step.tool, args=free, expect_error=step.expect_error, free=step.free, note=step.note)
            out.append(Mutant("change_arg", i, (new, *steps[i + 1:]), answer, f"{root}.steps[{i}].args",
                              f"{step.tool} with its free text replaced by {FILLER!r}"))
    ends = [j for j, st in enumerate(steps) if isinstance(st, EndStageStep)]
    days = stage_of_steps(steps)
    for i in changed_steps:
        if days[i] < len(ends):
            close = ends[days[i]]
            sid = spec.stages[days[i]].id if days[i] < len(spec.stages) else str(days[i])
            late = (*steps[i + 1:close + 1], steps[i], *steps[close + 1:])
            out.append(Mutant("defer_step", i, late, answer, f"{root}.steps[{i}]",
                              f"step {i} ({steps[i].tool}) done a day late, after stage {sid!r} closed"))
    reports = set(checked_reports)
    for day, j in enumerate(ends):
        if day in reports and steps[j].text.strip() != FILLER:
            out.append(Mutant("change_report", j, (EndStageStep(text=FILLER), *steps[j + 1:]), answer,
                              f"{root}.steps[{j}].text", f"the report closing stage "
                              f"{spec.stages[day].id if day < len(spec.stages) else day!r} replaced by {FILLER!r}"))
    end = len(steps)
    available = set(tools)
    for tool, maker in COLLATERAL.items():
        if tool not in available:
            continue
        for args in maker(final, touched, spec.user.lower()):
            out.append(Mutant("collateral", end, (CallStep(tool=tool, args=args),), answer, "predicates",
                              f"a collateral {tool}({', '.join(f'{k}={v!r}' for k, v in args.items())}) added"))
    if answer_checked and answer is not None and answer.strip() != FILLER:
        out.append(Mutant("change_answer", end, (), FILLER, f"{root}.final_answer",
                          f"the final answer replaced by {FILLER!r}"))
    return out


def sample_mutants(mutants: list[Mutant], limit: int, seed: int) -> list[Mutant]:
    """At most `limit` mutants (collateral candidates not counted, as most are skipped): every kind and
    every mutated step stays represented; within that, a draw seeded by `seed`. Order is kept."""
    collateral = [m for m in mutants if m.kind == "collateral"]
    rest = [m for m in mutants if m.kind != "collateral"]
    if len(rest) <= limit:
        return mutants
    rng = random.Random(f"mutants:{seed}:{len(rest)}")
    groups: dict[tuple[str, int], list[int]] = {}
    for i, m in enumerate(rest):
        groups.setdefault((m.kind, m.at), []).append(i)
    keys = list(groups)
    rng.shuffle(keys)
    chosen: list[int] = []
    while len(chosen) < limit and keys:  # round robin over (kind, step) groups
        for key in list(keys):
            if len(chosen) == limit:
                break
            pool = groups[key]
            chosen.append(pool.pop(rng.randrange(len(pool))))
            if not pool:
                keys.remove(key)
    picked = set(chosen)
    return [m for i, m in enumerate(rest) if i in picked] + collateral
