"""The `coworkenv` command, built from the table `coworkenv.commands.COMMANDS` (one module per command).

Commands are registered when first needed: `coworkenv serve ...` imports only `commands.serve` (a cold
start that answers its first client sooner: the other commands pull in training, synthesis and model
clients), while `app` (and any other command line) registers every command. An ordinary `serve` line
does not build typer at all (`commands.serve_lean` reads it); typer answers every other one.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Callable

from . import commands
from .commands import COMMANDS, Group

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

#: commands built alone, without the others, for a fast start
LEAN_COMMANDS = ("serve",)
LEAN_SERVE_ENV = "COWORKENV_LEAN_SERVE"  # 0: typer reads every `serve` line too (what the lean reader is tested against)


def _root() -> None:
    """Make, serve, run and score practice workspaces for AI coworker agents."""


def _command(target: str) -> Callable[..., None]:
    """The function a COMMANDS entry ("module:function" under coworkenv.commands) names."""
    module, function = target.split(":")
    return getattr(importlib.import_module(f"{commands.__name__}.{module}"), function)


def build_app(names: list[str] | None = None) -> "typer.Typer":
    """The command-line app with the given commands of `COMMANDS` (all when None), in the table's order."""
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
    unknown = sorted(set(names or ()) - set(COMMANDS))
    if unknown:
        raise ValueError(f"build_app: no command {', '.join(unknown)} in coworkenv.commands.COMMANDS")
    for name, entry in COMMANDS.items():
        if names is not None and name not in names:
            continue
        if isinstance(entry, Group):
            group = typer.Typer(help=entry.help, no_args_is_help=True)
            for sub, target in entry.commands.items():
                group.command(sub)(_command(target))
            built.add_typer(group, name=name)
        else:
            built.command(name)(_command(entry))
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
    lean = argv[0] if argv and argv[0] in LEAN_COMMANDS else None
    if lean == "serve" and os.environ.get(LEAN_SERVE_ENV, "1") != "0":
        from .commands import serve_lean

        if serve_lean.run(argv[1:]):
            return
    (build_app([lean]) if lean is not None else __getattr__("app"))(args=argv)
