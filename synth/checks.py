"""Static checks of a parsed spec: referential integrity, the reference's tools and arguments (its
stale_args too), hidden facts (vague ones need asking twice) and turns (an end_stage opens one), the
recalls marks, policies, faults and what the predicates point at. Nothing is executed here.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from typing import Any, Iterator

from pydantic import ValidationError

from workspace_sim.core.errors import pydantic_error_message
from workspace_sim.core.registry import Tool
from workspace_sim.services import all_services

from .capabilities import CAPABILITIES
from .feedback import ValidationReport
from .spec import FACT_PLACEHOLDER, AskStep, CallStep, EndStageStep, EnvironmentSpec, ReferenceSolution, SayStep
from .spec import ScriptedUser

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")
# Record fields that hold a file path of the files service.
_PATH_FIELDS = {"attachments"}


def enabled_tools(spec: EnvironmentSpec) -> dict[str, Tool]:
    """The tools of the services the spec enables."""
    services = all_services()
    return {n: t for s in spec.services for n, t in services[s].tools.items()}


def known_emails(spec: EnvironmentSpec) -> set[str]:
    """Every address the world knows: its people, the contacts directory and the mail accounts that are nobody
    (system and newsletter senders, `kind` other than person)."""
    out = {p.email.lower() for p in spec.world.people}
    for row in spec.initial.get("contacts", {}).get("people", []):
        if isinstance(row, dict) and isinstance(row.get("email"), str):
            out.add(row["email"].lower())
    for row in spec.initial.get("mail", {}).get("accounts", []):
        if isinstance(row, dict) and isinstance(row.get("email"), str) and row.get("kind", "person") != "person":
            out.add(row["email"].lower())
    return out


def _strings(value: Any, path: str) -> Iterator[tuple[str, str, str]]:
    """(path, field name, string) for every string inside a record, nested ones included."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str):
                yield f"{path}.{k}", k, v
            else:
                for p, name, s in _strings(v, f"{path}.{k}"):
                    yield p, (k if name.startswith("[") else name), s
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, str):
                yield f"{path}[{i}]", f"[{i}]", v
            else:
                yield from _strings(v, f"{path}[{i}]")


def check_static(spec: EnvironmentSpec, report: ValidationReport) -> None:
    """Every check that needs no execution; failures are added to `report`."""
    _check_records(spec, report)
    _check_reference(spec, report)
    _check_user(spec, report)
    _check_rules(spec, report)
    _check_predicate_targets(spec, report)


def _check_records(spec: EnvironmentSpec, report: ValidationReport) -> None:
    domain = spec.world.organisation.domain.lower()
    emails = known_emails(spec)
    files = {r.get("path") for r in spec.initial.get("files", {}).get("files", []) if isinstance(r, dict)}
    for sname, tables in spec.initial.items():
        for tname, rows in tables.items():
            for i, row in enumerate(rows):
                for path, name, text in _strings(row, f"initial.{sname}.{tname}[{i}]"):
                    for m in _EMAIL.finditer(text) if "@" in text else ():
                        addr = m.group(0).rstrip(".").lower()
                        if m.group(1).lower().rstrip(".") == domain and addr not in emails:
                            report.add("references", path, f"{addr!r} is an address at {domain} but nobody in the world "
                                       "has it", "add the person to world.people (and contacts) or use an existing address")
                    if name in _PATH_FIELDS and "files" in spec.services and text not in files:
                        report.add("references", path, f"refers to file {text!r}, which is not in initial.files.files",
                                   "add the file or refer to an existing path")


def _check_reference(spec: EnvironmentSpec, report: ValidationReport) -> None:
    for root, solution in spec.solutions():
        _check_solution(spec, root, solution, report)


def _check_solution(spec: EnvironmentSpec, root: str, solution: ReferenceSolution, report: ValidationReport) -> None:
    tools = enabled_tools(spec)
    facts = {f.name for f in spec.user_simulator.facts}
    vague = {f.name for f in spec.user_simulator.facts if f.vague}
    asked: set[str] = set()  # revealed precisely
    user = ScriptedUser(spec.user_simulator)
    turn = 0
    for i, step in enumerate(solution.steps):
        where = f"{root}.steps[{i}]"
        if isinstance(step, CallStep):
            for name in FACT_PLACEHOLDER.findall(repr(step.args) + repr(step.stale_args or {})):
                if name not in facts:
                    report.add("references", f"{where}.args", f"placeholder {{{{fact:{name}}}}} names no hidden fact",
                               f"declare it in user_simulator.facts or use one of {sorted(facts) or 'none'}")
                elif name not in asked:
                    vaguely = name in vague and user.asked.get(name)
                    report.add("references", f"{where}.args", f"uses fact {name!r} before any message reveals it"
                               + (" precisely (the first answer is vague)" if vaguely else ""),
                               "ask again (press) for the precise answer first" if vaguely else
                               "ask the user a question containing one of its reveal_keywords first")
            if step.recalls and turn == 0:
                report.add("references", f"{where}.recalls", "marks recalls before any later turn or day has opened: "
                           "there is no earlier instruction yet to remember",
                           "mark only steps of a later turn or day that carry out an earlier instruction")
            tool = tools.get(step.tool)
            if tool is None:
                close = difflib.get_close_matches(step.tool, list(tools), n=3)
                report.add("references", f"{where}.tool", f"unknown or disabled tool {step.tool!r}",
                           f"use {' or '.join(close)}" if close else f"use one of: {', '.join(sorted(tools))}")
                continue
            named = [("args", step.args)] + ([("stale_args", step.stale_args)] if step.stale_args is not None else [])
            for field, args in named:
                try:
                    tool.args_model.model_validate(_fill_values(args, spec))
                except ValidationError as e:
                    report.add("references", f"{where}.{field}", pydantic_error_message(e),
                               f"match the input schema of {step.tool}: {sorted(tool.input_schema.get('properties', {}))}")
            if step.stale_args is not None and step.stale_args == step.args:
                report.add("references", f"{where}.stale_args", "equals args, so the stale baseline sends what the "
                           "reference does", "give the arguments an agent that missed the change would send (from "
                           "what it read before), or drop stale_args")
        elif isinstance(step, EndStageStep):
            turn += 1
        else:
            turn += 1
            _, precise = user.reply(step.text, turn)
            revealed = {f.name for f in precise}
            asked |= revealed
            if isinstance(step, AskStep):
                for name in step.facts:
                    if name not in facts:
                        report.add("references", f"{where}.facts", f"names no hidden fact {name!r}",
                                   f"declare it in user_simulator.facts or use one of {sorted(facts) or 'none'}")
                    elif name not in revealed and name in vague and user.asked.get(name) == 1:
                        report.add("references", f"{where}.facts", f"this question gets only the vague answer to "
                                   f"fact {name!r} (the first time it is asked)",
                                   "ask again (press) in a later question and list the fact there")
                    elif name not in revealed:
                        report.add("references", f"{where}.text", f"the question does not reveal fact {name!r}",
                                   "mention one of the fact's reveal_keywords in the question")
    for name in FACT_PLACEHOLDER.findall(solution.final_answer or ""):
        if name not in facts:
            report.add("references", f"{root}.final_answer", f"placeholder names no hidden fact {name!r}",
                       "declare the fact or remove the placeholder")


def _fill_values(value: Any, spec: EnvironmentSpec) -> Any:
    values = {f.name: f.value for f in spec.user_simulator.facts}
    if isinstance(value, str):
        return FACT_PLACEHOLDER.sub(lambda m: values.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [_fill_values(v, spec) for v in value]
    if isinstance(value, dict):
        return {k: _fill_values(v, spec) for k, v in value.items()}
    return value


def _check_user(spec: EnvironmentSpec, report: ValidationReport) -> None:
    turns = sum(1 for s in spec.reference.steps if isinstance(s, (SayStep, AskStep, EndStageStep)))
    used = {name for _, sol in spec.solutions() for name in FACT_PLACEHOLDER.findall(
        repr([s.model_dump() for s in sol.steps]) + (sol.final_answer or ""))}
    for i, f in enumerate(spec.user_simulator.facts):
        if f.name not in used:
            report.add("references", f"user_simulator.facts[{i}]", f"fact {f.name!r} is never used by the reference",
                       f"use {{{{fact:{f.name}}}}} in the step that needs it, or remove the fact")
    for i, f in enumerate(spec.user_simulator.followups):
        if f.turn > turns:
            report.add("references", f"user_simulator.followups[{i}].turn",
                       f"turn {f.turn} is never reached: the reference opens only {turns} turn(s)",
                       "add say/ask/end_stage steps to the reference or lower the turn")
    for i, e in enumerate(spec.events):
        if e.at_turn is not None and e.at_turn > turns:
            report.add("references", f"events[{i}].at_turn",
                       f"turn {e.at_turn} is never reached: the reference opens only {turns} turn(s)",
                       "add say/ask/end_stage steps to the reference or lower the turn")


def _check_rules(spec: EnvironmentSpec, report: ValidationReport) -> None:
    tools = enabled_tools(spec)
    for i, fault in enumerate(spec.faults):
        for j, pat in enumerate(fault.tools):
            if not any(fnmatch.fnmatchcase(t, pat) for t in tools):
                report.add("references", f"faults[{i}].tools[{j}]", f"{pat!r} matches no enabled tool",
                           f"name one of: {', '.join(sorted(tools))}")
    for i, pol in enumerate(spec.policies):
        for j, pat in enumerate(getattr(pol, "tools", None) or []):
            if not any(fnmatch.fnmatchcase(t, pat) for t in tools):
                report.add("references", f"policies[{i}].tools[{j}]", f"{pat!r} matches no enabled tool",
                           f"name one of: {', '.join(sorted(tools))}")


def _walk_predicates(doc: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(doc, dict):
        yield path, doc
        if isinstance(doc.get("predicates"), list):
            for i, p in enumerate(doc["predicates"]):
                yield from _walk_predicates(p, f"{path}.predicates[{i}]")
        if isinstance(doc.get("predicate"), dict):
            yield from _walk_predicates(doc["predicate"], f"{path}.predicate")


def _check_predicate_targets(spec: EnvironmentSpec, report: ValidationReport) -> None:
    services = all_services()
    tables = {f"{s}.{t}" for s in spec.services for t in services[s].tables}
    tools = enabled_tools(spec)
    emails = known_emails(spec)
    caps = "; ".join(CAPABILITIES[c].checked_by for c in spec.capabilities[:1])
    for i, top in enumerate(spec.predicates):
        for path, p in _walk_predicates(top, f"predicates[{i}]"):
            kind = p.get("kind")
            if p.get("maintain") is True and p is not top:
                report.add("predicates", f"{path}.maintain", "maintain applies to a whole top-level predicate, "
                           "not to one inside all/any/not", f"move maintain: true to predicates[{i}]")
            table = p.get("table")
            if isinstance(table, str) and table not in tables:
                report.add("predicates", f"{path}.table", f"unknown or disabled table {table!r}",
                           f"use one of: {', '.join(sorted(tables))}")
            tool = p.get("tool")
            if kind in ("tool_called", "tool_not_called") and isinstance(tool, str):
                if not any(fnmatch.fnmatchcase(t, tool) for t in tools):
                    report.add("predicates", f"{path}.tool", f"{tool!r} matches no enabled tool",
                               f"name one of: {', '.join(sorted(tools))}")
            scopes = [p["scope"]] if isinstance(p.get("scope"), str) else p.get("scopes") or []
            for j, scope in enumerate(scopes if isinstance(scopes, list) else []):
                target = str(scope).partition(":")[0]
                if target not in spec.services and target not in tables:
                    report.add("predicates", f"{path}.scope" if "scope" in p else f"{path}.scopes[{j}]",
                               f"scope {scope!r} names no enabled service or table",
                               f"start it with one of: {', '.join(sorted([*spec.services, *tables]))}")
            for name in ("to", "cc", "recipients", "attendees"):
                for j, addr in enumerate(p.get(name) or []):
                    if isinstance(addr, str) and addr.lower() not in emails:
                        report.add("predicates", f"{path}.{name}[{j}]", f"{addr!r} is nobody in the world",
                                   "use the address of someone in world.people")
    parsed = spec.parsed_predicates()
    if not any(not spec.is_guard(i) and parsed[i].weight > 0 for i in range(len(spec.predicates))):
        report.add("predicates", "predicates", "there is no weighted success predicate, only guards (and "
                   "informational checks of weight 0)", f"add predicates that check the requested outcome ({caps})")
