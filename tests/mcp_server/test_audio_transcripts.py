"""Audio an agent without audio input can use, through the SDK's own MCP client: `transcribe_audio` and the
transcript beside the audio content of `read_media_file`, from a generated voicemail's script, from a transcript
a spec ships (WebVTT with times, or plain text), and from an OpenAI-compatible speech-to-text endpoint (a local
scripted server) cached by the clip's sha256; m4a and ogg accepted; bad input answered naming what is wrong."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any

import anyio
import pytest
from mcp import Client
from media_samples import b64, m4a, ogg, png, wav
from scripted_openai import HTTPError, ScriptedOpenAI, Transcription

from mcp_server import Episode, PythonEnvironment, build_server
from synth.procedural import generate, speech
from synth.spec import parse_spec
from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.media import speech_to_text

VTT = ("WEBVTT\n\nNOTE recorded on the desk phone\n\n1\n00:00.000 --> 00:02.500\n<v Dana>Hi, it's Dana from Acme.\n\n"
       "2\n00:02.500 --> 00:06.250\nPlease call me back on 555 0142 &amp; ask for accounts.\n")
STT_VARS = tuple(speech_to_text.ENV.values())


@pytest.fixture(autouse=True)
def _no_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """No speech-to-text endpoint unless a test sets one, and no transcript kept from another test."""
    for var in STT_VARS:
        monkeypatch.delenv(var, raising=False)
    speech_to_text.CACHE.clear()


def _episode(files: list[dict[str, Any]]) -> Episode:
    def factory() -> Workspace:
        return Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": files}})

    return Episode(PythonEnvironment("audio", "Audio", "Listen to the messages.", factory, []))


def _calls(ep: Episode, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(build_server(ep)) as c:
            return [await c.call_tool(name, args) for name, args in calls]

    return anyio.run(go)


def _text(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def _clip(path: str, raw: bytes, transcript: str | None = None) -> dict[str, Any]:
    return {"path": path, "content": b64(raw), "encoding": "base64",
            **({"transcript": transcript} if transcript is not None else {})}


# --- transcripts the world holds -------------------------------------------------------------------------------

@pytest.mark.skipif(not speech.available(), reason="espeak-ng is not installed (bash .ci/setup_tts.sh)")
def test_a_generated_voicemail_is_read_as_its_script() -> None:
    spec = generate("media_evidence", 3, template="voicemail_to_task")
    clips = {f["path"]: f for f in spec.initial["files"]["files"] if f["path"].endswith(".wav")}
    assert len(clips) == 2 and all(f["transcript"].startswith("H") for f in clips.values())
    supplier = next(p for p, f in clips.items() if "order number" in f["transcript"])
    script = clips[supplier]["transcript"]
    said, heard = _calls(Episode(spec), ("transcribe_audio", {"path": supplier}),
                         ("read_media_file", {"path": supplier}))
    assert not said.is_error and [c.type for c in said.content] == ["text"]  # text only: no clip is sent again
    assert said.structured_content["text"] == script and said.structured_content["source"] == "file"
    assert said.structured_content["segments"] == [] and script in _text(said)
    assert [c.type for c in heard.content] == ["text", "audio"]  # the clip still comes as audio content
    assert heard.structured_content["transcript"]["text"] == script
    assert _text(heard).startswith("[audio: ") and "Transcript (stored with the file):\n" + script in _text(heard)


def _spec(files: list[dict[str, Any]]) -> Any:
    """A small spec whose start data holds `files`: who left which number in /calls."""
    return parse_spec({
        "version": "1", "id": "shipped-transcript", "title": "Call Dana back", "capabilities": ["media_evidence"],
        "difficulty": "easy", "expected_horizon": 3, "services": ["files"], "now": "2026-03-02T09:00:00+00:00",
        "world": {"organisation": {"name": "Acme", "domain": "acme.example"},
                  "people": [{"name": "Ann Lee", "email": "ann@acme.example", "role": "user"}]},
        "user": "ann@acme.example", "request": "What number did Dana leave in /calls?",
        "initial": {"files": {"files": files}},
        "predicates": [{"kind": "answer", "condition": {"contains": "555 0142"}}],
        "reference": {"steps": [{"kind": "call", "tool": "transcribe_audio", "args": {"path": "/calls/dana.wav"}}],
                      "final_answer": "Dana asked to be called back on 555 0142."}})


def test_a_transcript_the_spec_ships_comes_with_its_segment_times() -> None:
    spec = _spec([_clip("/calls/dana.wav", wav(6.5), VTT), _clip("/calls/note.m4a", m4a(), "Lunch is at noon.")])
    said, heard, plain = _calls(Episode(spec), ("transcribe_audio", {"path": "/calls/dana.wav"}),
                                ("read_media_file", {"path": "/calls/dana.wav"}),
                                ("transcribe_audio", {"path": "/calls/note.m4a"}))
    data = said.structured_content
    assert data["segments"] == [
        {"start": 0.0, "end": 2.5, "text": "Dana: Hi, it's Dana from Acme."},
        {"start": 2.5, "end": 6.25, "text": "Please call me back on 555 0142 & ask for accounts."}]
    assert data["seconds"] == 6.5 and data["mime_type"] == "audio/wav"
    assert "[0:00.0-0:02.5] Dana: Hi, it's Dana from Acme.\n[0:02.5-0:06.2] Please call me back" in _text(said)
    assert heard.structured_content["transcript"]["segments"] == data["segments"]
    assert plain.structured_content["text"] == "Lunch is at noon." and plain.structured_content["segments"] == []
    assert plain.structured_content["mime_type"] == "audio/mp4"


def test_a_bad_shipped_transcript_is_refused_at_load_naming_the_file_and_line() -> None:
    for files, message in (
            ([_clip("/a.wav", wav(), "WEBVTT\n\n00:01 --> 00:02\nhi\n")], "/a.wav: WebVTT line 3 is not a cue timing"),
            ([_clip("/a.wav", wav(), "WEBVTT\n\nNOTE nothing said\n")], "/a.wav: the WebVTT transcript has no cue"),
            ([{"path": "/a.txt", "content": "x", "transcript": "hi"}], "/a.txt is text/plain, not an audio file"),
            ([_clip("/a.wav", wav(), "  ")], "/a.wav: the transcript is empty")):
        with pytest.raises(Exception, match=message):
            _spec(files)


# --- a speech-to-text endpoint ------------------------------------------------------------------------------------

def test_a_clip_without_a_transcript_is_sent_to_the_endpoint_once(monkeypatch: pytest.MonkeyPatch) -> None:
    clip = wav(0.5)
    files = [_clip("/vm/first.wav", clip), _clip("/vm/copy.wav", clip)]
    answer = Transcription("Hello. Call me back.", ((0.0, 1.25, " Hello."), (1.25, 3.0, " Call me back.")))
    with ScriptedOpenAI([answer], api_key="stt-key") as server:
        monkeypatch.setenv("COWORKENV_STT_BASE_URL", server.base_url)
        monkeypatch.setenv("COWORKENV_STT_MODEL", "whisper-test")
        monkeypatch.setenv("COWORKENV_STT_API_KEY", "stt-key")
        first, again, copy, heard = _calls(_episode(files), ("transcribe_audio", {"path": "/vm/first.wav"}),
                                           ("transcribe_audio", {"path": "/vm/first.wav"}),
                                           ("transcribe_audio", {"path": "/vm/copy.wav"}),
                                           ("read_media_file", {"path": "/vm/first.wav"}))
        (sent,) = server.transcription_requests  # the same bytes never go twice, under any path or episode
        (later,) = _calls(_episode(files), ("transcribe_audio", {"path": "/vm/copy.wav"}))
        assert len(server.transcription_requests) == 1
    assert sent.form == {"model": "whisper-test", "response_format": "verbose_json"}
    assert sent.files["file"] == ("first.wav", clip)
    for r in (first, again, copy, later):
        assert not r.is_error, _text(r)
        assert r.structured_content["segments"] == [{"start": 0.0, "end": 1.25, "text": "Hello."},
                                                    {"start": 1.25, "end": 3.0, "text": "Call me back."}]
        assert r.structured_content["source"] == "speech_to_text" and r.structured_content["model"] == "whisper-test"
    assert "(speech to text by whisper-test, 0.5 s):\n[0:00.0-0:01.2] Hello." in _text(first)
    assert "transcript" not in heard.structured_content  # read_media_file holds the world's transcripts only
    assert "transcribe_audio transcribes it" in _text(heard)


def test_the_cache_folder_keeps_transcripts_across_processes(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    clip = ogg(1.5)
    with ScriptedOpenAI([Transcription("Meeting moved to Friday.")]) as server:
        for var, value in (("COWORKENV_STT_BASE_URL", server.base_url), ("COWORKENV_STT_MODEL", "m"),
                           ("COWORKENV_STT_CACHE", str(tmp_path))):
            monkeypatch.setenv(var, value)
        (first,) = _calls(_episode([_clip("/rec/standup.ogg", clip)]), ("transcribe_audio", {"path": "/rec/standup.ogg"}))
        speech_to_text.CACHE.clear()  # as a new process would start
        (second,) = _calls(_episode([_clip("/rec/standup.ogg", clip)]), ("transcribe_audio", {"path": "/rec/standup.ogg"}))
        assert len(server.transcription_requests) == 1
    assert first.structured_content["text"] == second.structured_content["text"] == "Meeting moved to Friday."
    assert first.structured_content["mime_type"] == "audio/ogg" and first.structured_content["seconds"] == 1.5
    kept = json.loads((tmp_path / f"{hashlib.sha256(clip).hexdigest()}.json").read_text())
    assert kept["text"] == "Meeting moved to Friday." and kept["model"] == "m"


def test_a_server_without_verbose_json_gives_the_text_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedOpenAI([Transcription("Just the words.")], reject_response_formats=("verbose_json",)) as server:
        monkeypatch.setenv("COWORKENV_STT_BASE_URL", server.base_url)
        monkeypatch.setenv("COWORKENV_STT_MODEL", "text-only-model")
        (r,) = _calls(_episode([_clip("/a.m4a", m4a(2.0))]), ("transcribe_audio", {"path": "/a.m4a"}))
        assert [q.form["response_format"] for q in server.transcription_requests] == ["verbose_json", "json"]
        assert server.transcription_requests[-1].files["file"][0] == "a.m4a"
    assert r.structured_content["text"] == "Just the words." and r.structured_content["segments"] == []


def test_a_refused_clip_does_not_make_the_endpoint_text_only(monkeypatch: pytest.MonkeyPatch) -> None:
    script = [HTTPError(400, "cannot decode audio"), HTTPError(400, "cannot decode audio"), Transcription("Fine.")]
    with ScriptedOpenAI(script) as server:
        monkeypatch.setenv("COWORKENV_STT_BASE_URL", server.base_url)
        monkeypatch.setenv("COWORKENV_STT_MODEL", "picky")
        refused, ok = _calls(_episode([_clip("/a.wav", wav()), _clip("/b.wav", wav(0.75))]),
                             ("transcribe_audio", {"path": "/a.wav"}), ("transcribe_audio", {"path": "/b.wav"}))
        formats = [q.form["response_format"] for q in server.transcription_requests]
    assert refused.is_error and "refused a.wav: HTTP 400: cannot decode audio" in _text(refused)
    assert formats == ["verbose_json", "json", "verbose_json"] and ok.structured_content["text"] == "Fine."


def test_a_failing_or_slow_endpoint_is_a_clear_error_and_nothing_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(_req: Any) -> Transcription:
        time.sleep(3)
        return Transcription("too late")

    with ScriptedOpenAI([HTTPError(500, "decoder crashed"), slow, Transcription("At last.")]) as server:
        monkeypatch.setenv("COWORKENV_STT_BASE_URL", server.base_url)
        monkeypatch.setenv("COWORKENV_STT_MODEL", "whisper-test")
        monkeypatch.setenv("COWORKENV_STT_TIMEOUT", "0.5")
        ep = _episode([_clip("/vm/a.wav", wav())])
        (failed,) = _calls(ep, ("transcribe_audio", {"path": "/vm/a.wav"}))
        start = time.perf_counter()
        (timed_out,) = _calls(ep, ("transcribe_audio", {"path": "/vm/a.wav"}))
        took = time.perf_counter() - start
        monkeypatch.setenv("COWORKENV_STT_TIMEOUT", "10")
        (ok,) = _calls(ep, ("transcribe_audio", {"path": "/vm/a.wav"}))
    assert failed.is_error and "Error (unavailable)" in _text(failed)
    assert f"model whisper-test at {server.base_url}" in _text(failed) and "HTTP 500: decoder crashed" in _text(failed)
    assert timed_out.is_error and "within 0.5 s" in _text(timed_out) and "COWORKENV_STT_TIMEOUT" in _text(timed_out)
    assert took < 2.5  # bounded by the timeout, not by the slow server
    assert not ok.is_error and ok.structured_content["text"] == "At last."  # failures were not cached


def test_waiting_on_the_endpoint_does_not_count_against_the_call_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from workspace_sim.core.limits import WorkspaceLimits

    def thinking(_req: Any) -> Transcription:
        time.sleep(0.8)
        return Transcription("Worth the wait.")

    def factory() -> Workspace:
        return Workspace.create(WorkspaceConfig(services=["files"], limits=WorkspaceLimits(call_seconds=0.3)),
                                {"files": {"files": [_clip("/vm/a.wav", wav())]}})

    with ScriptedOpenAI([thinking]) as server:
        monkeypatch.setenv("COWORKENV_STT_BASE_URL", server.base_url)
        monkeypatch.setenv("COWORKENV_STT_MODEL", "m")
        (r,) = _calls(Episode(PythonEnvironment("slow", "Slow", "Listen.", factory, [])),
                      ("transcribe_audio", {"path": "/vm/a.wav"}))
    assert not r.is_error, _text(r)  # the endpoint's own timeout bounds the wait, not the 0.3 s budget
    assert r.structured_content["text"] == "Worth the wait."


def test_without_a_transcript_or_an_endpoint_the_error_says_how_to_configure_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ep = _episode([_clip("/vm/a.wav", wav())])
    (r,) = _calls(ep, ("transcribe_audio", {"path": "/vm/a.wav"}))
    assert r.is_error and "no transcript is available for /vm/a.wav" in _text(r)
    assert "COWORKENV_STT_MODEL" in _text(r) and "--stt-model" in _text(r)
    monkeypatch.setenv("COWORKENV_STT_BASE_URL", "http://127.0.0.1:9/v1")
    (r,) = _calls(ep, ("transcribe_audio", {"path": "/vm/a.wav"}))
    assert r.is_error and "but no model: set COWORKENV_STT_MODEL" in _text(r)
    monkeypatch.setenv("COWORKENV_STT_MODEL", "m")
    monkeypatch.setenv("COWORKENV_STT_TIMEOUT", "soon")
    (r,) = _calls(ep, ("transcribe_audio", {"path": "/vm/a.wav"}))
    assert r.is_error and "COWORKENV_STT_TIMEOUT must be a number of seconds" in _text(r)


# --- formats and bad input ----------------------------------------------------------------------------------------

def test_m4a_and_ogg_are_audio_in_listings_reads_and_transcripts() -> None:
    ep = _episode([_clip("/rec/call.m4a", m4a(3.5), "Call notes."), _clip("/rec/memo.ogg", ogg(2.0), "Memo.")])
    info_m4a, info_ogg, read_m4a, read_ogg, listing = _calls(
        ep, ("get_file_info", {"path": "/rec/call.m4a"}), ("get_file_info", {"path": "/rec/memo.ogg"}),
        ("read_media_file", {"path": "/rec/call.m4a"}), ("read_media_file", {"path": "/rec/memo.ogg"}),
        ("list_directory", {"path": "/rec"}))
    assert info_m4a.structured_content["mime_type"] == "audio/mp4"
    assert info_ogg.structured_content["mime_type"] == "audio/ogg"
    for r, mime, seconds, raw, said in ((read_m4a, "audio/mp4", 3.5, m4a(3.5), "Call notes."),
                                        (read_ogg, "audio/ogg", 2.0, ogg(2.0), "Memo.")):
        assert [(c.type, getattr(c, "mime_type", None)) for c in r.content] == [("text", None), ("audio", mime)]
        assert base64.b64decode(r.content[1].data) == raw and r.structured_content["seconds"] == seconds
        assert r.structured_content["transcript"]["text"] == said
    assert "[FILE] call.m4a" in _text(listing) and "[FILE] memo.ogg" in _text(listing)


def test_bad_input_is_answered_naming_what_is_wrong() -> None:
    ep = _episode([_clip("/r/receipt.png", png()), {"path": "/r/notes.txt", "content": "hello"},
                   _clip("/r/broken.m4a", b"this is not audio at all"), _clip("/vm/a.wav", wav())])
    image, text, missing, broken, folder = _calls(
        ep, ("transcribe_audio", {"path": "/r/receipt.png"}), ("transcribe_audio", {"path": "/r/notes.txt"}),
        ("transcribe_audio", {"path": "/vm/b.wav"}), ("transcribe_audio", {"path": "/r/broken.m4a"}),
        ("transcribe_audio", {"path": "/vm"}))
    assert image.is_error and "/r/receipt.png is image/png, not an audio file; read it with read_media_file" in _text(image)
    assert text.is_error and "/r/notes.txt is text/plain, not an audio file; read it with read_text_file" in _text(text)
    assert missing.is_error and "file /vm/b.wav not found; did you mean /vm/a.wav?" in _text(missing)
    assert broken.is_error and "/r/broken.m4a is not a WAV, MP3, M4A or Ogg audio file" in _text(broken)
    assert folder.is_error and "/vm is a folder, not a file" in _text(folder)


def test_serve_sets_the_endpoint_for_its_workers_and_refuses_a_bad_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    from coworkenv.commands import serve_lean, serving

    for var in STT_VARS:
        monkeypatch.setenv(var, "")  # restored (unset) after the test, whatever serve writes
    args = {**serve_lean.DEFAULTS, "python": "mcp_server.demo:environment", "stt_base_url": "http://127.0.0.1:9/v1"}
    with pytest.raises(typer.BadParameter, match="no model: set COWORKENV_STT_MODEL"):
        serving.serve_command(**args)
    assert serve_lean.parse(["--python", "m:f", "--stt-model", "whisper-1", "--stt-base-url", "http://h/v1"]) == {
        **serve_lean.DEFAULTS, "python": "m:f", "stt_model": "whisper-1", "stt_base_url": "http://h/v1"}
    monkeypatch.setattr(serving, "source_from_options", lambda *a: (_ for _ in ()).throw(SystemExit("started")))
    with pytest.raises(SystemExit, match="started"):
        serving.serve_command(**{**args, "stt_model": "whisper-1"})
    got = speech_to_text.settings_from_env()  # what the server's calls (and its workers') read
    assert got is not None and (got.model, got.base_url) == ("whisper-1", "http://127.0.0.1:9/v1")
