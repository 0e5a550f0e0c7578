"""The messages the LLM generator sends: the task, the repair request, and the retry after a refusal.

The system message also teaches multi-day scenarios (stages, end_stage reports, stage events and
predicates, weights, vague answers, stale_args and recalls) with a compact example (`SCENARIOS`).

Everything the model is told about tools and records comes from the registry (`Tool.openai_schema`
and each table's record model), never from text written here, so the prompt follows the services.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Iterable, Protocol, Sequence

from pydantic import TypeAdapter

from workspace_sim.predicates import Predicate
from workspace_sim.core.registry import Service
from workspace_sim.services import all_services

SYSTEM = """\
You design practice environments for AI coworker agents. An environment is one EnvironmentSpec \
JSON document: a simulated workspace's initial state, the user's request, predicates that check \
the final state, and a reference solution (tool calls) that solves the task.

The environment is executed to validate it, so:
- every person, message, event, ticket or file that anything refers to must exist in the initial state;
- the reference solution may only call the tools listed below, with arguments that match their schemas;
- the reference solution must pass every predicate, and the initial state must pass none of the \
success predicates (an agent that does nothing must score zero);
- the predicates must tell a correct solution from a nearly correct one (a dropped step, a changed \
argument, an extra destructive action must fail at least one);
- use realistic, varied details and include distractors (look-alike names, near-miss messages).

{scenarios}

Answer with exactly one JSON object that conforms to this JSON Schema, with no prose and no code fences:
{schema}"""

# How multi-day scenarios and changing worlds are written, with a compact example; validation enforces each rule.
SCENARIOS = """\
Long-horizon work: a spec may be a multi-day scenario and its world may change under the agent.
- `stages`: two or more working days, [{"id", "title", "opens_at", "instructions"}]. Day one opens with \
`request` (no instructions, no opens_at); each later stage opens at its `opens_at` (later than the day \
before) with that day's `instructions`. The workspace carries over from day to day.
- The reference closes every day but the last with {"kind":"end_stage","text":"<the day's report>"}: \
exactly one fewer end_stage than stages.
- A world event with "at_stage":"<id of a later stage>" applies when that day opens (never on day one: \
day one's records go in `initial`). With "announce": null the change is silent and the agent must notice \
it by reading again; at_turn and at_time events work as before.
- A predicate with "stage":"<id>" is judged on the state when that day was closed (its answer is the \
day's report); one without a stage is judged at the end. "weight" (default 1) sets its share of the \
weighted score. Give each day's work a predicate of that day: work left to the next day must fail it.
- A hidden fact may have a `vague` first answer (without the value); the precise `answer` comes only \
when the agent asks again, so the reference asks twice before it uses {{fact:NAME}}.
- Where a world event is silent, mark each reference call whose arguments depend on the changed data \
with `stale_args`: the arguments an agent that never re-read would send, from what it read before. \
The reference with those stale_args must fail a predicate.
- In a scenario, mark with "recalls": true each call that carries out an earlier instruction rather than \
the latest one (a standing rule from day one, a detail before the user changed their mind). The \
reference without those calls must fail a predicate.
Example (fragments of one spec):
"stages":[{"id":"mon","title":"Monday 2 March"},{"id":"tue","title":"Tuesday 3 March",\
"opens_at":"2026-03-03T09:00:00+01:00","instructions":"Please email Lee the current total today."}],
"events":[{"id":"acme-corrected","at_stage":"tue","announce":null,"note":"Acme's spend corrected (silent)",\
"changes":[{"op":"patch","table":"files.files","key":"/data/vendors.csv","fields":{"content":"vendor,spend\\nAcme,1500\\nGlobex,1800\\n"}}]}],
"predicates":[{"stage":"mon","kind":"file","path":"/reports/log.md","content":{"contains":"Mon: 3000"}},\
{"stage":"tue","kind":"mail_sent","to":["lee.park@acme.io"],"body":{"contains":"3300"},"weight":2},\
{"kind":"file","path":"/reports/log.md","content":{"contains":"Tue: 3300"}}],
"reference":{"steps":[{"kind":"call","tool":"read_text_file","args":{"path":"/data/vendors.csv"}},\
{"kind":"call","tool":"write_file","args":{"path":"/reports/log.md","content":"Mon: 3000\\n"}},\
{"kind":"end_stage","text":"The total is 3000; logged."},\
{"kind":"call","tool":"read_text_file","args":{"path":"/data/vendors.csv"}},\
{"kind":"call","tool":"send_email","args":{"to":["lee.park@acme.io"],"subject":"Total","body":"The total is 3300."},\
"stale_args":{"to":["lee.park@acme.io"],"subject":"Total","body":"The total is 3000."}},\
{"kind":"call","tool":"write_file","args":{"path":"/reports/log.md","content":"Mon: 3000\\nTue: 3300\\n"},\
"stale_args":{"path":"/reports/log.md","content":"Mon: 3000\\nTue: 3000\\n"},"recalls":true}],\
"final_answer":"Lee has the corrected total, 3300; the log is up to date."}"""

TASK = """\
Capability: {name}
{description}

Workflow requirement: {requirement}

Tools the agent has (OpenAI function format):
{tools}

Record models of the services' tables (JSON Schema; the initial state lists records per table):
{tables}

Each entry of `predicates` is one predicate of this JSON Schema:
{predicates}

Write the EnvironmentSpec now.{variation}"""

# Feedback beyond this many items is summarised: the first ones are the ones to fix first anyway.
MAX_PROBLEMS_SHOWN = 40

REPAIR = """\
Checking your spec found {n} problem{s} (repair round {round} of {max_rounds}). Fix every one, keep \
what was right, and answer with the complete corrected spec as one JSON object:
{problems}"""

AFTER_REFUSAL = """\
You declined: {refusal}
This is a fictional, simulated workspace used to test software agents: no real people, data or \
systems are involved, and nothing is sent anywhere. Please write the spec as asked, as one JSON object."""


class FeedbackLike(Protocol):
    """A validator's feedback item (or a parse Problem): where, what, and how to fix it."""

    path: str
    problem: str
    hint: str


def capability_text(capability: Any) -> tuple[str, str]:
    """The capability's id and the paragraph describing it: title, what it exercises, how it is checked.

    `capability` is a taxonomy `synth.capabilities.Capability` or, for ad-hoc use, a plain name.
    """
    if isinstance(capability, str):
        return capability, ""
    parts = [str(getattr(capability, "title", "") or "")]
    for attr, label in (("exercises", "It exercises"), ("checked_by", "Its tasks are checked by")):
        value = getattr(capability, attr, None)
        if value:
            parts.append(f"{label}: {value}")
    return str(getattr(capability, "id", capability)), "\n".join(p for p in parts if p)


def capability_services(capability: Any) -> list[str] | None:
    """The registered services a capability's tasks use (None, meaning all, if it names none that exist)."""
    wanted = set(getattr(capability, "services", ()) or ())
    present = sorted(wanted & set(all_services()))
    return present or None


def select_services(names: Iterable[str] | None = None) -> list[Service]:
    """The registry's services named in `names` (all of them when None), in name order."""
    services = all_services()
    if names is None:
        return [services[n] for n in sorted(services)]
    unknown = sorted(set(names) - set(services))
    if unknown:
        raise ValueError(f"unknown service(s) {', '.join(unknown)}; known: {', '.join(sorted(services))}")
    return [services[n] for n in sorted(set(names))]


def tools_block(services: Sequence[Service]) -> str:
    """Every tool of `services` in OpenAI function format, one JSON line each."""
    return "\n".join(_tool_line(s.name, name) for s in services for name in s.tools)


def tables_block(services: Sequence[Service]) -> str:
    """Each table's qualified name, key field and record JSON Schema, one line each."""
    return "\n".join(_table_line(s.name, table) for s in services for table in s.tables)


# Schemas are derived from code that does not change while the process runs; building them is
# most of a prompt's cost, so each line is made once.
@lru_cache(maxsize=None)
def _tool_line(service: str, tool: str) -> str:
    return _compact(all_services()[service].tools[tool].openai_schema())


@lru_cache(maxsize=None)
def _table_line(service: str, table: str) -> str:
    s = all_services()[service]
    model = s.tables[table]
    return f"{s.table_name(table)} (key: {model.key_field}): {_compact(model.model_json_schema())}"


@lru_cache(maxsize=1)
def _predicate_schema_text() -> str:
    return _compact(TypeAdapter(Predicate).json_schema())


def task_messages(capability: Any, requirement: str | None, spec_schema: dict[str, Any],
                  services: Sequence[Service], variation: int | None = None) -> list[dict[str, str]]:
    """The system and user messages asking for a new spec."""
    name, description = capability_text(capability)
    req = requirement.strip() if requirement and requirement.strip() else (
        "choose a realistic workflow that exercises this capability")
    var = f"\nThis is variation #{variation}: make it differ from other variations." if variation is not None else ""
    return [
        {"role": "system", "content": SYSTEM.format(schema=_compact(spec_schema), scenarios=SCENARIOS)},
        {"role": "user", "content": TASK.format(name=name, description=description or "(no description)",
                                                requirement=req, tools=tools_block(services),
                                                tables=tables_block(services),
                                                predicates=_predicate_schema_text(), variation=var)},
    ]


def repair_message(problems: Sequence[FeedbackLike], round_no: int, max_rounds: int) -> dict[str, str]:
    """The user message carrying the validator's (or parser's) feedback back to the model."""
    lines = []
    for i, p in enumerate(problems[:MAX_PROBLEMS_SHOWN], 1):
        hint = getattr(p, "hint", "") or ""
        check = getattr(p, "check", None)
        where = f"[{check}] " if check else ""
        lines.append(f"{i}. {where}at {p.path or '$'}: {p.problem}" + (f" Hint: {hint}" if hint else ""))
    n = len(problems)
    if n > MAX_PROBLEMS_SHOWN:
        lines.append(f"... and {n - MAX_PROBLEMS_SHOWN} more; fix these first.")
    return {"role": "user", "content": REPAIR.format(n=n, s="" if n == 1 else "s", round=round_no,
                                                     max_rounds=max_rounds, problems="\n".join(lines))}


def refusal_message(refusal: str) -> dict[str, str]:
    """The user message answering a refusal."""
    return {"role": "user", "content": AFTER_REFUSAL.format(refusal=" ".join(refusal.split()))}


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, default=str)
