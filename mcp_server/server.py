"""The MCP face of one episode, on the official SDK's `MCPServer`.

Tools are not re-declared here: every MCP tool is generated from the workspace's tool registry
(name, description, input schema, annotations), plus the pager tool for long results. A call
goes straight to the episode, so a workspace error reaches the model as `isError` with the
workspace's own message. The task is served as the `workspace://task` resource and the
`start_task` prompt; nothing else about the environment is served.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp_types import CallToolResult, GetPromptResult, PromptMessage, TextContent, ToolAnnotations
from mcp_types import Prompt as MCPPrompt
from mcp_types import Resource as MCPResource
from mcp_types import Tool as MCPTool

from workspace_sim.services import tools_named

from .episode import Episode
from .results import PAGER, PAGER_TOOL

log = logging.getLogger("coworkenv.mcp")

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
    registry = tools_named(names)
    tools = [
        MCPTool(name=n, title=n.replace("_", " ").capitalize(), description=registry[n].description,
                input_schema=registry[n].input_schema, annotations=ToolAnnotations.model_validate(registry[n].mcp_annotations()))
        for n in names
    ]
    tools.append(MCPTool(name=PAGER.name, title="Read result page", description=PAGER.description,
                         input_schema=PAGER.input_schema, annotations=ToolAnnotations.model_validate(PAGER.mcp_annotations())))
    return tuple(tools)


def _problems(e: ValidationError) -> str:
    parts = []
    for err in e.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "params"
        parts.append(f"{where}: {err['msg']}")
    more = f" (and {e.error_count() - 3} more)" if e.error_count() > 3 else ""
    return "; ".join(parts) + more


async def explain_invalid_params(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Middleware: say what is wrong where the SDK answers a bare 'Invalid request parameters' (-32602)."""
    try:
        return await call_next(ctx)
    except ValidationError as e:
        message = f"invalid params for {ctx.method}: {_problems(e)}"
    except MCPError as e:
        if e.error.code != INVALID_PARAMS or e.error.message != "Invalid request parameters" \
                or ctx.method == "initialize" or ctx.session.client_params is not None:
            raise
        message = f"{ctx.method} before initialize: send initialize (then notifications/initialized) first"
    log.warning("request %r refused (JSON-RPC %d): %s", ctx.request_id, INVALID_PARAMS, message)
    raise MCPError(code=INVALID_PARAMS, message=message)


_TASK_RESOURCE = MCPResource(uri=TASK_URI, name="task", title="The task", mime_type="text/plain",
                             description="The request from the person you work for, as they wrote it.")
_START_PROMPT = MCPPrompt(name=START_PROMPT, title="Start the task", arguments=[],
                          description="Begin working on the request in this workspace.")


class EpisodeServer(MCPServer):
    """An `MCPServer` whose tools, resource and prompt are those of one episode."""

    def __init__(self, episode: Episode, log_level: str = "WARNING") -> None:
        super().__init__(SERVER_NAME, title=f"coworkenv: {episode.env.title}", instructions=_instructions(episode),
                         version=_version(), log_level=log_level, subscriptions=False)  # type: ignore[arg-type]
        self.episode = episode
        self._lock = anyio.Lock()
        self._tools = mcp_tools(episode)
        self.middleware.insert(0, explain_invalid_params)


    @property
    def lock(self) -> anyio.Lock:
        """Held while the episode runs a call; admin changes to the episode take it too."""
        return self._lock

    async def list_tools(self) -> list[MCPTool]:
        """The episode's tools (generated once from the registry)."""
        return list(self._tools)

    # The task resource and the start prompt are answered here rather than registered with the SDK's
    # decorators: those build a pydantic model per registration, i.e. per episode (time and memory).

    async def list_resources(self) -> list[MCPResource]:
        """The one resource: the task."""
        return [_TASK_RESOURCE]

    async def read_resource(self, uri: Any, context: Context[Any, Any] | None = None) -> list[ReadResourceContents]:
        """The task text for `workspace://task`; any other URI is not found."""
        if str(uri) != TASK_URI:
            raise ResourceNotFoundError(f"Unknown resource: {str(uri)[:200]} (this server has only {TASK_URI})")
        return [ReadResourceContents(content=self.episode.task_text(), mime_type="text/plain")]

    async def list_prompts(self) -> list[MCPPrompt]:
        """The one prompt: start the task."""
        return [_START_PROMPT]

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Context[Any, Any] | None = None) -> GetPromptResult:
        """The start prompt: the task and who the agent acts for."""
        if name != START_PROMPT:
            raise ValueError(f"Unknown prompt: {name[:200]} (this server has only {START_PROMPT})")
        user = self.episode.workspace.config.user
        text = (f"{self.episode.task_text()}\n\n(You act for {user}. Use the workspace tools to do this, then "
                "reply with a short summary of what you did.)")
        return GetPromptResult(description=_START_PROMPT.description,
                               messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))])

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        """Run the call in the episode: text and structured content, or `isError` with the workspace's message."""
        # one call at a time per episode, whatever the transport does; off the event loop, so a slow
        # call holds up only its own episode
        async with self._lock:
            answer = await anyio.to_thread.run_sync(self.episode.call, name, arguments)
        return CallToolResult(content=[TextContent(type="text", text=answer.text)],
                              structured_content=answer.structured, is_error=answer.is_error)


    async def run_stdio(self) -> None:
        """Serve over stdin/stdout, answering every bad line (see `mcp_server.stdio`) instead of dropping it."""
        from .stdio import checked_stdio_server

        lowlevel = self._lowlevel_server  # what MCPServer.run_stdio_async runs, on our transport
        async with checked_stdio_server() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def build_server(episode: Episode, log_level: str = "WARNING") -> EpisodeServer:
    """The MCP server of an episode."""
    return EpisodeServer(episode, log_level=log_level)
