"""Supervised fine-tuning on exported SFT data (HF format) with TRL's SFTTrainer, loss on assistant tokens only.

Examples are tokenised here with the tokenizer's own chat template and its `{% generation %}`
markers (`return_assistant_tokens_mask=True`, exactly as TRL does for `assistant_only_loss`), and
handed to SFTTrainer pre-tokenised with an `assistant_masks` column, from which TRL builds the
labels. Pre-tokenising is needed because Arrow merges the differently-shaped tool-call argument
dicts of different tools into one struct, which would put `null` arguments into the rendered
calls. Optional LoRA goes through peft.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class SFTDataError(ValueError):
    """Malformed SFT data; the message names the file and line."""


def read_sft_file(path: str | Path) -> list[dict[str, Any]]:
    """Read HF-format SFT examples (`{"messages": [...], "tools": [...]}` per line), checking their shape."""
    p = Path(path)
    if not p.is_file():
        raise SFTDataError(f"{p}: no such file of SFT examples (make one with `coworkenv export sft`)")
    out = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            ex = json.loads(line)
        except json.JSONDecodeError as e:
            raise SFTDataError(f"{p}:{n}: not valid JSON ({e.msg})") from None
        if not isinstance(ex, dict) or not isinstance(ex.get("messages"), list) or not ex["messages"]:
            raise SFTDataError(f"{p}:{n}: each line needs a non-empty 'messages' list")
        for i, m in enumerate(ex["messages"]):
            for c in (m.get("tool_calls") or []) if isinstance(m, dict) else []:
                if not isinstance(c.get("function", {}).get("arguments"), dict):
                    raise SFTDataError(f"{p}:{n}: messages[{i}] tool call arguments must be a JSON object (hf "
                                       "format); export with --format hf")
        if not any(isinstance(m, dict) and m.get("role") == "assistant" for m in ex["messages"]):
            raise SFTDataError(f"{p}:{n}: no assistant message to learn from")
        out.append(ex)
    if not out:
        raise SFTDataError(f"{p}: contains no examples")
    return out


@dataclass
class TokenizedSet:
    """Tokenised examples and what became of the others: `elided` rows had old tool results replaced
    by a note to fit max_length (every assistant turn kept, see `trainers.training.fit`); `truncated`
    rows were cut at max_length but still hold assistant tokens; `dropped` examples had none within
    max_length and are not used."""

    rows: list[dict[str, list[int]]]
    total: int
    truncated: int = 0
    dropped: int = 0
    elided: int = 0

    def describe(self, max_length: int) -> str:
        """'used 24 of 43 examples (19 dropped: no assistant token within --max-length 512; ...)'."""
        parts = []
        if self.dropped:
            parts.append(f"{self.dropped} dropped: no assistant token within max_length {max_length}")
        if self.elided:
            parts.append(f"{self.elided} fitted by eliding old tool results")
        if self.truncated:
            parts.append(f"{self.truncated} cut at max_length {max_length}")
        return f"used {len(self.rows)} of {self.total} examples" + (f" ({'; '.join(parts)})" if parts else "")


def tokenize_set(tokenizer: Any, examples: list[dict[str, Any]], max_length: int, elide: bool = False) -> TokenizedSet:
    """Token ids and assistant masks of each example, rendered with the tokenizer's chat template and
    fitted into `max_length` (with `elide`, old tool results give way first; see `fit_example`),
    counting the examples elided, cut and left without an assistant token. A text student reads media parts as
    text (`trainers.media_parts.as_text_example`: an audio clip's placeholder, `[image]` for an image)."""
    from ..media_parts import as_text_example
    from .fit import fit_example

    out = TokenizedSet([], len(examples))
    for ex in examples:
        fitted = fit_example(tokenizer, as_text_example(ex), max_length, elide=elide)
        if fitted.fate == "dropped":
            out.dropped += 1
            continue
        out.elided += fitted.fate == "elided"
        out.truncated += fitted.fate == "cut"
        out.rows.append({"input_ids": fitted.input_ids, "assistant_masks": fitted.assistant_masks})
    return out


def tokenize_examples(tokenizer: Any, examples: list[dict[str, Any]], max_length: int,
                      elide: bool = False) -> list[dict[str, list[int]]]:
    """Token ids and assistant masks of the usable examples (see `tokenize_set` for the counts)."""
    return tokenize_set(tokenizer, examples, max_length, elide).rows


@dataclass
class SFTResult:
    """What an SFT run did."""

    output_dir: str
    steps: int
    losses: list[float] = field(default_factory=list)
    eval_loss: float | None = None
    examples: int = 0
    used: int = 0
    truncated: int = 0
    dropped: int = 0
    tokens: int = 0
    elided: int = 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return dict(self.__dict__)


def train_sft(
    model_path: str | Path, data: str | Path | list[dict[str, Any]], output_dir: str | Path, epochs: float = 1.0,
    learning_rate: float = 1e-3, batch_size: int = 2, max_steps: int = -1, max_length: int = 4096,
    lora: bool = False, lora_r: int = 8, seed: int = 0, eval_data: str | Path | list[dict[str, Any]] | None = None,
    callbacks: list[Any] | None = None, warmup_steps: int = 0, assistant_only: bool = True, device: str = "cpu",
    elide: bool = False,
) -> SFTResult:
    """Fine-tune a local model on SFT examples with TRL's SFTTrainer; saves the result to `output_dir`.

    `callbacks` are transformers `TrainerCallback`s handed to the trainer (progress, time limits).
    The learning rate rises linearly over `warmup_steps`, then stays constant (runs bounded by time
    have no known end for a decaying schedule). With `assistant_only` False the loss covers every
    token (system, user and tool text too); the examples still need an assistant turn to be used.
    With `elide`, an example over `max_length` first has its oldest tool results replaced by a note
    (every assistant turn kept) before anything is cut (`trainers.training.fit`).
    """
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from ..models.tiny import load

    model, tokenizer = load(model_path)
    examples = read_sft_file(data) if isinstance(data, (str, Path)) else list(data)
    tokenized = tokenize_set(tokenizer, examples, max_length, elide)
    rows = tokenized.rows
    if not rows:
        raise SFTDataError(f"none of the {tokenized.total} examples has an assistant token within max_length "
                           f"{max_length}; raise --max-length")
    if not assistant_only:
        rows = [{"input_ids": r["input_ids"]} for r in rows]  # labels default to a copy of input_ids
    eval_rows = None
    if eval_data is not None:
        eval_ex = read_sft_file(eval_data) if isinstance(eval_data, (str, Path)) else list(eval_data)
        eval_rows = tokenize_examples(tokenizer, eval_ex, max_length, elide) or None
    peft_config = None
    if lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=lora_r, lora_alpha=2 * lora_r, lora_dropout=0.0, task_type="CAUSAL_LM",
                                 target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    args = SFTConfig(
        output_dir=str(output_dir), num_train_epochs=epochs, max_steps=max_steps, learning_rate=learning_rate,
        # on CPU a padded batch sends attention down sdpa's masked (math) kernel, 2-3x slower than one sequence
        # at a time with the causal kernel: the same batch as accumulated single examples
        per_device_train_batch_size=1 if device == "cpu" else batch_size,
        gradient_accumulation_steps=batch_size if device == "cpu" else 1,
        per_device_eval_batch_size=1 if device == "cpu" else batch_size, logging_steps=1,
        save_strategy="no", report_to=[], seed=seed, use_cpu=device == "cpu", max_length=max_length,
        bf16=device == "cuda" and _bf16_ok(), include_num_input_tokens_seen=True,
        lr_scheduler_type="constant_with_warmup" if warmup_steps else "constant", warmup_steps=warmup_steps, dataloader_num_workers=0, disable_tqdm=True,
        eval_strategy="no", gradient_checkpointing=_checkpointing(model, device),
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows),
                         eval_dataset=Dataset.from_list(eval_rows) if eval_rows else None,
                         processing_class=tokenizer, peft_config=peft_config, callbacks=callbacks)
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # it prints raw log dicts on stdout; callers print a summary
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    eval_loss = None
    if eval_rows:
        eval_loss = trainer.evaluate().get("eval_loss")
    out = Path(output_dir)
    final = trainer.model.merge_and_unload() if lora else trainer.model
    final.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return SFTResult(str(out), trainer.state.global_step, [float(x) for x in losses if math.isfinite(x)], eval_loss,
                     tokenized.total, len(rows), tokenized.truncated, tokenized.dropped,
                     int(getattr(trainer.state, "num_input_tokens_seen", 0) or 0), tokenized.elided)


def _checkpointing(model: Any, device: str) -> bool:
    """Recompute activations in the backward pass (TRL's default) except for a small model on CPU, where the
    activations of even a 16k-token example take little memory and recomputing them costs a quarter of the step."""
    return device != "cpu" or model.num_parameters() > 20_000_000


def _bf16_ok() -> bool:
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
