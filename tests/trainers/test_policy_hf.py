"""The `hf` policy with a tiny local Qwen2 model (built here, no downloads): chat template, tokens, parsing."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from support import need
from episode_helpers import multi_turn_spec

from trainers.episodes.policies import PolicyConfigError, make_policy
from trainers.episodes.policies.hf import parse_tool_text
from trainers.episodes.prepared import EpisodeLimits
from trainers.episodes.runner import run_episode


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need(importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("trl") is not None,
         "the train extra (torch, transformers, trl) is not installed")
    from trainers.models.tiny import build_tiny

    rec = run_episode(multi_turn_spec(), make_policy("teacher"))
    examples = [{"messages": rec.messages, "tools": rec.header.tools}]
    return build_tiny(tmp_path_factory.mktemp("tiny"), examples, vocab_size=600, hidden=32, layers=1)


def test_hf_policy_plays_an_episode_and_records_tokens_and_logprobs(tiny_model: Path) -> None:
    policy = make_policy("hf", path=str(tiny_model), max_new_tokens=12)
    rec = run_episode(multi_turn_spec(), policy, seed=1, limits=EpisodeLimits(max_turns=3))
    assert rec.complete and rec.header.policy.name == f"hf:{tiny_model}"
    assert rec.final.stop_reason in ("answered", "max_tokens", "max_turns")
    assert rec.final.tokens, "the hf policy records its tokens"
    for t in rec.final.tokens:
        assert 0 < len(t.completion_ids) <= 12 and len(t.logprobs) == len(t.completion_ids)
        assert all(lp <= 0.0 for lp in t.logprobs) and t.prompt_ids
    # the prompt is the chat template's rendering of the transcript with the tools
    from trainers.models.tiny import load

    _, tok = load(tiny_model)
    text = tok.decode(rec.final.tokens[0].prompt_ids)
    assert "<tools>" in text and "move_file" in text and multi_turn_spec().request in text


def test_greedy_generation_is_reproducible(tiny_model: Path) -> None:
    a = run_episode(multi_turn_spec(), make_policy("hf", path=str(tiny_model), max_new_tokens=8),
                    limits=EpisodeLimits(max_turns=2))
    b = run_episode(multi_turn_spec(), make_policy("hf", path=str(tiny_model), max_new_tokens=8),
                    limits=EpisodeLimits(max_turns=2))
    assert [t.completion_ids for t in a.final.tokens] == [t.completion_ids for t in b.final.tokens]


@pytest.mark.parametrize("text,content,calls", [
    ('I will move it.<tool_call>\n{"name": "move_file", "arguments": {"source": "/a", "destination": "/b"}}\n'
     "</tool_call><|im_end|>", "I will move it.", [("move_file", {"source": "/a", "destination": "/b"})]),
    ('<tool_call>{"name": "list_directory", "arguments": {"path": "/"}}</tool_call>'
     '<tool_call>{"name": "move_file", "arguments": {"source": "/x"', None,
     [("list_directory", {"path": "/"}), ("move_file", '{"name": "move_file", "arguments": {"source": "/x"')]),
    ("All done.<|im_end|>", "All done.", []),
    ('<tool_call>["not", "an object"]</tool_call>', None, [("unparsed_tool_call", '["not", "an object"]')]),
])
def test_tool_calls_are_parsed_from_text_and_malformed_ones_keep_their_raw_text(
        text: str, content: str | None, calls: list[Any]) -> None:
    got_content, got = parse_tool_text(text)
    assert got_content == content
    assert [(c.name, c.arguments) for c in got] == calls


def test_hf_policy_needs_an_existing_model_folder(tmp_path: Path) -> None:
    with pytest.raises(PolicyConfigError, match="path of a local model folder"):
        make_policy("hf")
    with pytest.raises(PolicyConfigError, match="not a saved model folder"):
        make_policy("hf", path=str(tmp_path))
