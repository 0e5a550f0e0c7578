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
    mix_profile: str = typer.Option(None, "--profile", help="Also print the mix's marginals beside this "
                                    "profile's (balanced, claw-eval, clawmark or a profile file)."),
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
    beside = _beside(specs, mix_profile) if mix_profile else None
    if as_json:
        typer.echo(json.dumps({**dist, **({"profile": beside} if beside is not None else {})}, indent=2))
        return
    _print(dist)
    _print_diversity(dist["diversity"])
    if beside is not None:
        from synth.generate.profiles.sampler import compare_text

        typer.echo(compare_text(beside, mix_profile))


def _beside(specs: list, name: str) -> list:  # type: ignore[type-arg]
    """The mix's marginals beside profile `name`'s (synth.generate.profiles); a bad profile exits 2 naming it."""
    from synth.generate.profiles.profile import ProfileError, load_profile
    from synth.generate.profiles.sampler import compare

    try:
        return compare(specs, load_profile(name))
    except ProfileError as e:
        _fail(f"--profile: {e}")


def _fmt(d: dict) -> str:  # type: ignore[type-arg]
    med = d["median"]
    return f"{med:g}/{d['mean']:g}/{d['max']}"


SHARES = (("calls_at_least_12", ">=12 calls"), ("two_turns", ">=2 user turns"), ("world_change", "a world change"),
          ("multi_day", ">=2 days"), ("evidence_only", "evidence-only fact"))


def _print(dist: dict) -> None:  # type: ignore[type-arg]
    """Two tables a capability a row, names never cut (sizes as median/mean/max, then the shares meeting each
    target), so they fit 100 columns; then the targets."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console()
    rows = [*dist["capabilities"].items(), ("overall", dist["overall"])]
    sizes = Table(title="environment sizes per capability (median/mean/max)", box=box.SIMPLE_HEAD)
    shares = Table(title="share of environments with", box=box.SIMPLE_HEAD)
    for table, cols in ((sizes, ("envs", "calls", "user turns", "days", "world changes", "silent", "services")),
                        (shares, ("envs", *(label for _, label in SHARES)))):
        table.add_column("capability", no_wrap=True)
        for col in cols:
            table.add_column(col, justify="right", no_wrap=True)
    for name, s in rows:
        style = "bold" if name == "overall" else None
        sizes.add_row(name, str(s["count"]), *(_fmt(s[k]) for k in ("calls", "user_turns", "stages", "world_changes",
                                                                      "silent_changes", "services")), style=style)
        shares.add_row(name, str(s["count"]), *(f"{s['share'][k]:.0%}" for k, _ in SHARES), style=style)
    sizes.rows[-2].end_section = shares.rows[-2].end_section = True  # a rule above overall
    console.print(sizes)
    console.print(shares)
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
