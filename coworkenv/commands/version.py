"""`coworkenv version`."""

from __future__ import annotations

import platform

import typer


def version() -> None:
    """Print the coworkenv version and the versions of the parts it stands on."""
    from importlib.metadata import PackageNotFoundError, version as v

    from coworkenv import __version__

    typer.echo(f"coworkenv {__version__}")
    for dist in ("mcp", "pydantic", "immutables"):
        try:
            typer.echo(f"  {dist} {v(dist)}")
        except PackageNotFoundError:
            typer.echo(f"  {dist} (not installed)")
    typer.echo(f"  python {platform.python_version()}")
