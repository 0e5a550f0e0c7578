"""The Claude Desktop configuration entry that starts an environment over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .environment import EnvironmentSource


def desktop_entry(source: EnvironmentSource, python: str, record_dir: Path, name: str,
                  flags: list[str] | None = None) -> dict[str, Any]:
    """`{"mcpServers": {name: {...}}}` for claude_desktop_config.json, with absolute paths throughout; `flags`
    are further `serve` options (e.g. `--mcp-only`)."""
    target = [source.ref] if source.kind == "spec" else ["--python", source.ref]
    args = ["-m", "coworkenv", "serve", *target, "--record-dir", str(record_dir), *(flags or [])]
    return {"mcpServers": {name: {"command": str(Path(python).absolute()), "args": args,
                                  "env": {"PYTHONUNBUFFERED": "1"}}}}
