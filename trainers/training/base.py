"""The copy-pretrained base: a tiny Qwen2 student trained on copy sequences before it sees any teacher.

`build_base` trains a tokenizer (on copy sequences plus any extra SFT examples, such as the demo's
training data, so their words are pieces of the vocabulary), initialises a tiny Qwen2 model and
trains it with a plain PyTorch loop on freshly generated copy examples (`copydata`), loss on the
assistant's tokens, value lengths rising as a curriculum. It is bounded by steps; a time limit is
only a guard. Every `eval_every` steps it measures, on a fixed set of fresh examples never trained
on, the teacher-forced copy accuracy (values whose every token the model predicts); at the end it
also measures exact whole-value match under greedy decoding. The folder gets the model, the
tokenizer and `manifest.json` (settings, steps, tokens seen, seconds, threads, the curve).
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .callspans import PartScore, teacher_forced_parts
from .copydata import MAX_CHARS, CopyExample, copy_example, copy_examples, curriculum_chars

EVAL_SEED_OFFSET = 7_919_000  # evaluation examples come from a stream the training one never reaches
RESUME_SEED_STRIDE = 1_000_003  # a resumed run's copy stream: seed + stride * steps already done


class BaseSettings(BaseModel):
    """How the copy-pretrained base is built (all of it goes into the manifest)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    seed: int = Field(0, ge=0, description="Seed of the tokenizer corpus, initial weights and copy stream.")
    steps: int = Field(3000, ge=1, description="Optimiser steps.")
    minutes: float = Field(0.0, ge=0.0, description="Time guard in minutes (0: none); steps bound the run.")
    batch_size: int = Field(16, ge=1)
    learning_rate: float = Field(3e-3, gt=0.0)
    warmup_steps: int = Field(100, ge=0)
    hidden: int = Field(64, ge=8)
    layers: int = Field(2, ge=1)
    heads: int = Field(4, ge=1)
    vocab_size: int = Field(2048, ge=300)
    start_chars: int = Field(8, ge=8, le=MAX_CHARS, description="Value length bound at the start.")
    end_chars: int = Field(MAX_CHARS, ge=8, le=200, description="Value length bound after the ramp.")
    ramp: float = Field(0.5, ge=0.0, le=1.0, description="Share of the steps over which the bound rises.")
    select_share: float = Field(0.4, ge=0.0, le=1.0, description="Share of select (pick a candidate) examples.")
    tokenizer_examples: int = Field(2000, ge=10, description="Copy examples in the tokenizer corpus.")
    max_length: int = Field(1024, ge=128, description="Tokens per training example (longer ones are cut).")
    eval_examples: int = Field(48, ge=1, description="Fresh examples for the teacher-forced curve.")
    eval_every: int = Field(100, ge=1, description="Steps between points of the curve.")
    greedy_examples: int = Field(40, ge=0, description="Fresh examples for the final greedy exact-match test.")

    @classmethod
    def tiny(cls, **changes: Any) -> BaseSettings:
        """A seconds-scale configuration for tests."""
        base = {"steps": 4, "batch_size": 2, "hidden": 32, "layers": 1, "heads": 2, "vocab_size": 400,
                "warmup_steps": 0, "tokenizer_examples": 40, "eval_examples": 4, "eval_every": 2,
                "greedy_examples": 2, "max_length": 768}
        base.update(changes)
        return cls.model_validate(base)


def _rows(tokenizer: Any, examples: Sequence[dict[str, Any]], max_length: int) -> list[dict[str, list[int]]]:
    from .sft import tokenize_examples

    return tokenize_examples(tokenizer, list(examples), max_length)


def _batch(rows: Sequence[dict[str, list[int]]], pad: int) -> tuple[Any, Any, Any]:
    """Right-padded input ids, attention mask and labels (-100 outside assistant tokens)."""
    import torch

    width = max(len(r["input_ids"]) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    att = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for i, r in enumerate(rows):
        n = len(r["input_ids"])
        ids[i, :n] = torch.tensor(r["input_ids"])
        att[i, :n] = 1
        mask = torch.tensor(r["assistant_masks"], dtype=torch.bool)
        labels[i, :n] = torch.where(mask, ids[i, :n], torch.tensor(-100))
    return ids, att, labels


def assistant_loss(model: Any, ids: Any, att: Any, labels: Any) -> Any:
    """Mean cross-entropy of the labelled tokens, computing logits only where a label is (the output
    layer over the whole vocabulary is most of a tiny model's cost, and most tokens carry no loss)."""
    import torch

    hidden = model.model(input_ids=ids, attention_mask=att).last_hidden_state[:, :-1]
    target = labels[:, 1:]
    keep = target != -100
    logits = model.lm_head(hidden[keep]).float()
    return torch.nn.functional.cross_entropy(logits, target[keep])


def copy_accuracy(model: Any, tokenizer: Any, examples: Sequence[CopyExample], max_length: int = 8192) -> PartScore:
    """Teacher-forced copy accuracy on copy examples: values whose every token the model predicts.

    All values of copy examples are copies of fresh random text, so this is the `copied_unseen`
    figure of `teacher_forced_parts` (tool names are scored separately there and left out here).
    """
    parts, _ = teacher_forced_parts(model, tokenizer, [e.example for e in examples], set(), max_length)
    return parts["copied_unseen"]


def greedy_exact(model: Any, tokenizer: Any, examples: Sequence[CopyExample], max_new_tokens: int = 96) -> dict[str, Any]:
    """Exact whole-value match under greedy decoding: for each assistant call of each example, generate
    the turn from the context before it, parse the call, and count argument values equal to the
    target. Also counts select examples whose update used the right candidate."""
    import torch

    from .rollout import parse_tool_calls

    values = right = calls = valid = selects = selected = 0
    model.eval()
    for ex in examples:
        msgs = ex.example["messages"]
        for i, m in enumerate(msgs):
            if m.get("role") != "assistant" or not m.get("tool_calls"):
                continue
            target = m["tool_calls"][0]["function"]
            prompt = tokenizer.apply_chat_template(msgs[:i], tools=ex.example["tools"], add_generation_prompt=True,
                                                   tokenize=True, return_dict=True)["input_ids"]
            with torch.no_grad():
                out = model.generate(torch.tensor([list(prompt)], device=model.device),
                                     attention_mask=torch.ones(1, len(prompt), dtype=torch.long, device=model.device), max_new_tokens=max_new_tokens, do_sample=False,
                                     eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
            _, parsed, _ = parse_tool_calls(tokenizer.decode(out[0, len(prompt):], skip_special_tokens=False))
            calls += 1
            got = parsed[0][1] if parsed and parsed[0][0] == target["name"] else {}
            valid += bool(parsed)
            for key, value in target["arguments"].items():
                values += 1
                right += got.get(key) == value
            if ex.kind == "select" and target["name"] == "update_item":
                selects += 1
                selected += got.get("key") == ex.answer
    return {"calls": calls, "valid_calls": valid, "values": values, "values_right": right,
            "exact_match": right / values if values else None, "selections": selects, "selected_right": selected}


def _resumed(path: Path) -> tuple[Any, Any, dict[str, Any]]:
    """The model, tokenizer and manifest of a base to go on training (`build_base(..., resume=path)`)."""
    from ..models.tiny import load

    manifest_path = path / "manifest.json"
    if not manifest_path.is_file():
        raise ValueError(f"{path}: not a copy-pretrained base (no manifest.json); build one with `coworkenv train base`")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("kind") != "coworkenv copy-pretrained base" or not manifest.get("curve"):
        raise ValueError(f"{manifest_path}: not the manifest of a copy-pretrained base")
    model, tokenizer = load(path)
    return model, tokenizer, manifest


def build_base(out_dir: str | Path, settings: BaseSettings, extra_examples: Sequence[dict[str, Any]] = (),
               on_step: Callable[[int, float, float], None] | None = None, threads: int | None = None,
               device: str = "cpu", resume: str | Path | None = None) -> dict[str, Any]:
    """Build the copy-pretrained base into `out_dir` and return its manifest (also saved as manifest.json).

    `extra_examples` (HF SFT examples) join the tokenizer's corpus only, never the training stream.
    `on_step(step, loss, elapsed_seconds)` is called after every step. `device` is `cpu` or `cuda`
    (bf16 autocast where supported); the saved weights are float32 either way. With `resume` (a base
    folder), training goes on from that base for `settings.steps` more steps at full value length (its
    tokenizer and sizes are kept; `settings` gives the new run's schedule and seed), on a copy stream
    none of its steps drew, and the manifest's curve and counts continue the earlier ones.
    """
    import torch

    from ..models.tiny import build_model, build_tokenizer, corpus_from_examples

    t0 = time.perf_counter()
    if threads:
        torch.set_num_threads(threads)
    earlier: dict[str, Any] | None = None
    if resume is not None:
        model, tokenizer, earlier = _resumed(Path(resume))
        model = model.to(device)
    else:
        corpus_examples = [e.example for e in copy_examples(settings.seed, settings.tokenizer_examples,
                                                            settings.end_chars, settings.select_share)]
        corpus = corpus_from_examples([*corpus_examples, *extra_examples], compact_tools=True)
        tokenizer = build_tokenizer(corpus, settings.vocab_size, compact_tools=True, isolate_spaces=True)
        model = build_model(len(tokenizer), settings.hidden, settings.layers, settings.heads, settings.seed).to(device)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device == "cuda" and torch.cuda.is_bf16_supported() \
        else contextlib.nullcontext()
    for cfg in (model.config, model.generation_config):
        cfg.eos_token_id, cfg.pad_token_id = tokenizer.eos_token_id, tokenizer.pad_token_id
    checks = BaseSettings.model_validate(earlier["settings"]) if earlier else settings  # the same checks throughout
    evals = copy_examples(checks.seed + EVAL_SEED_OFFSET, checks.eval_examples, checks.end_chars, checks.select_share)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=0.01,
                                  betas=(0.9, 0.98))

    def lr_at(step: int) -> float:
        if step < settings.warmup_steps:
            return (step + 1) / settings.warmup_steps
        p = (step - settings.warmup_steps) / max(1, settings.steps - settings.warmup_steps)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, p)))  # cosine to a tenth

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_at)
    done = int(earlier["steps"]) if earlier else 0  # steps of the base this run goes on from
    rng = random.Random(settings.seed + RESUME_SEED_STRIDE * done if earlier else settings.seed)
    torch.manual_seed(settings.seed + done)
    curve: list[dict[str, Any]] = list(earlier["curve"]) if earlier else []
    losses: list[float] = []
    tokens = int(earlier["tokens"]) if earlier else 0
    assistant_tokens = int(earlier.get("assistant_tokens", 0)) if earlier else 0
    seconds_before = float(earlier.get("train_seconds", 0.0)) if earlier else 0.0
    step = done
    stopped_by = "steps"
    started = time.perf_counter()

    def point() -> None:
        score = copy_accuracy(model, tokenizer, evals, settings.max_length)
        curve.append({"step": step, "tokens": tokens,
                      "seconds": round(seconds_before + time.perf_counter() - started, 1),
                      "loss": round(sum(losses[-20:]) / len(losses[-20:]), 4) if losses else None,
                      "copy_accuracy": score.accuracy, "copy_token_accuracy": score.token_accuracy,
                      "values": score.n})
        model.train()

    if not earlier:
        point()
    model.train()
    while step < done + settings.steps:
        if settings.minutes and time.perf_counter() - started > settings.minutes * 60:
            stopped_by = "time"
            break
        max_chars = settings.end_chars if earlier else curriculum_chars(
            step / settings.steps, settings.start_chars, settings.end_chars, settings.ramp)
        batch = [copy_example(rng, max_chars, settings.select_share).example for _ in range(settings.batch_size)]
        rows = _rows(tokenizer, batch, settings.max_length)
        ids, att, labels = (t.to(device) for t in _batch(rows, tokenizer.pad_token_id))
        with autocast:
            loss = assistant_loss(model, ids, att, labels)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        step += 1
        tokens += int(att.sum())
        assistant_tokens += int((labels != -100).sum())
        losses.append(float(loss.detach()))
        if on_step:
            on_step(step, losses[-1], time.perf_counter() - started)
        if step % settings.eval_every == 0 or step == done + settings.steps:
            point()
    if not curve or curve[-1]["step"] != step:
        point()
    train_seconds = seconds_before + time.perf_counter() - started
    greedy = greedy_exact(model, tokenizer, copy_examples(checks.seed + 2 * EVAL_SEED_OFFSET,
                                                          checks.greedy_examples, checks.end_chars,
                                                          checks.select_share)) if checks.greedy_examples else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.to("cpu").save_pretrained(out)
    tokenizer.save_pretrained(out)
    params = sum(p.numel() for p in model.parameters())
    manifest = {
        "kind": "coworkenv copy-pretrained base",
        "settings": earlier["settings"] if earlier else settings.model_dump(mode="json"),
        "resumed": [*earlier.get("resumed", []), {"from_step": done, "settings": settings.model_dump(mode="json")}]
        if earlier else [],
        "extra_tokenizer_examples": len(extra_examples), "parameters": params, "vocab": len(tokenizer),
        "steps": step, "stopped_by": stopped_by, "tokens": tokens, "assistant_tokens": assistant_tokens,
        "train_seconds": round(train_seconds, 1), "total_seconds": round(time.perf_counter() - t0, 1),
        "torch_threads": torch.get_num_threads(), "device": device, "torch": torch.__version__,
        "first_loss": earlier.get("first_loss") if earlier else (losses[0] if losses else None),
        "last_loss": curve[-1]["loss"],
        "final_copy_accuracy": curve[-1]["copy_accuracy"], "final_copy_token_accuracy": curve[-1]["copy_token_accuracy"],
        "greedy": greedy, "curve": curve,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest
