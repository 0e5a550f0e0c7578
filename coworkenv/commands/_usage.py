"""The usage error every command answers bad input with (the message on stderr, then exit, 2 unless told), and
the expansion of spec arguments that name folders."""

from __future__ import annotations

from pathlib import Path
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


def spec_paths(paths: list[Path]) -> list[Path]:
    """The spec files PATHS name: a file as given, a folder as its .json/.yaml/.yml files, recursively, sorted."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.suffix.lower() in (".json", ".yaml", ".yml")))
        else:
            out.append(p)
    return out
