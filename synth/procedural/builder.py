"""SpecBuilder: what a template writes into (start data, request, predicates, reference), executed live.

Templates first add start data (files, mail, events, tickets), then act through `call`, which both
records a reference step and runs it on a live workspace, so later steps can use real results
(a created ticket's key, a free slot). With faults configured, a call that meets an injected fault
is recorded with `expect_error: fault` and retried, as a robust agent would.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any, Callable

from workspace_sim import ToolResult, Workspace, WorkspaceConfig
from workspace_sim.predicates.claims import find_claims
from workspace_sim.rules.faults import Fault

from ..spec import EnvironmentSpec
from .world import World, WorldMaker


Act = Callable[[], None]
"""What a template returns after adding its start data: the function that performs the task."""


ASKS_OPENING = ("I have a few things for you today.", "A few things, when you get a chance:", "Some jobs for today:",
                "Could you take care of these?", "Here's my list for you:", "Several small things today:",
                "Hi! Can you get through these for me?", "A handful of tasks:", "Morning - a couple of things:",
                "Things I need done today:")
"""How a request of several numbered parts opens (drawn with its own rng: the task's draws are unchanged)."""


class TemplateError(RuntimeError):
    """A template could not build its task (a generator bug, or a draw that does not fit)."""


class SpecBuilder:
    """Accumulates one environment; several templates may write into the same builder (composition)."""

    def __init__(self, maker: WorldMaker, world: World, now: datetime, seed: int) -> None:
        self.maker, self.world, self.now, self.seed = maker, world, now, seed
        self.rng = maker.rng
        self.services: list[str] = []
        self.data: dict[str, dict[str, list[dict[str, Any]]]] = {}
        self.requests: list[str] = []
        self.answers: list[str] = []
        self.predicates: list[dict[str, Any]] = []
        self.guards: list[dict[str, Any]] = []
        self.allowed: list[str] = []
        self.steps: list[dict[str, Any]] = []
        self.facts: list[dict[str, Any]] = []
        self.followups: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.policies: list[dict[str, Any]] = []
        self.faults: list[dict[str, Any]] = []
        self.capabilities: list[str] = []
        self.titles: list[str] = []
        self.templates: list[str] = []
        self.evidence: list[dict[str, Any]] = []  # evidence files and the facts only they hold (metadata.evidence)
        self.persona = ""
        self.stages: list[dict[str, Any]] = []
        self.stage: str | None = None  # the open stage's id (None before day one and between end and open)
        self.turn = 0
        self._ws: Workspace | None = None
        self._counters: dict[str, int] = {}

    # --- start data ------------------------------------------------------------------------------

    def use(self, *services: str) -> None:
        """Enable services (start data for them may follow); contacts and mail accounts come with the world."""
        if self._ws is not None:
            raise TemplateError("services must be enabled before the first call")
        for s in services:
            if s not in self.services:
                self.services.append(s)
                if s == "contacts":
                    self._add_contacts()
                if s == "mail":
                    rows = self.table("mail", "accounts")
                    rows.extend({"email": p.email, "name": p.name} for p in self.world.people if p.role != "external")

    def table(self, service: str, table: str) -> list[dict[str, Any]]:
        """The start rows of a table (created empty on first use)."""
        if self._ws is not None:
            raise TemplateError("start data is frozen after the first call")
        return self.data.setdefault(service, {}).setdefault(table, [])

    def next_id(self, prefix: str) -> str:
        """A start-data id like 'mail-007' (never clashing with ids the tools issue)."""
        n = self._counters[prefix] = self._counters.get(prefix, 0) + 1
        return f"{prefix}-{n:03d}"

    def _add_contacts(self) -> None:
        rows = self.table("contacts", "people")
        for p in self.world.people:
            if p.role == "external":
                continue
            rows.append({"email": p.email, "name": p.name, "title": p.title, "department": p.department,
                         "manager": self.world.manager.email if p is self.world.user else None,
                         "timezone": p.timezone, "phone": self.maker.phone(p.timezone)})

    def ago(self, days: float = 0, hours: float = 0) -> datetime:
        """A time before now."""
        return self.now - timedelta(days=days, hours=hours)

    # --- the task --------------------------------------------------------------------------------

    def ask(self, request: str, title: str, capability: str, template: str) -> None:
        """Add one part of the user's request (composed requests are numbered)."""
        self.requests.append(request)
        self.titles.append(title)
        if capability not in self.capabilities:
            self.capabilities.append(capability)
        self.templates.append(template)

    def check(self, predicate: dict[str, Any], weight: float | None = None) -> None:
        """Add a success predicate; in a scenario it belongs to the open stage (judged on the state that day
        closes on). `weight` sets its share of the weighted score."""
        extra: dict[str, Any] = {}
        if self.stage is not None:
            extra["stage"] = self.stage
        if weight is not None:
            extra["weight"] = weight
        self.predicates.append({**predicate, **extra} if extra else predicate)

    def guard(self, predicate: dict[str, Any]) -> None:
        """Add a collateral-damage guard (unchanged / only_changed / tool_not_called)."""
        self.guards.append(predicate)

    def allow(self, *scopes: str) -> None:
        """Scopes the task may change; one only_changed guard over all of them is added at the end."""
        self.allowed.extend(s for s in scopes if s not in self.allowed)

    def answer(self, text: str) -> None:
        """A sentence of the final answer."""
        self.answers.append(text)

    # --- acting ----------------------------------------------------------------------------------

    @property
    def ws(self) -> Workspace:
        """The live workspace (created, and start data frozen, on first use)."""
        if self._ws is None:
            config = WorkspaceConfig(user=self.world.user.email, services=list(self.services), now=self.now,
                                     timezone=self.world.user.timezone, seed=self.seed,
                                     policies=self.policies, faults=[Fault.model_validate(f) for f in self.faults])
            self._ws = Workspace.create(config, self.data)
            self._ws.defer_reads = True  # the live run's log is dropped with the builder; nobody asks what it read
            self._ws.add_message("user", "(request)")
        return self._ws

    def fact(self, name: str, value: str, keywords: list[str], answer: str, decoy: str = "") -> str:
        """Declare a hidden fact the user reveals when asked; returns its placeholder."""
        self.facts.append({"name": name, "value": value, "reveal_keywords": keywords, "answer": answer, "decoy": decoy})
        return "{{fact:%s}}" % name

    def _fill(self, value: Any) -> Any:
        if isinstance(value, str) and "{{fact:" in value:
            for f in self.facts:
                value = value.replace("{{fact:%s}}" % f["name"], f["value"])
            return value
        if isinstance(value, list):
            return [self._fill(v) for v in value]
        if isinstance(value, dict):
            return {k: self._fill(v) for k, v in value.items()}
        return value

    def call(self, tool: str, _free: tuple[str, ...] = (), _stale: dict[str, Any] | None = None,
             _recalls: bool = False, **args: Any) -> Any:
        """Record a reference call and run it live (placeholders filled); returns its data. A tool error
        is a template bug, except injected faults, which are recorded as expected and retried. `_free`
        names arguments whose value the task does not care about (the step's `free`: no mutant changes them);
        `_stale` gives the arguments an agent that never re-read after a silent change would send (the
        step's `stale_args`, only when they differ); `_recalls` marks a step that carries out an earlier
        turn's or day's instruction (a standing rule), not the latest one."""
        live = self._fill(args)
        extra: dict[str, Any] = {"free": list(_free)} if _free else {}
        if _stale is not None and _stale != args:
            extra["stale_args"] = _stale
        if _recalls:
            extra["recalls"] = True
        for _ in range(10):
            res: ToolResult = self.ws.call(tool, live)
            if res.ok:
                self.steps.append({"kind": "call", "tool": tool, "args": args, **extra})
                return res.data
            if res.error is not None and res.error.code == "fault":
                self.steps.append({"kind": "call", "tool": tool, "args": args, "expect_error": "fault", **extra})
                continue
            raise TemplateError(f"{tool}({args}) failed: {res.text}")
        raise TemplateError(f"{tool} kept failing with faults")

    def say(self, text: str, followup: str | None = None) -> int:
        """A message to the user; opens the next turn (with a scripted follow-up); returns that turn."""
        self.steps.append({"kind": "say", "text": text})
        return self._open_turn(text, followup)

    def question(self, text: str, facts: list[str]) -> int:
        """A question to the user meant to reveal `facts`; opens the next turn."""
        self.steps.append({"kind": "ask", "text": text, "facts": facts})
        return self._open_turn(text, None)

    def _open_turn(self, text: str, followup: str | None) -> int:
        self.ws.add_message("assistant", text)
        self.turn += 1
        if followup is not None:
            self.followups.append({"turn": self.turn, "text": followup})
        self.ws.add_message("user", followup or "(reply)")
        return self.turn

    def world_change(self, changes: list[dict[str, Any]], at_turn: int, announce: str | None = None,
                     note: str = "") -> None:
        """A world event that opens turn `at_turn`; applied to the live workspace now (the builder
        must be exactly at that turn)."""
        if at_turn != self.turn:
            raise TemplateError("world_change must be applied right after the turn it opens")
        self.events.append({"id": f"event-{len(self.events) + 1}", "at_turn": at_turn, "announce": announce,
                            "changes": changes, "note": note})
        self._apply_change(changes, note)

    def _apply_change(self, changes: list[dict[str, Any]], note: str) -> None:
        # what the world changes is not collateral damage, and the guards know it (EvalContext.agent_diff): its
        # records stay out of the allowed scopes, so an agent that tampers with them is still caught
        self.ws.apply_world_change(changes, note=note)

    # --- stages (working days) -------------------------------------------------------------------

    def open_stage(self, stage_id: str, title: str, opens_at: datetime | None = None, instructions: str = "") -> None:
        """Open a working day. Day one (the first call) opens at `now` with the request, so it takes neither
        `opens_at` nor `instructions`; a later day needs both, and the day before must be closed
        (`end_stage`). The live clock moves to `opens_at`; the day's user message opens a new turn."""
        if not self.stages:
            if opens_at is not None or instructions:
                raise TemplateError("day one opens at `now` with the request; give no opens_at or instructions")
            self.stages.append({"id": stage_id, "title": title})
            self.stage = stage_id
            return
        if self.stage is not None:
            raise TemplateError(f"close stage {self.stage!r} with end_stage before opening {stage_id!r}")
        if opens_at is None or not instructions.strip():
            raise TemplateError(f"stage {stage_id!r} needs opens_at and the day's instructions")
        ws = self.ws
        if opens_at <= ws.state.now:
            raise TemplateError(f"stage {stage_id!r} opens at {opens_at.isoformat()}, not after the clock "
                                f"({ws.state.now.isoformat()})")
        ws.advance_clock((opens_at - ws.state.now).total_seconds())
        self.stages.append({"id": stage_id, "title": title, "opens_at": opens_at.isoformat(),
                            "instructions": instructions})
        self.stage = stage_id
        ws.add_message("user", instructions)

    def stage_change(self, changes: list[dict[str, Any]], announce: str | None = None, note: str = "") -> None:
        """A world event that fires when the open stage (a later day) opens, before its instructions reach
        the agent: silent when `announce` is None. Applied to the live workspace now, so open the stage and
        apply its changes before acting in it."""
        if self.stage is None or self.stage == self.stages[0]["id"]:
            raise TemplateError("stage_change belongs to a later stage that is open")
        self.events.append({"id": f"event-{len(self.events) + 1}", "at_stage": self.stage, "announce": announce,
                            "changes": changes, "note": note})
        self._apply_change(changes, note)

    def end_stage(self, report: str) -> None:
        """Close the open stage with the day's report to the user (an `end_stage` step); the last day is
        not closed: its report is the final answer."""
        if self.stage is None:
            raise TemplateError("no open stage to close")
        self.steps.append({"kind": "end_stage", "text": report})
        self.ws.add_message("assistant", report)
        self.ws.close_stage(self.stage)
        self.turn += 1
        self.stage = None

    # --- result ----------------------------------------------------------------------------------

    def build(self, env_id: str, difficulty: str) -> EnvironmentSpec:
        """The finished spec (validated by the model; execution checks are the validator's)."""
        guards = list(self.guards)
        if self.allowed:
            guards.append({"kind": "only_changed", "scopes": self.allowed,
                           "description": "nothing outside the task's scope was changed"})
        else:
            guards.extend({"kind": "unchanged", "scope": s, "description": f"{s} left untouched"}
                          for s in self.services if any(self.data.get(s, {}).values()))
        if len(self.requests) == 1:
            request = self.requests[0]
        else:
            opening = random.Random(f"opening:{self.seed}:{'+'.join(self.templates)}").choice(ASKS_OPENING)
            request = opening + "\n" + "\n".join(
                f"{i}. {r}" for i, r in enumerate(self.requests, 1))
        answer = " ".join(self.answers) if self.answers else None
        if answer and find_claims(answer) and not any(_reads_answer(p) for p in self.predicates):
            # no answer check applies the claims check: a guard does ("Sent Dana the total" needs that mail)
            guards.append({"kind": "claims", "description": "every action the final answer reports is in the record"})
        calls = sum(1 for s in self.steps if s["kind"] == "call" and not s.get("expect_error"))
        doc = {
            "id": env_id, "title": "; ".join(self.titles), "capabilities": self.capabilities,
            "difficulty": difficulty, "expected_horizon": max(calls, 1),
            "world": {"organisation": self.world.organisation.model_dump(),
                      "people": [p.model_dump() for p in self.world.people]},
            "services": self.services, "initial": self.data, "now": self.now.isoformat(),
            "timezone": self.world.user.timezone, "user": self.world.user.email, "request": request,
            "user_simulator": {"persona": self.persona or f"{self.world.user.name}, {self.world.user.title}; "
                               "answers briefly and only what is asked", "facts": self.facts,
                               "followups": self.followups},
            **({"stages": self.stages} if len(self.stages) > 1 else {}),
            "events": self.events, "policies": self.policies, "faults": self.faults,
            "predicates": [*self.predicates, *guards],
            "reference": {"steps": self.steps, "final_answer": answer},
            "seed": self.seed, "metadata": {"generator": "procedural", "templates": self.templates,
                                            **({"evidence": self.evidence} if self.evidence else {})},
        }
        return EnvironmentSpec.model_validate(doc)


def _reads_answer(p: dict[str, Any]) -> bool:
    """Whether a predicate document checks the final answer (and so its claims of action), inside combinators too."""
    if p.get("kind") in ("answer", "claims") or (p.get("kind") == "judged" and p.get("target", "answer") in (
            "answer", "transcript", "messages", {"answer": True}, {"transcript": True}, {"messages": True})):
        return True
    kids = [*(p.get("predicates") or []), *([p["predicate"]] if isinstance(p.get("predicate"), dict) else [])]
    return any(_reads_answer(k) for k in kids if isinstance(k, dict))
