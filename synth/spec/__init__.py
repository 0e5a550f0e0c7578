"""synth.spec: the EnvironmentSpec document and its turn semantics.

One job per module: `parts` (the world, simulated user, events, steps, stages), `model` (the
EnvironmentSpec that assembles them, builds a workspace and judges an episode), `loading` (JSON/YAML
in, errors with field paths), `schema` (the JSON Schema `coworkenv schema` prints), `user` (the
scripted user), `driver` (`SpecDriver`, the one implementation of an episode's turns: hidden facts,
follow-ups, world events, working days, used by the validator, the episode runners and the MCP
conversation) and `conversation` (`SpecConversation`, the conversation an MCP-only server holds).
Imports flow parts <- user <- driver <- conversation <- model <- loading, schema.
"""

from .conversation import SpecConversation
from .driver import (
    DAY_HEADER, Checkpoint, Run, ScriptedSpec, SpecDriver, StepOutcome, day_header, run_reference, run_steps,
)
from .loading import load_spec, loads_spec, parse_spec, validation_problems
from .model import READABLE_VERSIONS, SPEC_VERSION, EnvironmentSpec
from .parts import (
    FACT_PLACEHOLDER, GUARD_KINDS, AskStep, CallStep, EndStageStep, Followup, HiddenFact, Organisation, Person,
    ReferenceSolution, SayStep, Stage, Step, UserSimulator, World, WorldEvent,
)
from .schema import spec_json_schema
from .user import ScriptedUser

__all__ = [
    "AskStep", "CallStep", "Checkpoint", "DAY_HEADER", "EndStageStep", "EnvironmentSpec", "FACT_PLACEHOLDER",
    "Followup", "GUARD_KINDS", "HiddenFact", "Organisation", "Person", "READABLE_VERSIONS", "ReferenceSolution",
    "Run", "SPEC_VERSION", "SayStep", "ScriptedSpec", "ScriptedUser", "SpecConversation", "SpecDriver", "Stage",
    "Step", "StepOutcome", "UserSimulator", "World", "WorldEvent", "day_header", "load_spec", "loads_spec",
    "parse_spec", "run_reference", "run_steps", "spec_json_schema", "validation_problems",
]
