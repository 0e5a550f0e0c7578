"""coworkenv: the command line and the public API, re-exported from the packages that hold it.

Names are imported on first use, so `import coworkenv` (and the CLI) stays fast:

    from coworkenv import Workspace, load_spec, run_episode, make_policy
    spec = load_spec("envs/mail-triage-reply-with-figure-3.json")
    record = run_episode(spec, make_policy("teacher"))
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    # the simulator
    "Workspace": "workspace_sim", "WorkspaceConfig": "workspace_sim", "ToolResult": "workspace_sim",
    "all_tools": "workspace_sim", "parse_predicates": "workspace_sim.predicates", "evaluate": "workspace_sim.predicates",
    # environments
    "EnvironmentSpec": "synth", "load_spec": "synth", "parse_spec": "synth", "validate_spec": "synth",
    "generate": "synth.procedural", "synthesize": "synth.pipeline", "CAPABILITIES": "synth",
    # serving
    "build_server": "mcp_server", "PythonEnvironment": "mcp_server",
    # episodes, records, reports
    "run_episode": "trainers.episodes", "run_batch": "trainers.episodes", "make_policy": "trainers.episodes",
    "BatchConfig": "trainers.episodes", "PolicySpec": "trainers.episodes", "replay_record": "trainers.episodes",
    "EpisodeRecord": "workspace_sim.record", "read_records": "workspace_sim.record", "write_records": "workspace_sim.record",
    "write_report": "trainers.report",
}
__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'coworkenv' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
