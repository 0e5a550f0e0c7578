"""Media files of the workspace: kinds and limits, images, audio, PDFs, spreadsheets and office documents.

A core module (like `money`): the files service reads and writes media through it and the file predicates read
spreadsheet cells and document text through it, so no service is imported by the core. Every reader checks the
documented limits (`limits.py`) before it decodes anything and raises `MediaError` naming the file and what is
wrong; writers produce byte-identical files for the same input (fixed zip timestamps and document properties).
A tool result that carries images or audio lists them under `media` (`parts.py`): the MCP layer sends them as
image or audio content and a text channel sees a placeholder naming the file, its MIME type, size and hash.
Reads and writes are pure functions of the bytes, so `memo.py` keeps their results per distinct bytes (bounded).
A photo's EXIF metadata (capture time, camera, orientation, GPS) is read by `exif.py`: corrupt fields are named,
never fatal.
An audio clip's transcript (`transcripts.py`: stored with the file as text or WebVTT) is what an agent without
audio input reads; `speech_to_text.py` asks a configured OpenAI-compatible endpoint for clips without one, once per
distinct bytes.
"""

from __future__ import annotations

from workspace_sim.media.limits import LIMITS, MediaError, media_class, mime_for_path
from workspace_sim.media.parts import MEDIA_KEY, MediaPart, media_part, media_parts, placeholder, strip_media

__all__ = ["LIMITS", "MEDIA_KEY", "MediaError", "MediaPart", "media_class", "media_part", "media_parts",
           "mime_for_path", "placeholder", "strip_media"]
