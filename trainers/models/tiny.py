"""A tiny Qwen2-architecture model and a byte-level BPE tokenizer trained locally (no downloads).

The tokenizer's chat template is TRL's Qwen2.5 training template: it renders tools and tool calls
the Qwen way (`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`) and wraps assistant
output in `{% generation %}` markers, so SFT can put the loss on assistant tokens only. TRL's
Qwen response parser is attached so GRPO can read tool calls back out of generated text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>"]


# The tools block of TRL's template (one JSON schema per line) and a compact replacement: one line per
# tool, `name(arg, optional_arg?)`. Full schemas are ~2,500 tokens per prompt with the files or tickets
# tools, which a tiny student on a CPU spends most of its training time reading; signatures keep the
# prompt several times shorter while still naming every tool and argument.
_TOOLS_JSON = (
    "    {%- for tool in tools %}\n"
    "        {{- \"\\n\" }}\n"
    "        {{- tool | tojson }}\n"
    "    {%- endfor %}\n"
)
_TOOLS_COMPACT = (
    "    {%- for tool in tools %}\n"
    "        {%- set f = tool.function if tool.function is defined else tool %}\n"
    "        {%- set req = (f.parameters or {}).required or [] %}\n"
    "        {{- \"\\n\" + f.name + \"(\" }}\n"
    "        {%- for arg in ((f.parameters or {}).properties or {}) %}"
    "{{- \", \" if not loop.first }}{{- arg }}{{- \"?\" if arg not in req }}{%- endfor %}\n"
    "        {{- \")\" }}\n"
    "    {%- endfor %}\n"
)


def chat_template(compact_tools: bool = False) -> str:
    """TRL's Qwen2.5 chat template with generation markers (read from the installed TRL).

    With `compact_tools` the tools are listed as one-line signatures instead of JSON schemas (see
    `_TOOLS_COMPACT`); tool calls are rendered the Qwen way either way.
    """
    import trl

    text = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5_training.jinja").read_text(encoding="utf-8")
    if compact_tools:
        if _TOOLS_JSON not in text:  # pragma: no cover - a TRL release that changed its template
            raise RuntimeError("the installed TRL's qwen2_5_training.jinja has no tools loop to make compact")
        text = text.replace(_TOOLS_JSON, _TOOLS_COMPACT)
    return text


def attach_response_parser(tokenizer: Any) -> Any:
    """Give the tokenizer TRL's Qwen response template so `parse_response` extracts tool calls."""
    from trl import chat_template_utils as ctu

    if ctu._SUPPORTS_RESPONSE_TEMPLATE:
        tokenizer.response_template = ctu.qwen3_template
    else:  # pragma: no cover - older transformers
        tokenizer.response_schema = ctu.qwen3_schema
    return tokenizer


def build_tokenizer(texts: Iterable[str], vocab_size: int = 1024, compact_tools: bool = False,
                    isolate_spaces: bool = False) -> Any:
    """Train a byte-level BPE tokenizer on `texts` and wrap it as a transformers fast tokenizer.

    `compact_tools` gives it the chat template with one-line tool signatures. `isolate_spaces` makes
    whitespace, each digit and each word its own pre-token, so a word is the same token whether a
    space or a quote precedes it (` INFRA` in a request, `"INFRA"` in a tool call): copying a value
    from the context into call arguments is then a plain token copy, not a mapping between tokens.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    if isolate_spaces:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(r"\s+|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS + MARKUP_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(texts), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, unk_token=None, padding_side="left")
    fast.add_special_tokens({"additional_special_tokens": ["<|im_start|>"]})
    fast.chat_template = chat_template(compact_tools)
    return attach_response_parser(fast)


def corpus_from_examples(examples: Iterable[dict[str, Any]], compact_tools: bool = False) -> list[str]:
    """Texts to train the tokenizer on: every example rendered with the chat template, plus its JSON (media data URLs left out)."""
    from jinja2 import Template  # rendering without a tokenizer: the template is plain Jinja apart from markers

    from ..media_parts import as_text_example

    template = Template(chat_template(compact_tools).replace("{%- generation %}", "").replace("{%- endgeneration %}", ""))
    texts = []
    for ex in examples:
        template.environment.filters.setdefault("tojson", lambda v, **_: json.dumps(v, ensure_ascii=False))
        ex = as_text_example(ex)
        texts.append(template.render(messages=ex["messages"], tools=ex.get("tools"), add_generation_prompt=False))
        texts.append(json.dumps(ex, ensure_ascii=False))
    return texts


def build_model(vocab_size: int, hidden: int = 64, layers: int = 2, heads: int = 4, seed: int = 0,
                max_positions: int = 8192) -> Any:
    """A randomly initialised Qwen2ForCausalLM (tied embeddings), deterministic for the seed."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=vocab_size, hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=max(1, heads // 2), max_position_embeddings=max_positions,
        tie_word_embeddings=True, use_cache=True,
    )
    return Qwen2ForCausalLM(config)


def build_tiny(out_dir: str | Path, examples: Iterable[dict[str, Any]], vocab_size: int = 1024, hidden: int = 64,
               layers: int = 2, seed: int = 0, compact_tools: bool = False, isolate_spaces: bool = False) -> Path:
    """Build a tokenizer on `examples` (HF SFT format) and a tiny model, and save both to `out_dir`.

    `compact_tools` and `isolate_spaces` are passed to `build_tokenizer`.
    """
    exs = list(examples)
    if not exs:
        raise ValueError("need at least one example to train the tokenizer on")
    tokenizer = build_tokenizer(corpus_from_examples(exs, compact_tools), vocab_size, compact_tools, isolate_spaces)
    model = build_model(len(tokenizer), hidden, layers, seed=seed)
    model.config.eos_token_id = tokenizer.eos_token_id
    model.config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def load(path: str | Path) -> tuple[Any, Any]:
    """Load a saved (tiny or any local) causal LM and its tokenizer, offline, with the response parser attached."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    p = Path(path)
    if not (p / "config.json").is_file():
        raise FileNotFoundError(f"{p}: not a saved model folder (no config.json); build one with "
                                "`coworkenv train tiny`")
    tokenizer = AutoTokenizer.from_pretrained(p, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(p, local_files_only=True)
    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        attach_response_parser(tokenizer)
    return model, tokenizer
