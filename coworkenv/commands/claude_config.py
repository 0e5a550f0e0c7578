"""`coworkenv claude-config`: print a ready `claude_desktop_config.json` entry for an environment."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Optional

import typer

from ._environment import fail, source_from_options

# Neutral on purpose: MCP clients prefix every tool name with the server's (mcp__workspace__read_file), and a
# name drawn from the environment id (injection-resistance-...) would tell the model what is being tested.
DEFAULT_SERVER_NAME = "workspace"


def claude_config(
    spec: Optional[Path] = typer.Argument(None, help="Environment spec file (JSON or YAML)."),
    python: Optional[str] = typer.Option(None, "--python", help="MODULE:FUNCTION returning a ServedEnvironment."),
    name: Optional[str] = typer.Option(None, help="Server name shown in Claude Desktop (default: workspace; clients put it into every tool name the model sees, so the default names nothing about the test)."),
    record_dir: Path = typer.Option(Path("runs/episodes"), help="Folder for the episodes' records."),
    mcp_only: bool = typer.Option(False, "--mcp-only", help="Serve it MCP-only: Claude asks the user with "
                                                            "ask_user and ends the episode with submit_answer."),
    reveal_score: bool = typer.Option(False, "--reveal-score",
                                      help="--mcp-only: submit_answer tells Claude its score and checks."),
) -> None:
    """Print the `mcpServers` entry that makes Claude Desktop start this environment over stdio."""
    from mcp_server.claude import desktop_entry
    from mcp_server.environment import EnvironmentLoadError

    source = source_from_options(spec, python)
    if reveal_score and not mcp_only:
        raise typer.BadParameter("--reveal-score applies to MCP-only episodes: add --mcp-only")
    if source.kind == "spec" and not Path(source.ref).is_file():
        raise fail(f"{source.ref}: no such spec file")
    try:
        source.load()  # a broken environment fails here, not in Claude Desktop
    except EnvironmentLoadError as e:
        raise fail(str(e)) from None
    server_name = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") if name else DEFAULT_SERVER_NAME
    if not server_name:
        raise fail(f"--name {name!r}: needs a letter, digit, '_' or '-'")
    flags = ["--mcp-only"] * mcp_only + ["--reveal-score"] * reveal_score
    entry = desktop_entry(source, sys.executable, record_dir.expanduser().resolve(), server_name, flags)
    typer.echo(json.dumps(entry, indent=2))
