"""mcp_server: serve an environment's workspace to any MCP client, over stdio or streamable HTTP.

`Episode` is one recorded run of an environment; `build_server(episode)` is its `MCPServer`;
`run_stdio` and `run_http` serve; `judge_record` evaluates a recorded episode afterwards.
`ControlOptions` serves an episode MCP-only: the agent asks the user and submits its answer itself.

Names are imported on first use: importing this package loads no `mcp` SDK (whose package imports
its whole client and server, most of a cold start). Only the modules that speak MCP themselves
(`server`, `stdio`, `fastpath`) import it, and they are imported where first needed, so that a
server's first answer (`coworkenv serve`'s initialize, an HTTP admin create) comes before the SDK is.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ControlOptions": "control", "Conversation": "control", "STATUS_URI": "control",
    "EnvironmentLoadError": "environment", "EnvironmentSource": "environment",
    "PythonEnvironment": "environment", "ServedEnvironment": "environment",
    "Episode": "episode", "EpisodeError": "episode", "judge_record": "replay", "PAGER_TOOL": "results",
    "START_PROMPT": "identity", "TASK_URI": "identity", "build_server": "server",
    "run_stdio": "run", "run_http": "run",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_server' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
