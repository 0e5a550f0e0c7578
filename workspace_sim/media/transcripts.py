"""Transcripts of audio clips: what is said, as text, with each segment's start and end where they are known.

A file's stored transcript (the `transcript` field of a files record: a spec's own for a real recording, a
generated voicemail's script) is plain text, or WebVTT (text that starts with `WEBVTT`) whose cues time each
segment. `parse_transcript` reads either and raises `MediaError` naming the file and the line that is wrong;
`render_transcript` is what a text channel shows. A speech-to-text endpoint's answer (`speech_to_text.py`) becomes
the same `Transcript`.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from workspace_sim.media.limits import MediaError

Source = Literal["file", "speech_to_text"]
SOURCE_WORDS = {"file": "stored with the file", "speech_to_text": "speech to text"}

_TIME = r"(?:(\d+):)?([0-5]\d):([0-5]\d)[.,](\d{3})"
_CUE = re.compile(rf"^\s*{_TIME}\s+-->\s+{_TIME}(?:\s.*)?$")
_VOICE = re.compile(r"<v(?:\.[^\s>]*)?\s+([^>]*)>")
_TAG = re.compile(r"</?[^>]*>")


@dataclass(frozen=True, slots=True)
class Segment:
    """One stretch of speech: its start and end in seconds (None when not known) and its text."""

    start: float | None
    end: float | None
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "text": self.text}


@dataclass(frozen=True, slots=True)
class Transcript:
    """What is said in a clip: the whole text, its timed segments (none when only the text is known), where it
    came from, and the model that heard it (for a speech-to-text transcript)."""

    text: str
    segments: tuple[Segment, ...] = ()
    source: Source = "file"
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "text": self.text,
                               "segments": [s.to_json() for s in self.segments]}
        if self.model is not None:
            out["model"] = self.model
        return out


def _seconds(h: str | None, m: str, s: str, ms: str) -> float:
    return int(h or 0) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000


def _cue_text(lines: list[str]) -> str:
    text = " ".join(line.strip() for line in lines if line.strip())
    return html.unescape(_TAG.sub("", _VOICE.sub(r"\1: ", text))).strip()


@lru_cache(maxsize=1024)
def parse_transcript(text: str, path: str = "the transcript") -> Transcript:
    """The transcript stored as `text`: WebVTT when it starts with WEBVTT (each cue a timed segment), else plain
    text; MediaError naming `path` and the line when it is empty or a WebVTT cue's timing is malformed."""
    body = text.lstrip("\ufeff")
    if not body.startswith("WEBVTT"):
        if not body.strip():
            raise MediaError(f"{path}: the transcript is empty; leave it out when none is known")
        return Transcript(body.strip())
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    segments: list[Segment] = []
    i = 1
    while i < len(lines):
        while i < len(lines) and not lines[i].strip():
            i += 1
        block_start = i
        block: list[str] = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i])
            i += 1
        if not block or (block_start == 1 and "-->" not in block[0]):  # the header's own lines
            continue
        if block[0].startswith(("NOTE", "STYLE", "REGION")) and "-->" not in block[0]:
            continue
        timing = 0 if "-->" in block[0] else 1  # a cue may have an identifier line first
        m = _CUE.match(block[timing]) if timing < len(block) else None
        if m is None:
            raise MediaError(f"{path}: WebVTT line {block_start + timing + 1} is not a cue timing like "
                             f"'00:01.000 --> 00:04.500' (got {block[min(timing, len(block) - 1)][:80]!r})")
        start, end = _seconds(*m.groups()[:4]), _seconds(*m.groups()[4:])
        if end < start:
            raise MediaError(f"{path}: WebVTT line {block_start + timing + 1} ends ({end:g} s) before it starts "
                             f"({start:g} s)")
        words = _cue_text(block[timing + 1:])
        if words:
            segments.append(Segment(round(start, 3), round(end, 3), words))
    if not segments:
        raise MediaError(f"{path}: the WebVTT transcript has no cue with text")
    return Transcript("\n".join(s.text for s in segments), tuple(segments))


def clock(seconds: float) -> str:
    """Seconds as m:ss.s (h:mm:ss.s past an hour)."""
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{int(h)}:{int(m):02d}:{s:04.1f}" if h else f"{int(m)}:{s:04.1f}"


def render_transcript(t: dict[str, Any]) -> str:
    """A transcript's JSON (`Transcript.to_json`) as a text channel shows it: a segment per line with its times
    where they are known, else the text."""
    lines = []
    for s in t.get("segments") or ():
        times = f"[{clock(s['start'])}-{clock(s['end'])}] " if s.get("start") is not None and s.get("end") is not None \
            else ""
        lines.append(times + s["text"])
    return "\n".join(lines) if lines else (t.get("text") or "(no speech heard)")
