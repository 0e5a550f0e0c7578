"""`coworkenv train base`: the copy-pretrained base, a tiny Qwen2 trained on generated copy sequences."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .._usage import fail as _fail
from ._progress import StepProgress
from ._torch import prepare


def base(
    out: Path = typer.Option(Path("copy-base"), "--out", "-o", help="Folder for the model, tokenizer and "
                                                                      "manifest.json."),
    data: Path | None = typer.Option(None, "--data", help="HF-format SFT JSONL whose text joins the tokenizer's "
                                                           "corpus (not the training stream)."),
    steps: int = typer.Option(2000, "--steps", help="Optimiser steps (the bound of the run)."),
    minutes: float = typer.Option(0.0, "--minutes", help="Time guard in minutes (0: none)."),
    batch_size: int = typer.Option(16, "--batch-size", help="Copy examples per step."),
    lr: float = typer.Option(3e-3, "--lr", help="Peak learning rate (warmup, then cosine to a tenth)."),
    hidden: int = typer.Option(64, "--hidden", help="Hidden size of the Qwen2-style model."),
    layers: int = typer.Option(2, "--layers", help="Transformer layers."),
    vocab: int = typer.Option(2048, "--vocab", help="Tokenizer vocabulary size."),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed of the tokenizer corpus, weights and copy stream."),
    tiny_config: bool = typer.Option(False, "--tiny", help="Seconds-scale sizes (tests)."),
    threads: int = typer.Option(0, "--threads", help="torch CPU threads (0: one on machines with 2 cores or "
                                                     "fewer, else min(4, cores))."),
    device: str = typer.Option("cpu", "--device", help="cpu or cuda."),
    resume: Path | None = typer.Option(None, "--resume", help="A base folder to go on training for --steps more "
                                                              "steps (its tokenizer and sizes are kept)."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest as JSON."),
) -> None:
    """Build the copy-pretrained base: a tiny Qwen2 trained on generated copy sequences in the chat and
    tool-call format (repeat values from the request; pick one candidate from a tool result)."""
    from pydantic import ValidationError

    prepare(threads)
    import transformers

    from trainers.training.base import BaseSettings, build_base

    transformers.utils.logging.disable_progress_bar()  # keeps --json output one clean line
    from trainers.training.sft import SFTDataError, read_sft_file

    if device not in ("cpu", "cuda"):
        _fail(f"--device must be cpu or cuda, got {device!r}")
    given = {"steps": steps, "minutes": minutes, "batch_size": batch_size, "learning_rate": lr, "hidden": hidden,
             "layers": layers, "vocab_size": vocab, "seed": seed}
    try:
        settings = BaseSettings.tiny(**{k: given[k] for k in ("seed", "minutes")}, steps=min(steps, 4)) \
            if tiny_config else BaseSettings(**given)
    except ValidationError as e:
        _fail("; ".join(f"--{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors()))
    try:
        extra = read_sft_file(data) if data is not None else []
    except SFTDataError as e:
        _fail(str(e))
    if resume is not None and resume.resolve() == out.resolve():
        _fail("--resume and --out must be different folders (the base you resume from is kept as it is)")
    try:
        with StepProgress("train base", settings.steps + _steps_done(resume)) as progress:
            manifest = build_base(out, settings, extra, on_step=progress, device=device, resume=resume)
    except (ValueError, FileNotFoundError) as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps({k: v for k, v in manifest.items() if k != "curve"} | {"out": str(out)}))
        return
    greedy = manifest["greedy"] or {}
    typer.echo(f"trained {manifest['steps']} steps ({manifest['tokens']:,} tokens, {manifest['train_seconds']} s, "
               f"{manifest['torch_threads']} thread(s)); loss {manifest['first_loss']:.3f} -> "
               f"{manifest['last_loss']:.3f}; copy accuracy (teacher-forced, fresh values) "
               f"{manifest['final_copy_accuracy']:.1%}; greedy exact match "
               f"{greedy.get('values_right', 0)}/{greedy.get('values', 0)}; saved to {out}")


def _steps_done(resume: Path | None) -> int:
    """The steps the base to resume from already trained (its manifest's count; 0 when unknown), so the
    progress shows the step numbers the run goes on with."""
    try:
        return int(json.loads((resume / "manifest.json").read_text(encoding="utf-8"))["steps"]) if resume else 0
    except (OSError, ValueError, KeyError, TypeError):
        return 0
