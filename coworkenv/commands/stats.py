""""`coworkenv stats`: the distribution of a set of environments (size, turns, days, world changes, facts only an
evidence file holds) per capability and overall, against the balanced mix's targets; and its diversity
(synth.diversity: masked openings and sentences, tool sequences, workplaces, languages)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ._usage import fail_red as _fail
from ._usage import spec_paths


def stats(
    envs: list[Path] = typer.Argument(..., help="Spec files (.json/.yaml) or folders of them."),
    as_json: bool = typer.Option(False, "--json", help="Print the distribution as one JSON object."),
) -> None:
    """Print reference calls, user turns, days, world changes and services per capability and overall, and
    the share of environments meeting each target (evidence-only: a fact only an image, PDF, workbook or clip
    holds); exits 1 when no environment is found or one cannot load."""
    from synth import diversity
    from synth.errors import SpecLoadError
    from synth.pipeline import distribution, profile
    from synth.spec import load_spec

    missing = [str(p) for p in envs if not p.exists()]
    if missing:
        _fail(f"no such file or folder: {', '.join(missing)}", 1)
    paths = spec_paths(envs)
    if not paths:
        _fail(f"no environments (.json/.yaml specs) found in {', '.join(map(str, envs))}", 1)
    profiles, specs = [], []
    for path in paths:
        try:
            specs.append(load_spec(path))
            profiles.append(profile(specs[-1]))
        except SpecLoadError as e:
            where, problem = e.problems[0]
            _fail(f"{path} is not an environment spec: {where}: {problem}", 1)
    dist = distribution(profiles)
    dist["diversity"] = diversity.figures(specs)
    if as_json:
        typer.echo(json.dumps(dist, indent=2))
        return
    _print(dist)
    _print_diversity(dist["diversity"])


def _fmt(d: dict) -> str:  # type: ignore[type-arg]
    med = d["median"]
    return f"{med:g} / {d['mean']:g} / {d['max']}"


def _print(dist: dict) -> None:  # type: ignore[type-arg]
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="environment distribution (median / mean / max)")
    for col in ("capability", "envs", "calls", "user turns", "days", "world changes", "silent", "services",
                ">=12 calls", ">=2 turns", "changes", ">=2 days", "evidence-only"):
        table.add_column(col, justify="left" if col == "capability" else "right")

    def row(name: str, s: dict, bold: bool = False) -> None:  # type: ignore[type-arg]
        cells = [name, str(s["count"]), _fmt(s["calls"]), _fmt(s["user_turns"]), _fmt(s["stages"]),
                 _fmt(s["world_changes"]), _fmt(s["silent_changes"]), _fmt(s["services"]),
                 *(f"{s['share'][k]:.0%}" for k in ("calls_at_least_12", "two_turns", "world_change", "multi_day",
                                                         "evidence_only"))]
        table.add_row(*([f"[bold]{c}[/]" for c in cells] if bold else cells))

    for cap, s in dist["capabilities"].items():
        row(cap, s)
    row("overall", dist["overall"], bold=True)
    console.print(table)
    targets = Table(title="targets")
    for col in ("target", "measured", "at least", "met"):
        targets.add_column(col, justify="left" if col == "target" else "right")
    for t in dist["targets"]:
        shown = (lambda v: f"{v:.0%}") if t["target"].startswith("share") else (lambda v: f"{v:g}")
        targets.add_row(t["target"], shown(t["measured"]), shown(t["at_least"]),
                        "[green]yes[/]" if t["met"] else "[red]no[/]")
    console.print(targets)


def _print_diversity(fig: dict) -> None:  # type: ignore[type-arg]
    from rich.console import Console
    from rich.table import Table

    from synth.diversity import rows

    table = Table(title="diversity (openings: first 12 words, names, numbers, dates, paths and quotes masked)")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for label, value in rows(fig):
        table.add_row(label, value)
    Console().print(table)
