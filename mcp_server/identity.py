"""What an episode's MCP server says about itself, made without the `mcp` SDK: its name, version, title and
instructions.

`mcp_server.server` gives the SDK's `MCPServer` these; `mcp_server.first_answer` writes them into a
stdio server's first answer before the SDK is loaded. Both must say the same, byte for byte
(`tests/test_serve_lazy.py` compares the two answers).
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from .control import STATUS_URI, how_to_finish
from .results import PAGER_TOOL

if TYPE_CHECKING:
    from .episode import Episode

TASK_URI = "workspace://task"
START_PROMPT = "start_task"
SERVER_NAME = "coworkenv"


@lru_cache(maxsize=1)
def server_version() -> str:
    """The version the server reports (`serverInfo.version`): the installed coworkenv's, "0" when not installed."""
    try:
        return version("coworkenv")
    except PackageNotFoundError:
        return "0"


def server_title(episode: Episode) -> str:
    """The title the episode's server gives itself (and stamps into every result's `serverInfo`)."""
    return f"coworkenv: {episode.env.title}"


def finishing(episode: Episode) -> str:
    """How an MCP-only episode's agent finishes (submit_answer; in a multi-day scenario, a report per day)."""
    conv = episode.control.conversation if episode.control is not None else None
    return how_to_finish(conv.status() if conv is not None else {})


def instructions(episode: Episode) -> str:
    """The server's `instructions`: who the agent works for, where the task is, how long results are paged, and
    for an MCP-only episode how it asks the user and finishes."""
    user = episode.workspace.config.user
    text = (f"You are working for {user} in a simulated workspace ({episode.env.title}). The request is in the "
            f"{TASK_URI} resource and the {START_PROMPT} prompt. Act only through these tools; when a result is "
            f"long, it ends with a note telling how to read the rest with {PAGER_TOOL}.")
    if episode.control is not None:
        ask = "ask_user" in episode.control.tool_names()
        text += ((" If you need information only they have, ask them with ask_user." if ask else "")
                 + f" {finishing(episode)} The {STATUS_URI} resource shows the episode's progress, and its score "
                   f"once it has ended.")
    return text
