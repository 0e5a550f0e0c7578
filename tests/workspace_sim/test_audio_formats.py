"""M4A and Ogg beside WAV and MP3 in the files service: typed by extension, timed from their headers without
decoding (M4A's movie header, Ogg's last granule position; Opus less its pre-skip), held to the 15-minute limit,
and a damaged one refused naming the file; transcripts stored as WebVTT keep cue identifiers, voices and
entities readable."""

from __future__ import annotations

import struct
from typing import Any

from media_samples import b64, m4a, ogg

from workspace_sim import Workspace, WorkspaceConfig


def _ws(*files: dict[str, Any]) -> Workspace:
    return Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": list(files)}})


def _bin(path: str, raw: bytes, **extra: Any) -> dict[str, Any]:
    return {"path": path, "content": b64(raw), "encoding": "base64", **extra}


def _opus(seconds: float, pre_skip: int = 312) -> bytes:
    def page(granule: int, flags: int, seq: int, body: bytes) -> bytes:
        return b"OggS" + struct.pack("<BBqIIIB", 0, flags, granule, 7, seq, 0, 1) + bytes([len(body)]) + body

    head = b"OpusHead" + struct.pack("<BBHIhB", 1, 1, pre_skip, 48_000, 0, 0)
    return page(0, 2, 0, head) + page(int(seconds * 48_000) + pre_skip, 4, 1, b"\x00" * 4)


def test_m4a_and_ogg_are_typed_timed_and_held_to_the_limit() -> None:
    ws = _ws(_bin("/a/call.M4A", m4a(12.0)), _bin("/a/memo.ogg", ogg(4.0)), _bin("/a/voice.ogg", _opus(2.5)),
             _bin("/a/long.m4a", m4a(901.0)), _bin("/a/bad.ogg", b"OggS\x07" + b"\x00" * 40))
    assert [ws.call("get_file_info", {"path": p}).data["mime_type"] for p in ("/a/call.M4A", "/a/memo.ogg")] == \
        ["audio/mp4", "audio/ogg"]
    for path, mime, seconds in (("/a/call.M4A", "audio/mp4", 12.0), ("/a/memo.ogg", "audio/ogg", 4.0),
                                ("/a/voice.ogg", "audio/ogg", 2.5)):
        r = ws.call("read_media_file", {"path": path})
        assert r.ok and (r.data["mime_type"], r.data["seconds"]) == (mime, seconds), r.error
    long = ws.call("read_media_file", {"path": "/a/long.m4a"})
    assert not long.ok and long.error.message == "/a/long.m4a lasts 901 s; at most 900 s are allowed"
    bad = ws.call("transcribe_audio", {"path": "/a/bad.ogg"})
    assert not bad.ok and "/a/bad.ogg is not a readable Ogg file" in bad.error.message


def test_a_webvtt_transcript_keeps_its_cues_voices_and_entities() -> None:
    vtt = ("WEBVTT - call with the supplier\nKind: captions\n\nSTYLE\n::cue { color: yellow }\n\n"
           "intro\n01:00:01.250 --> 01:00:03.000 align:start\n<v.loud Sam Ortiz>Order <b>4512</b> is late &lt;again&gt;.\n"
           "\n01:00:03.000 --> 01:00:05.500\nIt ships on Friday.\nSorry!\n")
    ws = _ws(_bin("/a/call.m4a", m4a(), transcript=vtt))
    data = ws.call("transcribe_audio", {"path": "/a/call.m4a"}).data
    assert data["segments"] == [{"start": 3601.25, "end": 3603.0, "text": "Sam Ortiz: Order 4512 is late <again>."},
                                {"start": 3603.0, "end": 3605.5, "text": "It ships on Friday. Sorry!"}]
    assert data["text"] == "Sam Ortiz: Order 4512 is late <again>.\nIt ships on Friday. Sorry!"
    assert "[1:00:01.2-1:00:03.0] Sam Ortiz: Order 4512" in ws.call("transcribe_audio", {"path": "/a/call.m4a"}).text
    moved = ws.call("move_file", {"source": "/a/call.m4a", "destination": "/a/kept.m4a"})
    assert moved.ok and ws.call("transcribe_audio", {"path": "/a/kept.m4a"}).data["text"] == data["text"]
    replaced = ws.call("write_file", {"path": "/a/kept.m4a", "content": "now a text file"})
    assert replaced.ok and "not an audio file" in ws.call("transcribe_audio", {"path": "/a/kept.m4a"}).error.message
