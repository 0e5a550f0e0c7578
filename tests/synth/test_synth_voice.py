"""Audio evidence: voice messages spoken by eSpeak NG from the world's own script (synth/procedural/speech.py) and
the voicemail_to_task template. Byte-deterministic per seed, the facts only in the audio (a text channel sees a
placeholder and the clip's script as its transcript, read only through the clip), valid by execution, a text-only guess fails, and the teacher hears the clip over MCP as audio
content. Without the engine the template falls back to handwritten message slips with a note, never failing."""

from __future__ import annotations

import base64
import io
import wave

import pytest

from synth import validate_spec
from synth.evidence import evidence_only_facts
from synth.procedural import generate, speech
from trainers.episodes.policies import make_policy
from trainers.episodes.runner import run_episode

needs_engine = pytest.mark.skipif(not speech.available(), reason="espeak-ng is not installed (bash .ci/setup_tts.sh)")
CAP, NAME = "media_evidence", "voicemail_to_task"


def _clips(spec) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    return {f["path"]: base64.b64decode(f["content"]) for f in spec.initial["files"]["files"]
            if f["path"].endswith(".wav")}


@needs_engine
def test_speech_is_deterministic_and_each_level_of_wear_differs() -> None:
    a = speech.speak("Your order four five one two arrives on Thursday.", "en-gb", 160, 50)
    assert a == speech.speak("Your order four five one two arrives on Thursday.", "en-gb", 160, 50)
    with wave.open(io.BytesIO(a)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, speech.RATE)
        assert 1.0 < w.getnframes() / w.getframerate() < 10
    worn = {lv: speech.wear(a, lv, 3) for lv in ("clean", "worn", "rough")}
    assert len(set(worn.values())) == 3 and worn["clean"] == a and worn["rough"] == speech.wear(a, "rough", 3)
    with wave.open(io.BytesIO(worn["rough"])) as w:
        assert w.getframerate() == 8000  # the telephone band
    assert speech.wear(a, "worn", 3) != speech.wear(a, "worn", 4)
    with pytest.raises(ValueError, match="voice must be one of"):
        speech.speak("hi", "klingon")
    with pytest.raises(ValueError, match="level must be one of"):
        speech.wear(a, "muffled", 1)


@needs_engine
def test_the_voicemail_template_is_valid_and_its_facts_are_only_in_the_audio() -> None:
    for seed in range(12):
        spec = generate(CAP, seed, template=NAME)
        report = validate_spec(spec)
        assert report.ok, f"{spec.id}\n{report.text()}"
        assert spec.evaluate(spec.build_workspace(), None).score == 0.0
        facts = {f["fact"] for f in evidence_only_facts(spec)}
        assert len(facts) == 3, facts  # the order number, the delivery date and the callback number
        assert len(_clips(spec)) == 2
        ws = spec.build_workspace()
        scripts = {f["path"]: f["transcript"] for f in spec.initial["files"]["files"] if f["path"].endswith(".wav")}
        for path in _clips(spec):
            text = ws.call("read_media_file", {"path": path}).text  # the placeholder, then the clip's script
            assert text.startswith("[audio: ") and text.endswith("Transcript (stored with the file):\n" + scripts[path])
            assert ws.call("transcribe_audio", {"path": path}).data["text"] == scripts[path]
    a, b = generate(CAP, 4, template=NAME), generate(CAP, 4, template=NAME)
    assert a.model_dump_json() == b.model_dump_json()


@needs_engine
def test_a_guess_from_the_colleagues_message_or_no_order_number_fails() -> None:
    from synth.spec import run_reference
    from synth.spec import CallStep, ReferenceSolution

    spec = generate(CAP, 2, template=NAME)
    (create,) = [s for s in spec.reference.calls() if s.tool == "create_task"]
    for change in ({"due": "2026-01-01"}, {"notes": "call them back"}):
        steps = [s.model_copy(update={"args": {**s.args, **change}}) if isinstance(s, CallStep) and s is create else s
                 for s in spec.reference.steps]
        run = run_reference(spec, solution=ReferenceSolution(steps=steps, final_answer=None))
        assert not spec.evaluate(run.workspace, None).passed, change


@needs_engine
def test_the_teacher_hears_the_clips_over_mcp() -> None:
    spec = generate(CAP, 1, template=NAME)
    rec = run_episode(spec, make_policy("teacher"), transport="mcp")
    assert rec.passed
    shown = [m for m in rec.messages if m["role"] == "tool" and "[audio: " in str(m.get("content"))]
    heard = sum(1 for s in spec.reference.calls() if s.tool == "read_media_file")  # both, or the one named
    assert heard >= 1 and len(shown) == heard


def test_without_the_engine_the_messages_are_slips_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(speech, "available", lambda: False)
    for seed in range(4):
        spec = generate(CAP, seed, template=NAME)
        assert not _clips(spec)
        notes = [e.get("note", "") for e in spec.metadata["evidence"]]
        assert notes and all("espeak-ng is not installed" in n for n in notes)
        assert "phone message" in spec.request and len(evidence_only_facts(spec)) == 3
        report = validate_spec(spec)
        assert report.ok, report.text()
    with pytest.raises(RuntimeError, match="setup_tts.sh"):
        speech.speak("hello")


@needs_engine
def test_composed_voicemails_carry_their_script_and_a_corrected_one_its_new_script() -> None:
    from synth.generate.kinded import compose_kind
    from synth.generate.profiles.kinds import TaskKind

    spec = compose_kind(TaskKind.from_json({"services": ["files"], "evidence": ["audio"], "days": 3, "turns": "multi"}), 0)
    clips = {f["path"]: f for f in spec.initial["files"]["files"] if f["path"].endswith(".wav")}
    assert len(clips) == 3 and all(f["transcript"].startswith("Hello, this is the accounts desk at ")
                                   for f in clips.values())
    patches = [c for e in spec.events for c in e.changes if c["op"] == "patch" and c["key"] in clips]
    said = [clips[patches[0]["key"]]["transcript"]] + [p["fields"].get("transcript") for p in patches]
    assert patches and len(set(said)) == len(said)  # each corrected clip comes with what it now says
    facts = [f["fact"] for f in evidence_only_facts(spec)]  # the first total: only in the clip and its transcript
    assert facts and all(f"{float(x):,.2f}" in said[0] for x in facts)
    report = validate_spec(spec)
    assert report.ok, report.text()
