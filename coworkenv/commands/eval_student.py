"""`coworkenv eval-student`: the demo's learning figures for any local student and its recorded episodes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def eval_student(
    model: Path = typer.Option(..., "--model", help="Folder of a local transformers causal LM (the student)."),
    records: Path = typer.Option(..., "--records", help="The student's episode records (`coworkenv run --policy "
                                                        "hf ... --out FILE`), a JSONL file or a folder."),
    heldout: Path = typer.Option(..., "--heldout", help="HF-format SFT JSONL of the teacher on the same "
                                                        "environments (`coworkenv export sft --format hf`)."),
    train: Path | None = typer.Option(None, "--train", help="The student's SFT training JSONL: values its calls "
                                                            "held count as seen (default: none seen)."),
    max_length: int = typer.Option(8192, "--max-length", help="Tokens per teacher example scored."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Teacher-forced accuracy of tool names, constant values and copied values (seen / never seen in
    training), valid JSON and accepted calls, mean predicate score and success, each with its n."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch  # noqa: F401
    except ImportError:
        _fail("torch is not installed; install the training extra: pip install 'coworkenv[train]'")
    from trainers.demo.metrics import heldout_loss, learning_parts, student_score
    from workspace_sim.record import RecordError, read_records
    from trainers.training.sft import SFTDataError, read_sft_file
    from trainers.training.threads import default_torch_threads
    from trainers.models.tiny import load

    torch.set_num_threads(default_torch_threads())
    try:
        recs = read_records(records)
        examples = read_sft_file(heldout)
        train_examples = read_sft_file(train) if train is not None else []
        student, tokenizer = load(model)
    except (RecordError, SFTDataError, FileNotFoundError, OSError) as e:
        _fail(str(e))
    loss = heldout_loss(student, tokenizer, examples, max_length)
    score = student_score(recs, loss, learning_parts(student, tokenizer, examples, train_examples, max_length))
    if as_json:
        typer.echo(json.dumps(score.to_json()))
        return
    from rich.console import Console

    from trainers.demo.learning import learning_table

    Console().print(learning_table(None, score, f"{model}: {len(recs)} episodes, {len(examples)} teacher examples"))
