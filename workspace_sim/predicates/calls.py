"""Predicates on the transcript: tools called (or not) with arguments, and the final answer."""

from __future__ import annotations

import fnmatch
from typing import Literal

from pydantic import Field

from workspace_sim.predicates.actions import CLAIMS_FIELD, ClaimsMode, claims_problems, with_claims
from workspace_sim.predicates.base import EvalContext, PredicateBase, PredicateResult, short
from workspace_sim.predicates.conditions import Condition, field_value


def _calls(ctx: EvalContext, tool: str, args: dict[str, Condition], successful: bool) -> list:
    """Events with a call of `tool` meeting `args`: the agent's own calls and the tools a call ran
    through (`Event.via`: a note shared by mail is a call of send_email too)."""
    out = []
    for ev in ctx.events:
        if ev.kind != "call" or not isinstance(ev.tool, str) or (successful and not ev.ok):
            continue
        for name, a in ((ev.tool, ev.args), *getattr(ev, "via", ())):
            if not fnmatch.fnmatchcase(name, tool):
                continue
            a = a if isinstance(a, dict) else {}
            if all(c.check(field_value(a, k)) for k, c in args.items()):
                out.append(ev)
                break
    return out


def _what(tool: str, args: dict[str, Condition]) -> str:
    return tool + (f" with {', '.join(f'{k} {c.describe()}' for k, c in args.items())}" if args else "")


class ToolCalled(PredicateBase):
    """A tool (name or glob) was called, successfully by default, with arguments meeting conditions."""

    kind: Literal["tool_called"] = "tool_called"
    tool: str
    args: dict[str, Condition] = Field(default_factory=dict)
    successful: bool = True
    count: Condition | None = None

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        hits = _calls(ctx, self.tool, self.args, self.successful)
        expected = f"a call of {_what(self.tool, self.args)}"
        ok = self.count.check(len(hits)) if self.count is not None else bool(hits)
        if self.count is not None:
            expected += f", count {self.count.describe()}"
        return self.result(ok, expected, f"{len(hits)} matching call(s)")


class ToolNotCalled(PredicateBase):
    """A tool (name or glob) was never called (attempts count too) with arguments meeting conditions."""

    kind: Literal["tool_not_called"] = "tool_not_called"
    tool: str
    args: dict[str, Condition] = Field(default_factory=dict)

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        hits = _calls(ctx, self.tool, self.args, successful=False)
        return self.result(not hits, f"no call of {_what(self.tool, self.args)}",
                           f"{len(hits)} call(s), first at step {hits[0].index}" if hits else "never called")


class Answer(PredicateBase):
    """The agent's final answer to the user meets a condition, and every action it says was done is in the record
    of calls (`claims`, see workspace_sim.predicates.actions)."""

    kind: Literal["answer"] = "answer"
    condition: Condition
    claims: ClaimsMode = CLAIMS_FIELD

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        text = ctx.answer
        ok = text is not None and self.condition.check(text)
        r = self.result(ok, f"final answer {self.condition.describe()}", "no final answer" if text is None else short(text))
        return with_claims(r, claims_problems(ctx, "answer", self.claims))
