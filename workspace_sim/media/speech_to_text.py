"""Transcripts from an OpenAI-compatible speech-to-text endpoint (`POST /v1/audio/transcriptions`, through the
`openai` client), for audio files that have none stored with them, cached by the clip's content hash.

The endpoint is configured by the environment, as the project's other OpenAI-compatible endpoints are:
`COWORKENV_STT_MODEL` (e.g. whisper-1; setting it turns transcription on), `COWORKENV_STT_BASE_URL` (default
https://api.openai.com/v1), `COWORKENV_STT_API_KEY` (else `COWORKENV_OPENAI_API_KEY`, else `OPENAI_API_KEY`;
local servers need none), `COWORKENV_STT_TIMEOUT` (seconds one transcription may take, default 30, at most 300;
no retries, so a call never waits longer) and `COWORKENV_STT_CACHE` (a folder that keeps transcripts across runs
and processes). `coworkenv serve --stt-model/--stt-base-url` set the first two for the server and its workers.

A clip is sent once: its transcript is kept under the sha256 of its bytes, in memory (the newest
`MEMORY_ENTRIES`) and, with a cache folder, as `<sha256>.json` there (written atomically; an unreadable file is
ignored and the clip sent again). Two calls for the same bytes at once send them once: the second waits for the
first. The request asks for `verbose_json` (segments with their times); a server that refuses it (HTTP 400) is
asked for `json` (the text only) in the time left, and once that works the choice is remembered per endpoint and
model. Every failure is a
`TranscriptionError` whose message names the endpoint and what happened.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from workspace_sim.media.transcripts import Segment, Transcript

ENV = {"model": "COWORKENV_STT_MODEL", "base_url": "COWORKENV_STT_BASE_URL", "api_key": "COWORKENV_STT_API_KEY",
       "timeout": "COWORKENV_STT_TIMEOUT", "cache": "COWORKENV_STT_CACHE"}
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT, MAX_TIMEOUT = 30.0, 300.0
MEMORY_ENTRIES = 4096
HOW_TO = (f"to configure one, set {ENV['model']} to the model of an OpenAI-compatible speech-to-text endpoint and "
          f"{ENV['base_url']} to its base URL (default {DEFAULT_BASE_URL}), or serve with --stt-model and "
          "--stt-base-url")


class SettingsError(ValueError):
    """A speech-to-text setting that cannot be used; the message names the variable."""


class TranscriptionError(RuntimeError):
    """The endpoint gave no transcript: unreachable, too slow, refused the clip, or answered nonsense."""


@dataclass(frozen=True)
class SpeechToText:
    """Where to send clips: the endpoint, its model, the key, the time one clip may take, the cache folder."""

    model: str
    base_url: str = DEFAULT_BASE_URL
    api_key: str = field(default="", repr=False)
    timeout: float = DEFAULT_TIMEOUT
    cache: str | None = None

    def describe(self) -> str:
        """A one-line description without the key."""
        return f"model {self.model} at {self.base_url}"


def settings_from_env(env: Mapping[str, str] | None = None) -> SpeechToText | None:
    """The endpoint the environment configures, or None when none is (no model and no base URL set);
    SettingsError naming the variable for a base URL without a model, a bad URL or a bad timeout."""
    env = os.environ if env is None else env
    values = {name: env[var].strip() for name, var in ENV.items() if env.get(var, "").strip()}
    if not values.get("model"):
        if values.get("base_url"):
            raise SettingsError(f"a speech-to-text endpoint is set ({ENV['base_url']}) but no model: set "
                                f"{ENV['model']} (e.g. whisper-1)")
        return None
    base = values.get("base_url", DEFAULT_BASE_URL).rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise SettingsError(f"{ENV['base_url']} must start with http:// or https:// (got {base!r})")
    timeout = DEFAULT_TIMEOUT
    if "timeout" in values:
        try:
            timeout = float(values["timeout"])
        except ValueError:
            timeout = -1.0
        if not 0 < timeout <= MAX_TIMEOUT:
            raise SettingsError(f"{ENV['timeout']} must be a number of seconds above 0 and at most {MAX_TIMEOUT:g} "
                                f"(got {values['timeout']!r})")
    key = values.get("api_key") or env.get("COWORKENV_OPENAI_API_KEY") or env.get("OPENAI_API_KEY") or ""
    return SpeechToText(values["model"], base, key, timeout, values.get("cache"))


class TranscriptCache:
    """Transcripts by the sha256 of the clip's bytes: the newest in memory, all of them in `folder` when given."""

    def __init__(self, max_entries: int = MEMORY_ENTRIES) -> None:
        self.max_entries = max_entries
        self._mem: OrderedDict[str, Transcript] = OrderedDict()
        self._lock = threading.Lock()
        self._busy: dict[str, threading.Lock] = {}  # sha256 -> held while its clip is being transcribed

    def get(self, sha256: str, folder: str | None = None) -> Transcript | None:
        """The transcript kept for these bytes, or None."""
        with self._lock:
            hit = self._mem.get(sha256)
            if hit is not None:
                self._mem.move_to_end(sha256)
                return hit
        if folder is None:
            return None
        try:
            doc = json.loads((Path(folder) / f"{sha256}.json").read_text(encoding="utf-8"))
            t = Transcript(str(doc["text"]), tuple(Segment(s.get("start"), s.get("end"), str(s["text"]))
                                                   for s in doc.get("segments") or ()),
                           "speech_to_text", doc.get("model"))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # absent, damaged or hand-made: the clip is sent again
        self._remember(sha256, t)
        return t

    def put(self, sha256: str, t: Transcript, folder: str | None = None) -> None:
        """Keep `t` for these bytes (in the folder too, atomically, when one is given)."""
        self._remember(sha256, t)
        if folder is not None:
            where = Path(folder)
            where.mkdir(parents=True, exist_ok=True)
            tmp = where / f".{sha256}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_text(json.dumps({"sha256": sha256, **t.to_json()}, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, where / f"{sha256}.json")

    def _remember(self, sha256: str, t: Transcript) -> None:
        with self._lock:
            self._mem[sha256] = t
            self._mem.move_to_end(sha256)
            while len(self._mem) > self.max_entries:
                self._mem.popitem(last=False)

    def busy(self, sha256: str) -> threading.Lock:
        """The lock held while these bytes are being transcribed (so they are sent once)."""
        with self._lock:
            return self._busy.setdefault(sha256, threading.Lock())

    def clear(self) -> None:
        """Forget every transcript held in memory (the folder keeps its own)."""
        with self._lock:
            self._mem.clear()
            self._busy.clear()


CACHE = TranscriptCache()
_CLIENTS: dict[tuple[str, str, float], Any] = {}
_TEXT_ONLY: set[tuple[str, str]] = set()  # (base_url, model) that refused verbose_json


def _client(s: SpeechToText) -> Any:
    import openai  # on first use: the files service imports this module at every start

    key = (s.base_url, s.api_key, s.timeout)
    c = _CLIENTS.get(key)
    if c is None:
        if len(_CLIENTS) > 16:
            _CLIENTS.clear()
        c = _CLIENTS[key] = openai.OpenAI(base_url=s.base_url, api_key=s.api_key or "not-needed",
                                          timeout=s.timeout, max_retries=0)
    return c


def transcribe(raw: bytes, name: str, mime_type: str, sha256: str, s: SpeechToText) -> Transcript:
    """The clip's transcript: kept already, else asked of the endpoint once (and kept); TranscriptionError when
    the endpoint gives none."""
    hit = CACHE.get(sha256, s.cache)
    if hit is not None:
        return hit
    with CACHE.busy(sha256):
        hit = CACHE.get(sha256, s.cache)  # another call may have transcribed the same bytes meanwhile
        if hit is not None:
            return hit
        t = _ask(raw, name, mime_type, s)
        CACHE.put(sha256, t, s.cache)
        return t


def _ask(raw: bytes, name: str, mime_type: str, s: SpeechToText) -> Transcript:
    """One clip's transcript from the endpoint, within `s.timeout` in all (the json retry gets what is left)."""
    import openai

    where = s.describe()
    text_only = (s.base_url, s.model) in _TEXT_ONLY
    start = time.perf_counter()

    def ask(fmt: str, timeout: float) -> Any:
        return _client(s).with_options(timeout=timeout).audio.transcriptions.create(
            file=(name, raw, mime_type), model=s.model, response_format=fmt)

    try:
        try:
            answer = ask("json" if text_only else "verbose_json", s.timeout)
        except openai.BadRequestError:
            left = s.timeout - (time.perf_counter() - start)
            if text_only or left <= 0:
                raise
            answer = ask("json", left)  # a server without verbose_json: the text alone
            _TEXT_ONLY.add((s.base_url, s.model))
    except openai.APITimeoutError:
        raise TranscriptionError(f"the speech-to-text endpoint ({where}) gave no transcript of {name} within "
                                 f"{s.timeout:g} s (raise {ENV['timeout']} for long clips)") from None
    except openai.APIConnectionError as e:
        raise TranscriptionError(f"cannot reach the speech-to-text endpoint ({where}): {e}") from None
    except openai.APIStatusError as e:
        raise TranscriptionError(f"the speech-to-text endpoint ({where}) refused {name}: HTTP {e.status_code}: "
                                 f"{_message(e)}") from None
    except openai.OpenAIError as e:
        raise TranscriptionError(f"the speech-to-text endpoint ({where}) failed on {name}: {e}") from None
    return _transcript(answer, name, s)


def _message(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
    return str(getattr(e, "message", e))[:300]


def _transcript(answer: Any, name: str, s: SpeechToText) -> Transcript:
    text = answer if isinstance(answer, str) else getattr(answer, "text", None)
    if not isinstance(text, str):
        raise TranscriptionError(f"the speech-to-text endpoint ({s.describe()}) answered {name} without a text")
    segments = []
    for seg in getattr(answer, "segments", None) or ():
        get = seg.get if isinstance(seg, dict) else (lambda k, seg=seg: getattr(seg, k, None))
        words, start, end = get("text"), get("start"), get("end")
        if isinstance(words, str) and words.strip():
            timed = isinstance(start, (int, float)) and isinstance(end, (int, float))
            segments.append(Segment(round(float(start), 3) if timed else None,
                                    round(float(end), 3) if timed else None, words.strip()))
    return Transcript(text.strip(), tuple(segments), "speech_to_text", s.model)
