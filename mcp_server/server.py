"""The MCP face of one episode, on the official SDK's `MCPServer`.

Tools are not re-declared here: every MCP tool is generated from the workspace's tool registry
(name, description, input schema, annotations), plus the pager tool for long results. A call
goes straight to the episode, so a workspace error reaches the model as `isError` with the
workspace's own message. The task is served as the `workspace://task` resource and the
`start_task` prompt; nothing else about the environment is served. An MCP-only episode (see
`mcp_server.control`) adds the `ask_user` and `submit_answer` tools and the read-only
`episode://status` resource, and its prompt and task resource say how it goes on and ends
(`submit_answer`, once per working day in a multi-day scenario).
"""

from __future__ import annotations

import json
import logging
import os
from functools import lru_cache
from typing import Any

import anyio

from mcp.client.caching import MAX_TTL_MS
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp_types import AudioContent, CallToolResult, GetPromptResult, ImageContent, PromptMessage, TextContent, ToolAnnotations
from mcp_types import Prompt as MCPPrompt
from mcp_types import Resource as MCPResource
from mcp_types import Tool as MCPTool

from workspace_sim.services import tools_named

from .admission import Admission, Busy, shared
from .control import CONTROL_TOOLS, STATUS_URI
from .episode import Episode
from .identity import SERVER_NAME, START_PROMPT, TASK_URI, finishing, instructions, server_title, server_version
from .results import PAGER

log = logging.getLogger("coworkenv.mcp")

def control_tools(episode: Episode) -> list[MCPTool]:
    """The MCP-only episode's control tools (none without control), from their registry definitions."""
    if episode.control is None:
        return []
    strict = strict_schemas_requested()
    return [_control_tool(n, strict) for n in episode.control.tool_names()]


@lru_cache(maxsize=None)
def _control_tool(name: str, strict: bool = True) -> MCPTool:
    t = CONTROL_TOOLS[name]
    return MCPTool(name=t.name, title=t.name.replace("_", " ").capitalize(), description=t.description,
                   input_schema=t.strict_input_schema if strict else t.input_schema,
                   annotations=ToolAnnotations.model_validate(t.mcp_annotations()))


STRICT_SCHEMAS_ENV = "COWORKENV_STRICT_SCHEMAS"


def strict_schemas_requested() -> bool:
    """Whether this process serves tools' input schemas in strict form: yes unless `COWORKENV_STRICT_SCHEMAS=0`
    (`serve --no-strict-schemas`). The strict form is what clients that make schemas strict take unchanged (the
    OpenAI Agents SDK's `convert_schemas_to_strict=True`: no `$ref`, every property required, an optional one
    nullable, every object closed); its callers send null for an optional argument they leave out, and the tools
    accept both forms, so a client that sends the ordinary form works too."""
    value = os.environ.get(STRICT_SCHEMAS_ENV, "").strip().lower()
    if value not in ("", "0", "1", "true", "false", "yes", "no"):
        raise ValueError(f"{STRICT_SCHEMAS_ENV} must be 1 or 0, got {value!r}")
    return value not in ("0", "false", "no")


def mcp_tools(episode: Episode, strict: bool | None = None) -> list[MCPTool]:
    """The MCP tools of an episode: one per workspace tool, from the registry, then the pager; input schemas
    in strict form with `strict` (by default as `COWORKENV_STRICT_SCHEMAS` says: strict unless it is 0)."""
    return list(_mcp_tools(tuple(episode.workspace.tools), strict_schemas_requested() if strict is None else strict))


@lru_cache(maxsize=64)
def _mcp_tools(names: tuple[str, ...], strict: bool = False) -> tuple[MCPTool, ...]:
    registry = tools_named(names)
    tools = [(n, n.replace("_", " ").capitalize(), registry[n]) for n in names] + [(PAGER.name, "Read result page", PAGER)]
    return tuple(MCPTool(name=n, title=title, description=t.description,
                         input_schema=t.strict_input_schema if strict else t.input_schema,
                         annotations=ToolAnnotations.model_validate(t.mcp_annotations()))
                 for n, title, t in tools)


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
_STATUS_RESOURCE = MCPResource(uri=STATUS_URI, name="status", title="Episode status", mime_type="application/json",
                               description="The episode's progress: turn, calls, simulated time, whether it has "
                                           "ended, and its score once it has.")
_START_PROMPT = MCPPrompt(name=START_PROMPT, title="Start the task", arguments=[],
                          description="Begin working on the request in this workspace.")


# An episode's tools, resources and prompt never change while it runs, so a 2026-07-28 client may keep the
# listings for a day (the protocol's cap): a harness that shares its client cache across episodes of one
# environment lists tools once (docs/mcp.md, "Many episodes").
LISTING_CACHE_HINTS = {method: CacheHint(ttl_ms=MAX_TTL_MS, scope="private")
                       for method in ("tools/list", "resources/list", "prompts/list")}


class EpisodeServer(MCPServer):
    """An `MCPServer` whose tools, resource and prompt are those of one episode."""

    def __init__(self, episode: Episode, log_level: str = "WARNING", lock: anyio.Lock | None = None,
                 tools: list[MCPTool] | None = None) -> None:
        super().__init__(SERVER_NAME, title=server_title(episode), instructions=instructions(episode),
                         version=server_version(), log_level=log_level, subscriptions=False,  # type: ignore[arg-type]
                         cache_hints=LISTING_CACHE_HINTS)
        self.episode = episode
        self._lock = lock if lock is not None else anyio.Lock()  # shared with the hub's episode when it has one
        self.admission: Admission | None = None  # None: the process's shared one (`admission.shared()`)
        self._tools = tools if tools is not None else episode_tools(episode)
        self.middleware.insert(0, explain_invalid_params)

    @property
    def tools(self) -> list[MCPTool]:
        """The episode's MCP tools, in listing order."""
        return self._tools

    def info_stamp(self) -> dict[str, Any]:
        """The `serverInfo` stamp of this server's results (the SDK's own dump)."""
        return self._lowlevel_server.server_info_stamp


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
        """The task, and for an MCP-only episode its status."""
        return [_TASK_RESOURCE, _STATUS_RESOURCE] if self.episode.control is not None else [_TASK_RESOURCE]

    async def read_resource(self, uri: Any, context: Context[Any, Any] | None = None) -> list[ReadResourceContents]:
        """The task text for `workspace://task`, the status JSON for `episode://status`; any other URI is not found."""
        if str(uri) == STATUS_URI and self.episode.control is not None:
            async with self._lock:  # never between a call and its record
                status = self.episode.status()
            return [ReadResourceContents(content=json.dumps(status, ensure_ascii=False), mime_type="application/json")]
        if str(uri) != TASK_URI:
            known = " and ".join(r.uri for r in await self.list_resources())
            raise ResourceNotFoundError(f"Unknown resource: {str(uri)[:200]} (this server has only {known})")
        text = self.episode.task_text()
        if self.episode.control is not None:  # an MCP-only agent learns here how the episode goes on and ends
            text += f"\n\n---\n{finishing(self.episode)}"
        return [ReadResourceContents(content=text, mime_type="text/plain")]

    async def list_prompts(self) -> list[MCPPrompt]:
        """The one prompt: start the task."""
        return [_START_PROMPT]

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Context[Any, Any] | None = None) -> GetPromptResult:
        """The start prompt: the task and who the agent acts for."""
        if name != START_PROMPT:
            raise ValueError(f"Unknown prompt: {name[:200]} (this server has only {START_PROMPT})")
        user = self.episode.workspace.config.user
        if self.episode.control is not None:
            text = f"{self.episode.task_text()}\n\n(You act for {user}. Use the workspace tools to do this. {finishing(self.episode)})"
        else:
            text = (f"{self.episode.task_text()}\n\n(You act for {user}. Use the workspace tools to do this, then "
                    f"reply with a short summary of what you did.)")
        return GetPromptResult(description=_START_PROMPT.description,
                               messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))])

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        """Run the call in the episode: text and structured content, or `isError` with the workspace's message."""
        return await call_episode(self.episode, self._lock, name, arguments, self.admission)


    async def run_stdio(self) -> None:
        """Serve over stdin/stdout, answering every bad line (see `mcp_server.stdio`) instead of dropping it."""
        from .stdio import checked_stdio_server

        lowlevel = self._lowlevel_server  # what MCPServer.run_stdio_async runs, on our transport
        async with checked_stdio_server() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def build_server(episode: Episode, log_level: str = "WARNING", lock: anyio.Lock | None = None,
                 tools: list[MCPTool] | None = None) -> EpisodeServer:
    """The MCP server of an episode (`lock` and `tools` when the caller already holds them, as the hub does)."""
    return EpisodeServer(episode, log_level=log_level, lock=lock, tools=tools)


def episode_tools(episode: Episode) -> list[MCPTool]:
    """Every MCP tool of an episode: the workspace's, the pager, then the control tools of an MCP-only one."""
    return mcp_tools(episode) + control_tools(episode)


@lru_cache(maxsize=64)
def server_info(title: str) -> dict[str, Any]:
    """The `serverInfo` stamp an `EpisodeServer` with this title writes (the SDK's `Implementation` dumped), made
    without building one; callers get a copy."""
    from mcp_types import Implementation

    return Implementation(name=SERVER_NAME, version=server_version(), title=title).model_dump(
        by_alias=True, mode="json", exclude_none=True)


async def call_episode(episode: Episode, lock: anyio.Lock, name: str, arguments: dict[str, Any],
                       admission: Admission | None = None) -> CallToolResult:
    """Run a tool call in the episode as its MCP server answers it: text and structured content (media as MCP
    image/audio content), or `isError` with the workspace's message; a retryable busy error (with the
    `retry_after_s` the client should wait) when the slow calls' pool is full. One call at a time per episode
    (`lock`), off the event loop, so a slow call holds up only its own episode; slow tools on their own bounded
    pool (`admission`, by default the process's shared one)."""
    async with lock:
        try:
            answer = await (admission or shared()).run(name, episode.call, name, arguments, waiter=episode.id)
        except Busy as e:
            return CallToolResult(content=[TextContent(type="text", text=f"Error (busy): {e}")],
                                  structured_content={"error": {"code": "busy", "message": str(e), "retryable": True,
                                                                "retry_after_s": e.retry_after_s}}, is_error=True)
    content: list[Any] = [TextContent(type="text", text=answer.text)]
    content += [(ImageContent if m.kind == "image" else AudioContent)(data=m.data, mime_type=m.mime_type)
                for m in answer.media]  # images and audio as MCP media content, after their placeholders
    return CallToolResult(content=content, structured_content=answer.structured, is_error=answer.is_error)
