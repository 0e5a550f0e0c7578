"""`coworkenv train tiny|sft|rl`: build a tiny local model, fine-tune it on SFT data, train it with GRPO."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def load_environments(spec: str) -> list[Any]:
    """Environments from a folder of spec files (*.json, *.yaml, *.yml) or `toy:N` (N archive tasks)."""
    if spec.startswith("toy:"):
        from trainers.training.toy import archive_environments

        n = spec[4:]
        if not n.isdigit() or int(n) < 1:
            raise ValueError(f"--envs toy:N needs a positive N, got {spec!r}")
        return archive_environments(int(n))
    from synth.spec import load_spec

    folder = Path(spec)
    if not folder.is_dir():
        raise ValueError(f"--envs {spec}: not a folder of environment specs (or toy:N)")
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".json", ".yaml", ".yml"))
    if not files:
        raise ValueError(f"--envs {spec}: no *.json / *.yaml environment specs in it")
    return [load_spec(p) for p in files]


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


def register(app: typer.Typer) -> None:
    train = typer.Typer(help="Train local models on episode data (needs the `train` extra).", no_args_is_help=True)
    app.add_typer(train, name="train")

    def _prepare(threads: int) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
        try:
            import torch
        except ImportError:
            _fail("torch is not installed; install the training extra: pip install 'coworkenv[train]'")
        from trainers.training.threads import default_torch_threads

        torch.set_num_threads(threads if threads > 0 else default_torch_threads())

    @train.command("tiny")
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
        _prepare(0)
        from trainers.training.sft import SFTDataError, read_sft_file
        from trainers.training.tiny import build_tiny

        try:
            if vision:
                from trainers.training.tiny_vl import build_tiny_vl

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

    @train.command("base")
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

        _prepare(threads)
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
            manifest = build_base(out, settings, extra, device=device, resume=resume)
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

    @train.command("sft")
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
        _prepare(threads)
        from trainers.training.sft import SFTDataError, train_sft
        from trainers.training.tiny_vl import is_vision_model

        if vision and not is_vision_model(model):
            _fail(f"--vision: {model} is not a vision-language model folder (no image processor); build one with "
                  "`coworkenv train tiny --vision`")
        if is_vision_model(model):
            return _sft_vision(model, data, out, eval_data, epochs, steps, lr, batch_size, max_length, lora, lora_r,
                               as_json)
        try:
            result = train_sft(model, data, out, epochs, lr, batch_size, steps or -1, max_length, lora, lora_r,
                               eval_data=eval_data, elide=elide)
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
        from trainers.training.tiny_vl import load_vl
        from trainers.training.vision_sft import train_vision_sft, vision_figures

        try:
            train_ex = read_sft_file(data)
            held = read_sft_file(eval_data) if eval_data is not None else train_ex
            before = vision_figures(*load_vl(model), held, train_ex, max_length)
            result = train_vision_sft(model, train_ex, out, epochs, lr, batch_size, steps or -1, max_length,
                                      lora=lora, lora_r=lora_r)
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

    @train.command("rl")
    def rl(
        model: Path = typer.Option(..., "--model", help="Folder of a local transformers causal LM, or of a "
                                                        "vision-language model (its rollouts see the images)."),
        envs: str = typer.Option(..., "--envs", "-e", help="Folder of environment specs, or toy:N."),
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

        _prepare(threads)
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
            history = train_grpo(model, environments, out, settings, fn, records)
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
