"""Keep the SDK's `MCPServer()` from setting up logging in a serving process, which set it up itself.

Each `MCPServer()` calls the SDK's `configure_logging`, which imports `rich` (25 ms or more of a
cold start) and builds a rich handler that `logging.basicConfig` then ignores, since the root
logger already has ours (`mcp_server.run.configure_logging`). A serving process calls
`own_sdk_logging()` once at start; the SDK is loaded later (the first request that needs it), so
the patch is applied then, by `apply()`, which every place that builds an `MCPServer` for a
serving process calls first. In-process use of `build_server` keeps the SDK's behaviour.
"""

from __future__ import annotations

import sys

_SDK_SERVER = "mcp.server.mcpserver.server"
_owned = False


def own_sdk_logging() -> None:
    """Say this process owns logging: the SDK's `configure_logging` is replaced now if the SDK is loaded, else
    when `apply()` runs after it is."""
    global _owned
    _owned = True
    if _SDK_SERVER in sys.modules:
        apply()


def apply() -> None:
    """Replace the SDK's `configure_logging` with a no-op when this process owns logging (else do nothing)."""
    if not _owned:
        return
    import mcp.server.mcpserver.server as sdk_server

    if hasattr(sdk_server, "configure_logging"):
        sdk_server.configure_logging = lambda level: None  # type: ignore[attr-defined]
