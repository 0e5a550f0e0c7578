"""`coworkenv bench`: run the benchmarks and print each figure next to its same-run baseline."""

from __future__ import annotations

import json
from typing import Optional

import typer


def bench(
    only: Optional[list[str]] = typer.Option(None, "--only", help="Benchmark areas to run (default: all)."),
    quick: bool = typer.Option(False, "--quick", help="Fewer repetitions (for smoke tests)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object {key: value, ...}."),
) -> None:
    """Measure speed figures (snapshot, restore, calls/s, synthesis, episodes, sandbox)."""
    from rich.console import Console
    from rich.table import Table

    import benchmarks

    available = benchmarks.areas()
    chosen = only or available
    unknown = [a for a in chosen if a not in available]
    if unknown:
        raise typer.BadParameter(f"unknown area(s) {unknown}; available: {', '.join(available)}", param_hint="--only")
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err = Console(stderr=True)
    figures: list[dict] = []
    failed: dict[str, str] = {}
    with Progress(TextColumn("[bold]bench[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=err, transient=False) as progress:
        task = progress.add_task("", total=len(chosen))
        for done, area in enumerate(chosen):
            progress.update(task, description=area)
            if not err.is_terminal:  # redirected: the bar is not redrawn, so say what runs now
                progress.console.print(f"{area}: running ({done} of {len(chosen)} areas done)", highlight=False)
            start = time.perf_counter()
            try:
                got = [dict(f, area=area) for f in benchmarks.run_area(area, quick)]
            except Exception as e:  # one broken area must not hide the others
                failed[area] = root_cause(e)
                progress.console.print(f"[red]{area} failed[/] after {time.perf_counter() - start:.1f} s: "
                                       f"{failed[area]}", highlight=False)
            else:
                figures += got
                progress.console.print(f"{area}: {len(got)} figure(s) in {time.perf_counter() - start:.1f} s",
                                       highlight=False)
            progress.update(task, advance=1)
    if as_json:
        out = {}
        for f in figures:
            out[f["key"]] = f["value"]
            if f.get("baseline_key"):
                out[f["baseline_key"]] = f["baseline"]
        typer.echo(json.dumps(out, indent=2, sort_keys=True))
        _exit_if_failed(failed)
        return
    from benchmarks.targets import check, ratio

    table = Table(title="coworkenv bench (baselines measured in this same run)",
                  caption="ratio: how many times better (or worse) than the baseline measured in this run; "
                          "target: from the figure's note, [red]missed[/] when not met")
    table.add_column("area", no_wrap=True)
    table.add_column("figure", no_wrap=True)
    for col in ("value", "baseline", "ratio"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("target", overflow="fold")
    table.add_column("note", overflow="fold")
    missed = []
    for f in figures:
        base, r = f.get("baseline"), ratio(f)
        shown = "" if r is None else (f"{r:,.1f}x better" if r >= 1 else f"{1 / r:,.1f}x worse")
        met, target = check(f)
        if met is False:
            missed.append(f["key"])
        mark = "" if met is None else ("[green]met[/]" if met else "[red]missed[/]")
        note = (f.get("note") or "").split("target")[0].rstrip(" ;,") if target else f.get("note", "")
        table.add_row(f["area"], f["key"], f"{f['value']:,.2f} {f.get('unit', '')}",
                      f"{base:,.2f}" if base is not None else "", shown,
                      f"{mark} {target}".strip(), note)
    for area, why in failed.items():
        table.add_row(area, "[red]failed[/]", "", "", "", "", why)
    Console(width=max(Console().width, 160)).print(table)
    if missed:
        typer.echo(f"missed targets: {', '.join(missed)}", err=True)
    _exit_if_failed(failed)


def root_cause(exc: BaseException) -> str:
    """`Type: message` of what really went wrong: ExceptionGroups (task groups) are opened down to their
    leaf exceptions, each distinct one named once, so "unhandled errors in a TaskGroup" never hides the cause."""
    leaves: list[str] = []

    def walk(e: BaseException) -> None:
        if isinstance(e, BaseExceptionGroup):
            for sub in e.exceptions:
                walk(sub)
            return
        text = f"{type(e).__name__}: {e}".rstrip(": ")
        if text not in leaves:
            leaves.append(text)

    walk(exc)
    return "; ".join(leaves)


def _exit_if_failed(failed: dict[str, str]) -> None:
    """Exit 1 naming every area that failed (each has already been reported with its cause)."""
    if failed:
        typer.echo(f"error: {len(failed)} benchmark area(s) failed: "
                   + "; ".join(f"{a}: {why}" for a, why in failed.items()), err=True)
        raise typer.Exit(1)
