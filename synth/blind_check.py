"""Blind baselines: agents that never try the task, which a well-made environment must fail strictly.

- `spray`: every read-only listing tool once (those that need no argument), then a kitchen-sink answer holding
  everything it saw, mailed to every address it saw.
- `first_pick`: the listings, then the reference's steps (and its answer) with each value replaced by the first
  value of its type in what the listings showed: address, id of the same prefix, date, phone number, URL, person
  name, decimal or whole number, path or file of the same extension; a value of a type it never saw is kept only
  where it was shown the literal (the request, a tool result), else it becomes a stand-in of its type.
- `blind_writer`: the reference's writes and sends, without reading anything, with plausible text in place of
  every value the request does not spell out.
- `answer_only`: the listings, then a final answer listing every entity it could see; no action.

The agents are pure and deterministic (`BlindAgent.act(messages, tools) -> BlindTurn` on chat messages and
OpenAI-format tools): the runner's policies (trainers.episodes.policies.blind) wrap them, and validation
(`check_blind`) drives them through `SpecDriver` without a runner. They use the reference only as a teacher would,
for the shape of its steps, never the predicates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

from workspace_sim.core.errors import SpecError

from .spec import SpecDriver
from .feedback import ValidationReport
from .spec import AskStep, CallStep, EndStageStep, EnvironmentSpec, SayStep
from .strict import StrictJudge

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_ID = re.compile(r"\b([A-Za-z]+)-[0-9A-Za-z]+\b")
_PHONE = re.compile(r"(?<![\w+])\+\d{1,3}([ .-])\(?\d{2,5}\)?(?:\1\d{2,5}){1,3}(?!\w)")
_URL = re.compile(r"https?://[^\s<>\"')\]]+[^\s<>\"')\].,;:]")
_DECIMAL = re.compile(r"(?<![\w.-])\d+\.\d+(?![\w-]|\.\d)")
_INTEGER = re.compile(r"(?<![\w.-])\d+(?![\w-]|\.\d)")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_PATH = re.compile(r"(?<![\w.:/])/[\w.-]+(?:/[\w.-]+)*")
_SKIP = {"read_result_page"}
_HELD = 0xF0000  # supplementary private-use plane: never in generated text
MAX_ANSWER = 20_000
MAX_TURNS = 400  # turns of one blind episode at most (a step is a turn; the longest stories have ~100)
PLAUSIBLE = "Following up on this as requested."


@dataclass
class BlindTurn:
    """One turn of a blind agent: tool calls (name, arguments), or a message (`expects_reply`: a question or a
    day's report that is not the last; False: the final answer)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    content: str | None = None
    expects_reply: bool = False


@lru_cache(maxsize=1)
def read_only_tools() -> frozenset[str]:
    """Names of every read-only tool of every service (from the registry's hints)."""
    from workspace_sim.services import all_services

    return frozenset(name for s in all_services().values() for name, t in s.tools.items() if t.hints.read_only)


def listing_calls(tools: Sequence[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """One call with no arguments of each read-only tool that needs none, in the order the tools are offered."""
    read_only = read_only_tools()
    out = []
    for t in tools:
        fn = t.get("function", t)
        name, params = fn.get("name"), fn.get("parameters") or {}
        if name in read_only and name not in _SKIP and not params.get("required"):
            out.append((name, {}))
    return out


def seen_text(messages: Sequence[dict[str, Any]], roles: tuple[str, ...] = ("tool",)) -> list[str]:
    """The contents of the messages of `roles`, in order."""
    return [m["content"] for m in messages if m.get("role") in roles and isinstance(m.get("content"), str)]


def addresses(texts: Sequence[str]) -> list[str]:
    """Every e-mail address in `texts`, first appearance first, lower-cased."""
    return list(dict.fromkeys(a.lower().rstrip(".") for t in texts for a in _EMAIL.findall(t)))


def kitchen_sink(texts: Sequence[str]) -> str:
    """Every distinct line the agent saw, in order, cut at MAX_ANSWER characters."""
    lines = list(dict.fromkeys(line.strip() for t in texts for line in t.splitlines() if line.strip()))
    return "\n".join(lines)[:MAX_ANSWER] or "Nothing found."


def first_of_type(texts: Sequence[str], names: Sequence[str] = ()) -> dict[str, str]:
    """The first value of each type in `texts`: 'email', 'date', 'phone', 'url', 'decimal', 'number' (a whole
    number; 'decimal' falls back to it), 'path', 'file:<extension>', 'id:<prefix>' (lower-cased prefix) and
    'name' (the first of `names`, people's names, to appear)."""
    return _finish(_scan(texts, names))


def _finish(found: dict[str, str]) -> dict[str, str]:
    """`_scan`'s values with 'decimal' falling back to the first whole number."""
    if "decimal" not in found and "number" in found:
        return {**found, "decimal": found["number"]}
    return found


def _scan(texts: Sequence[str], names: Sequence[str] = ()) -> dict[str, str]:
    """The first value of each type in `texts` (no fallbacks): scanning more texts later and keeping the values
    already found (setdefault) gives the same as scanning all at once."""
    out: dict[str, str] = {}
    for t in texts:
        for u in _URL.findall(t):
            out.setdefault("url", u)
        bare = _URL.sub(" ", t)
        for p in _PATH.findall(bare):
            out.setdefault("path", p)
            if "." in p.rsplit("/", 1)[-1]:
                out.setdefault(f"file:{p.rsplit('.', 1)[-1].lower()}", p)
        for a in _EMAIL.findall(t):
            out.setdefault("email", a.lower())
        for m in _PHONE.finditer(t):
            out.setdefault("phone", m.group(0))
        for d in _DATE.findall(t):
            out.setdefault("date", d)
        for m in _ID.finditer(t):
            out.setdefault(f"id:{m.group(1).lower()}", m.group(0))
        plain = _PHONE.sub(" ", _DATE.sub(" ", bare))
        for n in _DECIMAL.findall(plain):
            out.setdefault("decimal", n)
        for n in _INTEGER.findall(plain):
            out.setdefault("number", n)
    if names:
        where = {n: min((i, t.find(n)) for i, t in enumerate(texts) if n in t) for n in names
                 if any(n in t for t in texts)}
        if where:
            out["name"] = min(where, key=lambda n: where[n])
    return out


# Stand-ins for a value of a type the agent never saw and whose literal it was never shown: it has nothing to
# pick from, so it cannot send what the reference found (the `plausible` rule of blind_writer).
STAND_IN = {"url": "https://example.com/", "email": "someone@example.com", "phone": "+1 555 0100",
            "date": "2000-01-01", "name": "Someone", "number": "1", "decimal": "1.0", "path": "/unknown"}


def stand_in(kind: str, literal: str) -> str:
    """The stand-in of a value of type `kind` (a key of `first_of_type`'s result) for `literal`: a fixed value of
    its shape ('id:<prefix>' keeps the prefix, 'file:<ext>' the extension)."""
    if kind.startswith("id:"):
        return f"{literal.split('-', 1)[0]}-0"
    if kind.startswith("file:"):
        return f"/unknown.{literal.rsplit('.', 1)[-1]}"
    return STAND_IN[kind]


def pick(value: Any, first: dict[str, str], names: Sequence[str] = (), visible: str = "") -> Any:
    """`value` with each typed part replaced by the first value of its type in `first` (see `first_of_type`);
    `names` are the people's names to replace by the first one seen. A part of a type never seen is kept only
    when `visible` (the text the agent was shown) holds it, else it becomes a stand-in (`stand_in`): the agent
    never copies a value it could not have read."""
    def get(kind: str, literal: str, fallback: str | None = None) -> str:
        got = first.get(kind, first.get(fallback) if fallback else None)
        if got is not None:
            return got
        return literal if literal and literal in visible else stand_in(kind, literal)

    if isinstance(value, dict):
        return {k: pick(v, first, names, visible) for k, v in value.items()}
    if isinstance(value, list):
        return [pick(v, first, names, visible) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        got = get("decimal" if isinstance(value, float) else "number", str(value), "number")
        return type(value)(float(got))
    if not isinstance(value, str):
        return value
    if _PATH.fullmatch(value):
        ext = value.rsplit(".", 1)[-1].lower() if "." in value.rsplit("/", 1)[-1] else None
        if ext and f"file:{ext}" in first:
            return first[f"file:{ext}"]
        return get("path", value) if "path" in first or not ext else get(f"file:{ext}", value)
    if _NUMBER.match(value.strip()):
        key = "decimal" if "." in value else "number"
        return get(key, value)
    keep: list[str] = []

    def hold(text: str) -> str:  # a replaced value is held aside (a private-use character) so later patterns
        keep.append(text)        # do not rewrite it
        return chr(_HELD + len(keep) - 1)

    text = _URL.sub(lambda m: hold(get("url", m.group(0))), value)
    text = _EMAIL.sub(lambda m: hold(get("email", m.group(0))), text)
    text = _PATH.sub(lambda m: hold(pick(m.group(0).rstrip("."), first, (), visible)
                                    + m.group(0)[len(m.group(0).rstrip(".")):]), text)  # a full stop is no extension
    text = _PHONE.sub(lambda m: hold(get("phone", m.group(0))), text)
    text = _DATE.sub(lambda m: hold(get("date", m.group(0))), text)
    text = _ID.sub(lambda m: hold(get(f"id:{m.group(1).lower()}", m.group(0))), text)
    for n in sorted(names, key=len, reverse=True):
        if n and n in text:
            text = text.replace(n, hold(get("name", n)))
    text = _DECIMAL.sub(lambda m: hold(get("decimal", m.group(0))), text)
    text = _INTEGER.sub(lambda m: hold(get("number", m.group(0))), text)
    return "".join(keep[ord(c) - _HELD] if _HELD <= ord(c) < _HELD + len(keep) else c for c in text)


def plausible(value: Any, visible: str) -> Any:
    """`value` where the request spells it out, else a plausible stand-in of its type."""
    if isinstance(value, dict):
        return {k: plausible(v, visible) for k, v in value.items()}
    if isinstance(value, list):
        return [plausible(v, visible) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value if str(value) in visible else type(value)(1)
    if isinstance(value, str):
        return value if value.lower() in visible or len(value) <= 2 else PLAUSIBLE
    return value


class BlindAgent:
    """A blind agent's state over one episode: the spec (for the shape of the reference's steps only), the
    fact filler the turn semantics define, and how far it has got."""

    name = "blind"

    def __init__(self, spec: EnvironmentSpec, fill: Callable[[Any], Any]) -> None:
        self.spec, self.fill = spec, fill
        self.phase = 0

    def act(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> BlindTurn:
        """The next turn, from the transcript so far (chat dicts) and the offered tools (OpenAI format)."""
        raise NotImplementedError


class Spray(BlindAgent):
    """Every listing once, then the kitchen sink mailed to every address seen, and answered."""

    name = "spray"

    def act(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> BlindTurn:
        """Listings, then one mail to everyone seen, then the answer (again on every later day)."""
        self.phase += 1
        if self.phase == 1:
            calls = listing_calls(tools)
            if calls:
                return BlindTurn(calls=calls)
            self.phase += 1
        texts = seen_text(messages)
        sink = kitchen_sink(texts)
        if self.phase == 2:
            to = addresses(texts + seen_text(messages, ("user",)))
            if to and any(t.get("function", t).get("name") == "send_email" for t in tools):
                return BlindTurn(calls=[("send_email", {"to": to[:100], "subject": "Update", "body": sink})])
        return BlindTurn(content=sink)


class AnswerOnly(BlindAgent):
    """Every listing once, then an answer naming every entity seen; no action."""

    name = "answer_only"

    def act(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> BlindTurn:
        """Listings, then the answer."""
        self.phase += 1
        if self.phase == 1:
            calls = listing_calls(tools)
            if calls:
                return BlindTurn(calls=calls)
        return BlindTurn(content=kitchen_sink(seen_text(messages)))


class FirstPick(BlindAgent):
    """The listings, then the reference's steps with every value replaced by the first of its type seen."""

    name = "first_pick"

    def __init__(self, spec: EnvironmentSpec, fill: Callable[[Any], Any]) -> None:
        super().__init__(spec, fill)
        self.next = 0
        self.names = tuple(p.name for p in spec.world.people if p.name)
        self._found: dict[str, str] = {}
        self._scanned = 0  # tool messages scanned into _found so far
        self._shown: list[str] = []  # the user's messages and tool results so far (what the agent was shown)
        self._read = 0  # messages read into _shown so far

    def _first(self, messages: Sequence[dict[str, Any]]) -> dict[str, str]:
        """first_of_type over every tool result so far, scanning only the ones not seen yet."""
        texts = seen_text(messages)
        for k, v in _scan(texts[self._scanned:], self.names).items():
            self._found.setdefault(k, v)
        self._scanned = len(texts)
        return _finish(self._found)

    def _visible(self, messages: Sequence[dict[str, Any]]) -> str:
        """Every text the agent was shown so far (the user's messages and tool results), read incrementally."""
        self._shown += seen_text(messages[self._read:], ("user", "tool"))
        self._read = len(messages)
        return "\n".join(self._shown)

    def act(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> BlindTurn:
        """Listings first; then each reference step, its values picked from what the listings showed."""
        self.phase += 1
        if self.phase == 1:
            calls = listing_calls(tools)
            if calls:
                return BlindTurn(calls=calls)
        first, shown = self._first(messages), self._visible(messages)
        steps = self.spec.reference.steps
        if self.next >= len(steps):
            final = self.spec.reference.final_answer
            return BlindTurn(content=pick(self.fill(final), first, self.names, shown) if final is not None else None)
        step = steps[self.next]
        self.next += 1
        if isinstance(step, (SayStep, AskStep)):
            return BlindTurn(content=self.fill(step.text), expects_reply=True)
        if isinstance(step, EndStageStep):
            return BlindTurn(content=pick(self.fill(step.text), first, self.names, shown))
        assert isinstance(step, CallStep)
        return BlindTurn(calls=[(step.tool, pick(self.fill(dict(step.args)), first, self.names, shown))])


class BlindWriter(BlindAgent):
    """The reference's writes and sends, no reads: values the request shows are kept, the rest made up."""

    name = "blind_writer"

    def act(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> BlindTurn:
        """All the writes in one turn, then a short answer."""
        self.phase += 1
        if self.phase == 1:
            read_only = read_only_tools()
            visible = " ".join(seen_text(messages, ("user",))).lower()
            calls = [(s.tool, plausible(dict(s.args), visible)) for s in self.spec.reference.steps
                     if isinstance(s, CallStep) and s.tool not in read_only]
            if calls:
                return BlindTurn(calls=calls)
        return BlindTurn(content="Done as requested.")


BLIND_AGENTS: dict[str, type[BlindAgent]] = {"spray": Spray, "first_pick": FirstPick, "blind_writer": BlindWriter,
                                             "answer_only": AnswerOnly}


def _act_out(driver: SpecDriver, agent: BlindAgent, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
             judge: StrictJudge | None = None) -> tuple[str | None, bool]:
    """Drive `agent` as the runner would with direct tool calls: (final answer, False when `judge` found a closed
    day failing, so nothing later can make the run pass). Tool results reach it as their text rendering (the
    runner's pager may cut very long ones into pages, which only makes the agent here see more). A turn with
    nothing to say ends the episode unanswered."""
    for _ in range(MAX_TURNS):
        turn = agent.act(messages, tools)
        if turn.calls:
            messages.append({"role": "assistant", "content": None})
            for tool, args in turn.calls:
                messages.append({"role": "tool", "name": tool, "content": driver.call(tool, args).text})
            continue
        text = turn.content or ""
        if not text.strip():
            return None, True
        messages.append({"role": "assistant", "content": text})
        if turn.expects_reply:
            messages.append({"role": "user", "content": driver.message(text)})
        elif driver.stages_left:
            messages.append({"role": "user", "content": driver.end_stage(text)})
            if judge is not None and not judge.last_close_ok(driver.ws):
                return None, False
        else:
            driver.ws.add_message("assistant", text)
            return text, True
    return None, True


def _passes(spec: EnvironmentSpec, judge: StrictJudge | None, ws: Any, answer: str | None) -> bool:
    """The run's `passed` (strict success, judged with `judge` where the spec has no pass_threshold)."""
    return judge.passes(ws, answer) if judge is not None else spec.evaluate(ws, answer).passed


def play(spec: EnvironmentSpec, name: str, base: Any = None) -> tuple[bool, SpecDriver, str | None]:
    """Play blind agent `name` on `spec` through a SpecDriver (from a fork of `base`, a built start workspace,
    or a fresh one) to its end: (passed, the driver, the final answer or None)."""
    driver = SpecDriver(spec, base.fork() if base is not None else None)
    tools = [t.openai_schema() for t in driver.ws.tools.values()]
    messages: list[dict[str, Any]] = [{"role": "user", "content": driver.start()}]
    answer = _act_out(driver, BLIND_AGENTS[name](spec, driver.fill), messages, tools)[0]
    return spec.evaluate(driver.ws, answer).passed, driver, answer


def blind_passes(spec: EnvironmentSpec, base: Any) -> list[str]:
    """The blind agents that pass `spec` (`base`: its built start workspace), played cheaply with the verdicts
    `play` gives: spray, first_pick and answer_only open with the same listings, made once and resumed from a
    checkpoint for each; spray without send_email offered is answer_only; blind_writer is skipped when the
    reference writes nothing (it is then the do-nothing agent, which validation judges already); a multi-day run
    stops at the first day that closes failing (strictly, without a pass_threshold); blind_writer, which lists
    nothing, is resumed from the episode's opening."""
    judge = StrictJudge(spec) if spec.pass_threshold is None else None
    driver = SpecDriver(spec, base.fork())
    tools = [t.openai_schema() for t in driver.ws.tools.values()]
    opened: list[dict[str, Any]] = [{"role": "user", "content": driver.start()}]
    start = driver.checkpoint()
    listings = listing_calls(tools)
    if listings:
        opened.append({"role": "assistant", "content": None})
    for tool, args in listings:
        opened.append({"role": "tool", "name": tool, "content": driver.call(tool, args).text})
    after = driver.checkpoint()
    mails = any(t.get("function", t).get("name") == "send_email" for t in tools)
    verdicts: dict[str, bool] = {}
    for name in ("answer_only", "first_pick", "spray", "blind_writer"):
        if name == "spray" and not mails:
            verdicts[name] = verdicts["answer_only"]
            continue
        if name == "blind_writer":
            writes = any(isinstance(s, CallStep) and s.tool not in read_only_tools() for s in spec.reference.steps)
            if not writes:
                verdicts[name] = False
                continue
            driver.resume(start)  # what `play` would do from a fresh fork of `base`
            answer, alive = _act_out(driver, BLIND_AGENTS[name](spec, driver.fill), list(opened[:1]), tools, judge)
            verdicts[name] = alive and _passes(spec, judge, driver.ws, answer)
            continue
        driver.resume(after)
        agent = BLIND_AGENTS[name](spec, driver.fill)
        agent.phase = 1 if listings else 0  # its listings are the ones just made
        answer, alive = _act_out(driver, agent, list(opened), tools, judge)
        verdicts[name] = alive and _passes(spec, judge, driver.ws, answer)
    return [name for name in BLIND_AGENTS if verdicts[name]]


def check_blind(spec: EnvironmentSpec, base: Any, report: ValidationReport) -> None:
    """Validation's blind check: every blind agent must fail `spec` strictly (`base`: the built start
    workspace); adds a `blind` feedback item for each one that passes, naming it and how to fix the spec."""
    try:
        passing = blind_passes(spec, base)
    except SpecError:
        return  # the reference run has reported the world event that does not apply
    for name in passing:
        doc = (BLIND_AGENTS[name].__doc__ or name).splitlines()[0].rstrip(".")
        report.add("blind", "predicates", f"the blind baseline {name} passes without trying the task ({doc})",
                   _HINTS[name])


_HINTS = {
    "spray": "scope only_changed to the mail the task sends (not mail.messages:msg-*) or use only_recipients; "
             "give the answer checks the wrong candidates as excludes",
    "first_pick": "add a distractor that the listings show first (a newer message, a lower key) so the first "
                  "record of its type is not the right one, and check the values the task must find",
    "blind_writer": "check the values that must be read from the workspace, not only that a write happened",
    "answer_only": "give the answer checks the wrong candidates as excludes (bound facts), so an answer listing "
                   "everything fails",
}
