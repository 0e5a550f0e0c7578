"""How the runner's tool calls reach the workspace: directly, or through a real in-process MCP client.

Both channels sit on an `mcp_server.Episode` sharing the runner's workspace, so results are
shaped (size limit, pages, `read_result_page`) by the same code whichever way a call travels; the
MCP channel adds the real protocol round trip (`mcp.Client` on the episode's `MCPServer`).
A channel answers every call with text and an error flag, and never raises for a bad call. The
third channel, to a remote server over HTTP, is `remote.RemoteMCPChannel`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client

from mcp_server.episode import Episode
from mcp_server.server import build_server


class ToolChannel(Protocol):
    """Runs one tool call and returns (text the agent sees, whether it is an error)."""

    name: str

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run the call; errors come back as text with the flag set."""
        ...

    def close(self) -> None:
        """Release what the channel holds."""
        ...


class DirectChannel:
    """Calls go straight to the episode (the fast path used for training)."""

    name = "direct"

    def __init__(self, episode: Episode) -> None:
        self.episode = episode

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The episode's answer to the call."""
        answer = self.episode.call(tool, arguments)
        return answer.text, answer.is_error

    def close(self) -> None:
        """Nothing to release."""


def _text(result: Any) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")


class InProcessMCPChannel:
    """Calls go through the official MCP client to the episode's MCP server, in this process.

    The client runs on an event loop in a helper thread (a blocking portal), so the runner stays
    synchronous. Pass a `portal` to share one loop across episodes; otherwise one is started here.
    """

    name = "mcp"

    def __init__(self, episode: Episode, portal: BlockingPortal | None = None) -> None:
        self._own: AbstractContextManager[BlockingPortal] | None = None
        if portal is None:
            self._own = start_blocking_portal()
            portal = self._own.__enter__()
        self.portal = portal
        self._client_cm = portal.wrap_async_context_manager(Client(build_server(episode)))
        try:
            self.client = self._client_cm.__enter__()
        except BaseException:
            self._close_portal()
            raise

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The MCP server's answer (text content and isError)."""
        try:
            result = self.portal.call(self.client.call_tool, tool, arguments)
        except Exception as e:  # a protocol-level failure reaches the agent as an error, not a crash
            return f"Error (mcp_error): the MCP call failed: {type(e).__name__}: {e}", True
        return _text(result), bool(result.is_error)

    def close(self) -> None:
        """Close the client session (and the event loop, if this channel started it)."""
        try:
            self._client_cm.__exit__(None, None, None)
        finally:
            self._close_portal()

    def _close_portal(self) -> None:
        if self._own is not None:
            self._own.__exit__(None, None, None)
            self._own = None
