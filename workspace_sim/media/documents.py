"""Office documents as text: docx with python-docx (paragraphs, then tables as tab-separated rows), pptx slide by
slide from its XML; docx written from paragraphs with fixed properties and zip timestamps (same bytes each time)."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from datetime import datetime

from workspace_sim.media.limits import LIMITS, DOCX, PPTX, Limits, MediaError, open_zip, repack_zip

_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def document_text(raw: bytes, path: str, mime_type: str, limits: Limits = LIMITS) -> str:
    """The text of a docx or pptx file, checked against zip bombs and the text limit."""
    z = open_zip(raw, path, limits)
    if mime_type == PPTX:
        text = _pptx_text(z, path)
    elif mime_type == DOCX:
        text = _docx_text(raw, path)
    else:
        raise MediaError(f"{path} ({mime_type}) is not a docx or pptx document")
    if len(text) > limits.document_chars:
        raise MediaError(f"{path} has {len(text):,} characters of text; at most {limits.document_chars:,} are read")
    return text


def _docx_text(raw: bytes, path: str) -> str:
    import docx

    try:
        d = docx.Document(io.BytesIO(raw))
    except Exception as e:
        raise MediaError(f"{path} is not a readable docx document ({type(e).__name__}: {e})") from None
    parts = [p.text for p in d.paragraphs]
    for t in d.tables:
        parts.append("")
        parts += ["\t".join(c.text for c in row.cells) for row in t.rows]
    return "\n".join(parts).strip("\n")


def _pptx_text(z, path: str) -> str:  # noqa: ANN001 - a ZipFile
    slides = sorted((n for n in z.namelist() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)),
                    key=lambda n: int(re.findall(r"\d+", n)[-1]))
    out = []
    for i, name in enumerate(slides, 1):
        try:
            root = ET.fromstring(z.read(name))
        except ET.ParseError as e:
            raise MediaError(f"{path}: slide {i} is not valid XML ({e})") from None
        paras = ["".join(t.text or "" for t in p.iter(f"{_A}t")) for p in root.iter(f"{_A}p")]
        out.append(f"--- slide {i} ---\n" + "\n".join(p for p in paras if p))
    return "\n\n".join(out)


def write_docx(paragraphs: list[str], title: str = "", limits: Limits = LIMITS) -> bytes:
    """A docx document of the paragraphs (the first as a heading when `title` is given), byte-deterministic."""
    import docx

    if sum(len(p) for p in paragraphs) > limits.document_chars:
        raise MediaError(f"the document would pass {limits.document_chars:,} characters")
    d = docx.Document()
    if title:
        d.add_heading(title, level=1)
    for p in paragraphs:
        d.add_paragraph(p)
    cp = d.core_properties
    cp.created = cp.modified = datetime(2000, 1, 1)
    cp.last_printed = datetime(2000, 1, 1)
    cp.author = cp.last_modified_by = "coworkenv"
    cp.revision = 1
    buf = io.BytesIO()
    d.save(buf)
    return repack_zip(buf.getvalue())
