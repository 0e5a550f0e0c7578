"""EnvironmentSpec: the versioned document that fully describes one executable environment.

A spec holds the world and initial state, the user's request, the simulated user (persona, hidden
facts, scripted follow-ups), world events, policies, faults, predicates and a reference solution. A
multi-day scenario adds `stages` (working days): each opens with the clock moved and the day's
instructions, world events may fire when a stage opens, and predicates may belong to a stage.
Its parts live in synth.spec.parts; it loads from JSON or YAML (synth.spec.loading), saves
canonically (`EnvironmentSpec.save`) and builds a fresh `Workspace` for an episode. docs/spec.md
documents every field.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, PrivateAttr, field_validator, model_validator

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.rules.faults import Fault
from workspace_sim.rules.policies import Policy
from workspace_sim.predicates import EvalContext, Evaluation, Judge, credit_guards, evaluate, parse_predicates
from workspace_sim.services import all_services, services_named
from workspace_sim.text.validation import AwareTime, TimeZoneName
from workspace_sim.runtime.workspace import load_tables

from ..capabilities import CAPABILITIES
from .conversation import SpecConversation
from .parts import (
    _EMAIL, _ID, GUARD_KINDS, ReferenceSolution, Stage, UserSimulator, World, WorldEvent, _empty, _located, _Model,
)

SPEC_VERSION = "1.2"
# Versions this build reads: a 1.x reader reads every 1.y with y <= x (1.1 added free arguments,
# condition tolerances, alternative solutions and maintained predicates; 1.2 stages (multi-day scenarios),
# stage predicates, vague answers and the stale/forgetful baselines' step marks; older documents load unchanged).
READABLE_VERSIONS = frozenset({"1", "1.0", "1.1", "1.2"})


class EnvironmentSpec(_Model):
    """One executable environment: world, start state, request, user, events, rules, checks, solution."""

    version: Literal["1.2"] = SPEC_VERSION
    id: str = Field(pattern=_ID)
    title: str = Field(min_length=1)
    capabilities: list[str] = Field(min_length=1, description="Capability ids from the taxonomy.")
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    expected_horizon: int = Field(ge=1, description="Tool calls a competent agent needs.")
    world: World
    services: list[str] = Field(min_length=1)
    initial: dict[str, dict[str, list[dict[str, Any]]]] = Field(
        default_factory=dict, description="Start records: {service: {table: [record, ...]}}.")
    now: AwareTime
    timezone: TimeZoneName = "UTC"
    user: str = Field(pattern=_EMAIL)
    request: str = Field(min_length=1)
    user_simulator: UserSimulator = Field(default_factory=UserSimulator)
    stages: list[Stage] = Field(default_factory=list, exclude_if=_empty, description="The working days of a multi-day scenario, in "
                                                                  "order (none: a single day).")
    events: list[WorldEvent] = Field(default_factory=list)
    policies: list[Policy] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    predicates: list[dict[str, Any]] = Field(min_length=1, description="workspace_sim predicate documents.")
    pass_threshold: float | None = Field(None, gt=0, le=1, exclude_if=_empty, description=(
        "When set, an episode (and each stage) passes when its weighted score reaches this fraction, as benchmarks "
        "that pass at e.g. 0.75 of weighted checks define it; strict success (every predicate) is reported beside "
        "it. Absent: every predicate must pass."))
    reference: ReferenceSolution
    alternatives: list[ReferenceSolution] = Field(
        default_factory=list, description="Other right solutions; validation requires each to pass as the reference does.")
    seed: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict, description="Provenance: generator, template, ...")

    _parsed: list[Any] | None = PrivateAttr(default=None)
    _records: dict[str, dict[str, list[Any]]] | None = PrivateAttr(default=None)

    @field_validator("capabilities")
    @classmethod
    def _caps(cls, v: list[str]) -> list[str]:
        for c in v:
            if c not in CAPABILITIES:
                raise ValueError(f"unknown capability {c!r}; known: {', '.join(CAPABILITIES)}")
        return v

    @field_validator("services")
    @classmethod
    def _services(cls, v: list[str]) -> list[str]:
        known = services_named(v)
        bad = [s for s in v if s not in known]
        if bad:
            raise ValueError(f"unknown service(s) {bad}; available: {', '.join(sorted(all_services()))}")
        if len(set(v)) != len(v):
            raise ValueError("services listed twice")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "EnvironmentSpec":
        if not any(p.email.lower() == self.user.lower() for p in self.world.people):
            raise _located("user", f"{self.user!r} is not one of world.people")
        missing = [s for s in self.initial if s not in self.services]
        if missing:
            raise _located("initial", f"data for service(s) {missing} not listed in services")
        try:
            services = services_named(self.services)
            tables = load_tables([services[s] for s in self.services], self.initial)
        except SpecError as e:
            problem = e.problem.replace("(root): ", "").replace("Value error, ", "")
            raise _located("initial" + e.path.removeprefix("data"), problem) from None
        records: dict[str, dict[str, list[Any]]] = {}
        for qualified, rows in tables.items():
            sname, tname = qualified.split(".", 1)
            if rows:
                records.setdefault(sname, {})[tname] = list(rows.values())
        object.__setattr__(self, "_records", records)  # validated once; build_workspace reuses them
        try:
            object.__setattr__(self, "_parsed", parse_predicates(self.predicates))
        except SpecError as e:
            raise _located(e.path, e.problem) from None
        if all(p.weight == 0 for p in self._parsed):  # type: ignore[union-attr]
            raise _located("predicates", "every predicate has weight 0, so nothing is graded (a check of weight 0 "
                           "is informational: reported, counted in no score); give the checks the task is judged "
                           "by a positive weight")
        self._check_stages()
        return self

    def _check_stages(self) -> None:
        ids = [st.id for st in self.stages]
        if len(set(ids)) != len(ids):
            raise _located("stages", f"stage ids must be unique, got {ids}")
        if len(self.stages) == 1:
            raise _located("stages", "a scenario has two or more stages; leave `stages` out for a single day")
        previous = self.now
        for i, st in enumerate(self.stages):
            if i == 0:
                if st.instructions:
                    raise _located("stages[0].instructions", "day one opens with `request`; leave this empty")
                if st.opens_at is not None and st.opens_at != self.now:
                    raise _located("stages[0].opens_at", "day one opens at the spec's `now`; leave this out")
                continue
            if not st.instructions.strip():
                raise _located(f"stages[{i}].instructions", "a later stage needs the user's instructions for the day")
            if st.opens_at is not None:
                if st.opens_at <= previous:
                    raise _located(f"stages[{i}].opens_at", f"must be after {previous.isoformat()} (the stage "
                                   "before opens then)")
                previous = st.opens_at
        known = set(ids)
        for i, ev in enumerate(self.events):
            if ev.at_stage is not None and ev.at_stage not in known:
                raise _located(f"events[{i}].at_stage", f"no stage {ev.at_stage!r}; stages: {ids or 'none'}")
            if ev.at_stage is not None and ev.at_stage == ids[0]:
                raise _located(f"events[{i}].at_stage", "day one's records belong in `initial`; a stage event "
                               "fires when a later stage opens")
        for i, p in enumerate(self.predicates):
            sid = p.get("stage")
            if sid is not None and sid not in known:
                raise _located(f"predicates[{i}].stage", f"no stage {sid!r}; stages: {ids or 'none'}")
        for where, sol in self.solutions():
            if sol.stage_ends() != max(len(self.stages) - 1, 0):
                raise _located(f"{where}.steps", f"closes {sol.stage_ends()} stage(s) with end_stage steps; "
                               f"the scenario has {len(self.stages)} stage(s), so it must close "
                               f"{max(len(self.stages) - 1, 0)}")

    def stage_ids(self) -> list[str]:
        """The stages' ids in order (empty for a single day)."""
        return [st.id for st in self.stages]

    # --- what the rest of the system uses ------------------------------------------------------

    def task_text(self) -> str:
        """The user's request as the agent first sees it."""
        return self.request

    def config(self) -> WorkspaceConfig:
        """The workspace settings this spec fixes."""
        return WorkspaceConfig(
            user=self.user, services=list(self.services), now=self.now, timezone=self.timezone, seed=self.seed,
            policies=list(self.policies), faults=list(self.faults),
        )

    def build_workspace(self) -> Workspace:
        """A fresh workspace in the spec's start state (world events not yet applied)."""
        return Workspace.create(self.config(), self._records if self._records is not None else self.initial)

    def conversation(self, workspace: Workspace, user: Any = None) -> SpecConversation:
        """The episode's conversation for an MCP-only server (`synth.spec.conversation.SpecConversation`):
        the simulated user (`user`, else the scripted one) and the world events, by `SpecDriver`."""
        return SpecConversation(self, workspace, user)

    def parsed_predicates(self) -> list[Any]:
        """The predicates as workspace_sim predicate objects (parsed once)."""
        if self._parsed is None:
            object.__setattr__(self, "_parsed", parse_predicates(self.predicates))
        return self._parsed  # type: ignore[return-value]

    def is_guard(self, index: int) -> bool:
        """Whether predicate `index` is a guard (a collateral-damage kind, or marked `maintain`) rather than
        a success criterion."""
        p = self.predicates[index]
        return p.get("kind") in GUARD_KINDS or p.get("maintain") is True

    def solutions(self) -> list[tuple[str, ReferenceSolution]]:
        """The reference and every alternative solution, each with its field path in the spec."""
        return [("reference", self.reference), *((f"alternatives[{i}]", a) for i, a in enumerate(self.alternatives))]

    def evaluate(self, workspace: Workspace, final_answer: str | None = None, gate_guards: bool = True,
                 judge: Judge | None = None) -> Evaluation:
        """Judge an episode: every predicate, with guards credited only once a success predicate passes.

        Guards (unchanged, only_changed, tool_not_called, and any predicate marked maintain) hold trivially when nothing is done, so a
        do-nothing agent would otherwise earn partial credit; here it scores zero. `gate_guards=False`
        gives the raw verdicts. `judge` decides `judged` predicates (default: their key facts).
        """
        ev = evaluate(self.parsed_predicates(), workspace, final_answer, judge=judge, stages=self.stage_ids(),
                      threshold=self.pass_threshold)
        if not gate_guards:
            return ev
        groups = list(ev.stage_members().values()) if self.stages else None  # in a scenario, per day
        return credit_guards(ev, [self.is_guard(i) for i in range(len(ev.results))], groups)

    def passes_all(self, workspace: Workspace, final_answer: str | None = None) -> bool:
        """Whether every predicate passes (but for informational ones, of weight 0): strict success
        (`evaluate(...).strict`, which is `passed` when the spec sets no pass_threshold), stopping at the first
        failure; success predicates are tried first since they fail most often."""
        if self.stages:
            return self.evaluate(workspace, final_answer).strict
        ctx = EvalContext(workspace.initial, workspace.state, workspace.events(), final_answer, workspace.config.user)
        preds = self.parsed_predicates()
        counted = [i for i in range(len(preds)) if preds[i].weight > 0]  # an informational check (weight 0) is not
        order = [i for i in counted if not self.is_guard(i)] + [i for i in counted if self.is_guard(i)]
        return all(preds[i].evaluate(ctx).passed for i in order)

    def content_hash(self) -> str:
        """A stable hash of the canonical JSON: equal documents give equal hashes."""
        return hashlib.blake2b(self.canonical_json().encode(), digest_size=16).hexdigest()

    def canonical_json(self) -> str:
        """The spec as compact JSON with sorted keys (the hashed form)."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    def to_document(self) -> dict[str, Any]:
        """The spec as a JSON-ready dict in field order."""
        return self.model_dump(mode="json")

    def dumps(self, fmt: Literal["json", "yaml"] = "json") -> str:
        """The spec as JSON (indented, stable) or YAML text."""
        doc = self.to_document()
        if fmt == "yaml":
            return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110)
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    def save(self, path: str | Path) -> Path:
        """Write the spec to `path`: YAML for .yaml/.yml, JSON otherwise."""
        p = Path(path)
        fmt: Literal["json", "yaml"] = "yaml" if p.suffix.lower() in (".yaml", ".yml") else "json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.dumps(fmt), encoding="utf-8")
        return p
