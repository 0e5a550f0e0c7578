"""`coworkenv train rl`: GRPO with environment rollouts and the chosen credit assignment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from .._usage import fail as _fail
from ._progress import StepProgress
from ._torch import prepare


def load_environments(spec: str) -> list[Any]:
    """Environments from a spec file (*.json, *.yaml, *.yml), a folder of them (searched recursively), or
    `toy:N` (N archive tasks). Raises ValueError naming `--envs` and what is wrong with it."""
    if spec.startswith("toy:"):
        from trainers.training.toy import archive_environments

        n = spec[4:]
        if not n.isdigit() or int(n) < 1:
            raise ValueError(f"--envs toy:N needs a positive N, got {spec!r}")
        return archive_environments(int(n))
    from synth.spec import load_spec

    path = Path(spec)
    suffixes = (".json", ".yaml", ".yml")
    if path.is_file():
        if path.suffix.lower() not in suffixes:
            raise ValueError(f"--envs {spec}: not an environment spec file (*.json, *.yaml, *.yml)")
        return [load_spec(path)]
    if not path.is_dir():
        raise ValueError(f"--envs {spec}: no such file or folder (give a spec file, a folder of specs, or toy:N)")
    files = sorted(p for p in path.rglob("*") if p.suffix.lower() in suffixes)
    if not files:
        raise ValueError(f"--envs {spec}: no *.json / *.yaml environment specs in it")
    return [load_spec(p) for p in files]


def rl(
    model: Path = typer.Option(..., "--model", help="Folder of a local transformers causal LM, or of a "
                                                    "vision-language model (its rollouts see the images)."),
    envs: str = typer.Option(..., "--envs", "-e", help="An environment spec file, a folder of them, or toy:N."),
    out: Path = typer.Option(Path("rl-model"), "--out", "-o", help="Folder for the trained model."),
    steps: int = typer.Option(1, "--steps", min=1, help="GRPO steps (one update each)."),
    group_size: int = typer.Option(4, "--group-size", "-g", help="Rollouts per environment per step."),
    envs_per_step: int = typer.Option(2, "--envs-per-step", help="Environments sampled per step."),
    lr: float = typer.Option(1e-4, "--lr", help="Learning rate."),
    method: str = typer.Option("grpo", "--method", help="grpo, drgrpo or rloo."),
    level: str = typer.Option("episode", "--level", help="episode, turn (MT-GRPO) or gigpo."),
    terminal: str = typer.Option("outcome", "--terminal", help="outcome or partial."),
    shaping: bool = typer.Option(False, "--shaping/--no-shaping", help="Potential-based per-turn shaping."),
    per_stage: bool = typer.Option(False, "--per-stage/--no-per-stage",
                                   help="Multi-day environments: pay each day's reward in the turn that "
                                        "closed it."),
    rollout: str = typer.Option("generate", "--rollout", help="generate (free text) or choice (candidates)."),
    max_turns: int = typer.Option(4, "--max-turns", help="Assistant turns per rollout."),
    max_new_tokens: int = typer.Option(96, "--max-new-tokens", help="Tokens generated per turn."),
    records: Path | None = typer.Option(None, "--records", help="Write every rollout's episode record here."),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed of sampling and environment order."),
    threads: int = typer.Option(0, "--threads", help="torch CPU threads (0: one on machines with 2 cores or "
                                                     "fewer, else torch's default)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON line per step instead of the table."),
) -> None:
    """GRPO with environment rollouts and the chosen credit assignment (text or vision-language students)."""
    from pydantic import ValidationError

    prepare(threads)
    from trainers.credit import CreditConfig
    from trainers.rewards import RewardConfig
    from trainers.training.grpo import GRPOSettings, train_grpo
    from trainers.training.rollout import RolloutSettings, choice_rollout, generate_rollout

    if rollout not in ("generate", "choice"):
        _fail(f"--rollout must be generate or choice, got {rollout!r}")
    try:
        settings = GRPOSettings(
            steps=steps, group_size=group_size, envs_per_step=envs_per_step, learning_rate=lr, seed=seed,
            credit=CreditConfig(method=method, level=level),  # type: ignore[arg-type]
            rollout=RolloutSettings(max_turns=max_turns, max_new_tokens=max_new_tokens, seed=seed,
                                    rewards=RewardConfig(  # type: ignore[arg-type]
                                        terminal=terminal, shaping=shaping, per_stage=per_stage)),
        )
    except ValidationError as e:
        _fail("; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors()))
    try:
        environments = load_environments(envs)
    except Exception as e:  # spec loading errors name the file and field
        _fail(str(e))
    fn = choice_rollout if rollout == "choice" else generate_rollout
    try:
        with StepProgress("train rl", steps, figure="mean reward") as progress:
            history = train_grpo(model, environments, out, settings, fn, records,
                                 on_step=lambda s: progress.step(s.step + 1, s.mean_reward))
    except (FileNotFoundError, ValueError) as e:
        _fail(str(e))
    rows = [{k: v for k, v in h.to_json().items() if k != "rewards"} for h in history]
    if as_json:
        for row in rows:
            typer.echo(json.dumps(row))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"GRPO: {len(rows)} step(s), {method}, {level} level")
    cols = [k for k in (rows[0] if rows else {}) if not isinstance(rows[0][k], (list, dict))]
    for col in cols:
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(*[f"{row[c]:.4g}" if isinstance(row[c], float) else str(row[c]) for c in cols])
    Console().print(table)
    typer.echo(f"wrote {out}")
