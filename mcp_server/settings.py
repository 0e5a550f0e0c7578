"""Process-wide switches read from the environment, readable without loading the `mcp` SDK (the command
line checks them before anything starts)."""

from __future__ import annotations

import os

FAST_PATH_ENV = "COWORKENV_MCP_FAST_PATH"


def fast_path_enabled() -> bool:
    """Whether this process answers modern tool calls and listings on the fast path (`COWORKENV_MCP_FAST_PATH`,
    on unless set to 0)."""
    value = os.environ.get(FAST_PATH_ENV, "1").strip().lower()
    if value not in ("", "0", "1", "true", "false", "yes", "no"):
        raise ValueError(f"{FAST_PATH_ENV} must be 1 or 0, got {value!r}")
    return value not in ("0", "false", "no")
