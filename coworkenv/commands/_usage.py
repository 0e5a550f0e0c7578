"""The usage error every command answers bad input with: the message on stderr, then exit (2 unless told)."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `error: MESSAGE` on stderr and exit with `code`."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def fail_red(message: str, code: int = 2) -> NoReturn:
    """`fail`, the message in red where stderr is a terminal (the spec commands' way)."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code)
