"""`coworkenv episodes PATH`: list recorded episodes with their scores."""

from __future__ import annotations

from pathlib import Path

import typer


def episode_files(path: Path) -> list[Path]:
    """The record files `coworkenv episodes PATH` reads: PATH itself when it is a file; every `*.jsonl`
    under it when it is a folder; and, either way, `PATH.jsonl` beside it, so `runs/episodes` lists
    what `coworkenv run` wrote to its default `runs/episodes.jsonl` as well as what `claude-config`
    servers recorded into the folder `runs/episodes/`. Raises RecordReadError when there is none."""
    from workspace_sim.record import RecordReadError, record_files

    files = record_files(path) if path.exists() else []
    sibling = path.with_name(path.name + ".jsonl")
    if path.suffix.lower() != ".jsonl" and sibling.is_file() and sibling not in files:
        files.append(sibling)
    if not files:
        raise RecordReadError(f"{path}: no such file or folder of episode records" if not path.exists() else
                              f"{path}: no *.jsonl episode records in it")
    return files


def episodes(
    path: Path = typer.Argument(..., metavar="records",
                                help="A JSONL record file or a folder of them (searched recursively); "
                                     "records.jsonl beside it is read too, so runs/episodes lists `run`'s "
                                     "default runs/episodes.jsonl and claude-config's runs/episodes/."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON line per episode instead of the table."),
) -> None:
    """List recorded episodes: environment, calls, errors, status, score, and each working day's verdict."""
    from rich.console import Console
    from rich.table import Table

    from workspace_sim.record import RecordReadError, read_record_file
    from workspace_sim.record import ERROR_STOPS, stage_summary, stage_verdicts

    console = Console()
    try:
        files = episode_files(path)
    except RecordReadError as e:  # a folder with no records found nothing (1); a path that is not there is bad input
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1 if path.is_dir() else 2) from None
    table = Table(title=f"Episodes in {path}")
    table.caption = ("failed calls: tool calls that returned an error; status 'error': the episode stopped on "
                     "an error of the policy, the user simulator or the environment")
    for col in ("episode", "environment", "calls", "failed calls", "status", "score", "days", "record"):
        table.add_column(col, justify="right" if col in ("calls", "failed calls", "score") else "left")
    problems = []
    listed: list[dict] = []
    stopped_on_error = 0
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
            stop = (seg.final or {}).get("stop_reason")
            if ev is None:
                status, score = "[yellow]open[/]", "-"
            elif stop in ERROR_STOPS:
                status, score = f"[red]error[/] ({stop})", f"{float(ev.get('score', 0.0)):.2f}"
                stopped_on_error += 1
            else:
                status = "[green]passed[/]" if ev.get("passed") else "[red]failed[/]"
                score = f"{float(ev.get('score', 0.0)):.2f}"
            table.add_row(seg.segment_id, str(seg.header.get("env_id", "?")), str(len(calls)), str(errors),
                          status, score, stage_summary(ev) or "-", f.name)
            listed.append({"episode": seg.segment_id, "env_id": seg.header.get("env_id"), "calls": len(calls),
                           "failed_calls": errors, "stop_reason": stop, "passed": None if ev is None else
                           bool(ev.get("passed")), "score": None if ev is None else float(ev.get("score", 0.0)),
                           "stages": [{k: s.get(k) for k in ("id", "passed", "score", "reached")}
                                      for s in stage_verdicts(ev)],
                           "record": str(f)})
    if as_json:
        import json

        for row in listed:
            typer.echo(json.dumps(row))
        for p in problems:
            typer.echo(f"warning: {p}", err=True)
        _fail_if_empty(listed, files)
        return
    console.print(table)
    if stopped_on_error:
        console.print(f"[red]{stopped_on_error} episode(s) stopped on an error[/]; `coworkenv eval RECORD` "
                      "shows why", highlight=False)
    for p in problems:
        console.print(f"[yellow]warning:[/] {p}", highlight=False)
    _fail_if_empty(listed, files)


def _fail_if_empty(listed: list[dict], files: list[Path]) -> None:
    """Exit 1 when the record files held no episode at all (each unreadable line was already named)."""
    if not listed:
        typer.echo(f"error: no episode in {len(files)} record file(s)", err=True)
        raise typer.Exit(1)
