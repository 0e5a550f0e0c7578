"""Shared option handling for the commands that load an environment (serve, claude-config)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer


def source_from_options(spec: Path | None, python: str | None):  # -> mcp_server.EnvironmentSource
    """The environment source named by SPEC or --python (exactly one), or a clear usage error."""
    from mcp_server.environment import EnvironmentLoadError, EnvironmentSource

    if (spec is None) == (python is None):
        import typer  # loaded on an error only: `serve` starts without typer (coworkenv.commands.serve_lean)

        raise typer.BadParameter("give either a SPEC file or --python MODULE:FUNCTION (exactly one)")
    try:
        return EnvironmentSource.spec(spec) if spec is not None else EnvironmentSource.python(python or "")
    except EnvironmentLoadError as e:
        import typer

        raise typer.BadParameter(str(e)) from None


def fail(message: str) -> "typer.Exit":
    """Print an error on stderr and return the exit to raise."""
    import typer

    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)
