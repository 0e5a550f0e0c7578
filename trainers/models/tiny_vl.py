"""A tiny Qwen2-VL vision-language student built from a config, with a locally trained tokenizer (no downloads).

The model is `Qwen2VLForConditionalGeneration` at toy sizes (a one-block vision tower, a two-layer text
model); the image processor is Qwen2-VL's, constructed in code with a small pixel budget so a receipt becomes
a few dozen image tokens; the tokenizer is `tiny.build_tokenizer`'s byte-level BPE plus Qwen2-VL's vision
tokens. The chat template is TRL's Qwen2.5 training template (tools, `<tool_call>` blocks, `{% generation %}`
markers for assistant-only loss) whose message contents may also be lists of parts, an image part rendering as
`<|vision_start|><|image_pad|><|vision_end|>` as in Qwen2-VL's own template: it reads the SFT export's
multimodal format (`{"type": "image"}` parts in tool results) and a live transcript's (parts holding the image).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from .tiny import _TOOLS_COMPACT, _TOOLS_JSON, attach_response_parser, build_tokenizer

VISION_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
# Qwen2-VL cuts images into 14 px patches and merges 2x2 of them into one token: a 28 px square per token.
PATCH, MERGE = 14, 2
DEFAULT_MAX_PIXELS = 28 * 28 * 64  # at most 64 image tokens per image
DEFAULT_MIN_PIXELS = 28 * 28 * 4

# Every place the Qwen2.5 template writes a message's content, and what writes a string or a list of parts.
_CONTENT = (
    "{%- macro render_content(content) %}"
    "{%- if content is string %}{{- content }}"
    "{%- elif content is iterable %}"
    "{%- for part in content %}"
    "{%- if part['type'] == 'image' or 'image' in part or 'image_url' in part %}"
    "{{- '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{%- elif 'text' in part %}{{- part['text'] }}{%- endif %}"
    "{%- endfor %}"
    "{%- endif %}"
    "{%- endmacro %}\n"
)
_REPLACEMENTS = (
    ("{{- messages[0]['content'] }}", "{{- render_content(messages[0]['content']) }}"),
    ("{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}",
     "{{- '<|im_start|>system\\n' + render_content(messages[0]['content']) + '<|im_end|>\\n' }}"),
    ("{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}",
     "{{- '<|im_start|>' + message.role + '\\n' + render_content(message.content) + '<|im_end|>' + '\\n' }}"),
    ("{{- '\\n' + message.content + '<|im_end|>\\n' }}",
     "{{- '\\n' + render_content(message.content) + '<|im_end|>\\n' }}"),
    ("{{- '\\n' + message.content }}", "{{- '\\n' + render_content(message.content) }}"),
    ("{{- message.content }}", "{{- render_content(message.content) }}"),
)


def vision_chat_template(compact_tools: bool = False) -> str:
    """TRL's Qwen2.5 training template (see `tiny.chat_template`) reading list contents too: text parts as text,
    image parts as Qwen2-VL's image placeholder (the processor expands it to the image's tokens)."""
    import trl

    text = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5_training.jinja").read_text(encoding="utf-8")
    if compact_tools:
        text = text.replace(_TOOLS_JSON, _TOOLS_COMPACT)
    for old, new in _REPLACEMENTS:
        if old not in text:  # pragma: no cover - a TRL release that changed its template
            raise RuntimeError(f"the installed TRL's qwen2_5_training.jinja has no {old!r} to make image-aware")
        text = text.replace(old, new)
    return _CONTENT + text


def build_image_processor(max_pixels: int = DEFAULT_MAX_PIXELS, min_pixels: int = DEFAULT_MIN_PIXELS) -> Any:
    """Qwen2-VL's image processor (the PIL one: no torchvision needed) with a pixel budget of `max_pixels`."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    if not 0 < min_pixels <= max_pixels:
        raise ValueError(f"need 0 < min_pixels <= max_pixels, got {min_pixels} and {max_pixels}")
    return Qwen2VLImageProcessorPil(size={"shortest_edge": min_pixels, "longest_edge": max_pixels},
                                    patch_size=PATCH, merge_size=MERGE, temporal_patch_size=2)


def _corpus(examples: Iterable[dict[str, Any]], template: str) -> list[str]:
    from jinja2 import Environment

    env = Environment()
    env.filters["tojson"] = lambda v, **_: json.dumps(v, ensure_ascii=False)
    tpl = env.from_string(template.replace("{%- generation %}", "").replace("{%- endgeneration %}", ""))
    texts = []
    for ex in examples:
        texts.append(tpl.render(messages=ex["messages"], tools=ex.get("tools"), add_generation_prompt=False))
        texts.append(json.dumps({k: v for k, v in ex.items() if k not in ("images", "audios")}, ensure_ascii=False))
    return texts


def _processor_class() -> Any:
    from transformers import Qwen2VLProcessor
    from transformers.processing_utils import ProcessorMixin

    class TinyVLProcessor(Qwen2VLProcessor):
        """Qwen2-VL's processor without its video processor (which needs torchvision): images and text only."""

        def __init__(self, image_processor: Any = None, tokenizer: Any = None, chat_template: str | None = None,
                     **kwargs: Any) -> None:
            self.image_token, self.video_token = "<|image_pad|>", "<|video_pad|>"
            self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)
            self.video_token_id = tokenizer.convert_tokens_to_ids(self.video_token)
            ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)

    return TinyVLProcessor


def build_processor(examples: Iterable[dict[str, Any]], vocab_size: int = 1024, compact_tools: bool = False,
                    max_pixels: int = DEFAULT_MAX_PIXELS) -> Any:
    """A Qwen2VLProcessor: a BPE tokenizer trained on `examples` (HF SFT format, images left out of the corpus)
    with the vision tokens, Qwen2-VL's image processor and the image-aware chat template."""
    template = vision_chat_template(compact_tools)
    tokenizer = build_tokenizer(_corpus(examples, template), vocab_size, compact_tools)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", *VISION_TOKENS]})
    tokenizer.chat_template = template
    return _processor_class()(image_processor=build_image_processor(max_pixels), tokenizer=tokenizer,
                              chat_template=template)


def build_vl_model(tokenizer: Any, hidden: int = 64, layers: int = 2, heads: int = 4, vision_dim: int = 32,
                   vision_depth: int = 1, seed: int = 0) -> Any:
    """A randomly initialised Qwen2VLForConditionalGeneration at toy sizes, deterministic for the seed."""
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    head_dim = hidden // heads
    if head_dim % 2 or hidden % heads:
        raise ValueError(f"hidden ({hidden}) must be a multiple of heads ({heads}) with an even head size")
    half = head_dim // 2  # multimodal rope: the rotary half split into (time, height, width) sections
    section = [half - 2 * (half // 3), half // 3, half // 3]
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in VISION_TOKENS}
    config = Qwen2VLConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": hidden, "intermediate_size": hidden * 2,
                     "num_hidden_layers": layers, "num_attention_heads": heads,
                     "num_key_value_heads": max(1, heads // 2), "max_position_embeddings": 8192,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": section},
                     "bos_token_id": None, "eos_token_id": tokenizer.eos_token_id,
                     "pad_token_id": tokenizer.pad_token_id,
                     "tie_word_embeddings": True},
        vision_config={"depth": vision_depth, "embed_dim": vision_dim, "hidden_size": hidden,
                       "num_heads": max(1, vision_dim // 16), "mlp_ratio": 2, "patch_size": PATCH,
                       "spatial_merge_size": MERGE, "temporal_patch_size": 2},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(config)
    for cfg in (model.config, model.generation_config):
        cfg.eos_token_id = tokenizer.eos_token_id
        cfg.pad_token_id = tokenizer.pad_token_id
    return model


def build_tiny_vl(out_dir: str | Path, examples: Iterable[dict[str, Any]], vocab_size: int = 1024, hidden: int = 64,
                  layers: int = 2, seed: int = 0, compact_tools: bool = False,
                  max_pixels: int = DEFAULT_MAX_PIXELS) -> Path:
    """Build the processor on `examples` (HF SFT format, with or without images) and a tiny Qwen2-VL model, and
    save both to `out_dir` (loadable with `load_vl`, or transformers' AutoProcessor and
    AutoModelForImageTextToText)."""
    exs = list(examples)
    if not exs:
        raise ValueError("need at least one example to train the tokenizer on")
    processor = build_processor(exs, vocab_size, compact_tools, max_pixels)
    model = build_vl_model(processor.tokenizer, hidden, layers, seed=seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def is_vision_model(path: str | Path) -> bool:
    """Whether a saved model folder holds a vision-language model's image processor next to the model."""
    p = Path(path)
    if (p / "preprocessor_config.json").is_file():
        return True
    cfg = p / "processor_config.json"
    return cfg.is_file() and "image_processor" in json.loads(cfg.read_text(encoding="utf-8"))


def load_vl(path: str | Path) -> tuple[Any, Any]:
    """Load a saved vision-language model and its processor, offline (the tokenizer gets the response parser).

    A tiny student's processor (`TinyVLProcessor`, saved by `build_tiny_vl`) is rebuilt from its saved tokenizer
    and image processor settings; any other goes through AutoProcessor.
    """
    from transformers import AutoModelForImageTextToText, AutoProcessor, AutoTokenizer

    p = Path(path)
    if not (p / "config.json").is_file():
        raise FileNotFoundError(f"{p}: not a saved model folder (no config.json); build one with "
                                "`coworkenv train tiny --vision`")
    if not is_vision_model(p):
        raise FileNotFoundError(f"{p}: no image processor saved with the model (not a vision-language model folder)")
    cfg = p / "processor_config.json"
    saved = json.loads(cfg.read_text(encoding="utf-8")) if cfg.is_file() else {}
    if saved.get("processor_class") == "TinyVLProcessor":
        image = saved["image_processor"]
        tokenizer = AutoTokenizer.from_pretrained(p, local_files_only=True)
        processor = _processor_class()(
            image_processor=build_image_processor(image["size"]["longest_edge"], image["size"]["shortest_edge"]),
            tokenizer=tokenizer, chat_template=tokenizer.chat_template)
    else:
        processor = AutoProcessor.from_pretrained(p, local_files_only=True)
    model = AutoModelForImageTextToText.from_pretrained(p, local_files_only=True)
    attach_response_parser(processor.tokenizer)
    return model, processor
