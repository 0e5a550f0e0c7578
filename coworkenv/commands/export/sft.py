"""`coworkenv export sft`: passing teacher episodes as SFT data."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def sft(
    records: Path = typer.Argument(..., help="A JSONL record file or a folder of them."),
    format: str = typer.Option("hf", "--format", "-f", help="hf (dict arguments) or openai (string arguments)."),
    out: Path = typer.Option(Path("sft"), "--out", "-o",
                             help="Folder for train.jsonl, validation.jsonl, manifest.json."),
    validation: float = typer.Option(0.1, "--validation", help="Fraction of environments held out."),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed of the environment split."),
    as_json: bool = typer.Option(False, "--json", help="Print the export report as JSON instead of a sentence."),
) -> None:
    """Export passing, violation-free, deduplicated episodes as SFT data, split by environment."""
    from trainers.export.sft import ExportError, export_sft
    from workspace_sim.record import RecordError

    if format not in ("hf", "openai"):
        raise typer.BadParameter(f"must be hf or openai, got {format!r}", param_hint="--format")
    try:
        report = export_sft(records, out, format, validation, seed)  # type: ignore[arg-type]
    except (RecordError, ExportError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    skipped = ", ".join(f"{n} {why}" for why, n in report.skipped.items()) or "none"
    if as_json:
        typer.echo(json.dumps({"out": str(out), "format": format, "train": report.train,
                               "validation": report.validation, "skipped": dict(report.skipped)}))
    else:
        typer.echo(f"wrote {report.train} train and {report.validation} validation examples ({format}) to {out}; "
                   f"skipped: {skipped}")
    if not report.train + report.validation:
        typer.echo(f"error: no episode qualified as SFT data (skipped: {skipped}); SFT takes passing, "
                   "violation-free episodes, e.g. `coworkenv run ENVS --policy teacher`", err=True)
        raise typer.Exit(1)
