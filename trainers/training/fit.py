"""Fitting an SFT example into a token budget while keeping the assistant turns it trains on.

An agent's episode is long mostly because of what tools returned, and what a model learns from is
its own turns. So an example over the budget first has its oldest tool results replaced by a short
note (`[earlier tool result elided to fit the context: N characters]`), one at a time from the
left, keeping the system prompt, the tool schemas, the user's words and every assistant turn,
until it fits; the call and its result id stay, so the conversation keeps its shape. Only if it
still does not fit is it cut at the budget from the right (later assistant turns lost), and only if
no assistant token is left is it dropped. The cost: a later turn that quoted an elided result is
trained without seeing it, which is why elision is the second resort after a budget that fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ELIDED = "[earlier tool result elided to fit the context: {n} characters]"

Fate = Literal["whole", "elided", "cut", "dropped"]


@dataclass
class Fitted:
    """One example within the budget: token ids, the assistant mask, what was done to it
    (`whole`, `elided`: old tool results replaced, `cut`: cut at the budget, `dropped`: no assistant
    token left, with empty ids) and how many tool results were elided."""

    input_ids: list[int]
    assistant_masks: list[int]
    fate: Fate
    elided: int = 0


def render(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> tuple[list[int], list[int]]:
    """Token ids and assistant mask of a conversation with the tokenizer's own chat template."""
    enc = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=True, return_dict=True,
                                        return_assistant_tokens_mask=True)
    return list(enc["input_ids"]), list(enc["assistant_masks"])


def fit_example(tokenizer: Any, example: dict[str, Any], max_length: int, elide: bool = True) -> Fitted:
    """Render `example` ({"messages", "tools"}) within `max_length` tokens as the module doc says;
    with `elide` False, an example over the budget is only cut from the right (the old behaviour)."""
    if max_length < 1:
        raise ValueError(f"max_length must be positive, got {max_length}")
    messages = [dict(m) for m in example["messages"]]
    tools = example.get("tools") or None
    ids, mask = render(tokenizer, messages, tools)
    elided = 0
    if len(ids) > max_length and elide:
        for i, m in enumerate(messages):
            if m.get("role") != "tool":
                continue
            content = m.get("content")
            text = content if isinstance(content, str) else str(content or "")
            note = ELIDED.format(n=len(text))
            if len(text) <= len(note):
                continue  # nothing to gain
            messages[i] = {**m, "content": note}
            elided += 1
            ids, mask = render(tokenizer, messages, tools)
            if len(ids) <= max_length:
                return Fitted(ids, mask, "elided", elided)
    if len(ids) <= max_length:
        return Fitted(ids, mask, "whole")
    ids, mask = ids[:max_length], mask[:max_length]
    if 1 not in mask:
        return Fitted([], [], "dropped", elided)
    return Fitted(ids, mask, "cut", elided)
