"""`coworkenv serve`: serve an environment over MCP (stdio, or streamable HTTP with many episodes)."""

from __future__ import annotations

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
        workers: int = typer.Option(1, "--workers", "-w", min=1, max=256,
                                    help="HTTP: serve from this many processes, one port each (PORT, PORT+1, ...); "
                                         "spread episodes over them with `coworkenv run --connect URL1,URL2,...`."),
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
    ) -> None:
        """Serve an environment to MCP clients; every episode is recorded and scored when it ends."""
        from mcp_server.environment import EnvironmentLoadError
        from mcp_server.run import ListenError, configure_logging, run_http, run_stdio

        if log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
            raise typer.BadParameter(f"--log-level must be DEBUG, INFO, WARNING or ERROR, got {log_level!r}")
        if not 0 <= port <= 65535 or (port and port + workers - 1 > 65535):
            raise typer.BadParameter(f"--port must be 0-65535 (with --workers {workers}: at most "
                                     f"{65536 - workers}), got {port}")
        if workers > 1 and not http:
            raise typer.BadParameter("--workers applies to --http only (stdio serves one episode)")
        if workers > 1 and default_episode:
            raise typer.BadParameter("--default-episode needs one worker: an episode id lives on one server")
        if admin_token is not None and len(admin_token) < 16:
            raise typer.BadParameter("the admin token must be at least 16 characters")
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
            try:
                run_http(env, source, record, host, port, admin_token, default_episode, log_level, spec_roots=roots,
                         workers=workers, log_file=log_file)
            except ListenError as e:  # the port (or one of the workers' ports) is taken or not ours to bind
                raise fail(str(e)) from None
        else:
            try:
                run_stdio(env, source, record, episode_id, log_level)
            except ValueError as e:  # a bad episode id
                raise fail(str(e)) from None
