"""`coworkenv replay`: re-execute recorded episodes and check that they reproduce."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ._usage import fail


def replay(
    records: Path = typer.Argument(..., help="A JSONL record file or a folder of them."),
    env: list[Path] = typer.Option(..., "--envs", "--env", "-e", help="Spec files or folders the records ran in."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON line per episode instead of the table."),
) -> None:
    """Re-execute recorded episodes and check every step reproduces its recorded state and predicates."""
    from rich.console import Console
    from rich.table import Table

    from workspace_sim.record import replay_records
    from trainers.episodes.sources import SourceError, load_specs
    from workspace_sim.record import RecordError, read_records

    try:
        recs = read_records(records)
        specs = load_specs(env)
    except (RecordError, SourceError) as e:
        fail(str(e))
    if not recs:
        fail(f"{records}: no episode records in it, so there is nothing to replay")
    reports = replay_records(recs, specs)
    if as_json:
        for r in reports:
            typer.echo(json.dumps({"episode": r.episode_id, "env_id": r.env_id, "steps": r.steps_checked,
                                   "events": r.events_replayed, "reproduced": r.ok,
                                   "mismatches": [str(m) for m in r.mismatches]}))
        if any(not r.ok for r in reports):
            raise typer.Exit(1)
        return
    table = Table(title=f"Replay of {records}")
    for col in ("episode", "environment", "steps", "events", "result"):
        table.add_column(col, overflow="fold")
    for r in reports:
        table.add_row(r.episode_id, r.env_id, str(r.steps_checked), str(r.events_replayed),
                      "[green]reproduced[/]" if r.ok else f"[red]{len(r.mismatches)} mismatch(es)[/]")
    console = Console()
    console.print(table)
    for r in reports:
        for m in r.mismatches:
            console.print(f"[red]{r.episode_id}[/]: {m}", highlight=False)
    if any(not r.ok for r in reports):
        raise typer.Exit(1)
