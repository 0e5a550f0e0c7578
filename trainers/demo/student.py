"""The demo's student stage: the model SFT starts from (the shipped base, one rebuilt here, or random weights)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .settings import SHIPPED_BASE, DemoSettings
from .summary import DemoError


def prepare_student(settings: DemoSettings, out: Path, train_examples: Sequence[dict[str, Any]], threads: int,
                    device: str) -> tuple[Path, dict[str, Any], str]:
    """Put the student's starting model in out/model/base: a copy of the shipped base, a base rebuilt by
    `train base`, or a scratch model with a tokenizer trained on `train_examples`; returns its folder, the
    summary's `student` facts (with the copy pretraining's manifest figures for a base) and a one-line note."""
    from ..training.base import build_base
    from ..models.tiny import build_tiny, load

    path = out / "model" / "base"
    manifest: dict[str, Any] | None = None
    if settings.base == "shipped":
        if not (SHIPPED_BASE / "config.json").is_file():
            raise DemoError(f"student: no shipped base in {SHIPPED_BASE}; rebuild it with --rebuild-base "
                            "(or start from random weights with --base scratch)")
        shutil.copytree(SHIPPED_BASE, path)
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    elif settings.base == "rebuild":
        manifest = build_base(path, settings.base_settings(), train_examples, threads=threads, device=device)
    elif settings.vision:
        from ..models.tiny_vl import build_tiny_vl

        build_tiny_vl(path, train_examples, settings.vocab_size, settings.hidden, settings.layers, settings.seed,
                      compact_tools=settings.compact_tools, max_pixels=settings.vision_max_pixels)
    else:
        build_tiny(path, train_examples, settings.vocab_size, settings.hidden, settings.layers, settings.seed,
                   compact_tools=settings.compact_tools, isolate_spaces=settings.isolate_spaces)
    if settings.vision:
        from ..models.tiny_vl import load_vl

        model, processor = load_vl(path)
        tokenizer, text_config = processor.tokenizer, model.config.text_config
    else:
        model, tokenizer = load(path)
        text_config = model.config
    params = sum(p.numel() for p in model.parameters())
    student = {"architecture": type(model).__name__, "parameters": params, "vocab": len(tokenizer),
                       "hidden": text_config.hidden_size, "layers": text_config.num_hidden_layers,
                       "path": str(path), "base": settings.base, "vision": settings.vision}
    if manifest is not None:
        student["copy_pretraining"] = {k: manifest.get(k) for k in (
            "steps", "tokens", "train_seconds", "torch_threads", "final_copy_accuracy",
            "final_copy_token_accuracy", "greedy", "settings")}
    return path, student, f"{settings.base} base, {params:,} parameters, vocab {len(tokenizer)}"
