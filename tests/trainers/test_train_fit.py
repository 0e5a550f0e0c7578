"""Fitting long SFT examples into --max-length: old tool results give way first, every assistant turn stays."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest
from support import need

need(all(importlib.util.find_spec(m) for m in ("torch", "transformers", "tokenizers")),
     "the train extra (torch, transformers, tokenizers) is not installed")
os.environ["HF_HUB_OFFLINE"] = "1"

from trainers.training.fit import ELIDED, fit_example, render  # noqa: E402
from trainers.training.sft import tokenize_set  # noqa: E402
from trainers.models.tiny import build_tiny, load  # noqa: E402


def call(i: int, path: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "read_text_file", "arguments": {"path": path}}}]}


def long_example() -> dict[str, Any]:
    """Three reads with long results, then an answer: most tokens are what the tools returned."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coworker."},
                                  {"role": "user", "content": "Summarise the three reports."}]
    for i in range(3):
        msgs += [call(i, f"/r{i}.md"), {"role": "tool", "tool_call_id": f"c{i}", "content": f"report {i}: " + "lorem ipsum " * 120}]
    msgs.append({"role": "assistant", "content": "All three reports say lorem ipsum."})
    tools = [{"type": "function", "function": {"name": "read_text_file", "description": "Read a file.",
                                               "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
    return {"messages": msgs, "tools": tools}


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path: Path = build_tiny(tmp_path_factory.mktemp("tiny"), [long_example()], vocab_size=400)
    return load(path)[1]


def taught(ids: list[int], mask: list[int]) -> list[int]:
    return [t for t, m in zip(ids, mask) if m]


def test_an_example_over_the_budget_loses_old_tool_results_not_assistant_turns(tokenizer: Any) -> None:
    ex = long_example()
    ids, mask = render(tokenizer, ex["messages"], ex["tools"])
    budget = len(ids) * 2 // 3  # one long result elided is not enough, two are
    fitted = fit_example(tokenizer, ex, budget)
    assert fitted.fate == "elided" and len(fitted.input_ids) <= budget
    assert taught(fitted.input_ids, fitted.assistant_masks) == taught(ids, mask)  # every assistant token kept
    text = tokenizer.decode(fitted.input_ids)
    assert "You are a careful coworker." in text and "Summarise the three reports." in text
    assert "report 2:" in text and "report 0:" not in text  # the oldest went first, the latest stayed
    assert ELIDED.split(":")[0] in text and fitted.elided >= 1
    cut = fit_example(tokenizer, ex, budget, elide=False)  # the old way loses the final answer
    assert cut.fate == "cut" and len(taught(cut.input_ids, cut.assistant_masks)) < len(taught(ids, mask))


def test_what_fits_is_left_alone_and_what_cannot_is_cut_or_dropped(tokenizer: Any) -> None:
    ex = long_example()
    ids, mask = render(tokenizer, ex["messages"], ex["tools"])
    whole = fit_example(tokenizer, ex, len(ids))
    assert whole.fate == "whole" and whole.input_ids == ids and whole.elided == 0
    prompt = len(render(tokenizer, ex["messages"][:2], ex["tools"])[0])
    assert fit_example(tokenizer, ex, prompt).fate == "dropped"  # no assistant token within the budget
    counts = tokenize_set(tokenizer, [ex, ex], prompt, elide=True)
    assert (len(counts.rows), counts.dropped) == (0, 2) and "2 dropped" in counts.describe(prompt)
    with pytest.raises(ValueError, match="max_length must be positive"):
        fit_example(tokenizer, ex, 0)
