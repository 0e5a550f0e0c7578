"""`coworkenv run`: batches of episodes of a policy, their records, and success per capability."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from . import _judge as judge
from ._usage import fail as _fail


def _policy_settings(policy: str, model: str | None, base_url: str | None, api_key: str | None,
                     temperature: float | None, max_tokens: int | None, calls_per_turn: int | None,
                     random_calls: int | None) -> dict[str, Any]:
    if policy == "openai":
        return {"model": model, "base_url": base_url, "api_key": api_key, "temperature": temperature,
                "max_tokens": max_tokens}
    if policy == "hf":
        return {"path": model, "temperature": temperature, "max_new_tokens": max_tokens}
    given = {"--model": model, "--base-url": base_url, "--api-key": api_key, "--temperature": temperature,
             "--max-tokens": max_tokens}
    stray = [k for k, v in given.items() if v is not None]
    if stray:
        _fail(f"{', '.join(stray)} only apply to --policy openai or hf, not {policy}")
    if policy == "teacher":
        return {"calls_per_turn": calls_per_turn}
    if policy == "random":
        return {"calls": random_calls}
    return {}


def _summary_table(rows: list[Any], title: str) -> Any:
    from rich.table import Table

    table = Table(title=title, caption="eps: episodes; success: every predicate passed; score: mean weighted "
                                       "predicate score (partial credit); days: working days passed of those "
                                       "played in multi-day episodes; viol.: calls blocked by a workplace policy; "
                                       "failed: tool calls that errored; errors: episodes ended by an error. An "
                                       "environment with several capabilities counts in each of their rows, so "
                                       "the rows can add up to more than 'all'.")
    width = max([len(r.capability) for r in rows] + [10])
    table.add_column("capability", no_wrap=True, min_width=width)
    for col in ("eps", "passed", "success", "score", "days", "reward", "viol.", "failed", "errors"):
        table.add_column(col, justify="right", overflow="fold")
    for r in rows:
        style = "bold" if r.capability == "all" else None
        days = f"{r.days_passed}/{r.days}" if r.days else "-"
        table.add_row(r.capability, str(r.episodes), str(r.passed), f"{100 * r.success_rate:.0f}%",
                      f"{r.mean_score:.2f}", days, f"{r.mean_reward:.3f}", str(r.violations), str(r.tool_errors),
                      str(r.errors), style=style)
    return table


def _report_errors(errored: list[Any], total: int) -> None:
    """Say on stderr why episodes stopped on an error (each distinct reason once, with its count);
    exit 1 when every episode did, since then the run measured nothing about the policy."""
    from collections import Counter

    reasons = Counter(f"{r.final.stop_reason}: {r.final.stop_detail or 'no detail recorded'}" for r in errored)
    typer.echo(f"warning: {len(errored)} of {total} episodes stopped on an error:", err=True)
    for reason, n in reasons.most_common(5):
        typer.echo(f"  {n} x {reason}", err=True)
    if len(reasons) > 5:
        typer.echo(f"  ... and {len(reasons) - 5} other reasons (see the records)", err=True)
    if len(errored) == total:
        _fail("every episode stopped on an error; nothing was measured", 1)


def run(
    envs: list[Path] = typer.Argument(..., help="Environment spec files (.json/.yaml) or folders of them."),
    policy: str = typer.Option("teacher", "--policy", "-p", help="teacher, stale, forgetful, spray, first_pick, "
                                 "blind_writer, answer_only, noop, random, openai or hf."),
    episodes_per_env: int = typer.Option(1, "--episodes-per-env", "-g", min=1,
                                         help="Episodes (seeds) per environment: the size of each RL group."),
    workers: int = typer.Option(1, "--workers", "-w", min=1, help="Worker processes (or Ray tasks at once)."),
    seed: int = typer.Option(0, "--seed", "-s", help="First seed; episode k of an environment uses seed + k."),
    out: Path = typer.Option(Path("runs/episodes.jsonl"), "--out", "-o", help="JSONL file the records go to."),
    model: str | None = typer.Option(None, "--model", help="openai: model name; hf: local model folder."),
    base_url: str | None = typer.Option(None, "--base-url", help="openai: the endpoint's base URL."),
    api_key: str | None = typer.Option(None, "--api-key", help="openai: API key (else COWORKENV_OPENAI_API_KEY, "
                                                                       "or OPENAI_API_KEY)."),
    temperature: float | None = typer.Option(None, "--temperature", help="openai/hf sampling temperature."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="openai/hf: tokens per turn."),
    calls_per_turn: int | None = typer.Option(None, "--calls-per-turn", help="teacher: calls per turn (0: all)."),
    random_calls: int | None = typer.Option(None, "--random-calls", help="random: calls before answering."),
    user: str = typer.Option("scripted", "--user", help="Simulated user: scripted or llm."),
    user_model: str | None = typer.Option(None, "--user-model", help="llm user: model name."),
    user_base_url: str | None = typer.Option(None, "--user-base-url", help="llm user: endpoint base URL."),
    user_api_key: str | None = typer.Option(None, "--user-api-key", help="llm user: API key (else "
                                                                           "COWORKENV_OPENAI_API_KEY, or "
                                                                           "OPENAI_API_KEY)."),
    max_turns: Optional[int] = typer.Option(None, "--max-turns", min=1, help="Assistant turns before stopping "
                                            "(default: 3x the reference solution's steps, at least 30)."),
    max_tool_calls: Optional[int] = typer.Option(None, "--max-tool-calls", min=1, help="Tool calls before stopping "
                                                 "(default: 3x the reference's calls, at least 100)."),
    max_seconds: float = typer.Option(600.0, "--max-seconds", min=0.001, help="Wall seconds per episode."),
    mcp: bool = typer.Option(False, "--mcp", help="Send every tool call through an in-process MCP client."),
    connect: str | None = typer.Option(None, "--connect", metavar="URL[,URL...]",
                                       help="Run the episodes on remote `coworkenv serve --http` servers at "
                                            "these base URLs (tool calls over MCP, judged by the server); "
                                            "several URLs spread the episodes, each routed by its id."),
    admin_token: str | None = typer.Option(None, "--admin-token",
                                           help="--connect: the server's admin token (else "
                                                "COWORKENV_ADMIN_TOKEN)."),
    remote_timeout: float = typer.Option(60.0, "--remote-timeout", min=0.001,
                                         help="--connect: seconds to wait for any one answer of the server."),
    ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS",
                                      help="Run on Ray: alone or 'local' starts a private local Ray; HOST:PORT, "
                                           "ray://HOST:PORT or 'auto' joins a cluster."),
    report: Path | None = typer.Option(None, "--report", help="Also write the HTML report into this folder."),
    judge_model: str | None = judge.MODEL,
    judge_base_url: str | None = judge.BASE_URL,
    judge_api_key: str | None = judge.API_KEY,
    judge_cache: Path | None = judge.CACHE,
    as_json: bool = typer.Option(False, "--json", help="Print the summary rows as JSON instead of the table."),
) -> None:
    """Run episodes of environments with a policy, write their records, and print success per capability."""
    from rich.console import Console

    from trainers.episodes.batch import summarize

    if user not in ("scripted", "llm"):
        _fail(f"--user must be scripted or llm, got {user!r}")
    if connect is not None and mcp:
        _fail("--mcp and --connect exclude each other: --connect already sends every call over MCP (HTTP)")
    if connect is None and admin_token is not None:
        _fail("--admin-token only applies with --connect URL")
    specs, config = _batch_config(
        envs, (policy, model, base_url, api_key, temperature, max_tokens, calls_per_turn, random_calls),
        (user, user_model, user_base_url, user_api_key), episodes_per_env, seed,
        (max_turns, max_tool_calls, max_seconds), mcp, (connect, admin_token, remote_timeout),
        (judge_model, judge_base_url, judge_api_key, judge_cache))
    records = _run_with_progress(specs, config, workers, ray, out)
    rows = summarize(records)
    if as_json:
        typer.echo(json.dumps({"records": str(out), "rows": [r.to_json() for r in rows]}))
    else:
        Console().print(_summary_table(rows, f"{policy}: {len(specs)} environments x {episodes_per_env} episodes"))
        typer.echo(f"records: {out}")
    errored = [r for r in records if r.errored]
    if errored:
        _report_errors(errored, len(records))
    if report is not None:
        from trainers.report import ReportError, write_report

        try:
            where = write_report(records, report, title=f"coworkenv run: {policy}")
            typer.echo(f"report: {where}", err=as_json)
        except ReportError as e:
            _fail(str(e))


def _batch_config(envs: list[Path], policy_options: tuple[Any, ...], user_options: tuple[Any, ...],
                  episodes_per_env: int, seed: int,
                  limits: tuple[int | None, int | None, float], mcp: bool,
                  remote: tuple[str | None, str | None, float],
                  judging: tuple[str | None, str | None, str | None, Path | None]) -> tuple[list[Any], Any]:
    """The specs and the batch configuration of a `run` line, every setting checked (and every endpoint it names
    reached) before any episode starts; a usage error otherwise."""
    from synth.judge import JudgeConfig
    from trainers.episodes.batch import BatchConfig, UserSpec
    from trainers.episodes.llm import LLMError
    from trainers.episodes.policies import PolicyConfigError, PolicySpec
    from trainers.episodes.remote import RemoteError, RemoteServers, check_server
    from trainers.episodes.prepared import EpisodeLimits
    from trainers.episodes.sources import SourceError, load_specs

    connect, admin_token, remote_timeout = remote
    judge_model, judge_base_url, judge_api_key, judge_cache = judging
    try:
        target = RemoteServers.from_options(connect, admin_token, remote_timeout) if connect is not None else None
        specs = load_specs(envs)
        settings = _policy_settings(*policy_options)
        pspec = PolicySpec(policy_options[0], {k: v for k, v in settings.items() if v is not None})
        built = pspec.build()  # refuse bad settings before any work starts
        user, user_model, user_base_url, user_api_key = user_options
        uspec = UserSpec(user, {k: v for k, v in {"model": user_model, "base_url": user_base_url,
                                                  "api_key": user_api_key}.items() if v is not None})
        if user == "llm":
            uspec.factory()
        jconfig = JudgeConfig.from_env(model=judge_model, base_url=judge_base_url, api_key=judge_api_key,
                                       cache=str(judge_cache) if judge_cache else None)
        if connect is not None and jconfig.model is not None:
            _fail("--judge-* options do not apply with --connect: the remote server judges its episodes")
        config = BatchConfig(pspec, episodes_per_env, seed, EpisodeLimits(*limits), "mcp" if mcp else "direct",
                             uspec, connect=target, judge=jconfig)
    except (SourceError, PolicyConfigError, ValueError) as e:
        _fail(str(e))
    if target is not None:
        try:
            for server in target.targets:
                check_server(server)  # a wrong URL or token stops here, not once per episode
        except RemoteError as e:
            _fail(str(e))
    try:  # an endpoint that is down or lacks the model stops here, not once per episode
        if hasattr(built, "preflight"):
            built.preflight()
        uspec.preflight()
    except LLMError as e:
        _fail(f"the model endpoint cannot be used: {e.message}")
    return specs, config


def _run_with_progress(specs: list[Any], config: Any, workers: int, ray: str | None, out: Path) -> list[Any]:
    """Run the batch under a progress bar on stderr, each record on disk as soon as its episode ends; then the same
    records again, in job order (deterministic bytes)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from trainers.episodes.execute import run_batch
    from trainers.episodes.ray_executor import RayTaskFailed, RayUnavailable
    from workspace_sim.record import RecordStream, write_records

    console = Console(stderr=True)
    total = len(specs) * config.episodes_per_env
    with Progress(TextColumn("[bold]episodes"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=console, transient=False) as progress:
        task = progress.add_task("", total=total)
        passed = [0]
        stream = RecordStream(out)

        def tick(rec: Any) -> None:
            stream.add(rec)
            passed[0] += rec.passed
            progress.update(task, advance=1, description=f"passed {passed[0]}")

        try:
            records = run_batch(specs, config, workers=workers, ray=ray, on_record=tick,
                                on_status=lambda text: progress.console.print(f"ray: {text}", highlight=False))
        except RayUnavailable as e:
            _fail(str(e))
        except RayTaskFailed as e:  # the records that came back before are in `out` already
            _fail(f"{e}; those are in {out}", 1)
        finally:
            stream.close()
    write_records(records, out)
    return records
