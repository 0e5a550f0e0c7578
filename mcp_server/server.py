"""The MCP face of one episode, on the official SDK's `MCPServer`.

Tools are not re-declared here: every MCP tool is generated from the workspace's tool registry
(name, description, input schema, annotations), plus the pager tool for long results. A call
goes straight to the episode, so a workspace error reaches the model as `isError` with the
workspace's own message. The task is served as the `workspace://task` resource and the
`start_task` prompt; nothing else about the environment is served.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool

from workspace_sim import all_services, all_tools

from .episode import Episode
from .results import PAGER, PAGER_TOOL

TASK_URI = "workspace://task"
START_PROMPT = "start_task"
SERVER_NAME = "coworkenv"


@lru_cache(maxsize=1)
def _version() -> str:
    try:
        return version("coworkenv")
    except PackageNotFoundError:
        return "0"


def _instructions(episode: Episode) -> str:
    user = episode.workspace.config.user
    return (f"You are working for {user} in a simulated workspace ({episode.env.title}). The request is in the "
            f"{TASK_URI} resource and the {START_PROMPT} prompt. Act only through these tools; when a result is "
            f"long, it ends with a note telling how to read the rest with {PAGER_TOOL}.")


def mcp_tools(episode: Episode) -> list[MCPTool]:
    """The MCP tools of an episode: one per workspace tool, from the registry, then the pager."""
    return list(_mcp_tools(tuple(episode.workspace.tools)))


@lru_cache(maxsize=64)
def _mcp_tools(names: tuple[str, ...]) -> tuple[MCPTool, ...]:
    registry = all_tools()
    tools = [
        MCPTool(name=n, title=n.replace("_", " ").capitalize(), description=registry[n].description,
                input_schema=registry[n].input_schema, annotations=ToolAnnotations.model_validate(registry[n].mcp_annotations()))
        for n in names
    ]
    tools.append(MCPTool(name=PAGER.name, title="Read result page", description=PAGER.description,
                         input_schema=PAGER.input_schema, annotations=ToolAnnotations.model_validate(PAGER.mcp_annotations())))
    return tuple(tools)


class EpisodeServer(MCPServer):
    """An `MCPServer` whose tools, resource and prompt are those of one episode."""

    def __init__(self, episode: Episode, log_level: str = "WARNING") -> None:
        super().__init__(SERVER_NAME, title=f"coworkenv: {episode.env.title}", instructions=_instructions(episode),
                         version=_version(), log_level=log_level, subscriptions=False)  # type: ignore[arg-type]
        self.episode = episode
        self._lock = anyio.Lock()
        self._tools = mcp_tools(episode)

        @self.resource(TASK_URI, name="task", title="The task", mime_type="text/plain",
                       description="The request from the person you work for, as they wrote it.")
        def task() -> str:
            return self.episode.task_text()

        @self.prompt(name=START_PROMPT, title="Start the task",
                     description="Begin working on the request in this workspace.")
        def start_task() -> str:
            user = self.episode.workspace.config.user
            return (f"{self.episode.task_text()}\n\n(You act for {user}. Use the workspace tools to do this, then "
                    "reply with a short summary of what you did.)")

    @property
    def lock(self) -> anyio.Lock:
        """Held while the episode runs a call; admin changes to the episode take it too."""
        return self._lock

    async def list_tools(self) -> list[MCPTool]:
        """The episode's tools (generated once from the registry)."""
        return list(self._tools)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        """Run the call in the episode: text and structured content, or `isError` with the workspace's message."""
        async with self._lock:  # one call at a time per episode, whatever the transport does
            tool = self.episode.workspace.tools.get(name)
            if tool is not None and all_services()[tool.service].blocking:
                answer = await anyio.to_thread.run_sync(self.episode.call, name, arguments)
            else:
                answer = self.episode.call(name, arguments)
        return CallToolResult(content=[TextContent(type="text", text=answer.text)],
                              structured_content=answer.structured, is_error=answer.is_error)


def build_server(episode: Episode, log_level: str = "WARNING") -> EpisodeServer:
    """The MCP server of an episode."""
    return EpisodeServer(episode, log_level=log_level)
