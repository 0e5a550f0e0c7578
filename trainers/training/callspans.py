"""Where each tool name and argument value of an example's calls lies in its tokens, and whether a
model predicts them under teacher forcing.

The figures that show learning before success does (issue 15) are per-part accuracies of the
teacher's calls: the tool names, the constant argument values (not in the context: `"Resolved"`),
the copied ones (a verbatim span of the context before the call) split by whether a training call
ever held that value. `call_spans` finds those parts in the chat-template rendering; `span_hits`
scores them with one forward pass: a part is right when the model's argmax is right on every token
that overlaps it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Part = Literal["tool_name", "constant", "copied_seen", "copied_unseen"]
PARTS: tuple[Part, ...] = ("tool_name", "constant", "copied_seen", "copied_unseen")


@dataclass
class CallSpan:
    """One scored part of a call: its category, the text, its character span and its token positions."""

    part: Part
    text: str
    start: int
    end: int
    tokens: list[int] = field(default_factory=list)


@dataclass
class RenderedExample:
    """An example rendered and tokenised, with its call parts located."""

    input_ids: list[int]
    spans: list[CallSpan]
    missing: int = 0  # parts that could not be found in the rendering (counted, never guessed)


def _flat_values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (bool, int, float)) or value is None:
        return [json.dumps(value)]
    if isinstance(value, list):
        return [x for v in value for x in _flat_values(v)]
    return []  # nested objects are not scored


def _rendered_body(value: str, is_string: bool) -> str:
    """How a value's characters appear inside the rendered call (a string without its quotes)."""
    return json.dumps(value, ensure_ascii=False)[1:-1] if is_string else value


def training_values(examples: Iterable[dict[str, Any]]) -> set[str]:
    """Every argument value (strings and scalars, list items flattened) of every call in `examples`."""
    seen: set[str] = set()
    for ex in examples:
        for m in ex.get("messages", []):
            for c in m.get("tool_calls") or []:
                for v in (c.get("function", {}).get("arguments") or {}).values():
                    seen.update(_flat_values(v))
    return seen


def _context_text(messages: Sequence[dict[str, Any]], upto: int) -> str:
    parts = []
    for m in messages[:upto]:
        content = m.get("content") or ""
        if isinstance(content, list):  # multimodal parts: their text
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(content)
        for c in m.get("tool_calls") or []:
            parts.append(json.dumps(c.get("function", {}).get("arguments", {}), ensure_ascii=False))
    return "\n".join(parts)


def call_spans(tokenizer: Any, example: dict[str, Any], seen: set[str], max_length: int = 1 << 30) -> RenderedExample:
    """Render `example` with the tokenizer's chat template and locate each call's tool name and values.

    A value is `copied_*` when it is a verbatim substring of the messages before its call (system,
    user, earlier tool results and calls), `copied_seen` if `seen` holds it (a training call used it),
    else `copied_unseen`; other values are `constant`. Values of 1-2 characters are skipped (a digit
    or a letter is in every context). Token positions are those overlapping the value's characters
    within the first `max_length` tokens.
    """
    text = tokenizer.apply_chat_template(example["messages"], tools=example.get("tools") or None, tokenize=False)
    return spans_in_text(tokenizer, text, example, seen, max_length)


def spans_in_text(tokenizer: Any, text: str, example: dict[str, Any], seen: set[str],
                  max_length: int = 1 << 30) -> RenderedExample:
    """`call_spans` on a rendering already made (`text`: the example's chat-template text, e.g. with a vision
    processor's image tokens expanded), tokenised with `tokenizer`."""
    messages = example["messages"]
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    offsets = enc["offset_mapping"][:max_length]
    spans: list[CallSpan] = []
    missing = 0
    cursor = 0
    for i, m in enumerate(messages):
        if m.get("role") != "assistant":
            continue
        context = _context_text(messages, i)
        for c in m.get("tool_calls") or []:
            fn = c.get("function", {})
            name = fn.get("name", "")
            head = f'"name": {json.dumps(name, ensure_ascii=False)}'
            at = text.find(head, cursor)
            if at < 0:
                missing += 1 + len(fn.get("arguments") or {})
                continue
            start = at + len('"name": "')
            spans.append(CallSpan("tool_name", name, start, start + len(json.dumps(name, ensure_ascii=False)) - 2))
            cursor = start
            for key, value in (fn.get("arguments") or {}).items():
                items = value if isinstance(value, list) else [value]
                for item in items:
                    if isinstance(item, (dict, list)):
                        continue  # nested structures are not scored
                    v = _flat_values(item)[0]
                    if len(v) < 3:
                        continue
                    body = _rendered_body(v, isinstance(item, str))
                    at = text.find(body, cursor)
                    if at < 0:
                        missing += 1
                        continue
                    copied = v in context
                    part: Part = ("copied_seen" if v in seen else "copied_unseen") if copied else "constant"
                    spans.append(CallSpan(part, v, at, at + len(body)))
                    cursor = at + len(body)
    for s in spans:
        s.tokens = [t for t, (a, b) in enumerate(offsets) if a < s.end and b > s.start and t > 0]
    kept = [s for s in spans if s.tokens]
    return RenderedExample(list(enc["input_ids"][:max_length]), kept, missing + len(spans) - len(kept))


@dataclass
class PartScore:
    """Teacher-forced accuracy of one part: whole parts right (`right` of `n`) and tokens right."""

    n: int = 0
    right: int = 0
    tokens: int = 0
    tokens_right: int = 0

    def add(self, other: PartScore) -> None:
        """Count `other`'s parts and tokens into this score."""
        self.n += other.n
        self.right += other.right
        self.tokens += other.tokens
        self.tokens_right += other.tokens_right

    @property
    def accuracy(self) -> float | None:
        """Whole parts right over parts (None when there are none)."""
        return self.right / self.n if self.n else None

    @property
    def token_accuracy(self) -> float | None:
        """Tokens right over tokens (None when there are none)."""
        return self.tokens_right / self.tokens if self.tokens else None

    def to_json(self) -> dict[str, Any]:
        """Counts plus the two accuracies."""
        return {**asdict(self), "accuracy": self.accuracy, "token_accuracy": self.token_accuracy}


def span_hits(predicted: Sequence[int], rendered: RenderedExample) -> dict[Part, PartScore]:
    """Score `rendered`'s parts given the model's argmax `predicted[t]` for token t (teacher forcing)."""
    out: dict[Part, PartScore] = {p: PartScore() for p in PARTS}
    ids = rendered.input_ids
    for s in rendered.spans:
        ok = [predicted[t] == ids[t] for t in s.tokens]
        score = out[s.part]
        score.n += 1
        score.right += all(ok)
        score.tokens += len(ok)
        score.tokens_right += sum(ok)
    return out


def teacher_forced_parts(model: Any, tokenizer: Any, examples: Sequence[dict[str, Any]], seen: set[str],
                         max_length: int = 8192) -> tuple[dict[Part, PartScore], int]:
    """Per-part teacher-forced accuracy of `model` on the calls of `examples`; also the parts not located."""
    import torch

    from ..media_parts import as_text_example

    total: dict[Part, PartScore] = {p: PartScore() for p in PARTS}
    missing = 0
    model.eval()
    with torch.no_grad():
        for ex in examples:
            rendered = call_spans(tokenizer, as_text_example(ex), seen, max_length)
            missing += rendered.missing
            if not rendered.spans:
                continue
            logits = model(input_ids=torch.tensor([rendered.input_ids], device=model.device)).logits[0]
            # the prediction for token t is the argmax at t - 1
            predicted = [-1, *logits[:-1].argmax(-1).tolist()]
            for part, score in span_hits(predicted, rendered).items():
                total[part].add(score)
    return total, missing
