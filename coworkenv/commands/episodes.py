"""`coworkenv episodes DIR`: list recorded episodes with their scores."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def episodes(
        path: Path = typer.Argument(..., help="A record file or a folder of *.jsonl records."),
    ) -> None:
        """List recorded episodes: environment, calls, errors, status and score."""
        from rich.console import Console
        from rich.table import Table

        from mcp_server.recording import RecordReadError, read_record_file, record_files

        console = Console()
        try:
            files = record_files(path)
        except RecordReadError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        table = Table(title=f"Episodes in {path}")
        for col in ("episode", "environment", "calls", "errors", "status", "score", "record"):
            table.add_column(col, justify="right" if col in ("calls", "errors", "score") else "left")
        problems = []
        for f in files:
            try:
                rec = read_record_file(f)
            except RecordReadError as e:
                problems.append(str(e))
                continue
            problems.extend(rec.skipped)
            for seg in rec.segments:
                calls = seg.calls
                errors = sum(1 for c in calls if not c.get("ok"))
                ev = seg.evaluation
                if ev is None:
                    status, score = "[yellow]open[/]", "-"
                else:
                    status = "[green]passed[/]" if ev.get("passed") else "[red]failed[/]"
                    score = f"{float(ev.get('score', 0.0)):.2f}"
                table.add_row(seg.segment_id, str(seg.header.get("env_id", "?")), str(len(calls)), str(errors),
                              status, score, f.name)
        console.print(table)
        for p in problems:
            console.print(f"[yellow]warning:[/] {p}", highlight=False)
