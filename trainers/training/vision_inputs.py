"""What a vision-language student reads in a rollout turn: the transcript rendered by its processor, images and all.

A rollout in a spec shows the policy the images the episode has shown so far: each tool result that returned
image content as a list of parts holding the image's data URL (`EpisodeSession.messages_with_images`, the view
the `hf` policy gets), and any user message whose content is a list of parts with images. `turn_prompt`
decodes those images, renders the transcript with the processor's chat template (each image part expands to
the image's tokens) and returns the prompt ids with `VisionInputs`: the pixel values, the image grids and the
token types (image tokens 1) that generation, the log-probabilities and the GRPO update all feed the model,
and the names of the images (the placeholder the record's transcript shows in their place). A text
tokenizer gets the text path unchanged (`turn_prompt` returns no `VisionInputs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..models.vision_messages import MediaInputError, decoded_messages, is_processor
from .episode import EpisodeRecorder


@dataclass
class VisionInputs:
    """A vision student's turn prompt beyond its ids: pixel values and grids of its images (None without images),
    the prompt's token types (1 on image tokens) and the images' names, in order."""

    mm_token_type_ids: list[int]
    pixel_values: Any = None
    image_grid_thw: Any = None
    images: list[str] = field(default_factory=list)

    def model_kwargs(self, length: int, device: Any = None) -> dict[str, Any]:
        """The keyword arguments of a forward pass (or `generate`) over the prompt followed by completion tokens,
        `length` tokens in all (the completion's token types are text, 0)."""
        import torch

        types = self.mm_token_type_ids + [0] * (length - len(self.mm_token_type_ids))
        out: dict[str, Any] = {"mm_token_type_ids": torch.tensor([types], device=device)}
        if self.pixel_values is not None:
            out.update(pixel_values=self.pixel_values.to(device), image_grid_thw=self.image_grid_thw.to(device))
        return out


def shown_messages(rec: EpisodeRecorder) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The transcript as a vision student is shown it (image parts holding data URLs), and the name of each
    image by its data URL: the placeholder the record's tool message shows (file name, MIME type, size, hash)."""
    if rec.session is None:
        return rec.messages, {}
    from ..media_parts import call_images

    shown = call_images(rec.session.run.record.events)
    names = {f"data:{p.mime_type};base64,{p.data}": key for key, p in shown.items()}
    return rec.session.messages_with_images(), names


def render_prompt(processor: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                  names: dict[str, str] | None = None, where: str = "prompt") -> tuple[list[int], VisionInputs]:
    """The generation prompt of `messages` (image parts holding data URLs or PIL images) rendered and tokenised
    by the processor, with its `VisionInputs`; an image that does not decode, or that the processor refuses (an
    aspect ratio beyond its limit), is a MediaInputError naming `where`, the message and the image. Text spelling
    a vision marker is broken up first (`VISION_TOKENS`), so only real images get image slots."""
    decoded, shown = decoded_messages(messages, names or {}, where)
    try:
        enc = processor.apply_chat_template(decoded, tools=tools or None, add_generation_prompt=True, tokenize=True,
                                            return_dict=True, return_tensors="pt")
    except ValueError as e:  # the image processor's own refusals (e.g. an aspect ratio over 200)
        raise MediaInputError(f"{where}: the processor refuses the prompt's images ({', '.join(shown)}): {e}") from None
    ids = enc["input_ids"][0].tolist()
    types = enc["mm_token_type_ids"][0].tolist() if "mm_token_type_ids" in enc else [0] * len(ids)
    if not shown:
        return ids, VisionInputs(types)
    return ids, VisionInputs(types, enc["pixel_values"], enc["image_grid_thw"], shown)


def turn_prompt(tokenizer: Any, rec: EpisodeRecorder, episode_id: str, turn: int
                ) -> tuple[list[int], VisionInputs | None]:
    """The prompt ids of a rollout's next turn, and, for a processor, its `VisionInputs` (the images shown so far;
    None for a text tokenizer, whose prompt is the transcript's chat template as before)."""
    if not is_processor(tokenizer):
        out = tokenizer.apply_chat_template(rec.messages, tools=rec.tools or None, add_generation_prompt=True,
                                            tokenize=True, return_dict=True)
        return list(out["input_ids"]), None
    messages, names = shown_messages(rec)
    return render_prompt(tokenizer, messages, rec.tools, names, f"episode {episode_id}, turn {turn}")


def share_pixels(visions: list[VisionInputs | None]) -> None:
    """Make each turn's pixel values a view into the last turn's where they are its first rows, so a rollout holds
    each image's pixels once, not once per later turn (the transcript only grows, so they usually are; rows
    that differ keep their own tensor)."""
    import torch

    last = next((v.pixel_values for v in reversed(visions) if v is not None and v.pixel_values is not None), None)
    if last is None:
        return
    for v in visions:
        if v is not None and v.pixel_values is not None and v.pixel_values is not last:
            rows = v.pixel_values.shape[0]
            if rows <= last.shape[0] and torch.equal(last[:rows], v.pixel_values):
                v.pixel_values = last[:rows]


def reset_rope(model: Any) -> None:
    """Forget the multimodal rope offsets a Qwen2-VL-style model cached from its previous prompt, so a forward over
    a new prompt (with a key/value cache continued after it) never reuses another prompt's offsets."""
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "rope_deltas"):
        inner.rope_deltas = None


def freeze_vision_tower(model: Any) -> list[Any]:
    """Freeze a Qwen2-VL-style model's vision tower (patch embedding and blocks) and return the parameters that
    still train: the language model, its head and the mergers that project image features into it (Qwen2-VL's
    `merger`; Qwen3-VL's `deepstack_merger_list` as well)."""
    for name, p in model.named_parameters():
        if ".visual." in f".{name}" and "merger" not in name:
            p.requires_grad_(False)
    return [p for p in model.parameters() if p.requires_grad]
