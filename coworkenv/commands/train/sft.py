"""`coworkenv train sft`: fine-tune a local model on SFT data (text or vision-language students)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from .._usage import fail as _fail
from ._progress import StepProgress, trainer_callback
from ._torch import prepare


def sft(
    model: Path = typer.Option(..., "--model", help="Folder of a local transformers causal LM."),
    data: Path = typer.Option(..., "--data", help="HF-format SFT JSONL (coworkenv export sft --format hf)."),
    out: Path = typer.Option(Path("sft-model"), "--out", "-o", help="Folder for the fine-tuned model."),
    eval_data: Path | None = typer.Option(None, "--eval", help="Validation JSONL for an eval loss."),
    epochs: float = typer.Option(1.0, "--epochs", help="Passes over the data (--steps overrides)."),
    steps: int = typer.Option(0, "--steps", min=0, help="Stop after this many steps (0: no limit, --epochs "
                                                              "decide)."),
    lr: float = typer.Option(1e-3, "--lr", help="Learning rate (constant)."),
    batch_size: int = typer.Option(2, "--batch-size", help="Examples per optimiser step."),
    max_length: int = typer.Option(16384, "--max-length", min=1,
                                   help="Tokens per example. A longer one first has its oldest tool results "
                                        "replaced by a note (every assistant turn kept; --no-elide turns this "
                                        "off), then is cut; one with no assistant token left is dropped (all "
                                        "counted in the summary)."),
    elide: bool = typer.Option(True, "--elide/--no-elide",
                               help="Fit long examples by eliding old tool results before cutting."),
    lora: bool = typer.Option(False, "--lora/--full", help="Train LoRA adapters (merged on save)."),
    lora_r: int = typer.Option(8, "--lora-r", help="LoRA rank (with --lora)."),
    threads: int = typer.Option(0, "--threads", help="torch CPU threads (0: one on machines with 2 cores or "
                                                     "fewer, else torch's default)."),
    vision: bool = typer.Option(False, "--vision",
                                help="Train a vision-language student (a folder with an image processor, e.g. "
                                     "`train tiny --vision`) on the examples' images; a vision folder is "
                                     "trained this way even without the flag. Prints the teacher-forced "
                                     "figures before and after, on --eval (else on the training data)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON instead of a summary."),
) -> None:
    """Fine-tune on SFT data with TRL's SFTTrainer, loss on assistant tokens only."""
    prepare(threads)
    from trainers.training.sft import SFTDataError, train_sft
    from trainers.models.tiny_vl import is_vision_model

    if vision and not is_vision_model(model):
        _fail(f"--vision: {model} is not a vision-language model folder (no image processor); build one with "
              "`coworkenv train tiny --vision`")
    if is_vision_model(model):
        return _sft_vision(model, data, out, eval_data, epochs, steps, lr, batch_size, max_length, lora, lora_r,
                           as_json)
    try:
        with StepProgress("train sft", steps or None) as progress:
            result = train_sft(model, data, out, epochs, lr, batch_size, steps or -1, max_length, lora, lora_r,
                               eval_data=eval_data, elide=elide, callbacks=[trainer_callback(progress)])
    except (SFTDataError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps(result.to_json()))
        return
    loss = f"loss {result.losses[0]:.3f} -> {result.losses[-1]:.3f}" if result.losses else "no loss logged"
    typer.echo(f"trained {result.steps} steps on {result.used} of {result.examples} examples ({loss}"
               + (f", eval loss {result.eval_loss:.3f}" if result.eval_loss is not None else "")
               + f"); saved to {result.output_dir}")
    if result.elided:
        typer.echo(f"note: {result.elided} example(s) over --max-length {max_length} fitted by eliding old tool "
                   "results (every assistant turn kept)", err=True)
    if result.dropped or result.truncated:
        typer.echo(f"warning: {result.dropped} example(s) dropped (no assistant token within --max-length "
                   f"{max_length}), {result.truncated} cut at --max-length (raise it to keep them whole)",
                   err=True)


def _sft_vision(model: Path, data: Path, out: Path, eval_data: Path | None, epochs: float, steps: int,
                lr: float, batch_size: int, max_length: int, lora: bool, lora_r: int, as_json: bool) -> None:
    from trainers.training.sft import SFTDataError, read_sft_file
    from trainers.models.tiny_vl import load_vl
    from trainers.training.vision_sft import train_vision_sft, vision_figures

    try:
        train_ex = read_sft_file(data)
        held = read_sft_file(eval_data) if eval_data is not None else train_ex
        before = vision_figures(*load_vl(model), held, train_ex, max_length)
        with StepProgress("train sft (vision)", steps or None) as progress:
            result = train_vision_sft(model, train_ex, out, epochs, lr, batch_size, steps or -1, max_length,
                                      lora=lora, lora_r=lora_r, callbacks=[trainer_callback(progress)])
        after = vision_figures(*load_vl(out), held, train_ex, max_length)
    except (SFTDataError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    figures = {"on": "eval" if eval_data is not None else "train", "before": before, "after": after}
    if as_json:
        typer.echo(json.dumps({**result.to_json(), "vision": True, "figures": figures}))
        return
    loss = f"loss {result.losses[0]:.3f} -> {result.losses[-1]:.3f}" if result.losses else "no loss logged"
    typer.echo(f"trained the vision student {result.steps} steps on {result.used} of {result.examples} examples "
               f"({loss}); saved to {result.output_dir}")
    typer.echo(vision_table(figures))
    if result.dropped:
        typer.echo(f"warning: {result.dropped} example(s) dropped (over --max-length {max_length}: an image's "
                   "tokens are never cut, or no assistant token)", err=True)


def vision_table(figures: dict[str, Any]) -> str:
    """The vision student's teacher-forced figures, before -> after, one line each (as the demo shows the text
    student's: held-out loss, then each call part's accuracy with its count)."""
    from trainers.demo.learning import PART_LABELS

    def pct(block: dict[str, Any], part: str) -> str:
        p = block["parts"][part]
        return f"{p['right']}/{p['n']} ({p['right'] / p['n']:.0%})" if p["n"] else "0/0"

    b, a = figures["before"], figures["after"]
    where = "held-out (--eval)" if figures["on"] == "eval" else "training"
    loss = (lambda x: "-" if x is None else f"{x:.3f}")
    lines = [f"teacher-forced figures on the {where} examples, before -> after:",
             f"  assistant-token loss (nats/token): {loss(b['heldout_loss'])} -> {loss(a['heldout_loss'])}"]
    for part, label in PART_LABELS:
        lines.append(f"  {label}: {pct(b, part)} -> {pct(a, part)}")
    return "\n".join(lines)
