"""`coworkenv demo`: synthesize, teach, train a tiny student on CPU, and compare it before and after."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from trainers.demo.settings import DemoSettings

TRAIN_MODULES = ("torch", "transformers", "trl", "datasets", "tokenizers")
# Each option whose default comes from `DemoSettings` (the cpu profile), by flag: the settings field it sets.
# The help texts quote those defaults, and tests/e2e/test_demo_docs.py checks docs/demo.md quotes the same.
SETTING_OF_OPTION = {"--train-envs": "train_envs", "--heldout-envs": "heldout_envs", "--steps": "steps",
                     "--minutes": "minutes", "--lr": "learning_rate", "--copy-share": "copy_share",
                     "--base": "base", "--base-steps": "base_steps", "--rl-seeds": "rl_seeds",
                     "--rl-steps": "rl_steps", "--device": "device", "--threads": "threads"}


def shown_default(field: str) -> str:
    """The default of the `DemoSettings` field `field` as the help and docs/demo.md write it (`1000`, `1e-3`,
    `0.3`, `60`): integers plainly, floats in their shortest form, with a 1e-N exponent below 0.01."""
    from trainers.demo.settings import DemoSettings

    value = DemoSettings.model_fields[field].default
    if isinstance(value, float):
        if value and abs(value) < 0.01:
            mantissa, exp = f"{value:e}".split("e")
            return f"{float(mantissa):g}e{int(exp)}"
        return f"{value:g}"
    return str(value)


def budget_line(settings: DemoSettings) -> str:
    """The demo's first line: how its time is bounded, and what Ctrl-C during training does."""
    minutes, steps = settings.minutes, settings.steps
    if minutes:
        bound = (f"time budget {minutes:g} minutes (--minutes): training gets what the other stages leave of it"
                 + (f", at most {steps} steps" if steps else ""))
    else:
        bound = f"no time budget (--minutes 0): training runs {steps} steps"
    return f"demo: {bound}; Ctrl-C during training stops it there and still evaluates and reports what was trained"


def demo(
    out: Path = typer.Option(Path("demo-out"), "--out", "-o", help="Folder for every output of the run."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, help="Seed of environments, model and training."),
    envs: int | None = typer.Option(None, "--train-envs", min=1, help="Training environments "
                                    f"(default {shown_default('train_envs')}; quick: 2)."),
    heldout: int | None = typer.Option(None, "--heldout-envs", min=1, help="Held-out environments "
                                       f"(default {shown_default('heldout_envs')}; quick: 2)."),
    capability: list[str] | None = typer.Option(None, "--capability", "-c", help="Capability id "
                                                   "(repeatable; default: clarification, policy_compliance, "
                                                   "ticket_workflow)."),
    steps: int | None = typer.Option(None, "--steps", min=0, help="A step bound on SFT "
                                        f"(default {shown_default('steps')}: none, the --minutes budget bounds "
                                        "it; quick: 3)."),
    minutes: float | None = typer.Option(None, "--minutes", min=0.0, help="Time budget of the whole run, in "
                                            f"minutes (default {shown_default('minutes')}): training gets what "
                                            "the other stages leave of it, measured as they run (--rl comes "
                                            "on top). 0: no budget, --steps bounds training. One of --steps "
                                            "and --minutes must be above 0."),
    threads: int | None = typer.Option(None, "--threads", min=0, help="torch CPU threads (default "
                                          f"{shown_default('threads')}: one on machines with 2 cores or fewer, "
                                          "else min(4, CPUs))."),
    quick: bool = typer.Option(False, "--quick", help="Seconds-scale smoke run: tiny sizes, 3 training steps "
                                                      "(the same as --profile quick)."),
    profile: str = typer.Option("cpu", "--profile", help="Preset: cpu (the default run), quick (seconds) or gpu "
                                                          "(about ten minutes on one modern GPU)."),
    rebuild_base: bool = typer.Option(False, "--rebuild-base", help="Copy-pretrain the base here (`train base`) "
                                                                     "instead of starting from the shipped one."),
    base: str | None = typer.Option(None, "--base", help="shipped, rebuild or scratch (random weights) "
                                                         f"(default {shown_default('base')}; quick: scratch; "
                                                         "gpu: rebuild)."),
    base_steps: int | None = typer.Option(None, "--base-steps", min=1, help="Copy-pretraining steps of a "
                                             f"rebuilt base (default {shown_default('base_steps')}, as shipped; "
                                             "gpu: 4000)."),
    rl: bool = typer.Option(False, "--rl", help="After SFT, compare GRPO credit assignments on the held-out set "
                                                "(mean and spread over --rl-seeds seeds)."),
    rl_seeds: int | None = typer.Option(None, "--rl-seeds", min=1, help="Seeds per credit assignment "
                                           f"(default {shown_default('rl_seeds')})."),
    rl_steps: int | None = typer.Option(None, "--rl-steps", min=1, help="GRPO steps per run "
                                           f"(default {shown_default('rl_steps')})."),
    device: str | None = typer.Option(None, "--device", help="cpu, cuda or auto "
                                                             f"(default {shown_default('device')}; gpu profile: "
                                                             "auto)."),
    lr: float | None = typer.Option(None, "--lr", min=0.0, help="SFT learning rate "
                                       f"(default {shown_default('learning_rate')})."),
    copy_share: float | None = typer.Option(None, "--copy-share", min=0.0, max=0.95,
                                            help="Share of SFT examples that are fresh copy sequences, rehearsing "
                                                 f"the base's copying (default {shown_default('copy_share')}; "
                                                 "quick: 0)."),
    vision: bool = typer.Option(False, "--vision", help="A vision-language student (a tiny Qwen2-VL) trained on "
                                                        "the media_evidence capability's images, from random "
                                                        "weights; with --profile gpu a wider one with a larger "
                                                        "pixel budget."),
) -> None:
    """Synthesize environments, run the teacher, export SFT data, train a tiny student on CPU, and report
    its success on held-out environments before and after training, within a time budget (--minutes)."""
    started = time.perf_counter()
    from pydantic import ValidationError
    from rich.console import Console

    missing = [m for m in TRAIN_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        typer.echo(f"error: the demo trains a model and needs the train extra ({', '.join(missing)} missing); "
                   "install it with: pip install -e '.[train]'", err=True)
        raise typer.Exit(2)
    from trainers.demo import DemoError, DemoSettings, run_demo
    from trainers.demo.progress import PlainReporter
    from trainers.demo.render import RichReporter, final_tables

    if rebuild_base and base not in (None, "rebuild"):
        typer.echo(f"error: --rebuild-base and --base {base} contradict each other", err=True)
        raise typer.Exit(2)
    if quick and profile not in ("cpu", "quick"):
        typer.echo(f"error: --quick and --profile {profile} contradict each other", err=True)
        raise typer.Exit(2)
    given = {"train_envs": envs, "heldout_envs": heldout, "seed": seed, "minutes": minutes, "steps": steps,
             "threads": threads, "capabilities": tuple(capability) if capability else None,
             "base": "rebuild" if rebuild_base else base, "base_steps": base_steps, "rl": rl or None,
             "rl_seeds": rl_seeds, "rl_steps": rl_steps, "device": device, "learning_rate": lr,
             "copy_share": copy_share, "vision": vision or None}
    given = {k: v for k, v in given.items() if v is not None}
    try:
        settings = DemoSettings.for_profile("quick" if quick else profile, **given)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, x['loc'])) or 'settings'}: {x['msg']}" for x in e.errors())
        typer.echo(f"error: {problems}", err=True)
        raise typer.Exit(2) from None
    except ValueError as e:
        typer.echo(f"error: --profile: {e}", err=True)
        raise typer.Exit(2) from None
    console = Console(stderr=True)
    typer.echo(budget_line(settings), err=True)
    try:
        if console.is_terminal:
            with RichReporter(console) as reporter:
                summary = run_demo(settings, out, reporter, started=started)
        else:  # redirected: rich would draw nothing until the end, so print plain lines as it goes
            summary = run_demo(settings, out, PlainReporter(sys.stderr), started=started)
    except DemoError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    from trainers.demo.learning import learning_table, rl_table

    Console().print(final_tables(summary))
    if summary.after is not None:
        Console().print(learning_table(summary.before, summary.after, "what the student learned (held-out)"))
    if summary.rl:
        Console().print(rl_table(summary.rl))
    typer.echo(summary.verdict())
    typer.echo(f"report: {summary.files['report']}\nsummary: {summary.files['summary']}")
    if summary.interrupted:
        raise typer.Exit(130)
