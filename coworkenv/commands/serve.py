"""`coworkenv serve`: serve an environment over MCP (stdio, or streamable HTTP with many episodes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from ._environment import fail, source_from_options


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        spec: Optional[Path] = typer.Argument(None, help="Environment spec file (JSON or YAML)."),
        python: Optional[str] = typer.Option(None, "--python", help="MODULE:FUNCTION returning a ServedEnvironment."),
        http: bool = typer.Option(False, "--http", help="Serve streamable HTTP (many episodes) instead of stdio."),
        host: str = typer.Option("127.0.0.1", help="HTTP address to bind (local only unless told otherwise)."),
        port: int = typer.Option(8765, help="HTTP port (0 picks a free one; the address is printed on stderr)."),
        spec_root: Optional[list[Path]] = typer.Option(
            None, "--spec-root", help="HTTP: a folder the admin API may load specs from by path (repeatable; "
                                      "default: the served spec's folder, none with --python)."),
        record_dir: Path = typer.Option(Path("runs/episodes"), help="Folder for the episodes' JSONL records."),
        episode_id: Optional[str] = typer.Option(None, help="Id of the stdio episode (default: random)."),
        default_episode: Optional[str] = typer.Option(None, help="HTTP: open an episode with this id at start."),
        admin_token: Optional[str] = typer.Option(None, envvar="COWORKENV_ADMIN_TOKEN",
                                                  help="HTTP admin token (default: generated and printed on stderr)."),
        log_file: Optional[Path] = typer.Option(None, help="Write logs to this file instead of stderr."),
        log_level: str = typer.Option("WARNING", help="DEBUG, INFO, WARNING or ERROR."),
        strict_schemas: bool = typer.Option(
            False, "--strict-schemas", envvar="COWORKENV_STRICT_SCHEMAS",
            help="Serve input schemas in strict form (every argument required, null for an optional one left out) "
                 "for clients that make schemas strict, e.g. the OpenAI Agents SDK's convert_schemas_to_strict."),
    ) -> None:
        """Serve an environment to MCP clients; every episode is recorded and scored when it ends."""
        from mcp_server.environment import EnvironmentLoadError
        from mcp_server.run import configure_logging, run_http, run_stdio

        if log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
            raise typer.BadParameter(f"--log-level must be DEBUG, INFO, WARNING or ERROR, got {log_level!r}")
        if not 0 <= port <= 65535:
            raise typer.BadParameter(f"--port must be 0-65535, got {port}")
        if admin_token is not None and len(admin_token) < 16:
            raise typer.BadParameter("the admin token must be at least 16 characters")
        if strict_schemas:  # the MCP server reads it where it lists tools (mcp_server.server.strict_schemas_requested)
            os.environ["COWORKENV_STRICT_SCHEMAS"] = "1"
        source = source_from_options(spec, python)
        configure_logging(log_level, log_file)
        try:
            env = source.load()
        except EnvironmentLoadError as e:
            raise fail(str(e)) from None
        record = record_dir.expanduser().resolve()
        roots = [r.expanduser().resolve() for r in spec_root or []]
        for r in roots:
            if not r.is_dir():
                raise typer.BadParameter(f"--spec-root {r} is not a folder")
        if http:
            run_http(env, source, record, host, port, admin_token, default_episode, log_level, spec_roots=roots)
        else:
            try:
                run_stdio(env, source, record, episode_id, log_level)
            except ValueError as e:  # a bad episode id
                raise fail(str(e)) from None
