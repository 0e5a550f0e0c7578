"""SFT on teacher data: a tiny local Qwen2 model's assistant-token loss falls; LoRA and the CLI work."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest
from support import need
from typer.testing import CliRunner

need(all(importlib.util.find_spec(m) for m in ("torch", "transformers", "trl", "peft", "datasets")),
     "the train extra (torch, transformers, trl, peft, datasets) is not installed")
os.environ["HF_HUB_OFFLINE"] = "1"
import torch  # noqa: E402

from coworkenv.cli import app  # noqa: E402
from trainers.export.sft import to_hf  # noqa: E402
from workspace_sim.record import PolicyInfo  # noqa: E402
from trainers.training.episode import EpisodeRecorder  # noqa: E402
from trainers.training.sft import SFTDataError, read_sft_file, tokenize_examples, train_sft  # noqa: E402
from trainers.models.tiny import build_tiny, load  # noqa: E402
from trainers.training.toy import archive_environments  # noqa: E402

torch.set_num_threads(1)  # the tiny model is fastest single-threaded on a shared machine


def teacher_examples(n: int) -> list[dict[str, Any]]:
    out = []
    for env in archive_environments(n):
        rec = EpisodeRecorder(env, f"t-{env.id}", PolicyInfo(name="teacher"))
        rec.turn(None, env.solution())
        rec.turn("Done: archived.")
        out.append(to_hf(rec.finish("answered")))
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    examples = teacher_examples(4)
    return build_tiny(tmp_path_factory.mktemp("tiny"), examples, vocab_size=600), examples


def test_tiny_model_and_template(tiny: tuple[Path, list[dict[str, Any]]]) -> None:
    path, examples = tiny
    model, tok = load(path)
    assert model.config.model_type == "qwen2" and model.config.num_hidden_layers == 2
    assert model.config.hidden_size == 64 and "{% generation %}" in tok.chat_template.replace("{%- generation %}",
                                                                                           "{% generation %}")
    [row] = tokenize_examples(tok, examples[:1], 4096)
    taught = tok.decode([t for t, m in zip(row["input_ids"], row["assistant_masks"]) if m])
    # exactly the assistant turns are in the loss: the call, the answer, and their end-of-turn tokens
    assert '"name": "move_file"' in taught and "Done: archived." in taught and taught.count("<|im_end|>") == 2
    assert "Please archive" not in taught and "<tools>" not in taught and "moved" not in taught


def test_compact_copy_friendly_tokenizer(tmp_path: Path) -> None:
    examples = teacher_examples(4)
    path = build_tiny(tmp_path / "t", examples, vocab_size=600, compact_tools=True, isolate_spaces=True)
    _, tok = load(path)
    ex = examples[0]
    prompt = tok.apply_chat_template(ex["messages"], tools=ex["tools"], tokenize=False)
    # tools as one-line signatures (optional arguments marked), not JSON schemas; calls still Qwen-style
    assert "<tools>" in prompt and "\nmove_file(source, destination)\n" in prompt and '"parameters"' not in prompt
    assert '<tool_call>\n{"name": "move_file", "arguments": {"source": "/inbox/' in prompt
    # a word is one token sequence whether a space or a quote comes before it, so copying is token copying
    word = "archive"  # in the request after a space, and in tool-call paths after a quote or slash
    spaced, quoted = tok.encode(f"x {word}"), tok.encode(f'"{word}')
    assert spaced[-len(tok.encode(word)):] == quoted[-len(tok.encode(word)):] == tok.encode(word)
    assert tok.decode(tok.encode(prompt)) == prompt  # lossless round trip
    [row] = tokenize_examples(tok, examples[:1], 4096)
    full = build_tiny(tmp_path / "f", examples, vocab_size=600)
    [long_row] = tokenize_examples(load(full)[1], examples[:1], 4096)
    assert len(row["input_ids"]) < len(long_row["input_ids"]) and sum(row["assistant_masks"]) > 0


def test_sft_loss_falls(tiny: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    path, examples = tiny
    result = train_sft(path, examples, tmp_path / "out", max_steps=8, batch_size=2, learning_rate=3e-3)
    assert result.steps == 8 and len(result.losses) == 8
    assert sum(result.losses[-2:]) / 2 < sum(result.losses[:2]) / 2 - 0.3
    tuned, _ = load(tmp_path / "out")
    base, _ = load(path)
    assert any(not torch.equal(a, b) for a, b in zip(tuned.state_dict().values(), base.state_dict().values()))


def test_sft_with_lora_saves_merged_model(tiny: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    path, examples = tiny
    result = train_sft(path, examples, tmp_path / "lora", max_steps=3, batch_size=2, learning_rate=1e-2, lora=True)
    assert result.steps == 3
    merged, _ = load(tmp_path / "lora")  # a plain model again: adapters merged in
    assert not any("lora" in k for k in merged.state_dict())


def test_bad_sft_data_is_named(tmp_path: Path) -> None:
    f = tmp_path / "d.jsonl"
    f.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    with pytest.raises(SFTDataError, match=r"d.jsonl:1: no assistant message"):
        read_sft_file(f)
    f.write_text('{"messages": [{"role": "assistant", "tool_calls": [{"type": "function", "function": '
                 '{"name": "x", "arguments": "{}"}}]}]}\n')
    with pytest.raises(SFTDataError, match="--format hf"):
        read_sft_file(f)
    with pytest.raises(SFTDataError, match="no such file"):
        read_sft_file(tmp_path / "none.jsonl")


def test_cli_tiny_and_sft(tmp_path: Path) -> None:
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(e) + "\n" for e in teacher_examples(2)))
    runner = CliRunner()
    res = runner.invoke(app, ["train", "tiny", "--data", str(data), "--out", str(tmp_path / "m"), "--vocab", "500"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["train", "sft", "--model", str(tmp_path / "m"), "--data", str(data), "--out",
                              str(tmp_path / "s"), "--steps", "2", "--threads", "1", "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["steps"] == 2 and summary["examples"] == summary["used"] == 2 and summary["dropped"] == 0
    # With max_length just past the first assistant token every example is cut but kept; with
    # max_length before it every example is dropped: both are counted and said on the console.
    from trainers.training.sft import tokenize_set
    from trainers.models.tiny import load

    tok = load(tmp_path / "m")[1]
    first = min(tokenize_set(tok, teacher_examples(2), 100_000).rows[i]["assistant_masks"].index(1) for i in (0, 1))
    cut = tokenize_set(tok, teacher_examples(2), first + 1)
    assert cut.truncated >= 1 and cut.total == 2 and len(cut.rows) + cut.dropped == 2
    assert tokenize_set(tok, teacher_examples(2), first).dropped == 2
    res = runner.invoke(app, ["train", "sft", "--model", str(tmp_path / "m"), "--data", str(data), "--out",
                              str(tmp_path / "s2"), "--steps", "1", "--threads", "1", "--max-length", str(first + 1)])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith(f"trained 1 steps on {len(cut.rows)} of 2 examples (loss ")
    assert f"{cut.dropped} example(s) dropped" in res.stderr and f"{cut.truncated} cut at --max-length" in res.stderr
    res = runner.invoke(app, ["train", "sft", "--model", str(tmp_path / "m"), "--data", str(data), "--out",
                              str(tmp_path / "s3"), "--steps", "1", "--max-length", str(first)])
    assert res.exit_code == 2 and f"none of the 2 examples has an assistant token within max_length {first}" in res.stderr
    res = runner.invoke(app, ["train", "sft", "--model", str(tmp_path / "nope"), "--data", str(data)])
    assert res.exit_code == 2 and "not a saved model folder" in res.output
