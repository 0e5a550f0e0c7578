"""The `coworkenv` command. Each module in `coworkenv.commands` adds its own commands via `register(app)`.

Commands are registered when first needed: `coworkenv serve ...` imports only `commands.serve` (a cold
start that answers its first client sooner: the other commands pull in training, synthesis and model
clients), while `app` (and any other command line) registers every command. An ordinary `serve` line
does not build typer at all (`commands.serve_lean` reads it); typer answers every other one.
"""

from __future__ import annotations

import importlib
import os
import sys
import pkgutil
from typing import TYPE_CHECKING

from . import commands

if TYPE_CHECKING:
    import typer

_PATCHED: list[bool] = []


def _patch_flag_labels() -> None:
    """No type label for flags: typer 0.29 shows `--json <bool>` as if the flag took a value (patched once, when
    typer is first built, so a `serve` that never builds it never imports it)."""
    if _PATCHED:
        return
    from typer.core import TyperOption

    type_label = TyperOption.display_type_rich

    def flag_label(self: TyperOption, ctx: object) -> str | None:
        return None if self.is_flag else type_label(self, ctx)  # type: ignore[arg-type]

    TyperOption.display_type_rich = flag_label  # type: ignore[method-assign]
    _PATCHED.append(True)

#: commands whose module is known without importing the others, for a fast start (command -> module)
LEAN_COMMANDS = {"serve": "serve"}
LEAN_SERVE_ENV = "COWORKENV_LEAN_SERVE"  # 0: typer reads every `serve` line too (what the lean reader is tested against)


def _root() -> None:
    """Make, serve, run and score practice workspaces for AI coworker agents."""


def build_app(modules: list[str] | None = None) -> "typer.Typer":
    """The command-line app with the commands of the given `coworkenv.commands` modules (all when None)."""
    import typer

    _patch_flag_labels()
    built = typer.Typer(
        name="coworkenv",
        help="Make, serve, run and score practice workspaces for AI coworker agents.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    built.callback()(_root)
    if modules is None:
        modules = sorted(info.name for info in pkgutil.iter_modules(commands.__path__))
    for name in modules:
        module = importlib.import_module(f"{commands.__name__}.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(built)
    return built


_APP: "typer.Typer | None" = None


def __getattr__(name: str) -> "typer.Typer":
    """`app`, the full command line, built on first use."""
    global _APP
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _APP is None:
        _APP = build_app()
    return _APP


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
    argv = fill_optional_values(sys.argv[1:])
    lean = LEAN_COMMANDS.get(argv[0]) if argv else None
    if lean == "serve" and os.environ.get(LEAN_SERVE_ENV, "1") != "0":
        from .commands import serve_lean

        if serve_lean.run(argv[1:]):
            return
    (build_app([lean]) if lean is not None else __getattr__("app"))(args=argv)
