"""Vision students end to end, on real `media_evidence` episodes: the OpenAI policy sends the images tool results
returned as image parts (over HTTP to the scripted server); a tiny Qwen2-VL built from a config reads the SFT
export's multimodal format with its processor, trains on it with TRL (loss falls, pixels matter), is run by the
hf policy on an episode whose tool results carry images, and gets the text student's teacher-forced figures."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted_openai import Message, ScriptedOpenAI, ToolCall, ToolCalls
from support import need

from synth.procedural import generate
from synth.spec import EnvironmentSpec
from trainers.episodes.policies import make_policy
from trainers.episodes.runner import run_episode
from trainers.episodes.session import EpisodeSession
from trainers.episodes.turns import AgentTurn, PolicyCall
from trainers.episodes.policies.openai_policy import to_openai_messages
from trainers.export.sft import to_hf
from trainers.media_parts import embed_images, policy_view, with_image_parts
from workspace_sim.media import MediaPart, placeholder

CAP = "media_evidence"


def spec(template: str, seed: int) -> EnvironmentSpec:
    return generate(CAP, seed, template=template)


def media_paths(s: EnvironmentSpec) -> list[str]:
    return [c.args["path"] for c in s.reference.calls() if c.tool == "read_media_file"]


def file_bytes(s: EnvironmentSpec, path: str) -> bytes:
    for f in s.initial["files"]["files"]:
        if f["path"] == path:
            return base64.b64decode(f["content"])
    raise KeyError(path)


def _openai_run(images: str) -> tuple[ScriptedOpenAI, EnvironmentSpec, str]:
    s = spec("receipts_into_expenses", 1)
    path = media_paths(s)[0]
    server = ScriptedOpenAI([ToolCalls((ToolCall("read_media_file", json.dumps({"path": path})),)),
                             Message("I read the receipt.")]).start()
    try:
        policy = make_policy("openai", model="vl", base_url=server.base_url, api_key="k", images=images)
        run_episode(s, policy, episode_id="vision-openai")
    finally:
        server.close()
    return server, s, path


def _image_urls(content: Any) -> list[str]:
    return [p["image_url"]["url"] for p in content if p.get("type") == "image_url"] if isinstance(content, list) else []


def test_the_openai_policy_sends_a_tool_results_image_as_an_image_part_in_a_user_message() -> None:
    server, s, path = _openai_run("user")
    sent = server.completion_requests[1].messages
    tool_at = next(i for i, m in enumerate(sent) if m["role"] == "tool")
    tool, follow = sent[tool_at], sent[tool_at + 1]
    assert isinstance(tool["content"], str) and "[image 1: attached in the next user message]" in tool["content"]
    assert follow["role"] == "user" and follow["content"][0]["type"] == "text"
    (url,) = _image_urls(follow["content"])
    head, data = url.split(",", 1)
    assert head == "data:image/png;base64" and base64.b64decode(data) == file_bytes(s, path)
    assert not _image_urls(server.completion_requests[0].messages[-1].get("content"))  # the request has none


def test_the_openai_policy_can_keep_images_in_the_tool_message_or_send_none() -> None:
    server, s, path = _openai_run("tool")
    sent = server.completion_requests[1].messages
    tool = next(m for m in sent if m["role"] == "tool")
    (url,) = _image_urls(tool["content"])
    assert base64.b64decode(url.split(",", 1)[1]) == file_bytes(s, path)
    assert sum(m["role"] == "user" for m in sent) == 1
    server, _, _ = _openai_run("off")
    sent = server.completion_requests[1].messages
    assert not any(_image_urls(m.get("content")) for m in sent)
    assert next(m for m in sent if m["role"] == "tool")["content"].startswith("[image: ")  # the text placeholder


def test_a_bad_images_setting_is_refused_by_name() -> None:
    from trainers.episodes.policies import PolicyConfigError

    with pytest.raises(PolicyConfigError, match="images must be one of user, tool, off"):
        make_policy("openai", model="vl", base_url="http://127.0.0.1:9/v1", api_key="k", images="inline")


# ----- the tiny vision-language student (needs the train extra) -----

def _train_extra() -> bool:
    return all(importlib.util.find_spec(m) for m in ("torch", "transformers", "trl", "datasets"))


@pytest.fixture(scope="module")
def vl() -> dict[str, Any]:
    """Teacher episodes of three media templates exported as SFT examples, and a tiny VL student built on them."""
    need(_train_extra(), "the train extra (torch, transformers, trl, datasets) is not installed")
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch

    torch.set_num_threads(1)
    from trainers.models.tiny_vl import build_tiny_vl

    examples = []
    for template in ("receipts_into_expenses", "scanned_form_to_database", "chart_answer_from_report"):
        for seed in (0, 1):
            rec = run_episode(spec(template, seed), make_policy("teacher"))
            assert rec.passed
            examples.append(to_hf(rec))
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="vision-student-"))
    path = build_tiny_vl(root / "base", examples, vocab_size=600, hidden=32, layers=1, compact_tools=True)
    return {"examples": examples, "train": examples[:4], "heldout": examples[4:], "base": path, "root": root}


def test_the_processor_reads_the_exports_image_parts_as_image_tokens(vl: dict[str, Any]) -> None:
    from trainers.models.tiny_vl import load_vl
    from trainers.training.vision_sft import encode_example, expanded_text, with_images

    model, processor = load_vl(vl["base"])
    assert type(model).__name__ == "Qwen2VLForConditionalGeneration"
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    for ex in vl["examples"]:
        text = processor.apply_chat_template(with_images(ex)[0], tools=ex["tools"], tokenize=False)
        assert text.count("<|vision_start|><|image_pad|><|vision_end|>") == len(ex["images"]) > 0
        for c in (c for m in ex["messages"] for c in m.get("tool_calls") or []):  # tool calls rendered the Qwen way
            assert f'<tool_call>\n{{"name": "{c["function"]["name"]}", "arguments": ' in text
        enc = encode_example(processor, ex, 1 << 20)
        assert enc is not None
        per_image = [int(g.prod()) // 4 for g in enc.image_grid_thw]
        assert enc.input_ids.count(pad) == sum(per_image) == sum(enc.mm_token_type_ids)
        assert all(0 < n <= 64 for n in per_image)  # the pixel budget: at most 64 tokens an image
        assert any(enc.assistant_masks) and not any(m for m, t in zip(enc.assistant_masks, enc.mm_token_type_ids)
                                                    if t)  # no loss on image tokens
        ids = processor.tokenizer(expanded_text(processor, ex), add_special_tokens=False)["input_ids"]
        assert ids == enc.input_ids


def test_bad_images_in_sft_data_are_refused_naming_the_example() -> None:
    need(_train_extra(), "the train extra is not installed")
    from trainers.training.sft import SFTDataError
    from trainers.training.vision_sft import with_images

    good = {"messages": [{"role": "tool", "content": [{"type": "image"}]}], "images": ["data:image/png;base64,AAAA"]}
    with pytest.raises(SFTDataError, match=r"example 3: images\[0\]: the image does not decode"):
        with_images(good, "example 3")
    with pytest.raises(SFTDataError, match="must be a data:image"):
        with_images({**good, "images": ["http://x/y.png"]}, "ex")
    with pytest.raises(SFTDataError, match="more image parts than the 0 images"):
        with_images({**good, "images": []}, "ex")


@pytest.mark.slow
def test_sft_with_images_lowers_the_loss_and_the_figures_are_reported(vl: dict[str, Any]) -> None:
    import torch

    from trainers.models.tiny_vl import load_vl
    from trainers.training.vision_sft import encode_example, train_vision_sft, vision_figures

    before = vision_figures(*load_vl(vl["base"]), vl["heldout"], vl["train"])
    result = train_vision_sft(vl["base"], vl["train"], vl["root"] / "student", max_steps=10, batch_size=2,
                              learning_rate=3e-3)
    assert result.steps == 10 and result.used == 4 and result.dropped == 0
    first, last = sum(result.losses[:2]) / 2, sum(result.losses[-2:]) / 2
    assert last < first - 0.5, result.losses
    model, processor = load_vl(result.output_dir)
    after = vision_figures(model, processor, vl["heldout"], vl["train"])
    assert after["heldout_loss"] < before["heldout_loss"] - 0.3
    parts = after["parts"]
    assert parts["tool_name"]["n"] > 0 and set(parts) >= {"constant", "copied_seen", "copied_unseen", "unlocated"}
    # the pixels reach the model: other pixel values give other logits on the same tokens
    enc = encode_example(processor, vl["heldout"][0], 1 << 20)
    assert enc is not None and enc.pixel_values is not None
    kwargs = {"input_ids": torch.tensor([enc.input_ids]), "mm_token_type_ids": torch.tensor([enc.mm_token_type_ids]),
              "image_grid_thw": enc.image_grid_thw}
    with torch.no_grad():
        real = model(pixel_values=enc.pixel_values, **kwargs).logits
        blank = model(pixel_values=torch.zeros_like(enc.pixel_values), **kwargs).logits
    assert not torch.allclose(real[0, -20:], blank[0, -20:])


def test_vision_lora_trains_the_language_model_leaves_the_vision_tower_and_saves_merged(vl: dict[str, Any]) -> None:
    import torch

    from trainers.models.tiny_vl import load_vl
    from trainers.training.vision_sft import train_vision_sft

    result = train_vision_sft(vl["base"], vl["train"], vl["root"] / "lora", max_steps=8, batch_size=2,
                              learning_rate=1e-2, lora=True, lora_r=4)
    assert result.steps == 8 and result.losses[-1] < result.losses[0], result.losses
    base, _ = load_vl(vl["base"])
    merged, _ = load_vl(result.output_dir)  # a plain Qwen2-VL again: the adapters merged in
    after = merged.state_dict()
    assert not any("lora" in k for k in after)
    changed = {k for k, v in base.state_dict().items() if not torch.equal(v, after[k])}
    assert changed and all("language_model" in k and k.rsplit(".", 2)[-2] in ("q_proj", "k_proj", "v_proj", "o_proj")
                           for k in changed), sorted(changed)[:5]  # the vision tower and the rest: untouched


def test_the_hf_policy_runs_the_vision_student_with_the_images_tool_results_returned(vl: dict[str, Any]) -> None:
    from trainers.episodes.policies.hf import HFPolicy
    from trainers.models.tiny_vl import load_vl

    s = spec("scanned_form_to_database", 0)
    policy = HFPolicy(vl["base"], max_new_tokens=4)
    assert policy.sees_images
    session = EpisodeSession(s, policy.info(), episode_id="vision-hf")
    policy.start(session.context())
    pdf = next(c.args for c in s.reference.calls() if c.tool == "read_pdf")  # a scan: its page is an image
    session.step(AgentTurn(calls=[PolicyCall("read_pdf", pdf, "c0")]))
    shown = session.messages_with_images()
    images = [p for m in shown if isinstance(m.get("content"), list) for p in m["content"] if p["type"] == "image"]
    assert images and all(p["image"].startswith("data:image/") for p in images)
    assert not any(isinstance(m.get("content"), list) for m in session.messages)  # the record's transcript stays text
    turn = policy.act(shown, session.tools)
    assert turn.error is None and turn.tokens is not None and len(turn.tokens.completion_ids) <= 4
    _, processor = load_vl(vl["base"])
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    grids = processor.image_processor(images=[_pil(p["image"]) for p in images], return_tensors="pt")["image_grid_thw"]
    assert turn.tokens.prompt_ids.count(pad) == sum(int(g.prod()) // 4 for g in grids)
    session.close()

    class ReadsThenStudent:
        """The scan read by a scripted first turn, every later turn the student's: what does the runner show it?"""

        sees_images = True
        shown: list[list[dict[str, Any]]] = []

        def info(self) -> Any:
            return policy.info()

        def start(self, context: Any) -> None:
            policy.start(context)

        def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
            if not self.shown:
                self.shown.append(messages)
                return AgentTurn(calls=[PolicyCall("read_pdf", pdf)])
            self.shown.append(messages)
            return policy.act(messages, tools)

    agent = ReadsThenStudent()
    rec = run_episode(s, agent, episode_id="vision-hf-run")
    assert rec.final is not None and len(agent.shown) >= 2
    later = [p for m in agent.shown[1] if isinstance(m.get("content"), list) for p in m["content"]]
    assert [p["image"] for p in later if p["type"] == "image"] == [p["image"] for p in images]
    assert not any(isinstance(m.content, list) for m in rec.final.messages)


def _pil(url: str) -> Any:
    from trainers.training.vision_sft import decode_image

    return decode_image(url, "test")


@pytest.mark.slow
def test_the_cli_builds_and_trains_a_vision_student_and_prints_the_figures(vl: dict[str, Any], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(e) + "\n" for e in vl["train"]))
    held = tmp_path / "heldout.jsonl"
    held.write_text("".join(json.dumps(e) + "\n" for e in vl["heldout"]))
    runner = CliRunner()
    r = runner.invoke(app, ["train", "tiny", "--vision", "--data", str(data), "--out", str(tmp_path / "m"),
                            "--vocab", "600", "--hidden", "32", "--layers", "1"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["train", "sft", "--vision", "--model", str(tmp_path / "m"), "--data", str(data),
                            "--eval", str(held), "--out", str(tmp_path / "s"), "--steps", "3", "--lr", "3e-3",
                            "--threads", "1"])
    assert r.exit_code == 0, r.output
    assert "teacher-forced figures on the held-out (--eval) examples, before -> after" in r.output
    assert "tool names right (teacher-forced)" in r.output
    r = runner.invoke(app, ["train", "sft", "--vision", "--model", str(vl["root"]), "--data", str(data)])
    assert r.exit_code == 2 and "not a vision-language model folder" in r.output
    r = runner.invoke(app, ["train", "rl", "--model", str(tmp_path / "s"), "--envs", "toy:2", "--out",
                            str(tmp_path / "rl"), "--rollout", "choice", "--group-size", "2", "--max-turns", "2",
                            "--threads", "1"])  # GRPO trains a vision folder too (tests/trainers/test_vision_grpo.py)
    assert r.exit_code == 0 and "GRPO: 1 step(s)" in r.output, r.output


def test_the_demos_vision_option_in_each_profile_and_its_refusals() -> None:
    from trainers.demo.settings import DemoSettings

    gpu = DemoSettings.for_profile("gpu", vision=True)
    assert gpu.vision and gpu.capabilities == ("media_evidence",) and gpu.base == "scratch"
    assert gpu.device == "auto" and gpu.hidden == 256 and gpu.vision_max_pixels == 28 * 28 * 256
    assert DemoSettings.for_profile("gpu").base == "rebuild"  # the text student's profile is unchanged
    assert DemoSettings.for_profile("gpu", vision=True, train_envs=50).train_envs == 50  # a given value wins
    assert DemoSettings.for_profile("quick", vision=True).capabilities == ("media_evidence",)
    with pytest.raises(ValueError, match="starts from random weights"):
        DemoSettings.for_profile("gpu", vision=True, base="rebuild")
    assert DemoSettings.for_profile("cpu", vision=True, rl=True).rl  # GRPO trains vision students too


@pytest.mark.slow
def test_the_quick_demo_trains_a_vision_student_and_reports_its_figures(tmp_path: Path) -> None:
    need(_train_extra(), "the train extra is not installed")
    from typer.testing import CliRunner

    from coworkenv.cli import app

    out = tmp_path / "demo"
    r = CliRunner().invoke(app, ["demo", "--quick", "--vision", "--rl", "--out", str(out), "--threads", "1"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    # --rl: every credit assignment's GRPO runs from the SFT'd vision student and saves a vision folder
    from trainers.models.tiny_vl import is_vision_model

    assert [row["credit"] for row in summary["rl"]["rows"]] == ["outcome", "partial", "MT-GRPO turn",
                                                                "GiGPO step groups"]
    assert all(is_vision_model(folder) for folder in (out / "model" / "rl").iterdir())
    assert summary["student"]["architecture"] == "Qwen2VLForConditionalGeneration" and summary["student"]["vision"]
    assert any(ex.get("images") for ex in map(json.loads, (out / "sft" / "train.jsonl").read_text().splitlines()))
    for when in ("before", "after"):
        assert summary[when]["heldout_loss"] is not None and summary[when]["parts"]["tool_name"]["n"] > 0
    assert summary["after"]["heldout_loss"] < summary["before"]["heldout_loss"]
    assert "tool names right (teacher-forced)" in r.output and "tiny Qwen2-VL" in r.output


_PARTS = [MediaPart("image", "image/png", f"p{i}.png", 10 + i, f"{i:064x}", base64.b64encode(bytes([i])).decode())
          for i in range(3)]


@given(st.lists(st.lists(st.one_of(st.integers(0, 2), st.text("ab \n", max_size=6)), max_size=5), min_size=1,
                max_size=4))
@settings(max_examples=150, deadline=None)
def test_image_parts_keep_every_image_in_order_and_the_text_around_them(tool_results: list[list[Any]]) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    expected: list[str] = []
    for pieces in tool_results:
        text = "".join(placeholder(_PARTS[p]) if isinstance(p, int) else p for p in pieces)
        expected += [f"data:image/png;base64,{_PARTS[p].data}" for p in pieces if isinstance(p, int)]
        messages += [{"role": "assistant", "content": None, "tool_calls": []}, {"role": "tool", "content": text}]
    shown = policy_view(messages, [])  # no events: nothing is an image, the transcript is unchanged
    assert shown == messages
    images = {placeholder(p): p for p in _PARTS}
    parts, urls = with_image_parts(messages, images)
    assert urls == expected
    viewed = embed_images(parts, urls)
    assert [p["image"] for m in viewed if isinstance(m["content"], list) for p in m["content"]
            if p["type"] == "image"] == expected
    by_url = {f"data:image/png;base64,{p.data}": placeholder(p) for p in _PARTS}
    for before, after in zip(messages, viewed):  # parts give back the text (whitespace-only gaps aside)
        if isinstance(after["content"], list):
            back = "".join(p["text"] if p["type"] == "text" else by_url[p["image"]] for p in after["content"])
            assert re.sub(r"\s", "", back) == re.sub(r"\s", "", before["content"])
            assert all(p["text"].strip() for p in after["content"] if p["type"] == "text")
    sent = to_openai_messages(viewed, "user")
    assert [u for m in sent for u in _image_urls(m.get("content"))] == expected
    for i, m in enumerate(sent):  # each turn's images follow its tool results, in one user message
        if m["role"] == "user" and isinstance(m["content"], list):
            assert sent[i - 1]["role"] == "tool" and (i + 1 == len(sent) or sent[i + 1]["role"] != "tool")
            j = i
            while sent[j - 1]["role"] == "tool":
                j -= 1
            notes = re.findall(r"\[image (\d+): attached", "".join(t["content"] for t in sent[j:i]))
            assert notes == [str(k) for k in range(1, len(_image_urls(m["content"])) + 1)]
    assert not any(_image_urls(m.get("content")) for m in to_openai_messages(viewed, "off"))
