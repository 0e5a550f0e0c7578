"""GRPO for vision students: a tiny Qwen2-VL built from a config plays `media_evidence` episodes, is shown the images
its tool results returned (pixels in generation, in the log-probabilities and in the update), and `train rl` trains
and saves it; a text student's path is unchanged; an image that does not decode is refused naming episode and turn."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import need
from typer.testing import CliRunner

need(all(importlib.util.find_spec(m) for m in ("torch", "transformers", "trl")),
     "the train extra (torch, transformers, trl) is not installed")
os.environ["HF_HUB_OFFLINE"] = "1"
import torch  # noqa: E402

from coworkenv.cli import app  # noqa: E402
from synth.procedural import generate  # noqa: E402
from synth.spec import EnvironmentSpec  # noqa: E402
from trainers.episodes.policies import make_policy  # noqa: E402
from trainers.episodes.runner import run_episode  # noqa: E402
from trainers.export.sft import to_hf  # noqa: E402
from workspace_sim.record import read_records  # noqa: E402
from trainers.training.grpo import token_logprobs  # noqa: E402
from trainers.training.rollout import (  # noqa: E402
    RolloutSettings,
    Segment,
    candidate_logprobs,
    choice_rollout,
    generate_rollout,
    sequence_logprob,
)
from trainers.models.vision_messages import MediaInputError  # noqa: E402
from trainers.training.vision_inputs import render_prompt, turn_prompt  # noqa: E402

torch.set_num_threads(1)
TEMPLATE = "receipts_into_expenses"


def receipts(seed: int) -> EnvironmentSpec:
    return generate("media_evidence", seed, template=TEMPLATE)


def chart(seed: int) -> EnvironmentSpec:
    """A report whose chart page is a scan: the answer is read off the page image."""
    return generate("media_evidence", seed, template="chart_answer_from_report")


@pytest.fixture(scope="module")
def vl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny Qwen2-VL student whose tokenizer is trained on three teacher episodes of two media templates."""
    from trainers.models.tiny_vl import build_tiny_vl

    examples = [to_hf(run_episode(s, make_policy("teacher"))) for s in (receipts(0), receipts(1), chart(0))]
    return build_tiny_vl(tmp_path_factory.mktemp("vl"), examples, vocab_size=600, hidden=32, layers=1,
                         compact_tools=True)


def first_image(s: EnvironmentSpec) -> str:
    return next(c.args["path"] for c in s.reference.calls() if c.tool == "read_media_file")


def _recorder_after_reading(s: EnvironmentSpec, episode_id: str) -> Any:
    rec = RolloutSettings().recorder(s, episode_id, "student")
    rec.turn(None, [("read_media_file", {"path": first_image(s)})])
    return rec


def _png_url(img: Any) -> str:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def test_a_completions_logprob_depends_on_the_image_shown(vl: Path) -> None:
    from PIL import Image, ImageOps

    from trainers.models.tiny_vl import load_vl

    model, processor = load_vl(vl)
    model.eval()
    s = receipts(0)
    rec = _recorder_after_reading(s, "vision-logprob")
    prompt, vision = turn_prompt(processor, rec, "vision-logprob", 1)
    assert vision is not None and vision.pixel_values is not None
    (name,) = vision.images  # named as the record's tool message shows it
    assert name.startswith("[image: IMG_") and name in json.dumps(rec.messages)
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert prompt.count(pad) == sum(vision.mm_token_type_ids) == int(vision.image_grid_thw.prod()) // 4 > 0
    completion = processor.tokenizer('<tool_call>\n{"name": "list_directory"}', add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        seen = float(sequence_logprob(model, prompt, completion, vision))
        # the prompt's key/value cache path (choice rollouts) feeds the same pixels
        assert candidate_logprobs(model, prompt, [completion], vision)[0] == pytest.approx(seen / len(completion),
                                                                                            abs=1e-4)
        seg = Segment(1, prompt, completion, vision=vision)
        assert float(token_logprobs(model, seg).sum()) == pytest.approx(seen, abs=1e-4)
        # a prompt without images scored right after one with them: no rope offsets carried over
        fresh = RolloutSettings().recorder(s, "vision-no-image", "student")
        plain_prompt, plain = turn_prompt(processor, fresh, "vision-no-image", 0)
        fresh.close()
        assert plain is not None and plain.pixel_values is None and not any(plain.mm_token_type_ids)
        alone = float(sequence_logprob(model, plain_prompt, completion, plain)) / len(completion)
        candidate_logprobs(model, prompt, [completion], vision)  # leaves the image prompt's rope offsets behind
        positions = _spy_positions(model)
        assert candidate_logprobs(model, plain_prompt, [completion], plain)[0] == pytest.approx(alone, abs=1e-4)
        # the candidate continues right after the prompt (None: the text model counts on from its cache)
        assert positions[-1] in (None, len(plain_prompt)), positions

    # two different images of one size in a user message: the same ids, other pixels, other log-probs
    receipt = Image.open(io.BytesIO(base64.b64decode(next(
        f["content"] for f in s.initial["files"]["files"] if f["path"] == first_image(s))))).convert("RGB")
    logps, ids, first = [], [], []
    for img in (receipt, ImageOps.invert(receipt)):
        msgs = [{"role": "user", "content": [{"type": "text", "text": "What is the total?"},
                                             {"type": "image", "image": _png_url(img)}]}]
        p, v = render_prompt(processor, msgs, None)
        assert v.pixel_values is not None and v.images[0].startswith("[image: sha256:")
        ids.append(p)
        with torch.no_grad():
            logps.append(float(sequence_logprob(model, p, completion, v)))
            out = model.generate(torch.tensor([p]), attention_mask=torch.ones(1, len(p), dtype=torch.long),
                                 max_new_tokens=2, do_sample=False, return_dict_in_generate=True, output_logits=True,
                                 pad_token_id=processor.tokenizer.pad_token_id, **v.model_kwargs(len(p)))
            first.append(out.logits[0][0])  # generation sees the pixels too
    assert ids[0] == ids[1] and abs(logps[0] - logps[1]) > 1e-3, logps
    assert not torch.allclose(first[0], first[1])


def _spy_positions(model: Any) -> list[int | None]:
    """The first text position of each forward pass the model makes from now on (None: left to the text model)."""
    seen: list[int | None] = []
    inner = model.model
    real = inner.compute_3d_position_ids

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        seen.append(None if out is None else int(out[0, 0, 0]))
        return out

    inner.compute_3d_position_ids = spy
    return seen


def test_a_text_students_rollout_and_log_probs_are_unchanged(tmp_path: Path) -> None:
    from test_train_sft import teacher_examples

    from trainers.models.tiny import build_tiny, load
    from trainers.training.toy import archive_environments

    model, tok = load(build_tiny(tmp_path / "tiny", teacher_examples(2), vocab_size=600))
    env = archive_environments(1)[0]
    rec = RolloutSettings().recorder(env, "text", "student")
    prompt, vision = turn_prompt(tok, rec, "text", 0)
    assert vision is None and prompt == list(tok.apply_chat_template(rec.messages, tools=rec.tools or None,
                                                                       add_generation_prompt=True, tokenize=True,
                                                                       return_dict=True)["input_ids"])
    r = generate_rollout(model, tok, env, RolloutSettings(max_turns=2, max_new_tokens=6), "text-1")
    assert "images" not in r.info and all(seg.vision is None and seg.model_kwargs() == {} for seg in r.segments)
    seg = r.segments[0]
    with torch.no_grad():
        ids = torch.tensor([seg.prompt_ids + seg.completion_ids])
        plain = torch.log_softmax(model(input_ids=ids).logits[0, len(seg.prompt_ids) - 1:-1].float(), -1)
        plain = plain.gather(-1, torch.tensor(seg.completion_ids).unsqueeze(-1)).squeeze(-1)
        assert torch.equal(token_logprobs(model, seg), plain)


def _spec_folder(folder: Path, specs: list[EnvironmentSpec]) -> Path:
    folder.mkdir()
    for s in specs:
        s.save(folder / f"{s.id}.json")
    return folder


def test_train_rl_on_a_vision_folder_trains_the_language_model_and_merger_and_records_the_images(
        vl: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    from trainers.models.tiny_vl import load_vl

    envs = _spec_folder(tmp_path / "envs", [chart(0)])
    out, records = tmp_path / "rl", tmp_path / "rollouts.jsonl"
    r = CliRunner().invoke(app, ["train", "rl", "--model", str(vl), "--envs", str(envs), "--out", str(out),
                                 "--rollout", "choice", "--group-size", "8", "--envs-per-step", "1", "--max-turns", "4",
                                 "--records", str(records), "--threads", "1"])
    assert r.exit_code == 0, r.output
    assert "GRPO: 1 step(s), grpo, episode level" in r.output and "nonzero_advantages" in r.output
    before, after = load_vl(vl)[0].state_dict(), load_vl(out)[0].state_dict()  # it loads back as a vision student
    moved = {k for k in before if not torch.equal(before[k], after[k])}
    assert any("language_model" in k for k in moved), sorted(moved)[:5]
    assert any(".visual.merger." in k for k in moved), sorted(moved)  # the gradient reached the image tokens
    assert not any(".visual." in k and ".merger." not in k for k in moved)  # the vision tower stays frozen
    history = json.loads((out / "grpo_history.json").read_text())
    assert history[0]["nonzero_advantages"] > 0
    recs = read_records(records)
    assert len(recs) == 8
    shown = [r for r in recs if "[image: " in json.dumps([m.to_hf() for m in r.final.messages])]
    assert shown and any(r.passed for r in shown), "no rollout read the chart"  # the one that passed saw it
    for rec in shown:  # the record names the image and its call event keeps the bytes
        assert any(e.kind == "call" and "media" in json.dumps(e.result) for e in rec.events)


def test_train_rl_on_a_vision_folder_with_text_only_environments_trains(vl: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["train", "rl", "--model", str(vl), "--envs", "toy:2", "--out", str(tmp_path / "o"),
                                 "--rollout", "choice", "--group-size", "2", "--max-turns", "2", "--threads", "1",
                                 "--json"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line[line.index('{"step"'):]) for line in r.output.splitlines() if '{"step"' in line]
    assert len(rows) == 1 and rows[0]["tokens"] > 0, r.output
    assert (tmp_path / "o" / "processor_config.json").is_file()


def _corrupt_receipts(monkeypatch: pytest.MonkeyPatch) -> EnvironmentSpec:
    """The receipts task with its receipts' bytes broken, read by a tool that does not check its images (the
    workspace's own `read_media_file` refuses a corrupt image)."""
    import workspace_sim.media.images as images

    monkeypatch.setattr(images, "inspect_image", lambda raw, path, limits=None: ("image/png", 40, 40))
    doc = receipts(0).model_dump(mode="json")
    for f in doc["initial"]["files"]["files"]:
        if f["path"].endswith(".png"):
            f["content"] = base64.b64encode(b"\x89PNG\r\n\x1a\n not a png at all").decode()
    return EnvironmentSpec.model_validate(doc)


def test_a_corrupt_image_in_a_tool_result_is_refused_naming_the_episode_and_turn(
        vl: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from trainers.models.tiny_vl import load_vl

    bad = _corrupt_receipts(monkeypatch)
    envs = _spec_folder(tmp_path / "envs", [bad])
    r = CliRunner().invoke(app, ["train", "rl", "--model", str(vl), "--envs", str(envs), "--out", str(tmp_path / "o"),
                                 "--rollout", "choice", "--group-size", "8", "--envs-per-step", "1", "--max-turns",
                                 "4", "--threads", "1"])
    assert r.exit_code == 2, r.output
    assert re.search(r"error: episode step0-\S+-\d+, turn \d+: tool message \d+, \[image: IMG_\d+\.png .*\]: "
                     r"the image does not decode", r.output), r.output
    assert not (tmp_path / "o").exists()  # nothing written
    _, processor = load_vl(vl)
    rec = _recorder_after_reading(bad, "bad-1")
    try:
        with pytest.raises(MediaInputError, match=r"episode bad-1, turn 1: tool message \d+, \[image: IMG_\d+\.png "
                                                  r".*the image does not decode"):
            turn_prompt(processor, rec, "bad-1", 1)
    finally:
        rec.close()


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.integers(20, 140), st.integers(20, 140), st.integers(0, 255), st.booleans()),
                min_size=0, max_size=3))
def test_the_prompts_image_tokens_match_the_images_grids(vl: Path, images: list[tuple[int, int, int, bool]]) -> None:
    """Any images in user and tool messages: one name each, in order, and as many image tokens (token type 1) as
    their grids hold, with the pixel rows to match; no image, no pixels."""
    from PIL import Image

    processor = _processor(vl)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Look."}]
    for i, (w, h, shade, in_tool) in enumerate(images):
        part = {"type": "image", "image": _png_url(Image.new("RGB", (w, h), (shade, 255 - shade, i * 40)))}
        messages.append({"role": "tool" if in_tool else "user", "content": [{"type": "text", "text": f"#{i}"}, part]})
    ids, v = render_prompt(processor, messages, None)
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert len(v.images) == len(images) and len(v.mm_token_type_ids) == len(ids)
    if not images:
        assert v.pixel_values is None and pad not in ids
        return
    grids = v.image_grid_thw
    assert ids.count(pad) == sum(v.mm_token_type_ids) == sum(int(g.prod()) // 4 for g in grids)
    assert v.pixel_values.shape[0] == sum(int(g.prod()) for g in grids)
    assert v.model_kwargs(len(ids) + 5)["mm_token_type_ids"].shape == (1, len(ids) + 5)


_PROCESSORS: dict[Path, Any] = {}


def _processor(path: Path) -> Any:
    from trainers.models.tiny_vl import load_vl

    if path not in _PROCESSORS:
        _PROCESSORS[path] = load_vl(path)[1]
    return _PROCESSORS[path]


def test_an_image_over_pillows_bomb_limit_is_refused_by_name(vl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image

    processor = _processor(vl)
    url = _png_url(Image.new("RGB", (60, 60), (9, 9, 9)))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)  # 3,600 pixels is over twice the limit: a bomb
    msgs = [{"role": "user", "content": [{"type": "image", "image": url}]}]
    with pytest.raises(MediaInputError, match=r"episode e, turn 0: user message 0, \[image: sha256:[0-9a-f]{16}\]: "
                                              r"the image is too large to decode"):
        render_prompt(processor, msgs, None, where="episode e, turn 0")


def test_vision_grpo_is_deterministic_for_a_seed(vl: Path, tmp_path: Path) -> None:
    from trainers.training.grpo import GRPOSettings, train_grpo
    from trainers.training.rollout import choice_rollout

    settings = GRPOSettings(group_size=4, envs_per_step=1, rollout=RolloutSettings(max_turns=3))
    runs = []
    for name in ("a", "b"):
        history = train_grpo(vl, [chart(0)], tmp_path / name, settings, choice_rollout)
        runs.append(([h.to_json() for h in history], (tmp_path / name / "model.safetensors").read_bytes()))
    assert runs[0] == runs[1]


def test_a_vision_grpo_step_makes_the_rewarded_turn_seen_with_the_chart_more_likely(vl: Path) -> None:
    from trainers.credit import compute_advantages
    from trainers.training.grpo import GRPOSettings, grpo_step
    from trainers.training.rollout import choice_rollout
    from trainers.models.tiny_vl import load_vl
    from trainers.training.vision_inputs import freeze_vision_tower

    model, processor = load_vl(vl)
    settings = GRPOSettings(group_size=8, rollout=RolloutSettings(max_turns=4))
    opt = torch.optim.SGD(freeze_vision_tower(model), lr=0.05)
    stats, rollouts = grpo_step(model, processor, opt, [chart(0)], choice_rollout, settings, step=0)
    assert 0.0 < stats.pass_rate < 1.0 and stats.nonzero_advantages > 0
    credit = compute_advantages([r.record for r in rollouts], settings.rollout.rewards, settings.credit)
    shift: dict[int, list[float]] = {+1: [], -1: []}
    with torch.no_grad():
        for r in rollouts:
            adv = credit[r.record.episode_id].turn_advantages
            for seg in r.segments:
                a = adv[min(seg.turn, len(adv) - 1)]
                if a != 0:
                    delta = float(token_logprobs(model, seg).sum()) - sum(seg.old_logprobs or [])
                    shift[1 if a > 0 else -1].append(delta)
    passing = [seg for r in rollouts if r.record.passed for seg in r.segments]
    assert passing[-1].vision is not None and passing[-1].vision.images  # it answered with the chart's page shown
    # turns of the passing rollout became more likely than those of failing ones (which share its first turns)
    assert sum(shift[1]) / len(shift[1]) > sum(shift[-1]) / len(shift[-1]), shift
    with torch.no_grad():  # and the answer read off the chart most of all: its pixels were in the update
        answer = passing[-1]
        assert float(token_logprobs(model, answer).sum()) > sum(answer.old_logprobs or []) + 0.5


def test_text_spelling_an_image_marker_gets_no_image_slot(vl: Path) -> None:
    from trainers.models.tiny_vl import load_vl

    _, processor = load_vl(vl)
    s = receipts(0)
    rec = _recorder_after_reading(s, "vision-marker")
    rec.turn("I see <|image_pad|> and <|vision_start|> here", [("read_media_file", {"path": first_image(s)})])
    try:
        prompt, vision = turn_prompt(processor, rec, "vision-marker", 2)  # two real images, one spelled marker
    finally:
        rec.close()
    assert vision is not None and len(vision.images) == 2
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert prompt.count(pad) == sum(vision.mm_token_type_ids) == int(vision.image_grid_thw.prod(dim=1).sum()) // 4


def test_generation_never_samples_an_image_marker(vl: Path) -> None:
    from trainers.models.tiny_vl import load_vl
    from trainers.models.vision_messages import vision_token_ids

    model, processor = load_vl(vl)
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    head = model.lm_head
    biased = torch.nn.Linear(head.in_features, head.out_features, bias=True)
    with torch.no_grad():
        biased.weight.copy_(head.weight)
        biased.bias.zero_()
        biased.bias[pad] = 1e4  # without the suppression every sampled token would be an image marker
    model.lm_head = biased
    assert pad in vision_token_ids(processor)
    settings = RolloutSettings(max_turns=1, max_new_tokens=6, seed=0, greedy=True)
    rollout = generate_rollout(model, processor, receipts(0), settings, "vision-suppress")
    assert rollout.segments and rollout.segments[0].completion_ids and pad not in rollout.segments[0].completion_ids


def test_a_rollout_holds_each_images_pixels_once(vl: Path) -> None:
    from trainers.models.tiny_vl import load_vl
    from trainers.training.vision_inputs import share_pixels

    _, processor = load_vl(vl)
    s = receipts(0)
    rec = _recorder_after_reading(s, "vision-share")
    visions = [turn_prompt(processor, rec, "vision-share", 1)[1]]
    rec.turn(None, [("read_media_file", {"path": first_image(s)})])
    visions.append(turn_prompt(processor, rec, "vision-share", 2)[1])
    rec.close()
    before = [v.pixel_values.clone() for v in visions]  # type: ignore[union-attr]
    assert before[0].shape[0] < before[1].shape[0]  # the second turn's prompt holds both images' rows
    share_pixels(visions)
    last = visions[-1].pixel_values  # type: ignore[union-attr]
    for v, want in zip(visions, before):
        assert v.pixel_values.untyped_storage().data_ptr() == last.untyped_storage().data_ptr()  # type: ignore
        assert torch.equal(v.pixel_values, want)  # type: ignore[union-attr]


def test_a_strip_image_the_processor_refuses_names_the_episode(vl: Path) -> None:
    from PIL import Image

    from trainers.models.tiny_vl import load_vl

    _, processor = load_vl(vl)
    s = receipts(0)
    doc = s.model_dump(mode="json")
    buf = io.BytesIO()
    Image.new("RGB", (3000, 10), (200, 200, 200)).save(buf, format="PNG")
    for f in doc["initial"]["files"]["files"]:
        if f["path"] == first_image(s):
            f["content"] = base64.b64encode(buf.getvalue()).decode()
    rec = _recorder_after_reading(EnvironmentSpec.model_validate(doc), "vision-strip")
    try:
        with pytest.raises(MediaInputError, match=r"episode vision-strip, turn 1: the processor refuses .*IMG_"):
            turn_prompt(processor, rec, "vision-strip", 1)
    finally:
        rec.close()


def test_the_vision_towers_mergers_train_and_its_blocks_do_not() -> None:
    from trainers.training.vision_inputs import freeze_vision_tower

    names = ["model.visual.patch_embed.proj", "model.visual.blocks.0.attn", "model.visual.merger.mlp",
             "model.visual.deepstack_merger_list.0.linear_fc1", "model.language_model.layers.0.mlp", "lm_head"]
    params = {n: torch.nn.Parameter(torch.zeros(1)) for n in names}

    class Named:  # Qwen2-VL's and Qwen3-VL's parameter names, without building a Qwen3-VL
        def named_parameters(self) -> list[tuple[str, torch.nn.Parameter]]:
            return list(params.items())

        def parameters(self) -> list[torch.nn.Parameter]:
            return list(params.values())

    assert len(freeze_vision_tower(Named())) == 4
    trains = {n for n, p in params.items() if p.requires_grad}
    assert trains == {"model.visual.merger.mlp", "model.visual.deepstack_merger_list.0.linear_fc1",
                      "model.language_model.layers.0.mlp", "lm_head"}
