"""mcp_server: serve an environment's workspace to any MCP client, over stdio or streamable HTTP.

`Episode` is one recorded run of an environment; `build_server(episode)` is its `MCPServer`;
`run_stdio` and `run_http` serve; `judge_record` evaluates a recorded episode afterwards.
`ControlOptions` serves an episode MCP-only: the agent asks the user and submits its answer itself.
"""

from .control import STATUS_URI, ControlOptions, Conversation
from .environment import EnvironmentLoadError, EnvironmentSource, PythonEnvironment, ServedEnvironment
from .episode import Episode, EpisodeError
from .replay import judge_record
from .results import PAGER_TOOL
from .server import START_PROMPT, TASK_URI, build_server

__all__ = [
    "ControlOptions", "Conversation", "EnvironmentLoadError", "EnvironmentSource", "Episode", "EpisodeError", "PAGER_TOOL", "PythonEnvironment",
    "START_PROMPT", "STATUS_URI", "ServedEnvironment", "TASK_URI", "build_server", "judge_record",
]
