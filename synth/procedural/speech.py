"""Voice memos and calls spoken by a local text-to-speech engine (eSpeak NG) from the world's own script, so
the truth is known by construction, with the wear of a real recording drawn from a seed.

`speak` runs `espeak-ng` on the script (text on standard input, a WAV file out; no network, no downloaded
voices: the Debian package's data) and returns 16-bit mono WAV at 11,025 Hz. eSpeak NG is deterministic: the
same script, voice, rate and pitch give the same samples on the same engine version. `wear` adds what a phone
recording has, from a seed: `worn` a little hiss and a lower level, `rough` the telephone band (8 kHz, muffled)
and more noise. Where the engine is not installed `available()` is False and templates fall back to evidence
of another kind with a note saying so (`bash .ci/setup_tts.sh` installs it).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
import wave
from functools import lru_cache
from pathlib import Path

ENGINE = "espeak-ng"
VOICES = ("en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-us+f3", "en-gb+f4")
RATE = 11_025
MISSING = (f"audio evidence skipped: the text-to-speech engine {ENGINE} is not installed "
           "(bash .ci/setup_tts.sh, or apt-get install espeak-ng); a handwritten message slip stands in for the clip")


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether the engine is on PATH."""
    return shutil.which(ENGINE) is not None


def _wav(samples: "list[int] | object", rate: int) -> bytes:
    import numpy as np

    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.asarray(samples, dtype="<i2").tobytes())
    return buf.getvalue()


def _samples(raw: bytes) -> tuple["object", int]:
    import numpy as np

    with wave.open(io.BytesIO(raw)) as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 1:
            raise ValueError("expected 16-bit mono WAV")
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64), w.getframerate()


def speak(script: str, voice: str = "en-us", wpm: int = 160, pitch: int = 50) -> bytes:
    """The script spoken by eSpeak NG, as 16-bit mono WAV at `RATE` Hz. RuntimeError when the engine is
    missing or fails (with its message)."""
    import numpy as np

    if not available():
        raise RuntimeError(MISSING)
    if voice not in VOICES:
        raise ValueError(f"voice must be one of {', '.join(VOICES)}, got {voice!r}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "speech.wav")
        done = subprocess.run([ENGINE, "-v", voice, "-s", str(wpm), "-p", str(pitch), "-w", str(out)],
                              input=script.encode(), capture_output=True, timeout=60)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError(f"{ENGINE} failed ({done.returncode}): {done.stderr.decode(errors='replace')[:300]}")
        x, rate = _samples(out.read_bytes())
    if rate == 2 * RATE:  # eSpeak NG speaks at 22,050 Hz: average pairs (a low-pass) and keep every other one
        x = (x[: len(x) // 2 * 2].reshape(-1, 2)).mean(axis=1)
    elif rate != RATE:
        x = np.interp(np.arange(0, len(x), rate / RATE), np.arange(len(x)), x)
    return _wav(np.clip(np.round(x), -32768, 32767), RATE)


def wear(raw: bytes, level: str, seed: int) -> bytes:
    """A recording of the clip at `level` ('clean', 'worn' or 'rough'), its noise drawn from `seed`."""
    import numpy as np

    from .render import LEVELS

    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    if level == "clean":
        return raw
    x, rate = _samples(raw)
    rng = np.random.Generator(np.random.PCG64(seed))  # the same stream on every platform
    if level == "rough":  # the telephone band: 8 kHz, muffled by a short moving average
        x = np.interp(np.arange(0, len(x), rate / 8000), np.arange(len(x)), x)
        x = np.convolve(x, np.ones(3) / 3, mode="same")
        rate = 8000
    gain = rng.uniform(0.55, 0.8) if level == "rough" else rng.uniform(0.7, 0.9)
    hiss = rng.normal(0, 900 if level == "rough" else 300, len(x))
    hum = 200 * np.sin(2 * np.pi * 50 * np.arange(len(x)) / rate) if level == "rough" else 0
    return _wav(np.clip(np.round(x * gain + hiss + hum), -32768, 32767), rate)
