"""synth.spec: the EnvironmentSpec document and its turn semantics.

The spec model (world, start state, request, simulated user, events, stages, rules, predicates,
reference solution), its loading from JSON/YAML and its JSON Schema; `SpecDriver`, the one
implementation of an episode's turns (the scripted user revealing hidden facts, follow-ups, world
events, working days), which the validator, the episode runners and the MCP server's conversation
all use; `ScriptedUser`; `SpecConversation`, the conversation an MCP-only server holds.
"""

from .conversation import SpecConversation
from .driver import DAY_HEADER, Checkpoint, Run, SpecDriver, StepOutcome, day_header, run_reference, run_steps
from .model import (
    FACT_PLACEHOLDER, GUARD_KINDS, READABLE_VERSIONS, SPEC_VERSION, AskStep, CallStep, EndStageStep, EnvironmentSpec,
    Followup, HiddenFact, Organisation, Person, ReferenceSolution, SayStep, Stage, Step, UserSimulator, World,
    WorldEvent, load_spec, loads_spec, parse_spec, spec_json_schema, validation_problems,
)
from .user import ScriptedUser

__all__ = [
    "AskStep", "CallStep", "Checkpoint", "DAY_HEADER", "EndStageStep", "EnvironmentSpec", "FACT_PLACEHOLDER",
    "Followup", "GUARD_KINDS", "HiddenFact", "Organisation", "Person", "READABLE_VERSIONS", "ReferenceSolution",
    "Run", "SPEC_VERSION", "SayStep", "ScriptedUser", "SpecConversation", "SpecDriver", "Stage", "Step",
    "StepOutcome", "UserSimulator", "World", "WorldEvent", "day_header", "load_spec", "loads_spec", "parse_spec",
    "run_reference", "run_steps", "spec_json_schema", "validation_problems",
]
