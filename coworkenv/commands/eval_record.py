"""`coworkenv eval RECORD`: each predicate's pass/fail and why, for every episode of a record."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from . import _judge as judge


def _rows(results: list[dict[str, Any]], depth: int = 0) -> list[tuple[str, ...]]:
    rows = []
    for r in results:
        mark = "[green]pass[/]" if r.get("passed") else "[red]FAIL[/]"
        rows.append((mark, "  " * depth + str(r.get("description", "")), f"{r.get('weight', 1)}",
                     str(r.get("expected", "")), str(r.get("observed", ""))))
        rows.extend(_rows(r.get("children") or [], depth + 1))
    return rows


def eval_record(
    record: Path = typer.Argument(..., help="An episode record (JSONL)."),
    answer: Optional[str] = typer.Option(None, help="The agent's final answer, for answer predicates; stored in "
                                                    "a served episode recorded without one (plain stdio or "
                                                    "HTTP), so `coworkenv episodes` lists its judgement."),
    episode: Optional[str] = typer.Option(None, help="Only this episode of the file."),
    rescore: bool = typer.Option(False, help="Replay and evaluate again even where a result is recorded."),
    no_append: bool = typer.Option(False, "--no-append", help="Write nothing: no result appended to unfinished "
                                                              "records, no answer stored."),
    spec: Optional[Path] = typer.Option(None, "--spec", help="The environment's spec file, for a record that "
                                                             "does not say where its environment came from "
                                                             "(`coworkenv run`'s records)."),
    python: Optional[str] = typer.Option(None, "--python", help="MODULE:FUNCTION returning the environment, "
                                                                "instead of --spec."),
    judge_model: Optional[str] = judge.MODEL,
    judge_base_url: Optional[str] = judge.BASE_URL,
    judge_api_key: Optional[str] = judge.API_KEY,
    judge_cache: Optional[Path] = judge.CACHE,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON evaluation per episode instead of tables."),
) -> None:
    """Evaluate a recorded episode (replaying it when it has no result yet) and print every predicate."""
    from rich.console import Console
    from rich.table import Table

    from workspace_sim.record import RecordReadError
    from mcp_server.replay import ReplayError, judge_record

    from synth.judge import JudgeConfig
    from synth.llm.settings import SettingsError

    console = Console()
    env = None
    if spec is not None or python is not None:
        from mcp_server.environment import EnvironmentLoadError

        from ._environment import fail, source_from_options

        if spec is not None and python is not None:
            raise typer.BadParameter("give either --spec or --python, not both")
        try:
            env = source_from_options(spec, python).load()
        except EnvironmentLoadError as e:
            raise fail(str(e)) from None
    try:
        judge = JudgeConfig.from_env(model=judge_model, base_url=judge_base_url, api_key=judge_api_key,
                                     cache=str(judge_cache) if judge_cache else None).build()
    except SettingsError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    try:
        verdicts = judge_record(record, answer, rescore=rescore, append=not no_append, segment_id=episode,
                                judge=judge, env=env)
    except (RecordReadError, ReplayError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    if not verdicts:
        typer.echo(f"error: {record} holds no episodes", err=True)
        raise typer.Exit(2)
    if as_json:
        import json

        for v in verdicts:
            typer.echo(json.dumps({"episode": v.segment.segment_id, "env_id": v.segment.header.get("env_id"),
                                   "from_record": v.from_record, "appended": v.appended, "stored": v.stored,
                                   "note": v.note,
                                   "evaluation": v.evaluation, "warnings": list(v.warnings)}, default=str))
        return
    for v in verdicts:
        ev = v.evaluation
        how = "recorded" if v.from_record else ("replayed, result appended" if v.appended else
                                               "replayed, answer stored" if v.stored else "replayed")
        table = Table(title=f"{v.segment.segment_id} ({v.segment.header.get('env_id')}): "
                            f"score {float(ev.get('score', 0)):.2f}, {'passed' if ev.get('passed') else 'failed'} ({how})")
        from workspace_sim.record import stage_summary, stage_verdicts

        days = {i: st for st in stage_verdicts(ev) for i in st.get("predicates") or []}
        for col in ("", "requirement", "day", "weight", "expected", "observed") if days else \
                ("", "requirement", "weight", "expected", "observed"):
            table.add_column(col)
        for i, r in enumerate(ev.get("results") or []):
            for j, row in enumerate(_rows([r])):
                table.add_row(*(row[:2] + ((days[i]["id"] if i in days and j == 0 else "",) if days else ())
                                + row[2:]))
        console.print(table)
        if days:
            console.print(f"days: {stage_summary(ev)} (strict pass and weighted score of each day's "
                          f"predicates, judged on the state that day closed on)", highlight=False)
        if ev.get("error"):
            console.print(f"[red]{ev['error']}[/]", highlight=False)
        if v.note:
            console.print(f"[yellow]note:[/] {v.note}", highlight=False)
        for w in v.warnings:
            console.print(f"[yellow]warning:[/] {w}", highlight=False)
