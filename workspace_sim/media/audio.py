"""Audio: WAV read with the standard library's `wave`; MP3 recognised by its ID3 tag or frame sync; M4A (MPEG-4
audio) by its `ftyp` box, its length from the movie header (`moov/mvhd`); Ogg (Vorbis, Opus) by its `OggS` pages,
its length from the last page's granule position and the stream's sample rate. Nothing is decoded: a clip is
checked and served as it is stored."""

from __future__ import annotations

import io
import struct
import wave
from typing import Iterator

from workspace_sim.media.limits import LIMITS, Limits, MediaError


def inspect_audio(raw: bytes, path: str, limits: Limits = LIMITS) -> tuple[str, float | None]:
    """The (MIME type, duration in seconds or None when unknown) of a WAV, MP3, M4A or Ogg clip, checked."""
    if raw[:4] == b"RIFF" and raw[8:12] == b"WAVE":
        try:
            with wave.open(io.BytesIO(raw)) as w:
                frames, rate = w.getnframes(), w.getframerate()
        except (wave.Error, EOFError) as e:
            raise MediaError(f"{path} is not a readable WAV file ({e})") from None
        mime, seconds = "audio/wav", frames / rate if rate else 0.0
    elif raw[4:8] == b"ftyp":
        mime, seconds = "audio/mp4", _mp4_seconds(raw, path)
    elif raw[:4] == b"OggS":
        mime, seconds = "audio/ogg", _ogg_seconds(raw, path)
    elif raw[:3] == b"ID3" or (len(raw) > 1 and raw[0] == 0xFF and raw[1] & 0xE0 == 0xE0):
        return "audio/mpeg", None
    else:
        raise MediaError(f"{path} is not a WAV, MP3, M4A or Ogg audio file (its first bytes are {raw[:12]!r})")
    if seconds is not None and seconds > limits.audio_seconds:
        raise MediaError(f"{path} lasts {seconds:.0f} s; at most {limits.audio_seconds:.0f} s are allowed")
    return mime, None if seconds is None else round(seconds, 3)


def _boxes(raw: bytes, start: int, end: int, path: str) -> Iterator[tuple[bytes, int, int]]:
    """The (type, body start, end) of each MP4 box between `start` and `end`."""
    i = start
    while i + 8 <= end:
        size, kind = struct.unpack(">I4s", raw[i:i + 8])
        head = 8
        if size == 1 and i + 16 <= end:
            size, head = struct.unpack(">Q", raw[i + 8:i + 16])[0], 16
        elif size == 0:  # the last box runs to the end
            size = end - i
        if size < head or i + size > end:
            raise MediaError(f"{path} is not a readable M4A file (box {kind!r} at byte {i} claims {size:,} bytes "
                             f"of {end - i:,})")
        yield kind, i + head, i + size
        i += size


def _mp4_seconds(raw: bytes, path: str) -> float | None:
    """An M4A clip's length from its movie header (None when it has none, as a fragmented file may not)."""
    for kind, start, end in _boxes(raw, 0, len(raw), path):
        if kind != b"moov":
            continue
        for inner, s, e in _boxes(raw, start, end, path):
            if inner != b"mvhd" or e - s < 20:
                continue
            if raw[s] == 1 and e - s >= 32:  # version 1: 64-bit times
                scale, duration = struct.unpack(">IQ", raw[s + 20:s + 32])
            else:
                scale, duration = struct.unpack(">II", raw[s + 12:s + 20])
            return duration / scale if scale else None
    return None


def _ogg_seconds(raw: bytes, path: str) -> float | None:
    """An Ogg clip's length: the last page's granule position over the stream's rate (Vorbis: its identification
    header's; Opus: 48 kHz less the pre-skip); None for another codec or a stream whose end says nothing."""
    if len(raw) < 28 or raw[4] != 0:
        raise MediaError(f"{path} is not a readable Ogg file (its first page header is damaged)")
    body = raw[27 + raw[26]:]
    if body[:7] == b"\x01vorbis" and len(body) >= 16:
        rate, skip = struct.unpack("<I", body[12:16])[0], 0
    elif body[:8] == b"OpusHead" and len(body) >= 12:
        rate, skip = 48_000, struct.unpack("<H", body[10:12])[0]
    else:
        return None
    last = raw.rfind(b"OggS")
    if last < 0 or last + 14 > len(raw):
        return None
    granule = struct.unpack("<q", raw[last + 6:last + 14])[0]
    return max(granule - skip, 0) / rate if rate and granule >= 0 else None
