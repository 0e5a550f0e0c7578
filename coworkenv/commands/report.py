"""`coworkenv report`: an HTML report of recorded episodes."""

from __future__ import annotations

from pathlib import Path

import typer

from ._usage import fail


def report(
    records: Path = typer.Argument(..., help="A JSONL record file or a folder of them."),
    out: Path = typer.Option(Path("runs/report"), "--out", "-o", help="Folder for index.html and the pages."),
    title: str = typer.Option("coworkenv episodes", "--title", help="Title of the index page."),
) -> None:
    """Write an HTML report of recorded episodes: success per capability and a page per episode."""
    from workspace_sim.record import RecordError, read_records
    from trainers.report import ReportError, write_report

    try:
        recs = read_records(records)
        if not recs:
            fail(f"{records}: no episode records in it, so there is nothing to report")
        typer.echo(f"report: {write_report(recs, out, title=title)} ({len(recs)} episodes)")
    except (RecordError, ReportError) as e:
        fail(str(e))
