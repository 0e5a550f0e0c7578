"""`coworkenv validate`: check environment specs by executing them."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ._usage import fail_red, spec_paths


def validate(
    specs: list[Path] = typer.Argument(..., metavar="envs",
                                       help="Environment spec files (.json/.yaml) or folders of them."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON report per spec."),
    no_mutants: bool = typer.Option(False, "--no-mutants", help="Skip the mutant (discrimination) check."),
) -> None:
    """Validate specs by execution and end with the totals; exits 1 when any is invalid or none is found."""
    from synth.errors import SpecLoadError
    from synth.feedback import ValidationReport
    from synth.spec import load_spec
    from synth.validate import validate_spec

    paths = spec_paths(specs)
    if not paths:  # nothing to validate: the work produced nothing (exit 1, as stats and episodes)
        fail_red(f"no environments (.json/.yaml specs) found in {', '.join(map(str, specs))}", 1)
    bad = 0
    for path in paths:
        try:
            report = validate_spec(load_spec(path), mutants=not no_mutants)
        except SpecLoadError as e:
            report = ValidationReport(None)
            for where, problem in e.problems:
                report.add("schema", where, problem, "fix the field to match `coworkenv schema`")
        bad += not report.ok
        if as_json:
            typer.echo(json.dumps({"path": str(path), **report.to_json()}))
        elif report.ok:
            typer.secho(f"valid    {path}  ({report.stats.get('mutants', 0)} mutants killed)", fg=typer.colors.GREEN)
        else:
            typer.secho(f"INVALID  {path}", fg=typer.colors.RED)
            for item in report.feedback:
                typer.echo(f"  {item.line()}")
    if not as_json:
        typer.secho(f"{len(paths) - bad} of {len(paths)} spec(s) valid, {bad} invalid",
                    fg=typer.colors.RED if bad else typer.colors.GREEN, bold=True)
    if bad:
        raise typer.Exit(1)
