"""One vocabulary across commands: every option documented, one meaning per flag, --json where a summary is printed."""

from __future__ import annotations

from typing import Any

import typer
from typer.testing import CliRunner

from coworkenv.cli import app

# The same thing has the same name everywhere (docs/cli.md lists them).
SHORT = {"--out": "-o", "--seed": "-s", "--capability": "-c", "--policy": "-p", "--workers": "-w",
         "--episodes-per-env": "-g", "--group-size": "-g", "--envs": "-e", "--format": "-f", "--count": "-n"}
SUMMARY_COMMANDS = {"run", "synth", "validate", "replay", "episodes", "eval", "bench", "export sft", "export rl",
                    "train tiny", "train sft", "train rl", "train base", "eval-student"}


def commands() -> dict[str, Any]:
    """Every leaf command by its full name ('export rl'); typer ships its own click, so duck-typed."""
    out: dict[str, Any] = {}

    def walk(cmd: Any, prefix: str) -> None:
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, f"{prefix} {name}".strip())
        else:
            out[prefix] = cmd

    walk(typer.main.get_command(app), "")
    assert len(out) > 15 and "export rl" in out
    return out


def options(cmd: Any) -> list[Any]:
    return [p for p in cmd.params if p.param_type_name == "option"]


def test_every_option_and_argument_has_help() -> None:
    missing = [f"{name} {p.opts[0]}" for name, cmd in commands().items() for p in options(cmd)
               if not (p.help or "").strip()]
    assert not missing, f"options without help text: {missing}"


def test_a_short_flag_means_one_thing_everywhere() -> None:
    meaning: dict[str, set[str]] = {}
    for name, cmd in commands().items():
        for p in options(cmd):
            longs = [o for o in p.opts if o.startswith("--")]
            shorts = [o for o in p.opts + p.secondary_opts if not o.startswith("--")]
            for s in shorts:
                meaning.setdefault(s, set()).add(longs[0])
            for long in longs:
                if long in SHORT:
                    assert SHORT[long] in shorts, f"{name} {long} should also be {SHORT[long]}"
    clashes = {s: sorted(m) for s, m in meaning.items() if len(m) > 1 and m != {"--episodes-per-env", "--group-size"}}
    assert not clashes, f"short flags with several meanings: {clashes}"


def test_commands_that_print_a_summary_offer_json() -> None:
    cmds = commands()
    for name in SUMMARY_COMMANDS:
        assert any("--json" in p.opts for p in cmds[name].params), f"{name} has no --json"


def test_flags_are_shown_as_flags() -> None:
    out = CliRunner().invoke(app, ["bench", "--help"], terminal_width=160).output
    assert "--json" in out and "<bool>" not in out


# What a positional argument is called in `--help`, by what it takes: (nargs, a word its help must hold).
ARGUMENTS = {"envs": (-1, "spec"), "spec": (1, "spec"), "records": (1, "record"), "record": (1, "record")}


def test_one_placeholder_per_kind_of_argument() -> None:
    """`run {envs}...` and `validate {envs}...`, `report {records}` and `episodes {records}`: the same thing
    is shown under the same name (typer prints the name, or the metavar when one is set)."""
    for name, cmd in commands().items():
        for p in cmd.params:
            if p.param_type_name != "argument":
                continue
            shown = p.metavar or p.name
            assert shown in ARGUMENTS, f"{name}: argument shown as {shown!r}; use one of {sorted(ARGUMENTS)}"
            nargs, word = ARGUMENTS[shown]
            assert p.nargs == nargs, f"{name} {shown}: nargs {p.nargs}, but {shown} elsewhere takes {nargs}"
            assert word in (p.help or "").lower(), f"{name} {shown}: help {p.help!r} does not say it takes a {word}"
