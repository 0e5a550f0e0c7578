"""The `coworkenv` command. Each module in `coworkenv.commands` adds its own commands via `register(app)`."""

from __future__ import annotations

import importlib
import pkgutil

import typer

from . import commands

app = typer.Typer(
    name="coworkenv",
    help="Make, serve, run and score practice workspaces for AI coworker agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Make, serve, run and score practice workspaces for AI coworker agents."""


def _register_all() -> None:
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_all()


def main() -> None:
    """Console-script entry point."""
    app()
