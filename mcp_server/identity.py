"""What an episode's MCP server says about itself, made without the `mcp` SDK: its name, version, title and
instructions.

`mcp_server.server` gives the SDK's `MCPServer` these; `mcp_server.first_answer` writes them into a
stdio server's first answer before the SDK is loaded. Both must say the same, byte for byte
(`tests/mcp_server/test_serve_lazy.py` compares the two answers).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
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
    found = dist_info_version(SERVER_NAME)
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version  # 15-20 ms of a cold start: only when needed

    try:
        return version(SERVER_NAME)
    except PackageNotFoundError:
        return "0"


def dist_info_version(name: str) -> str | None:
    """The version `importlib.metadata.version(name)` reports, found the way it finds it (the first `NAME-*.dist-info`
    or `NAME*.egg-info` folder in `sys.path` order, names compared normalised; its METADATA, else PKG-INFO), without
    importing importlib.metadata and the email parser (15-20 ms of a cold start). None where the two lookups could
    differ (a zip or an egg on the path, another distribution finder, no metadata file or Version line); the caller
    then asks importlib.metadata."""
    from workspace_sim.core.dist_folders import Undecidable, metadata_folders

    wanted = _normalise(name)
    try:
        for base in metadata_folders():
            if _normalise(os.path.basename(base).lower().rpartition(".")[0].partition("-")[0]) == wanted:
                return _metadata_version(os.path.join(base, "METADATA"), os.path.join(base, "PKG-INFO"))
    except Undecidable:
        return None
    return None


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _metadata_version(*paths: str) -> str | None:
    """The `Version:` header of the first of these metadata files that is there and not empty (headers end at the
    first blank line); None when there is none, or a header this simple reading might misread."""
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError):
            return None
        if not text:
            continue
        found = None
        for line in text.splitlines():
            if not line.strip():
                break
            key, colon, value = line.partition(":")
            if colon and key.strip().lower() == "version" and not key[:1].isspace():
                if found is not None:
                    return None  # two Version headers: leave it to importlib.metadata
                found = value.strip()
        return found or None
    return None


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
