"""EnvironmentSpec: the versioned document that fully describes one executable environment.

A spec holds the world and initial state, the user's request, the simulated user (persona, hidden
facts, scripted follow-ups), world events, policies, faults, predicates and a reference solution. A
multi-day scenario adds `stages` (working days): each opens with the clock moved and the day's
instructions, world events may fire when a stage opens, and predicates may belong to a stage.
It loads from JSON or YAML (`load_spec`), saves canonically (`EnvironmentSpec.save`) and builds a
fresh `Workspace` for an episode. docs/spec.md documents every field.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.rules.faults import Fault
from workspace_sim.rules.policies import Policy
from workspace_sim.predicates import EvalContext, Evaluation, Judge, evaluate, parse_predicates
from workspace_sim.services import all_services, services_named
from workspace_sim.text.validation import AwareTime, TimeZoneName
from workspace_sim.runtime.workspace import load_tables

from ..capabilities import CAPABILITIES
from ..errors import SpecLoadError

SPEC_VERSION = "1.2"
# Versions this build reads: a 1.x reader reads every 1.y with y <= x (1.1 added free arguments,
# condition tolerances, alternative solutions and maintained predicates; 1.2 stages (multi-day scenarios),
# stage predicates, vague answers and the stale/forgetful baselines' step marks; older documents load unchanged).
READABLE_VERSIONS = frozenset({"1", "1.0", "1.1", "1.2"})
FACT_PLACEHOLDER = re.compile(r"\{\{fact:([A-Za-z_][A-Za-z0-9_]*)\}\}")
# Predicate kinds that guard against collateral damage: they pass when nothing happens, so they
# earn credit only once some success predicate passes (see EnvironmentSpec.evaluate). A predicate
# of any kind marked `maintain: true` is a guard too.
GUARD_KINDS = frozenset({"unchanged", "only_changed", "tool_not_called", "secret_not_leaked"})

_ID = r"^[a-z0-9][a-z0-9._-]{0,127}$"
_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
_EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"


def _located(path: str, problem: str) -> PydanticCustomError:
    """A validation error that carries its own sub-path (reported after the field it was raised on)."""
    return PydanticCustomError("spec_problem", "{problem}", {"path": path, "problem": problem})


def _empty(value: Any) -> bool:
    """Whether an optional field holds its empty default (such fields stay out of saved documents, so a spec
    that does not use a feature reads as it did before the feature existed)."""
    return value is None or value is False or value == "" or value == [] or value == {}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Organisation(_Model):
    """The company the user works for."""

    name: str = Field(min_length=1)
    domain: str = Field(min_length=3, description="Mail domain of its people, e.g. 'acme.io'.")
    industry: str = ""


class Person(_Model):
    """Someone in the world: the user, colleagues (look-alikes included) or outside contacts."""

    name: str = Field(min_length=1)
    email: str = Field(pattern=_EMAIL)
    title: str = ""
    department: str = ""
    timezone: TimeZoneName = "UTC"
    role: Literal["user", "manager", "colleague", "external"] = "colleague"


class World(_Model):
    """The organisation and the people the environment mentions."""

    organisation: Organisation
    people: list[Person] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> "World":
        seen: set[str] = set()
        for i, p in enumerate(self.people):
            if p.email.lower() in seen:
                raise _located(f"people[{i}].email", f"duplicate email {p.email!r}")
            seen.add(p.email.lower())
        return self


class HiddenFact(_Model):
    """Something only the user knows; it is revealed when the agent's message mentions a keyword."""

    name: str = Field(pattern=_NAME, description="Referenced as {{fact:NAME}} in the reference solution.")
    value: str = Field(min_length=1, description="The fact itself, as the reference uses it.")
    reveal_keywords: list[str] = Field(min_length=1, description="Any of these words in the agent's message reveals it.")
    answer: str = Field(min_length=1, description="What the user says when it is revealed; contains the value.")
    decoy: str = Field("", description="What an agent that never asked would have to use instead.")
    vague: str = Field("", exclude_if=_empty, description="What the user says the first time they are asked, without the value; the "
                                       "precise answer comes only when the agent asks again (presses).")

    @model_validator(mode="after")
    def _answer_has_value(self) -> "HiddenFact":
        if self.value.casefold() not in self.answer.casefold():
            raise ValueError(f"answer must contain the value {self.value!r}")
        if self.vague and self.value.casefold() in self.vague.casefold():
            raise ValueError(f"vague must not contain the value {self.value!r} (the precise answer does)")
        if self.decoy and self.decoy == self.value:
            raise ValueError("decoy must differ from the value")
        return self


class Followup(_Model):
    """A scripted user message that opens turn `turn` (turn 0 is the request)."""

    turn: int = Field(ge=1)
    text: str = Field(min_length=1)
    advance_to: datetime | None = Field(None, description="Move the clock to this time when the turn opens.")


class UserSimulator(_Model):
    """The simulated user: persona, hidden facts, scripted follow-ups, and the reply otherwise."""

    persona: str = ""
    facts: list[HiddenFact] = Field(default_factory=list)
    followups: list[Followup] = Field(default_factory=list)
    default_reply: str = "I have nothing to add; please go ahead."

    @model_validator(mode="after")
    def _unique(self) -> "UserSimulator":
        names = [f.name for f in self.facts]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate fact names {dup}")
        turns = [f.turn for f in self.followups]
        if len(set(turns)) != len(turns):
            raise ValueError("two follow-ups for the same turn")
        return self


class WorldEvent(_Model):
    """A change from outside the agent, at the start of a turn or at a simulated time."""

    id: str = Field(pattern=_ID)
    at_turn: int | None = Field(None, ge=1, description="Apply when this turn opens.")
    at_time: datetime | None = Field(None, description="Apply before the first action at or after this time.")
    at_stage: str | None = Field(None, pattern=_ID, exclude_if=_empty, description="Apply when this stage (working day) opens, before "
                                                                "its instructions reach the agent.")
    announce: str | None = Field(None, description="Text the agent is told; absent for a silent change.")
    changes: list[dict[str, Any]] = Field(min_length=1, description="Workspace.apply_world_change operations.")
    distractor: bool = Field(False, exclude_if=_empty, description="A change the task does not depend on (noise, "
                                                                  "e.g. unrelated mail): a silent distractor needs "
                                                                  "no stale baseline to fail on it.")
    note: str = ""

    @model_validator(mode="after")
    def _one_trigger(self) -> "WorldEvent":
        if sum(t is not None for t in (self.at_turn, self.at_time, self.at_stage)) != 1:
            raise ValueError("give exactly one of at_turn, at_time or at_stage")
        if self.at_time is not None and self.at_time.tzinfo is None:
            raise ValueError("at_time needs a time zone offset")
        return self


class CallStep(_Model):
    """A tool call of the reference solution; args may contain {{fact:NAME}} placeholders."""

    kind: Literal["call"] = "call"
    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    expect_error: str | None = Field(None, description="Error code this call must end in (e.g. 'fault').")
    free: list[str] = Field(default_factory=list, description="Arguments whose value the task does not care about: "
                                                              "validation's mutants leave them alone.")
    stale_args: dict[str, Any] | None = Field(
        None, exclude_if=_empty, description="The arguments an agent would send that never re-read after a silent change (it still "
                          "believes what it read earlier): validation's stale baseline sends these instead.")
    recalls: bool = Field(False, exclude_if=_empty, description="The step carries out an instruction from an earlier turn or day, not "
                                             "the latest one: validation's forgetful baseline leaves it out.")
    note: str = ""

    @model_validator(mode="after")
    def _free_names_args(self) -> "CallStep":
        for i, name in enumerate(self.free):
            if name not in self.args:
                raise _located(f"free[{i}]", f"{name!r} is not an argument of this call; "
                               f"its arguments are {sorted(self.args) or 'none'}")
        if len(set(self.free)) != len(self.free):
            raise _located("free", "an argument is listed twice")
        return self


class SayStep(_Model):
    """A message to the user (a progress report); the user replies and the next turn opens."""

    kind: Literal["say"] = "say"
    text: str = Field(min_length=1)


class AskStep(_Model):
    """A question to the user, meant to reveal the named hidden facts; the next turn opens."""

    kind: Literal["ask"] = "ask"
    text: str = Field(min_length=1)
    facts: list[str] = Field(default_factory=list, description="Names of the facts this question should reveal.")


class EndStageStep(_Model):
    """The agent's report that closes a stage (working day); the next stage opens with its instructions."""

    kind: Literal["end_stage"] = "end_stage"
    text: str = Field(min_length=1)


Step = Annotated[Union[CallStep, SayStep, AskStep, EndStageStep], Field(discriminator="kind")]


class Stage(_Model):
    """A working day of a multi-day scenario: it opens with the clock moved to its morning, the world events
    due then, and the user's instructions for the day; the workspace carries over from the day before."""

    id: str = Field(pattern=_ID)
    title: str = Field("", description="The day as the agent is told it, e.g. 'Tuesday 3 March'.")
    opens_at: AwareTime | None = Field(None, description="The clock moves here when the stage opens (after the "
                                                         "previous stage's). Day one starts at the spec's `now`.")
    instructions: str = Field("", description="The user's message that opens the stage. Day one opens with the "
                                              "spec's `request`, so its instructions stay empty.")


class ReferenceSolution(_Model):
    """An ordered solution that passes every predicate, and its final answer to the user."""

    steps: list[Step] = Field(min_length=1)
    final_answer: str | None = None

    def calls(self) -> list[CallStep]:
        """The tool-call steps, in order."""
        return [s for s in self.steps if isinstance(s, CallStep)]

    def stage_ends(self) -> int:
        """How many stages this solution closes (its end_stage steps)."""
        return sum(isinstance(s, EndStageStep) for s in self.steps)


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

    def conversation(self, workspace: Workspace, user: Any = None) -> Any:
        """The episode's conversation for an MCP-only server (`synth.spec.conversation.SpecConversation`):
        the simulated user (`user`, else the scripted one) and the world events, by `SpecDriver`."""
        from .conversation import SpecConversation

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
        groups = list(ev.stage_members().values()) if self.stages else [list(range(len(ev.results)))]
        for members in groups:  # in a scenario, a day's guards are credited once that day's work shows
            guards = [i for i in members if self.is_guard(i)]
            progressed = any(ev.results[i].passed for i in members if i not in guards)
            if guards and not progressed:
                for i in guards:
                    r = ev.results[i]
                    if r.passed:
                        r.passed = False
                        r.observed = f"{r.observed} (not credited: no success predicate passed)"
        return ev

    def passes_all(self, workspace: Workspace, final_answer: str | None = None) -> bool:
        """Whether every predicate passes: strict success (`evaluate(...).strict`, which is `passed` when the spec
        sets no pass_threshold), stopping at the first failure; success predicates are tried first since they
        fail most often."""
        if self.stages:
            return self.evaluate(workspace, final_answer).strict
        ctx = EvalContext(workspace.initial, workspace.state, workspace.events(), final_answer, workspace.config.user)
        preds = self.parsed_predicates()
        order = [i for i in range(len(preds)) if not self.is_guard(i)] + [i for i in range(len(preds)) if self.is_guard(i)]
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


def validation_problems(exc: ValidationError) -> list[tuple[str, str]]:
    """Each pydantic error as (field path like 'reference.steps[2].tool', problem)."""
    out = []
    for err in exc.errors():
        parts: list[str] = []
        loc = err.get("loc", ())
        for i, p in enumerate(loc):
            if isinstance(p, int):
                parts.append(f"[{p}]")
            elif i > 0 and isinstance(loc[i - 1], int) and p in ("call", "say", "ask", "end_stage") or "[" in str(p):
                continue  # the tag pydantic adds for a member of a discriminated union
            else:
                parts.append(("." if parts else "") + str(p))
        path = "".join(parts)
        ctx = err.get("ctx") or {}
        if err.get("type") == "spec_problem":
            sub = str(ctx.get("path", ""))
            path = f"{path}.{sub}" if path and sub and not sub.startswith("[") else path + sub
            msg = str(ctx.get("problem", err.get("msg")))
        else:
            msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
            if err.get("type") != "value_error" and "input" in err:
                shown = repr(err["input"])
                if len(shown) <= 80:
                    msg = f"{msg} (got {shown})"
        out.append((path, msg))
    return out


def parse_spec(doc: Any, source: str = "") -> EnvironmentSpec:
    """Validate a spec document (already parsed JSON/YAML); problems raise SpecLoadError with paths."""
    if not isinstance(doc, dict):
        raise SpecLoadError([("", f"a spec must be an object (mapping), got {type(doc).__name__}")], source)
    version = doc.get("version", SPEC_VERSION)
    if str(version) not in READABLE_VERSIONS:
        raise SpecLoadError([("version", f"unsupported spec version {version!r}; this build reads "
                              f"{', '.join(sorted(READABLE_VERSIONS))}")], source)
    try:
        return EnvironmentSpec.model_validate({**doc, "version": SPEC_VERSION})
    except ValidationError as e:
        raise SpecLoadError(validation_problems(e), source) from None


def loads_spec(text: str, fmt: Literal["json", "yaml", "auto"] = "auto", source: str = "") -> EnvironmentSpec:
    """Parse spec text (JSON or YAML) and validate it."""
    try:
        if fmt == "json" or (fmt == "auto" and text.lstrip().startswith("{")):
            doc = json.loads(text)
        else:
            doc = yaml.safe_load(text)
    except json.JSONDecodeError as e:
        raise SpecLoadError([("", f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}")], source) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise SpecLoadError([("", f"not valid YAML: {getattr(e, 'problem', None) or e}{where}")], source) from None
    return parse_spec(doc, source)


def load_spec(path: str | Path) -> EnvironmentSpec:
    """Read and validate a spec file (.json, .yaml or .yml); errors name the file, field path and problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecLoadError([("", "file not found")], str(p)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise SpecLoadError([("", f"cannot read file: {e}")], str(p)) from None
    suffix = p.suffix.lower()
    fmt: Literal["json", "yaml", "auto"] = "json" if suffix == ".json" else "yaml" if suffix in (".yaml", ".yml") else "auto"
    return loads_spec(text, fmt, str(p))


def spec_json_schema() -> dict[str, Any]:
    """The JSON Schema of the spec document (what `coworkenv schema` prints)."""
    schema = EnvironmentSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://coworkenv.dev/schema/environment-spec-v{SPEC_VERSION}.json"
    return schema
