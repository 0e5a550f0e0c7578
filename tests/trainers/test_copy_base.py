"""Copy-first pretraining: the copy generator's invariants, the call-part figures on a hand-checked case,
`coworkenv train base` on a tiny configuration, the RL table and the GPU profile's resolution."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import need
from typer.testing import CliRunner

from coworkenv.cli import app
from trainers.demo.learning import learning_rows, rl_rows
from trainers.demo.metrics import StudentScore
from trainers.report.calls import is_valid_json_call
from trainers.demo.rl import RLRun, summarize_runs
from trainers.demo.settings import RL_CREDITS, DemoSettings
from trainers.training.callspans import CallSpan, RenderedExample, span_hits, training_values
from trainers.training.copydata import (KINDS, MAX_CHARS, MIN_CHARS, SHORTEST_BOUND, copy_example, curriculum_chars,
                                        random_value, select_example)

HAS_TRAIN = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "trl", "datasets", "tokenizers"))


def _context(messages: list[dict[str, Any]], upto: int) -> str:
    return "\n".join((m.get("content") or "") for m in messages[:upto])


@given(seed=st.integers(0, 2**32), max_chars=st.integers(SHORTEST_BOUND, MAX_CHARS), share=st.floats(0, 1))
@settings(max_examples=150, deadline=None)
def test_every_call_value_is_a_verbatim_span_of_the_context_before_it(seed: int, max_chars: int, share: float) -> None:
    ex = copy_example(random.Random(seed), max_chars, share)
    messages = ex.example["messages"]
    names = {t["function"]["name"] for t in ex.example["tools"]}
    calls = 0
    for i, m in enumerate(messages):
        for c in m.get("tool_calls") or []:
            calls += 1
            assert c["function"]["name"] in names  # every call names a listed tool
            for v in c["function"]["arguments"].values():
                assert isinstance(v, str) and v in _context(messages, i), (v, _context(messages, i))
    assert calls >= 1 and messages[-1]["role"] == "assistant" and messages[-1]["content"]
    assert all(v in json.dumps(messages, ensure_ascii=False) for v in ex.values)
    # values drawn for this example respect the length bound (status words of select are constants)
    drawn = [v for v in ex.values if v not in ("Open", "In Progress", "Resolved", "Closed")]
    assert all(MIN_CHARS <= len(v) <= max_chars for v in drawn)


@given(seed=st.integers(0, 2**32), n=st.integers(2, 6), max_chars=st.integers(SHORTEST_BOUND, MAX_CHARS))
@settings(max_examples=100, deadline=None)
def test_selection_has_exactly_one_right_candidate(seed: int, n: int, max_chars: int) -> None:
    ex = select_example(random.Random(seed), max_chars, candidates=n)
    request = ex.example["messages"][1]["content"]
    listing = ex.example["messages"][3]["content"].splitlines()[1:]
    assert len(listing) == len(ex.candidates) == n and len(set(ex.candidates)) == n
    matching = [line.split(" ", 1)[0] for line in listing if f'"{line.split("] ", 1)[1]}"' in request]
    assert matching == [ex.answer]  # one candidate's title is the one the request quotes
    update = ex.example["messages"][4]["tool_calls"][0]["function"]
    assert update["name"] == "update_item" and update["arguments"]["key"] == ex.answer


@given(seed=st.integers(0, 2**32), kind=st.sampled_from(KINDS), max_chars=st.integers(SHORTEST_BOUND, 60))
@settings(max_examples=150, deadline=None)
def test_values_have_their_length(seed: int, kind: str, max_chars: int) -> None:
    v = random_value(random.Random(seed), kind, max_chars)  # type: ignore[arg-type]
    assert MIN_CHARS <= len(v) <= max_chars and v == v.strip()


def test_generator_is_deterministic_and_curriculum_rises() -> None:
    a = [copy_example(random.Random(7)).example for _ in range(3)]
    b = [copy_example(random.Random(7)).example for _ in range(3)]
    assert a == b
    bounds = [curriculum_chars(p / 10) for p in range(11)]
    assert bounds == sorted(bounds) and bounds[0] == 8 and bounds[5] == bounds[-1] == MAX_CHARS
    for bad in (lambda: random_value(random.Random(0), "colour", 10),  # type: ignore[arg-type]
                lambda: random_value(random.Random(0), "name", 4),
                lambda: curriculum_chars(0.5, ramp=2.0),
                lambda: copy_example(random.Random(0), select_share=1.5)):
        with pytest.raises(ValueError):
            bad()


def test_span_hits_on_a_hand_checked_case() -> None:
    # tokens: 0 1 2 3 4 5 6; a tool name at [2], a copied value over [3, 4], a constant at [6]
    ids = [10, 11, 12, 13, 14, 15, 16]
    rendered = RenderedExample(ids, [CallSpan("tool_name", "move", 0, 1, [2]),
                                     CallSpan("copied_unseen", "ab", 0, 1, [3, 4]),
                                     CallSpan("constant", "x", 0, 1, [6])])
    perfect = span_hits(ids, rendered)
    assert (perfect["tool_name"].right, perfect["copied_unseen"].right, perfect["constant"].right) == (1, 1, 1)
    one_wrong = span_hits([10, 11, 12, 13, 99, 15, 16], rendered)  # the value's second token is wrong
    u = one_wrong["copied_unseen"]
    assert (u.n, u.right, u.tokens, u.tokens_right, u.accuracy, u.token_accuracy) == (1, 0, 2, 1, 0.0, 0.5)
    assert one_wrong["copied_seen"].n == 0 and one_wrong["copied_seen"].accuracy is None
    ex = {"messages": [{"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "arguments": {"a": "x", "b": ["y", 3], "c": {"d": 1}}}}]}]}
    assert training_values([ex]) == {"x", "y", "3"}
    assert is_valid_json_call("move_file", "Error (not_found): no such file")
    assert not is_valid_json_call("unparsed_tool_call", "Error (unknown_tool): ...")
    assert not is_valid_json_call("move_file", "Error (invalid_arguments): the arguments of move_file are not valid JSON")


@pytest.fixture(scope="module")
def tiny_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    need(HAS_TRAIN, "the train extra (torch, transformers, trl, datasets, tokenizers) is not installed")
    from trainers.models.tiny import build_tokenizer, corpus_from_examples
    from trainers.training.copydata import copy_examples

    return build_tokenizer(corpus_from_examples([e.example for e in copy_examples(0, 30)], True), 400, True, True)


def test_call_spans_categorise_the_teacher_calls(tiny_tokenizer: Any) -> None:
    from trainers.training.callspans import call_spans

    ex = {"messages": [
        {"role": "system", "content": "You act for Ada."},
        {"role": "user", "content": "Move /inbox/plan.txt to the archive, please."},
        {"role": "assistant", "tool_calls": [{"type": "function", "id": "c0", "function": {
            "name": "move_file", "arguments": {"source": "/inbox/plan.txt", "destination": "/archive/plan.txt"}}}]},
        {"role": "tool", "content": "moved", "tool_call_id": "c0", "name": "move_file"},
        {"role": "assistant", "tool_calls": [{"type": "function", "id": "c1", "function": {
            "name": "set_value", "arguments": {"key": "/inbox/plan.txt", "value": "done"}}}]},
        {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "set_value"},
        {"role": "assistant", "content": "Done."}], "tools": []}
    rendered = call_spans(tiny_tokenizer, ex, seen={"/inbox/plan.txt"})
    got = [(s.part, s.text) for s in rendered.spans]
    assert got == [("tool_name", "move_file"), ("copied_seen", "/inbox/plan.txt"), ("constant", "/archive/plan.txt"),
                   ("tool_name", "set_value"), ("copied_seen", "/inbox/plan.txt"), ("constant", "done")]
    assert rendered.missing == 0
    text = tiny_tokenizer.decode(rendered.input_ids)
    for s in rendered.spans:  # the tokens of a part decode to text that holds the part
        assert s.text in tiny_tokenizer.decode([rendered.input_ids[t] for t in s.tokens]) and s.text in text
    # every token predicted right: every part right
    scores = span_hits(rendered.input_ids, rendered)
    assert scores["copied_seen"].right == 2 and scores["constant"].right == 2 and scores["tool_name"].right == 2


def test_train_base_cli_on_a_tiny_config(tmp_path: Path) -> None:
    need(HAS_TRAIN, "the train extra (torch, transformers, trl, datasets, tokenizers) is not installed")
    out = tmp_path / "base"
    result = CliRunner().invoke(app, ["train", "base", "--tiny", "--steps", "3", "--out", str(out), "--threads", "1",
                                      "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output.strip().splitlines()[-1])
    manifest = json.loads((out / "manifest.json").read_text())
    assert printed["steps"] == manifest["steps"] == 3 and manifest["stopped_by"] == "steps"
    assert manifest["tokens"] > manifest["assistant_tokens"] > 0 and manifest["torch_threads"] == 1
    assert [p["step"] for p in manifest["curve"]] == [0, 2, 3]
    assert all(0.0 <= p["copy_accuracy"] <= 1.0 and p["values"] > 0 for p in manifest["curve"])
    assert manifest["greedy"]["values"] > 0 and 0 <= manifest["greedy"]["values_right"] <= manifest["greedy"]["values"]
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        assert (out / name).is_file()
    again = CliRunner().invoke(app, ["train", "base", "--tiny", "--steps", "3", "--out", str(tmp_path / "b2"),
                                     "--threads", "1", "--json"])
    second = json.loads((tmp_path / "b2" / "manifest.json").read_text())
    assert again.exit_code == 0 and second["curve"] == [  # same seed, steps, one thread: the same curve
        {**p, "seconds": q["seconds"]} for p, q in zip(manifest["curve"], second["curve"])]
    bad = CliRunner().invoke(app, ["train", "base", "--out", str(tmp_path / "x"), "--steps", "0"])
    assert bad.exit_code == 2 and "--steps" in bad.output and not (tmp_path / "x").exists()

    # --resume goes on from the base: steps, tokens, time and the curve continue; the base itself is kept
    before = (out / "model.safetensors").read_bytes()
    more = CliRunner().invoke(app, ["train", "base", "--tiny", "--steps", "2", "--resume", str(out), "--out",
                                    str(tmp_path / "b3"), "--threads", "1", "--json"])
    assert more.exit_code == 0, more.output
    resumed = json.loads((tmp_path / "b3" / "manifest.json").read_text())
    assert resumed["steps"] == 5 and [p["step"] for p in resumed["curve"]] == [0, 2, 3, 4, 5]
    assert resumed["curve"][:3] == manifest["curve"] and resumed["tokens"] > manifest["tokens"]
    assert resumed["settings"] == manifest["settings"] and resumed["resumed"][0]["from_step"] == 3
    assert resumed["train_seconds"] >= manifest["train_seconds"] and (out / "model.safetensors").read_bytes() == before
    for args, message in ((["--resume", str(tmp_path / "x")], "not a copy-pretrained base"),
                          (["--resume", str(out), "--out", str(out)], "different folders")):
        refused = CliRunner().invoke(app, ["train", "base", "--tiny", "--steps", "2", "--out", str(tmp_path / "b4"),
                                           *args])
        assert refused.exit_code == 2 and message in refused.output, refused.output


def test_rl_table_mean_and_spread() -> None:
    runs = [RLRun("outcome", s, 0.1, succ, score, 1, 2) for s, succ, score in ((0, 0.0, 0.2), (1, 0.5, 0.4),
                                                                               (2, 1.0, 0.6))]
    runs.append(RLRun("partial", 0, 0.3, 0.25, 0.5, 0, 0))
    rows = summarize_runs(runs)
    assert [r.credit for r in rows] == ["outcome", "partial"]
    assert (rows[0].seeds, rows[0].success_mean, rows[0].success_sd) == (3, 0.5, 0.5)
    assert rows[0].score_mean == pytest.approx(0.4) and rows[0].score_sd == pytest.approx(0.2)
    assert (rows[1].seeds, rows[1].success_sd) == (1, 0.0)
    table = rl_rows({"heldout": 4, "sft_success": 0.25, "sft_score": 0.5, "rows": [r.__dict__ for r in rows]})
    assert table[1] == ("outcome", "3", "50.0% +- 50.0%", "0.400 +- 0.200", "0.100") and len(table) == 3


def test_learning_rows_quote_counts() -> None:
    parts = {"copied_unseen": {"n": 4, "right": 3}, "tool_name": {"n": 2, "right": 2}}
    after = StudentScore(0.5, 0.5, 0.25, 4, 3, 1.0, valid_json_calls=4, episodes=2, parts=parts)
    rows = dict((r[0], r[1:]) for r in learning_rows(None, after))
    assert rows["copied values never seen in training right (teacher-forced)"] == ("-", "3/4 (75%)")
    assert rows["success"] == ("-", "1/2 (50%)") and rows["accepted calls"] == ("-", "3/4 (75%)")
    assert rows["constant values right (teacher-forced)"] == ("-", "0/0")


def test_gpu_profile_resolves_on_cpu() -> None:
    s = DemoSettings.for_profile("gpu")
    assert s.profile == "gpu" and s.base == "rebuild" and s.device == "auto" and s.steps > 0 and s.minutes > 0
    assert s.hidden > DemoSettings().hidden and s.train_envs > DemoSettings().train_envs
    assert s.resolved_device(cuda_available=False) == "cpu" and s.resolved_device(cuda_available=True) == "cuda"
    assert DemoSettings.for_profile("gpu", device="cpu").resolved_device(cuda_available=True) == "cpu"
    b = s.base_settings()
    assert (b.hidden, b.layers, b.vocab_size, b.steps) == (s.hidden, s.layers, s.vocab_size, s.base_steps)
    assert DemoSettings.for_profile("quick").base_settings().steps == 3
    assert DemoSettings.for_profile("cpu", steps=None) == DemoSettings()
    with pytest.raises(ValueError, match="unknown profile"):
        DemoSettings.for_profile("tpu")
    assert len(RL_CREDITS) == 4


@pytest.mark.parametrize("args, message", [
    (["--profile", "tpu"], "unknown profile 'tpu'"),
    (["--quick", "--profile", "gpu"], "contradict"),
    (["--rebuild-base", "--base", "scratch"], "contradict"),
    (["--device", "tpu"], "device"),
])
def test_bad_demo_profile_options(args: list[str], message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "o"), *args])
    assert result.exit_code == 2 and message in result.output and not (tmp_path / "o").exists()


@pytest.mark.parametrize("right, below", [(1, True), (4, False)])
def test_verdict_quotes_the_novel_copy_target(right: int, below: bool) -> None:
    from trainers.demo.pipeline import DemoSummary

    before = StudentScore(0.0, 0.0, 0.0, 0, 0, 5.0, parts={"copied_unseen": {"n": 4, "right": 0}})
    after = StudentScore(0.0, 0.0, 0.1, 2, 1, 3.0, parts={"copied_unseen": {"n": 4, "right": right}})
    verdict = DemoSummary(settings={}, out="x", environments={"heldout": 2}, before=before, after=after).verdict()
    assert f"never seen in training right (teacher-forced) 0/4 -> {right}/4" in verdict
    assert ("below the 80% novel-copy target" in verdict) is below


def test_the_shipped_base_is_what_its_manifest_says() -> None:
    need(HAS_TRAIN, "the train extra (torch, transformers, trl, datasets, tokenizers) is not installed")
    from trainers.demo.settings import SHIPPED_BASE
    from trainers.models.tiny import load

    manifest = json.loads((SHIPPED_BASE / "manifest.json").read_text())
    model, tokenizer = load(SHIPPED_BASE)
    s = manifest["settings"]
    assert (model.config.hidden_size, model.config.num_hidden_layers) == (s["hidden"], s["layers"])
    assert sum(p.numel() for p in model.parameters()) == manifest["parameters"] and len(tokenizer) == manifest["vocab"]
    assert manifest["steps"] == manifest["curve"][-1]["step"] and manifest["tokens"] == manifest["curve"][-1]["tokens"]
    # its chat template is the compact one the demo uses, and a copied value is the same tokens in a call
    text = tokenizer.apply_chat_template([{"role": "user", "content": "key QX-4471"}], tokenize=False,
                                         tools=[{"type": "function", "function": {"name": "f", "parameters": {
                                             "type": "object", "properties": {"key": {"type": "string"}}}}}])
    assert "f(key?)" in text


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.floats(0.0, 0.9))
def test_sft_mix_keeps_every_teacher_example_and_adds_the_share_of_copies(n: int, share: float) -> None:
    from trainers.demo.pipeline import sft_mix

    teacher = [{"messages": [{"role": "assistant", "content": str(i)}], "i": i} for i in range(n)]
    mixed = sft_mix(teacher, DemoSettings(copy_share=share))
    assert [ex for ex in mixed if "i" in ex] == teacher  # all of them, in order
    copies = [ex for ex in mixed if "i" not in ex]
    assert len(copies) == round(n * share / (1 - share))
    assert all(ex["messages"][0]["role"] == "system" and ex["tools"] for ex in copies)
    assert sft_mix(teacher, DemoSettings(copy_share=share)) == mixed  # seeded


def test_demo_copy_share_is_checked() -> None:
    with pytest.raises(ValueError):
        DemoSettings(copy_share=1.0)
    result = CliRunner().invoke(app, ["demo", "--copy-share", "1.5"])
    assert result.exit_code == 2 and "copy-share" in result.output


def test_the_demo_rebuilds_the_shipped_base_with_the_shipped_settings() -> None:
    """`demo --rebuild-base` and the documented `train base` command build what is shipped (the time guard
    aside, which did not fire: the manifest says the steps stopped it)."""
    from trainers.demo.settings import SHIPPED_BASE

    manifest = json.loads((SHIPPED_BASE / "manifest.json").read_text())
    rebuilt = DemoSettings().base_settings().model_dump(mode="json")
    assert {k: v for k, v in rebuilt.items() if k != "minutes"} == \
           {k: v for k, v in manifest["settings"].items() if k != "minutes"}
    assert manifest["stopped_by"] == "steps" and manifest["steps"] == rebuilt["steps"]
