"""`coworkenv export rl`: episode groups with rewards and credit as RL data."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def rl(
    records: Path = typer.Argument(..., help="A JSONL record file or a folder of them."),
    out: Path = typer.Option(Path("rl.jsonl"), "--out", "-o", help="Output JSONL file, one line per group."),
    terminal: str = typer.Option("outcome", "--terminal", help="outcome or partial."),
    shaping: bool = typer.Option(False, "--shaping/--no-shaping", help="Potential-based per-turn shaping."),
    method: str = typer.Option("grpo", "--method", help="grpo, drgrpo or rloo."),
    level: str = typer.Option("episode", "--level", help="episode, turn (MT-GRPO) or gigpo."),
    gamma: float = typer.Option(1.0, "--gamma", help="Discount for shaping and turn returns."),
    violation_penalty: float = typer.Option(0.5, "--violation-penalty",
                                            help="Reward subtracted per call blocked by a workplace policy."),
    fault_penalty: float = typer.Option(0.25, "--fault-penalty",
                                        help="Reward subtracted per injected fault the agent did not recover "
                                             "from."),
    keep_errors: bool = typer.Option(False, "--keep-errors",
                                     help="Keep episodes that stopped on an error (skipped by default: they "
                                          "measure the endpoint, not the policy)."),
    min_group_size: int = typer.Option(2, "--min-group-size", min=1,
                                       help="Skip groups with fewer rollouts (a group of one has zero "
                                            "advantage and teaches nothing)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON instead of a sentence."),
) -> None:
    """Export rollout groups per environment with rewards and per-turn advantages."""
    from pydantic import ValidationError

    from trainers.credit import CreditConfig
    from trainers.export.rl import export_rl
    from workspace_sim.record import RecordError
    from trainers.rewards import RewardConfig

    try:
        rewards = RewardConfig(terminal=terminal, shaping=shaping, gamma=gamma,  # type: ignore[arg-type]
                               violation_penalty=violation_penalty, fault_penalty=fault_penalty)
        credit = CreditConfig(method=method, level=level, gamma=gamma)  # type: ignore[arg-type]
        summary = export_rl(records, out, rewards, credit, keep_errors, min_group_size)
    except ValidationError as e:
        problems = "; ".join(f"--{'.'.join(map(str, x['loc'])).replace('_', '-')}: {x['msg']}" for x in e.errors())
        typer.echo(f"error: {problems}", err=True)
        raise typer.Exit(2) from None
    except (RecordError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        typer.echo(f"wrote {summary['groups']} groups ({summary['rollouts']} rollouts; {method}, {level} level) "
                   f"to {summary['file']}")
    if summary["zero_advantage_groups"]:
        typer.echo(f"warning: {summary['zero_advantage_groups']} of {summary['groups']} group(s) have all-zero "
                   "advantages (every rollout got the same reward), so they teach nothing; sample more "
                   "diverse rollouts (a higher --temperature, more episodes per environment)", err=True)
    for why, n in summary["skipped"].items():
        typer.echo(f"warning: skipped {n} episode(s) {why}"
                   + (" (--keep-errors keeps them)" if why == "stopped on an error" else "")
                   + (" (run more episodes per environment, e.g. -g 4 with a sampling temperature)"
                      if why.startswith("in groups") else ""), err=True)
    if not summary["groups"]:
        typer.echo("error: no group left to export", err=True)
        raise typer.Exit(1)
