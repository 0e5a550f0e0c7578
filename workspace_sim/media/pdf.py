"""PDFs with pypdf: a page's text layer where it has one, its embedded images where it is a scan.

A read is a pure function of the bytes and the pages asked for, so each distinct read is decoded once per
process (`memo.Memo`; validation replays the same reads many times) and handed out as fresh `PdfPage`s.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field

from workspace_sim.media.limits import LIMITS, Limits, MediaError
from workspace_sim.media.memo import Memo

_READS = Memo(size=256)
_IMAGE_MIME = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif"}


@dataclass
class PdfPage:
    """One page read: its text, and for a scanned page (no text) its images as (name, MIME type, bytes)."""

    number: int
    text: str
    images: list[tuple[str, str, bytes]] = field(default_factory=list)


def _reader(raw: bytes, path: str):  # noqa: ANN202 - pypdf's reader
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        r = PdfReader(io.BytesIO(raw), strict=False)
        if r.is_encrypted:
            raise MediaError(f"{path} is an encrypted PDF; it cannot be read")
        return r, len(r.pages)
    except MediaError:
        raise
    except Exception as e:
        raise MediaError(f"{path} is not a readable PDF ({type(e).__name__}: {e})") from None


def read_pages(raw: bytes, path: str, pages: list[int], limits: Limits = LIMITS) -> tuple[int, list[PdfPage]]:
    """The page count and the pages asked for (numbers from 1; empty: the first `pdf_pages_per_read`)."""
    try:
        key = (tuple(pages), limits)
        hash(key)
    except TypeError:
        return _read_pages(raw, path, pages, limits)
    n, got = _READS.get(raw, key, lambda: _read_pages(raw, path, pages, limits))
    return n, [PdfPage(p.number, p.text, list(p.images)) for p in got]


def _read_pages(raw: bytes, path: str, pages: list[int], limits: Limits) -> tuple[int, list[PdfPage]]:
    reader, n = _reader(raw, path)
    if n > limits.pdf_pages:
        raise MediaError(f"{path} has {n:,} pages; at most {limits.pdf_pages:,} are allowed")
    wanted = pages or list(range(1, min(n, limits.pdf_pages_per_read) + 1))
    if len(wanted) > limits.pdf_pages_per_read:
        raise MediaError(f"asked for {len(wanted)} pages; at most {limits.pdf_pages_per_read} per read")
    bad = [p for p in wanted if not 1 <= p <= n]
    if bad:
        raise MediaError(f"page {bad[0]} is not in {path}, which has pages 1-{n}")
    out, chars = [], 0
    for p in wanted:
        try:
            page = reader.pages[p - 1]
            text = page.extract_text() or ""
            images = []
            if not text.strip():
                for i, im in enumerate(page.images):
                    ext = im.name.rpartition(".")[2].lower()
                    mime = _IMAGE_MIME.get(ext)
                    data = im.data if mime else None
                    if mime is None:  # an image pypdf cannot hand over as a file: re-encode it as PNG
                        buf = io.BytesIO()
                        im.image.save(buf, "PNG")
                        mime, data = "image/png", buf.getvalue()
                    images.append((f"page{p}-image{i + 1}.{'jpg' if mime == 'image/jpeg' else mime.split('/')[1]}",
                                   mime, data))
        except MediaError:
            raise
        except Exception as e:  # pypdf's own limits (decompression bombs) and broken streams land here
            if type(e).__name__ == "LimitReachedError":
                raise MediaError(f"page {p} of {path} inflates past the decompression limit; refused as a PDF bomb "
                                 f"({e})") from None
            raise MediaError(f"page {p} of {path} cannot be read ({type(e).__name__}: {e})") from None
        chars += len(text)
        if chars > limits.pdf_text_chars:
            raise MediaError(f"{path}: the text of the pages asked for passes {limits.pdf_text_chars:,} characters; "
                             f"ask for fewer pages")
        out.append(PdfPage(p, text, images))
    return n, out
