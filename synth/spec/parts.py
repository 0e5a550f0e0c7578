"""The parts of an EnvironmentSpec: the world, the simulated user, world events, solution steps and stages.

Each part is a frozen pydantic model that forbids unknown fields; `EnvironmentSpec` (synth.spec.model)
assembles them. `FACT_PLACEHOLDER` is how a reference step names a hidden fact; `GUARD_KINDS` the
predicate kinds that guard against collateral damage.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

# GUARD_KINDS: the predicate kinds that guard against collateral damage (workspace_sim.predicates.guards)
from workspace_sim.predicates.guards import GUARD_KINDS  # noqa: F401 (re-exported for the spec model)
from workspace_sim.text.validation import AwareTime, TimeZoneName

FACT_PLACEHOLDER = re.compile(r"\{\{fact:([A-Za-z_][A-Za-z0-9_]*)\}\}")

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
