"""SFT of a vision-language student on the export's multimodal examples, and its teacher-forced figures.

An example of `coworkenv export sft --format hf` whose tool results showed images has `{"type": "image"}` parts
and an `images` list of data URLs, in order. Each example is encoded once with the processor's chat template
(`return_assistant_tokens_mask=True`, the template's `{% generation %}` markers), which expands every image
part into the image's tokens and computes its pixel values; TRL's SFTTrainer then trains on them through
`VisionCollator`, labels on assistant tokens only. An image's tokens cannot be cut in half, so an example over
`max_length` is dropped (counted), never cut. The figures after training are the text student's (see
`trainers.demo.metrics`): the held-out assistant-token loss and the teacher-forced accuracy of the calls' parts,
the images in the forward pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .callspans import PARTS, Part, PartScore, spans_in_text, span_hits
from ..models.vision_messages import MediaInputError
from ..models.vision_messages import decode_image as _decode_image
from .sft import SFTDataError, SFTResult, _bf16_ok, read_sft_file

IMAGE_PAD = "<|image_pad|>"


# LoRA's targets in a Qwen2-VL: the language model's attention projections (the vision tower's are `attn.qkv`/`proj`).
LORA_TARGETS = r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj)"


def decode_image(url: str, where: str) -> Any:
    """A `data:image/...;base64,` URL as an RGB PIL image; SFTDataError names `where` when it is not one."""
    try:
        return _decode_image(url, where)
    except MediaInputError as e:
        raise SFTDataError(str(e)) from None


def with_images(example: dict[str, Any], where: str = "example") -> tuple[list[dict[str, Any]], list[Any]]:
    """The example's messages with each `{"type": "image"}` part holding its image (a PIL image, in the order of
    `images`), and the images; a count that does not match is an SFTDataError."""
    urls = example.get("images") or []
    images = [decode_image(u, f"{where}: images[{i}]") for i, u in enumerate(urls)]
    it = iter(images)
    out, used = [], 0
    for m in example["messages"]:
        if isinstance(m.get("content"), list):
            parts = []
            for p in m["content"]:
                if isinstance(p, dict) and p.get("type") == "image":
                    img = next(it, None)
                    if img is None:
                        raise SFTDataError(f"{where}: more image parts than the {len(images)} images listed")
                    parts.append({"type": "image", "image": img})
                    used += 1
                else:
                    parts.append(p)
            m = {**m, "content": parts}
        out.append(m)
    if used != len(images):
        raise SFTDataError(f"{where}: {len(images)} images listed but {used} image parts in the messages")
    return out, images


@dataclass
class Encoded:
    """One example as the model reads it: token ids, the assistant mask, the token types (image tokens 1) and
    the images' pixel values and grids (None without images)."""

    input_ids: list[int]
    assistant_masks: list[int]
    mm_token_type_ids: list[int]
    pixel_values: Any = None
    image_grid_thw: Any = None


def encode_example(processor: Any, example: dict[str, Any], max_length: int, where: str = "example") -> Encoded | None:
    """Render and tokenise one example with its images; None when it is over `max_length` tokens or holds no
    assistant token."""
    messages, images = with_images(example, where)
    out = processor.apply_chat_template(messages, tools=example.get("tools") or None, tokenize=True,
                                        return_dict=True, return_assistant_tokens_mask=True, return_tensors="pt")
    ids = out["input_ids"][0].tolist()
    mask = [int(x) for x in out["assistant_masks"][0].tolist()]
    if len(ids) > max_length or not any(mask):
        return None
    types = out["mm_token_type_ids"][0].tolist() if "mm_token_type_ids" in out else [0] * len(ids)
    return Encoded(ids, mask, types, out.get("pixel_values") if images else None,
                   out.get("image_grid_thw") if images else None)


class VisionCollator:
    """Pads encoded examples into a batch (right padding), labels only on assistant tokens, pixel values and
    grids of the batch's images concatenated in order (Qwen2-VL's layout)."""

    def __init__(self, encoded: Sequence[Encoded], pad_token_id: int) -> None:
        self.encoded = list(encoded)
        self.pad = pad_token_id

    def __call__(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        batch = [self.encoded[r["index"]] for r in rows]
        width = max(len(e.input_ids) for e in batch)

        def padded(values: list[int], fill: int) -> list[int]:
            return values + [fill] * (width - len(values))

        out: dict[str, Any] = {
            "input_ids": torch.tensor([padded(e.input_ids, self.pad) for e in batch]),
            "attention_mask": torch.tensor([padded([1] * len(e.input_ids), 0) for e in batch]),
            "mm_token_type_ids": torch.tensor([padded(e.mm_token_type_ids, 0) for e in batch]),
            "labels": torch.tensor([padded([t if m else -100 for t, m in zip(e.input_ids, e.assistant_masks)], -100)
                                    for e in batch]),
        }
        with_pixels = [e for e in batch if e.pixel_values is not None]
        if with_pixels:
            out["pixel_values"] = torch.cat([e.pixel_values for e in with_pixels])
            out["image_grid_thw"] = torch.cat([e.image_grid_thw for e in with_pixels])
        return out


def encode_set(processor: Any, examples: Sequence[dict[str, Any]], max_length: int) -> tuple[list[Encoded], int]:
    """The usable examples encoded, and how many were dropped (over `max_length`, or no assistant token)."""
    kept = [encode_example(processor, ex, max_length, f"example {i}") for i, ex in enumerate(examples)]
    return [e for e in kept if e is not None], sum(e is None for e in kept)


def train_vision_sft(
    model_path: str | Path, data: str | Path | list[dict[str, Any]], output_dir: str | Path, epochs: float = 1.0,
    learning_rate: float = 1e-3, batch_size: int = 2, max_steps: int = -1, max_length: int = 8192, seed: int = 0,
    callbacks: list[Any] | None = None, device: str = "cpu", warmup_steps: int = 0, assistant_only: bool = True,
    lora: bool = False, lora_r: int = 8,
) -> SFTResult:
    """Fine-tune a local vision-language model (`tiny_vl.load_vl`) on multimodal SFT examples with TRL's
    SFTTrainer and `VisionCollator`, loss on assistant tokens; saves model and processor to `output_dir`.

    The arguments are `train_sft`'s: the learning rate rises over `warmup_steps`, then stays constant; with
    `assistant_only` False the loss covers every text token (never the image tokens, which are inputs). With
    `lora`, rank-`lora_r` adapters train on the language model's attention projections while the vision tower
    stays frozen (the usual recipe for a VL student on little data), merged into the saved model.
    """
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback
    from trl import SFTConfig, SFTTrainer

    from ..models.tiny_vl import load_vl

    model, processor = load_vl(model_path)
    examples = read_sft_file(data) if isinstance(data, (str, Path)) else list(data)
    encoded, dropped = encode_set(processor, examples, max_length)
    if not assistant_only:
        encoded = [Encoded(e.input_ids, [int(not t) for t in e.mm_token_type_ids], e.mm_token_type_ids,
                           e.pixel_values, e.image_grid_thw) for e in encoded]
    if not encoded:
        raise SFTDataError(f"none of the {len(examples)} examples fits max_length {max_length} with an assistant "
                           "token (an image's tokens are never cut); raise --max-length")
    args = SFTConfig(
        output_dir=str(output_dir), num_train_epochs=epochs, max_steps=max_steps, learning_rate=learning_rate,
        per_device_train_batch_size=batch_size, logging_steps=1, save_strategy="no", report_to=[], seed=seed,
        use_cpu=device == "cpu", max_length=None, dataloader_num_workers=0, warmup_steps=warmup_steps,
        lr_scheduler_type="constant_with_warmup" if warmup_steps else "constant", bf16=device == "cuda" and _bf16_ok(),
        disable_tqdm=True, eval_strategy="no", remove_unused_columns=False,
        dataset_kwargs={"skip_prepare_dataset": True}, include_num_input_tokens_seen=True,
    )
    peft_config = None
    if lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=lora_r, lora_alpha=2 * lora_r, lora_dropout=0.0, task_type="CAUSAL_LM",
                                 target_modules=LORA_TARGETS)
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list([{"index": i}
                                                                                   for i in range(len(encoded))]),
                         data_collator=VisionCollator(encoded, processor.tokenizer.pad_token_id),
                         processing_class=processor, callbacks=callbacks, peft_config=peft_config)
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    losses = [float(h["loss"]) for h in trainer.state.log_history if "loss" in h]
    out = Path(output_dir)
    (trainer.model.merge_and_unload() if lora else trainer.model).save_pretrained(out)
    processor.save_pretrained(out)
    return SFTResult(str(out), trainer.state.global_step, [x for x in losses if math.isfinite(x)], None,
                     len(examples), len(encoded), 0, dropped,
                     int(getattr(trainer.state, "num_input_tokens_seen", 0) or 0))


def _forward(model: Any, e: Encoded) -> Any:
    import torch

    kwargs: dict[str, Any] = {"input_ids": torch.tensor([e.input_ids], device=model.device),
                              "mm_token_type_ids": torch.tensor([e.mm_token_type_ids], device=model.device)}
    if e.pixel_values is not None:
        kwargs.update(pixel_values=e.pixel_values.to(model.device), image_grid_thw=e.image_grid_thw.to(model.device))
    return model(**kwargs).logits[0].float()


def vision_heldout_loss(model: Any, processor: Any, examples: Sequence[dict[str, Any]], max_length: int = 8192
                        ) -> float | None:
    """Mean cross-entropy (nats per token) of the examples' assistant tokens, images in the forward pass (the
    text student's `heldout_loss` with pixels); None when no example is usable."""
    import torch

    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for e in encode_set(processor, examples, max_length)[0]:
            logits = _forward(model, e)[:-1]
            ids = torch.tensor(e.input_ids[1:], device=logits.device)
            mask = torch.tensor(e.assistant_masks[1:], dtype=torch.bool, device=logits.device)
            nll = torch.nn.functional.cross_entropy(logits, ids, reduction="none")
            total += float(nll[mask].sum())
            count += int(mask.sum())
    return total / count if count else None


def expanded_text(processor: Any, example: dict[str, Any], where: str = "example") -> str:
    """The chat-template text of the example with each image placeholder expanded to its image's tokens, as the
    processor tokenises it (so character offsets line up with the model's token positions)."""
    messages, images = with_images(example, where)
    text = processor.apply_chat_template(messages, tools=example.get("tools") or None, tokenize=False)
    if not images:
        return text
    grids = processor.image_processor(images=images, return_tensors="pt")["image_grid_thw"]
    merge = processor.image_processor.merge_size ** 2
    pieces = text.split(IMAGE_PAD)
    if len(pieces) - 1 != len(images):
        raise SFTDataError(f"{where}: the template wrote {len(pieces) - 1} image placeholders for {len(images)} images")
    out = pieces[0]
    for grid, rest in zip(grids, pieces[1:]):
        out += IMAGE_PAD * int(grid.prod() // merge) + rest
    return out


def vision_teacher_forced_parts(model: Any, processor: Any, examples: Sequence[dict[str, Any]], seen: set[str],
                                max_length: int = 8192) -> tuple[dict[Part, PartScore], int]:
    """Per-part teacher-forced accuracy of a vision-language model on the calls of `examples` (tool names,
    constant values, copied values seen and unseen in training; `callspans`), images in the forward pass; also
    the parts not located."""
    import torch

    total: dict[Part, PartScore] = {p: PartScore() for p in PARTS}
    missing = 0
    model.eval()
    with torch.no_grad():
        for i, ex in enumerate(examples):
            e = encode_example(processor, ex, max_length, f"example {i}")
            if e is None:
                continue
            rendered = spans_in_text(processor.tokenizer, expanded_text(processor, ex, f"example {i}"), ex, seen,
                                     max_length)
            missing += rendered.missing
            if rendered.input_ids != e.input_ids[:len(rendered.input_ids)]:
                raise RuntimeError(f"example {i}: the expanded text does not tokenise as the processor encodes it")
            if not rendered.spans:
                continue
            predicted = [-1, *_forward(model, e)[:-1].argmax(-1).tolist()]
            for part, score in span_hits(predicted, rendered).items():
                total[part].add(score)
    return total, missing


def vision_figures(model: Any, processor: Any, heldout: Sequence[dict[str, Any]], train: Sequence[dict[str, Any]],
                   max_length: int = 8192) -> dict[str, Any]:
    """The figures the demo reports for the text student, for a vision student: `heldout_loss` and `parts` (each
    part's counts and accuracies, plus `unlocated`)."""
    from .callspans import training_values

    parts, missing = vision_teacher_forced_parts(model, processor, heldout, training_values(train), max_length)
    return {"heldout_loss": vision_heldout_loss(model, processor, heldout, max_length),
            "parts": {**{p: parts[p].to_json() for p in PARTS}, "unlocated": {"n": missing}}}
