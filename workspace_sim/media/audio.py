"""Audio: WAV read with the standard library's `wave`, MP3 recognised by its ID3 tag or frame sync."""

from __future__ import annotations

import io
import wave

from workspace_sim.media.limits import LIMITS, Limits, MediaError


def inspect_audio(raw: bytes, path: str, limits: Limits = LIMITS) -> tuple[str, float | None]:
    """The (MIME type, duration in seconds or None when unknown) of a WAV or MP3 clip, checked."""
    if raw[:4] == b"RIFF" and raw[8:12] == b"WAVE":
        try:
            with wave.open(io.BytesIO(raw)) as w:
                frames, rate = w.getnframes(), w.getframerate()
        except (wave.Error, EOFError) as e:
            raise MediaError(f"{path} is not a readable WAV file ({e})") from None
        seconds = frames / rate if rate else 0.0
        if seconds > limits.audio_seconds:
            raise MediaError(f"{path} lasts {seconds:.0f} s; at most {limits.audio_seconds:.0f} s are allowed")
        return "audio/wav", round(seconds, 3)
    if raw[:3] == b"ID3" or (len(raw) > 1 and raw[0] == 0xFF and raw[1] & 0xE0 == 0xE0):
        return "audio/mpeg", None
    raise MediaError(f"{path} is neither a WAV nor an MP3 file (its first bytes are {raw[:12]!r})")
