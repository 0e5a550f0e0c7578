"""The `coworkenv` command. Each module in `coworkenv.commands` adds its own commands via `register(app)`."""

from __future__ import annotations

import importlib
import os
import sys
import pkgutil

import typer
from typer.core import TyperOption

from . import commands

_type_label = TyperOption.display_type_rich


def _flag_label(self: TyperOption, ctx: object) -> str | None:
    """No type label for flags: typer 0.29 shows `--json <bool>` as if the flag took a value."""
    return None if self.is_flag else _type_label(self, ctx)  # type: ignore[arg-type]


TyperOption.display_type_rich = _flag_label  # type: ignore[method-assign]

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


OPTIONAL_VALUES = {"--ray": "local"}  # options whose value may be left out: `--ray` alone means `--ray local`


def fill_optional_values(argv: list[str]) -> list[str]:
    """Give options that take an optional value their default when none follows them."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg in OPTIONAL_VALUES and (i + 1 == len(argv) or argv[i + 1].startswith("-")):
            out.append(OPTIONAL_VALUES[arg])
    return out


def main() -> None:
    """Console-script entry point."""
    if not sys.stdout.isatty():  # piped or logged: rich would assume 80 columns and squeeze the tables
        os.environ.setdefault("COLUMNS", "120")
    app(args=fill_optional_values(sys.argv[1:]))
