"""`coworkenv train tiny`: a tiny Qwen2 (or Qwen2-VL) student and its tokenizer, built locally."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .._usage import fail as _fail
from ._torch import prepare


def tiny(
    data: Path = typer.Option(..., "--data", help="HF-format SFT JSONL to train the tokenizer on."),
    out: Path = typer.Option(Path("tiny-model"), "--out", "-o", help="Folder for the model and tokenizer."),
    vocab: int = typer.Option(1024, "--vocab", help="Tokenizer vocabulary size."),
    hidden: int = typer.Option(64, "--hidden", help="Hidden size of the Qwen2-style model."),
    layers: int = typer.Option(2, "--layers", help="Transformer layers."),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed of the initial weights."),
    vision: bool = typer.Option(False, "--vision", help="A tiny Qwen2-VL vision-language student with its "
                                                        "processor (reads the export's image parts)."),
    max_pixels: int = typer.Option(28 * 28 * 64, "--max-pixels", min=1,
                                   help="With --vision: pixel budget per image (28x28 px per image token)."),
    as_json: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
) -> None:
    """Build a tiny Qwen2 (or, with --vision, Qwen2-VL) model and a locally trained tokenizer (no downloads)."""
    prepare(0)
    from trainers.training.sft import SFTDataError, read_sft_file
    from trainers.models.tiny import build_tiny

    try:
        if vision:
            from trainers.models.tiny_vl import build_tiny_vl

            path = build_tiny_vl(out, read_sft_file(data), vocab, hidden, layers, seed, compact_tools=True,
                                 max_pixels=max_pixels)
        else:
            path = build_tiny(out, read_sft_file(data), vocab, hidden, layers, seed)
    except (SFTDataError, ValueError) as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps({"out": str(path), "vocab": vocab, "hidden": hidden, "layers": layers, "seed": seed,
                               "vision": vision}))
    else:
        typer.echo(f"wrote tiny {'vision-language ' if vision else ''}model to {path}")
