"""Audio clips a tool result returned, past the text channel: the HF SFT export writes them as `{"type": "audio"}`
parts with `audios` (the Qwen2-Audio layout, the placeholder kept as the part's text so a template that knows no
audio writes what a text channel shows), and the OpenAI policy with `audio="user"` or `"tool"` sends them as
`input_audio` parts (checked at the scripted server, byte for byte); by default it sends the placeholder."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from media_samples import b64, wav
from scripted_openai import Message, ScriptedOpenAI, ToolCall, ToolCalls

from synth.procedural import generate
from synth.spec import EnvironmentSpec
from trainers.episodes.policies import PolicyConfigError, make_policy
from trainers.episodes.policies.openai_policy import to_openai_messages
from trainers.episodes.runner import run_episode
from trainers.export.sft import to_hf
from trainers.media_parts import embed_media, with_image_parts, with_media_parts
from workspace_sim.media import MediaPart, placeholder

CLIP = "/voicemail/call-0412.wav"


def _spec() -> EnvironmentSpec:
    """A receipts task with a voicemail clip added to its files (a real WAV)."""
    s = generate("media_evidence", 1, template="receipts_into_expenses")
    data = s.model_dump(mode="json", exclude_none=True)
    data["initial"] = copy.deepcopy(data["initial"])
    data["initial"]["files"]["files"].append({"path": CLIP, "content": b64(wav(0.3)), "encoding": "base64"})
    return EnvironmentSpec.model_validate(data)


def _run(**policy: Any) -> tuple[ScriptedOpenAI, Any]:
    server = ScriptedOpenAI([ToolCalls((ToolCall("read_media_file", json.dumps({"path": CLIP})),)),
                             Message("I listened to the voicemail.")]).start()
    try:
        agent = make_policy("openai", model="omni", base_url=server.base_url, api_key="k", **policy)
        record = run_episode(_spec(), agent, episode_id="audio-openai")
    finally:
        server.close()
    return server, record


def _audio_parts(content: Any) -> list[dict[str, Any]]:
    return [p["input_audio"] for p in content if p.get("type") == "input_audio"] if isinstance(content, list) else []


def test_the_hf_export_writes_the_clip_as_an_audio_part_and_lists_it() -> None:
    _, record = _run()
    example = to_hf(record)
    (url,) = example["audios"]
    head, data = url.split(",", 1)
    assert head == "data:audio/wav;base64" and base64.b64decode(data) == wav(0.3)
    assert "images" not in example
    (tool,) = [m for m in example["messages"] if m["role"] == "tool"]
    (part,) = [p for p in tool["content"] if p["type"] == "audio"]
    assert part["text"].startswith("[audio: call-0412.wav (audio/wav, ") and "audio" not in {*part} - {"type", "text"}
    # what a text channel (and a template without audio) reads is the record's transcript, unchanged
    text = "".join(p.get("text", "") for p in tool["content"])
    assert text.replace("\n", "") == next(m["content"] for m in record.messages if m["role"] == "tool").replace("\n", "")


def test_by_default_the_openai_policy_sends_the_placeholder_and_no_audio() -> None:
    server, _ = _run()
    sent = server.completion_requests[1].messages
    tool = next(m for m in sent if m["role"] == "tool")
    assert isinstance(tool["content"], str) and tool["content"].startswith("[audio: call-0412.wav")
    assert not any(_audio_parts(m.get("content")) for m in sent)


def test_audio_user_sends_the_clip_as_input_audio_after_the_tool_results() -> None:
    server, _ = _run(audio="user")
    sent = server.completion_requests[1].messages
    at = next(i for i, m in enumerate(sent) if m["role"] == "tool")
    assert "[audio 1: attached in the next user message]" in sent[at]["content"]
    follow = sent[at + 1]
    assert follow["role"] == "user" and follow["content"][0]["text"].startswith("The images and audio clips")
    (clip,) = _audio_parts(follow["content"])
    assert clip["format"] == "wav" and base64.b64decode(clip["data"]) == wav(0.3)


def test_audio_tool_keeps_the_clip_in_the_tool_message() -> None:
    server, _ = _run(audio="tool")
    sent = server.completion_requests[1].messages
    tool = next(m for m in sent if m["role"] == "tool")
    (clip,) = _audio_parts(tool["content"])
    assert base64.b64decode(clip["data"]) == wav(0.3)
    assert sum(m["role"] == "user" for m in sent) == 1


def test_a_bad_audio_setting_is_refused_by_name() -> None:
    with pytest.raises(PolicyConfigError, match="audio must be one of user, tool, off"):
        make_policy("openai", model="omni", base_url="http://127.0.0.1:9/v1", api_key="k", audio="speaker")


_PARTS = [MediaPart(kind, mime, f"m{i}.{ext}", 10 + i, f"{i:064x}", base64.b64encode(bytes([i])).decode())
          for i, (kind, mime, ext) in enumerate([("image", "image/png", "png"), ("audio", "audio/wav", "wav"),
                                                 ("image", "image/jpeg", "jpg"), ("audio", "audio/mpeg", "mp3")])]


@given(st.lists(st.lists(st.one_of(st.integers(0, 3), st.text("ab \n", max_size=6)), max_size=5), min_size=1,
                max_size=4), st.sampled_from(["user", "tool", "off"]), st.sampled_from(["user", "tool", "off"]))
@settings(max_examples=150, deadline=None)
def test_media_parts_keep_each_kind_in_order_and_send_what_each_mode_says(
        tool_results: list[list[Any]], images: str, audio: str) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    want: dict[str, list[str]] = {"image": [], "audio": []}
    for pieces in tool_results:
        messages += [{"role": "assistant", "content": None, "tool_calls": []},
                     {"role": "tool", "content": "".join(placeholder(_PARTS[p]) if isinstance(p, int) else p
                                                         for p in pieces)}]
        for p in pieces:
            if isinstance(p, int):
                want[_PARTS[p].kind].append(f"data:{_PARTS[p].mime_type};base64,{_PARTS[p].data}")
    media = {placeholder(p): p for p in _PARTS}
    parts, found = with_media_parts(messages, media)
    assert (found.images, found.audios) == (want["image"], want["audio"])
    assert with_image_parts(messages, media)[1] == want["image"]  # the image-only view drops the audio
    for before, after in zip(messages, parts):  # text channels still read every audio placeholder
        if isinstance(after["content"], list):
            assert all(p["text"] in before["content"] for p in after["content"] if p["type"] == "audio")
    viewed = embed_media(parts, found)
    sent = to_openai_messages(viewed, images, audio)  # type: ignore[arg-type]
    urls = [p["image_url"]["url"] for m in sent if isinstance(m.get("content"), list) for p in m["content"]
            if p.get("type") == "image_url"]
    clips = [p["input_audio"]["data"] for m in sent if isinstance(m.get("content"), list) for p in m["content"]
             if p.get("type") == "input_audio"]
    for m in sent:  # a part stays in a tool message only in its kind's "tool" mode (OpenAI wants "user")
        if m["role"] == "tool" and isinstance(m["content"], list):
            kinds = {p["type"] for p in m["content"]}
            assert ("image_url" not in kinds or images == "tool") and ("input_audio" not in kinds or audio == "tool")
    assert urls == (want["image"] if images != "off" else [])
    assert clips == ([u.split(",", 1)[1] for u in want["audio"]] if audio != "off" else [])
    if audio == "off":  # an unsent clip is its placeholder text
        text = "".join(m["content"] if isinstance(m["content"], str) else
                       "".join(p.get("text", "") for p in m["content"]) for m in sent if m["role"] == "tool")
        assert text.count("[audio: ") == len(want["audio"])


def test_a_text_student_reads_media_parts_as_text() -> None:
    from trainers.media_parts import as_text_example

    _, record = _run()
    example = to_hf(record)
    flat = as_text_example(example)
    assert "audios" not in flat and "images" not in flat
    assert all(isinstance(m.get("content"), (str, type(None))) for m in flat["messages"])
    tool = next(m for m in flat["messages"] if m["role"] == "tool")
    assert tool["content"].replace("\n", "") == next(
        m["content"] for m in record.messages if m["role"] == "tool").replace("\n", "")
    image = {"messages": [{"role": "tool", "content": [{"type": "text", "text": "a "}, {"type": "image"}]}],
             "images": ["data:image/png;base64,AA=="]}
    assert as_text_example(image) == {"messages": [{"role": "tool", "content": "a [image]"}]}
    plain = {"messages": [{"role": "user", "content": "hi"}]}
    assert as_text_example(plain) == plain
