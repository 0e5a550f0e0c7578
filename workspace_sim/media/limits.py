"""The media kinds the workspace knows (by extension, independent of the host's MIME tables) and their limits."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import zipfile

MediaClass = Literal["image", "audio", "pdf", "sheet", "document", "other"]

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

# One table, not the host's mimetypes database (which differs between machines): the same path has the same type.
MIME_BY_EXTENSION = {
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
    "wav": "audio/wav", "mp3": "audio/mpeg", "m4a": "audio/mp4", "ogg": "audio/ogg", "pdf": "application/pdf",
    "xlsx": XLSX, "csv": "text/csv", "docx": DOCX, "pptx": PPTX,
}
_CLASS = {"image/png": "image", "image/jpeg": "image", "image/gif": "image", "image/webp": "image",
          "audio/wav": "audio", "audio/x-wav": "audio", "audio/mpeg": "audio", "audio/mp4": "audio",
          "audio/x-m4a": "audio", "audio/ogg": "audio", "application/pdf": "pdf",
          XLSX: "sheet", "text/csv": "sheet", DOCX: "document", PPTX: "document"}


@dataclass(frozen=True)
class Limits:
    """What a media file may be; a file past any of these is refused with the limit named."""

    image_bytes: int = 10 * 2**20
    image_pixels: int = 40_000_000  # width x height; a 200-megapixel image (a decompression bomb) is refused
    audio_bytes: int = 25 * 2**20
    audio_seconds: float = 900.0
    pdf_bytes: int = 20 * 2**20
    pdf_pages: int = 500
    pdf_pages_per_read: int = 20
    pdf_text_chars: int = 2_000_000  # text extracted from one read
    office_bytes: int = 10 * 2**20  # xlsx, docx, pptx as stored
    unzipped_bytes: int = 100 * 2**20  # their members decompressed, all together
    zip_ratio: int = 200  # a member may decompress to at most this many times its stored size
    zip_members: int = 5_000
    sheet_cells_per_read: int = 50_000
    sheet_cells_per_write: int = 50_000
    document_chars: int = 2_000_000

    def bytes_for(self, kind: str) -> int | None:
        """The size limit of a media class (None: no media limit beyond the workspace's own)."""
        return {"image": self.image_bytes, "audio": self.audio_bytes, "pdf": self.pdf_bytes,
                "sheet": self.office_bytes, "document": self.office_bytes}.get(kind)


LIMITS = Limits()


class MediaError(ValueError):
    """A media file that cannot be read or written: corrupt, of the wrong kind, or past a limit."""


def mime_for_path(path: str) -> str | None:
    """The MIME type the workspace gives a path's extension, or None when it is not a media kind it knows."""
    name = path.rsplit("/", 1)[-1]
    return MIME_BY_EXTENSION.get(name.rpartition(".")[2].lower()) if "." in name else None


def media_class(mime_type: str) -> MediaClass:
    """The class of a MIME type: image, audio, pdf, sheet, document, or other."""
    return _CLASS.get(mime_type, "other")  # type: ignore[return-value]


def check_size(path: str, mime_type: str, size: int, limits: Limits = LIMITS) -> None:
    """Refuse a file bigger than its class allows."""
    cap = limits.bytes_for(media_class(mime_type))
    if cap is not None and size > cap:
        raise MediaError(f"{path} is {size:,} bytes; a {mime_type} file may be at most {cap:,} bytes")


def open_zip(raw: bytes, path: str, limits: Limits = LIMITS) -> zipfile.ZipFile:
    """An office file's zip archive, checked against zip bombs before any member is decompressed."""
    import zipfile  # on use: the files service imports this module at every start

    try:
        z = zipfile.ZipFile(io.BytesIO(raw))
        infos = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise MediaError(f"{path} is not a valid office file (its zip archive cannot be read: {e})") from None
    if len(infos) > limits.zip_members:
        raise MediaError(f"{path} holds {len(infos):,} zip members; at most {limits.zip_members:,} are allowed")
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > max(info.compress_size, 1) * limits.zip_ratio and info.file_size > 2**20:
            raise MediaError(f"{path}: member {info.filename} would decompress {info.file_size:,} bytes from "
                             f"{info.compress_size:,} (more than {limits.zip_ratio}x); refused as a zip bomb")
    if total > limits.unzipped_bytes:
        raise MediaError(f"{path} would decompress to {total:,} bytes; at most {limits.unzipped_bytes:,} are allowed")
    return z


_MODIFIED = re.compile(rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)")


def repack_zip(raw: bytes) -> bytes:
    """The same archive with every member's timestamp fixed (1980-01-01) and the document's modified time set to
    2000-01-01, so a written file's bytes depend only on its content: office libraries stamp both with the clock."""
    import zipfile  # on use: the files service imports this module at every start

    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o600 << 16
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = _MODIFIED.sub(rb"\g<1>2000-01-01T00:00:00Z\g<2>", body)
            dst.writestr(fixed, body)
    return out.getvalue()
