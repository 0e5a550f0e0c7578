"""Blind baselines: policies that never try the task, which a well-made environment must fail.

- `spray`: every read-only listing tool once (those that need no argument), then a kitchen-sink answer holding
  everything it saw, mailed to every address it saw.
- `first_pick`: the listings, then the reference's steps with each value replaced by the first value of its type
  (address, id of the same prefix, date, number) in what the listings showed.
- `blind_writer`: the reference's writes and sends, without reading anything, with plausible text in place of
  every value the request does not spell out.
- `answer_only`: the listings, then a final answer listing every entity it could see; no action.

All are deterministic: the same environment gives the same calls and answers. They act on the transcript and the
tools (the reference only as a teacher would, for the shape of its writes), never on the predicates.
"""

from __future__ import annotations

import re
from typing import Any

from synth.spec import AskStep, CallStep, EndStageStep, SayStep

from ...record import PolicyInfo
from ..turns import AgentTurn, EpisodeContext, PolicyCall

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_ID = re.compile(r"\b([A-Za-z]+)-[0-9A-Za-z]+\b")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_PATH = re.compile(r"(?<![\w.])/[\w.-]+(?:/[\w.-]+)*")
_SKIP = {"read_result_page"}
MAX_ANSWER = 20_000
PLAUSIBLE = "Following up on this as requested."


def _read_only_tools() -> set[str]:
    """Names of every read-only tool of every service (from the registry's hints)."""
    from workspace_sim.services import all_services

    return {name for s in all_services().values() for name, t in s.tools.items() if t.hints.read_only}


def listing_calls(tools: list[dict[str, Any]]) -> list[PolicyCall]:
    """One call with no arguments of each read-only tool that needs none, in the order the tools are offered."""
    read_only = _read_only_tools()
    out = []
    for t in tools:
        fn = t.get("function", t)
        name, params = fn.get("name"), fn.get("parameters") or {}
        if name in read_only and name not in _SKIP and not params.get("required"):
            out.append(PolicyCall(name, {}))
    return out


def seen_text(messages: list[dict[str, Any]], roles: tuple[str, ...] = ("tool",)) -> list[str]:
    """The contents of the messages of `roles`, in order."""
    return [m["content"] for m in messages if m.get("role") in roles and isinstance(m.get("content"), str)]


def addresses(texts: list[str]) -> list[str]:
    """Every e-mail address in `texts`, first appearance first, lower-cased."""
    return list(dict.fromkeys(a.lower().rstrip(".") for t in texts for a in _EMAIL.findall(t)))


def kitchen_sink(texts: list[str]) -> str:
    """Every distinct line the agent saw, in order, cut at MAX_ANSWER characters."""
    lines = list(dict.fromkeys(line.strip() for t in texts for line in t.splitlines() if line.strip()))
    return "\n".join(lines)[:MAX_ANSWER] or "Nothing found."


class _Blind:
    """Shared state: the episode, what was called, and whether the closing answer was given."""

    name = "blind"

    def __init__(self) -> None:
        self._ctx: EpisodeContext | None = None
        self._phase = 0

    def info(self) -> PolicyInfo:
        """The policy's name; it has no settings."""
        return PolicyInfo(name=self.name, settings={})

    def start(self, context: EpisodeContext) -> None:
        """Start again."""
        self._ctx, self._phase = context, 0


class SprayPolicy(_Blind):
    """Every listing once, then the kitchen sink mailed to every address seen, and answered."""

    name = "spray"

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """Listings, then one mail to everyone seen, then the answer (again on every later day)."""
        self._phase += 1
        if self._phase == 1:
            calls = listing_calls(tools)
            if calls:
                return AgentTurn(calls=calls)
            self._phase += 1
        texts = seen_text(messages)
        sink = kitchen_sink(texts)
        if self._phase == 2:
            to = addresses(texts + seen_text(messages, ("user",)))
            if to and any(t.get("function", t).get("name") == "send_email" for t in tools):
                return AgentTurn(calls=[PolicyCall("send_email", {"to": to[:100], "subject": "Update",
                                                                  "body": sink})])
        return AgentTurn(content=sink, expects_reply=False)


class AnswerOnlyPolicy(_Blind):
    """Every listing once, then an answer naming every entity seen; no action."""

    name = "answer_only"

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """Listings, then the answer."""
        self._phase += 1
        if self._phase == 1:
            calls = listing_calls(tools)
            if calls:
                return AgentTurn(calls=calls)
        return AgentTurn(content=kitchen_sink(seen_text(messages)), expects_reply=False)


def _first_of_type(texts: list[str]) -> dict[str, str]:
    """The first value of each type in `texts`: 'email', 'date', 'number', 'path', 'file:<extension>' and
    'id:<prefix>' (lower-cased prefix)."""
    out: dict[str, str] = {}
    for t in texts:
        for p in _PATH.findall(t):
            out.setdefault("path", p)
            if "." in p.rsplit("/", 1)[-1]:
                out.setdefault(f"file:{p.rsplit('.', 1)[-1].lower()}", p)
        for a in _EMAIL.findall(t):
            out.setdefault("email", a.lower())
        for d in _DATE.findall(t):
            out.setdefault("date", d)
        for m in _ID.finditer(t):
            out.setdefault(f"id:{m.group(1).lower()}", m.group(0))
        for n in re.findall(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w-])", t):
            out.setdefault("number", n)
    return out


def _pick(value: Any, first: dict[str, str]) -> Any:
    """`value` with each typed part replaced by the first value of its type in `first`."""
    if isinstance(value, dict):
        return {k: _pick(v, first) for k, v in value.items()}
    if isinstance(value, list):
        return [_pick(v, first) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        got = first.get("number")
        return type(value)(float(got)) if got is not None else value
    if not isinstance(value, str):
        return value
    if _PATH.fullmatch(value):
        ext = value.rsplit(".", 1)[-1].lower() if "." in value.rsplit("/", 1)[-1] else None
        return first.get(f"file:{ext}", first.get("path", value)) if ext else first.get("path", value)
    text = _EMAIL.sub(lambda m: first.get("email", m.group(0)), value)
    text = _DATE.sub(lambda m: first.get("date", m.group(0)), text)
    text = _ID.sub(lambda m: first.get(f"id:{m.group(1).lower()}", m.group(0)), text)
    if _NUMBER.match(text) and "number" in first:
        text = first["number"]
    return text


class FirstPickPolicy(_Blind):
    """The listings, then the reference's steps with every value replaced by the first of its type seen."""

    name = "first_pick"

    def start(self, context: EpisodeContext) -> None:
        """Start at the listings."""
        super().start(context)
        self._next = 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """Listings first; then each reference step, its values picked from what the listings showed."""
        if self._ctx is None:
            return AgentTurn(error="first_pick was asked to act before an episode started")
        self._phase += 1
        if self._phase == 1:
            calls = listing_calls(tools)
            if calls:
                return AgentTurn(calls=calls)
        first = _first_of_type(seen_text(messages))
        steps, fill = self._ctx.spec.reference.steps, self._ctx.fill
        if self._next >= len(steps):
            final = self._ctx.spec.reference.final_answer
            return AgentTurn(content=_pick(fill(final), first) if final is not None else None, expects_reply=False)
        step = steps[self._next]
        self._next += 1
        if isinstance(step, (SayStep, AskStep)):
            return AgentTurn(content=fill(step.text), expects_reply=True)
        if isinstance(step, EndStageStep):
            return AgentTurn(content=_pick(fill(step.text), first), expects_reply=False)
        assert isinstance(step, CallStep)
        return AgentTurn(calls=[PolicyCall(step.tool, _pick(fill(dict(step.args)), first))])


def _plausible(value: Any, visible: str) -> Any:
    """`value` where the request spells it out, else a plausible stand-in of its type."""
    if isinstance(value, dict):
        return {k: _plausible(v, visible) for k, v in value.items()}
    if isinstance(value, list):
        return [_plausible(v, visible) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value if str(value) in visible else type(value)(1)
    if isinstance(value, str):
        return value if value.lower() in visible or len(value) <= 2 else PLAUSIBLE
    return value


class BlindWriterPolicy(_Blind):
    """The reference's writes and sends, no reads: values the request shows are kept, the rest made up."""

    name = "blind_writer"

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """All the writes in one turn, then a short answer."""
        if self._ctx is None:
            return AgentTurn(error="blind_writer was asked to act before an episode started")
        self._phase += 1
        if self._phase == 1:
            read_only = _read_only_tools()
            visible = " ".join(seen_text(messages, ("user",))).lower()
            calls = [PolicyCall(s.tool, _plausible(dict(s.args), visible)) for s in self._ctx.spec.reference.steps
                     if isinstance(s, CallStep) and s.tool not in read_only]
            if calls:
                return AgentTurn(calls=calls)
        return AgentTurn(content="Done as requested.", expects_reply=False)


BLIND_POLICIES: dict[str, type[_Blind]] = {"spray": SprayPolicy, "first_pick": FirstPickPolicy,
                                           "blind_writer": BlindWriterPolicy, "answer_only": AnswerOnlyPolicy}
