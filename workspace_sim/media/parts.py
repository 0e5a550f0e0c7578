"""Images and audio inside a tool result: the `media` list that the MCP layer turns into image or audio content.

A media tool returns structured data with `media: [{kind, mime_type, name, size, sha256, data}]` (`data` the
file's bytes in base64, the same string the file record stores, so a record file keeps it once as a blob). The
text rendering names each part in a placeholder; `strip_media` leaves the bytes out of the structured copy the
MCP layer sends next to the image content, so the bytes travel once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

MEDIA_KEY = "media"
MediaKind = Literal["image", "audio"]


@dataclass(frozen=True, slots=True)
class MediaPart:
    """One image or audio clip of a tool result."""

    kind: MediaKind
    mime_type: str
    name: str
    size: int
    sha256: str
    data: str  # base64

    def to_json(self) -> dict[str, Any]:
        """The part as the tool result's JSON holds it."""
        return {"kind": self.kind, "mime_type": self.mime_type, "name": self.name, "size": self.size,
                "sha256": self.sha256, "data": self.data}


def media_part(kind: MediaKind, mime_type: str, name: str, raw: bytes, data_b64: str) -> MediaPart:
    """A part for bytes `raw` whose base64 text is `data_b64` (given, so a stored file's string is reused)."""
    return MediaPart(kind, mime_type, name, len(raw), hashlib.sha256(raw).hexdigest(), data_b64)


def media_parts(data: Any) -> tuple[MediaPart, ...]:
    """The media parts of a tool result's data (none when it has no well-formed `media` list)."""
    items = data.get(MEDIA_KEY) if isinstance(data, dict) else None
    if not isinstance(items, list):
        return ()
    out = []
    for m in items:
        if isinstance(m, dict) and m.get("kind") in ("image", "audio") and isinstance(m.get("data"), str):
            out.append(MediaPart(m["kind"], str(m.get("mime_type", "")), str(m.get("name", "")),
                                 int(m.get("size", 0)), str(m.get("sha256", "")), m["data"]))
    return tuple(out)


def placeholder(part: MediaPart) -> str:
    """What a text-only channel shows in place of the part: kind, name, MIME type, size and a short hash."""
    return f"[{part.kind}: {part.name} ({part.mime_type}, {part.size:,} bytes, sha256:{part.sha256[:16]})]"


def strip_media(data: Any) -> Any:
    """The data with each media part's bytes left out (the rest of the part kept)."""
    if not isinstance(data, dict) or not isinstance(data.get(MEDIA_KEY), list):
        return data
    return {**data, MEDIA_KEY: [{k: v for k, v in m.items() if k != "data"} if isinstance(m, dict) else m
                                for m in data[MEDIA_KEY]]}
