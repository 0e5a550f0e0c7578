"""The `hf` policy: a local transformers model (text or vision-language), prompted with its chat template.

The model and tokenizer load offline from a folder (`trainers.models.tiny.load`, which also gives
the tiny test model the Qwen response parser). Each turn renders the transcript and the tools with
the tokenizer's chat template, generates (greedy at temperature 0, else sampled with a seed per
episode and turn), records the prompt and completion token ids with the model's log-probs, and
reads `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks out of the text. A block
that is not valid JSON is passed on with its raw text, so the runner answers it as a tool error. A
vision-language folder (`trainers.models.tiny_vl`) is run with its processor: the images tool results
returned go into the prompt as image parts, and the prompt ids recorded include their image tokens.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from workspace_sim.record import PolicyInfo
from ..turns import AgentTurn, EpisodeContext, PolicyCall, TurnTokens

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_END_MARKS = ("<|im_end|>", "<|endoftext|>")


def parse_tool_text(text: str) -> tuple[str | None, list[PolicyCall]]:
    """Split generated text into its prose and its tool calls (raw argument text for unparsable blocks)."""
    calls: list[PolicyCall] = []
    for m in _BLOCK.finditer(text):
        raw = m.group(1)
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            name = _NAME.search(raw)
            calls.append(PolicyCall(name.group(1) if name else "unparsed_tool_call", raw))
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            calls.append(PolicyCall("unparsed_tool_call", raw))
            continue
        args = obj.get("arguments", {})
        calls.append(PolicyCall(obj["name"], args if isinstance(args, dict) else json.dumps(args)))
    content = _BLOCK.sub("", text)
    for mark in _END_MARKS:
        content = content.replace(mark, "")
    return content.strip() or None, calls


class HFPolicy:
    """A local model folder played through its chat template; a vision-language folder (one with an image
    processor, `trainers.models.tiny_vl.is_vision_model`) through its processor, shown the images tool
    results returned (`sees_images`)."""

    sees_images = False

    def __init__(self, path: str | Path, max_new_tokens: int = 256, temperature: float = 0.0) -> None:
        from trainers.models.tiny import load
        from trainers.models.tiny_vl import is_vision_model, load_vl

        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        self.path = str(path)
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.processor: Any = None
        if is_vision_model(path):
            self.model, self.processor = load_vl(path)
            self.tokenizer = self.processor.tokenizer
            self.sees_images = True
        else:
            self.model, self.tokenizer = load(path)
        self.model.eval()
        self._seed = 0
        self._turn = 0

    def info(self) -> PolicyInfo:
        """`hf:PATH` with the generation settings."""
        return PolicyInfo(name=f"hf:{self.path}", settings={"max_new_tokens": self.max_new_tokens,
                                                             "temperature": self.temperature})

    def start(self, context: EpisodeContext) -> None:
        """Seed sampling from the episode's seed."""
        self._seed, self._turn = context.seed, 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """Generate one turn; the tokens and log-probs go into the record."""
        import torch

        tok = self.tokenizer
        extra: dict[str, Any] = {}
        try:
            if self.processor is not None:
                from trainers.models.vision_messages import processor_messages

                enc = self.processor.apply_chat_template(processor_messages(messages), tools=tools or None,
                                                         add_generation_prompt=True, tokenize=True, return_dict=True,
                                                         return_tensors="pt")
                prompt = enc["input_ids"][0].tolist()
                extra = {k: v for k, v in enc.items() if k not in ("input_ids", "attention_mask")}
            else:
                enc = tok.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True,
                                              tokenize=True, return_dict=True)
                prompt = list(enc["input_ids"])
        except Exception as e:  # a template that cannot render this transcript, an image that does not decode
            return AgentTurn(error=f"the chat template of {self.path} failed: {type(e).__name__}: {e}")
        sample = self.temperature > 0
        torch.manual_seed(self._seed * 1_000_003 + self._turn)
        self._turn += 1
        kwargs: dict[str, Any] = {"do_sample": sample, "max_new_tokens": self.max_new_tokens,
                                  "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id,
                                  "return_dict_in_generate": True, "output_logits": True}
        if self.processor is not None:
            from trainers.models.vision_messages import vision_token_ids

            kwargs["suppress_tokens"] = vision_token_ids(self.processor) or None  # a sampled marker has no pixels
        if sample:
            kwargs["temperature"] = self.temperature
        else:
            kwargs.update(temperature=None, top_p=None, top_k=None)
        with torch.no_grad():
            out = self.model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                      **extra, **kwargs)
        completion = out.sequences[0, len(prompt):].tolist()
        logits = torch.stack(out.logits, dim=1)[0]  # (new tokens, vocab): the model's own, before sampling tweaks
        logprobs = torch.log_softmax(logits.float(), dim=-1).gather(1, torch.tensor(completion)[:, None])[:, 0]
        text = tok.decode(completion, skip_special_tokens=False)
        content, calls = parse_tool_text(text)
        finished = tok.eos_token_id in completion
        return AgentTurn(content=content, calls=calls, truncated=not finished and not calls,
                         tokens=TurnTokens(completion_ids=completion, prompt_ids=prompt,
                                           logprobs=[round(float(x), 6) for x in logprobs]))
