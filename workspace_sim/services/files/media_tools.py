"""The media tools of the files service: images and audio as MCP media content (an audio clip with its stored
transcript beside it), audio as text (`transcribe_audio`), PDFs by page, spreadsheets by sheet and range (read and
written), office documents as text (docx also written).

Each tool checks the file against the documented limits (`workspace_sim.media.limits`) before it decodes it, and
a corrupt or oversized file is an `invalid_argument` naming the file and the limit, with nothing changed. An
image or audio read returns the stored base64 string itself under `media`, so a record holds the bytes once.
"""

from __future__ import annotations

import base64
import hashlib
import time
from typing import Any

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, Unavailable
from workspace_sim.media import MediaError, media_part, media_parts, placeholder
from workspace_sim.media.limits import DOCX, PPTX, XLSX, media_class
from workspace_sim.media.transcripts import SOURCE_WORDS, Transcript, parse_transcript, render_transcript
from workspace_sim.media.sheets import Cell, read_csv, read_xlsx, write_csv, write_xlsx  # Cell: write_sheet's schema
from workspace_sim.text.paths import parent, resolve
from workspace_sim.core.registry import tool
from .records import FILES, File
from .tools import READERS, file_at, is_dir, need_dir_for_write, need_new_name


def _raw(f: File) -> bytes:
    return base64.b64decode(f.content) if not f.is_text else f.content.encode()


def _wrong_kind(f: File, want: str) -> InvalidArgument:
    how = READERS.get(media_class(f.mime_type))
    tail = f"; read it with {how}" if how else ("; read it with read_text_file" if f.is_text else "")
    return InvalidArgument(f"{f.path} is {f.mime_type}, not {want}{tail}")


def _media_text(d: dict) -> str:
    parts = media_parts(d)
    extra = f" {d['width']}x{d['height']} px" if "width" in d else (
        f" {d['seconds']} s" if d.get("seconds") is not None else "")
    out = "\n".join(placeholder(p) for p in parts) + (f"\n{d['path']}:{extra}" if extra else "")
    if d.get("exif") is not None:
        from workspace_sim.media.exif import describe_exif

        out += "\n" + describe_exif(d["exif"])
    t = d.get("transcript")
    if t is not None:
        out += f"\nTranscript ({SOURCE_WORDS[t['source']]}):\n{render_transcript(t)}"
    elif any(p.kind == "audio" for p in parts):
        out += "\nNo transcript is stored with this clip (transcribe_audio transcribes it where a speech-to-text " \
               "endpoint is configured)"
    return out


def _inspect_audio(raw: bytes, path: str) -> tuple[str, float | None]:
    from workspace_sim.media.audio import inspect_audio  # readers load with the first file of their kind

    try:
        return inspect_audio(raw, path)
    except MediaError as e:
        raise InvalidArgument(str(e)) from None


def _stored_transcript(f: File) -> Transcript | None:
    try:
        return parse_transcript(f.transcript, f.path) if f.transcript is not None else None
    except MediaError as e:  # a record's transcript is checked when it is made; this is a guard only
        raise InvalidArgument(str(e)) from None


@tool(read_only=True, render=_media_text)
def read_media_file(ctx: ToolContext, path: str) -> dict:
    """Look at an image (PNG, JPEG, GIF, WebP) or listen to an audio clip (WAV, MP3, M4A, Ogg): returns it as image or audio content with its MIME type, a photo's EXIF metadata (capture time, camera make and model, orientation, GPS position) where it has any, and a clip's transcript where one is stored with it.

    Args:
        path: Path of the image or audio file, e.g. /receipts/lunch.png.
    """
    f = file_at(ctx, resolve(path))
    kind = media_class(f.mime_type)
    if kind not in ("image", "audio") or f.is_text:
        raise _wrong_kind(f, "an image or audio file")
    raw = _raw(f)
    if kind == "image":
        from workspace_sim.media.images import inspect_image  # readers load with the first file of their kind

        try:
            mime, w, h = inspect_image(raw, f.path)
        except MediaError as e:
            raise InvalidArgument(str(e)) from None
        extra: dict[str, Any] = {"width": w, "height": h}
        if mime != "image/gif":
            from workspace_sim.media.exif import read_exif

            exif = read_exif(raw, f.path)
            if exif is not None:
                extra["exif"] = exif
    else:
        mime, seconds = _inspect_audio(raw, f.path)
        extra = {"seconds": seconds}
        t = _stored_transcript(f)
        if t is not None:
            extra["transcript"] = t.to_json()
    part = media_part(kind, mime, f.path.rsplit("/", 1)[-1], raw, f.content)  # type: ignore[arg-type]
    return {"path": f.path, "mime_type": mime, "size": f.size, **extra, "media": [part.to_json()]}


def _transcript_text(d: dict) -> str:
    took = f", {d['seconds']} s" if d.get("seconds") is not None else ""
    by = f" by {d['model']}" if d.get("model") else ""
    return f"Transcript of {d['path']} ({SOURCE_WORDS[d['source']]}{by}{took}):\n{render_transcript(d)}"


@tool(read_only=True, render=_transcript_text)
def transcribe_audio(ctx: ToolContext, path: str) -> dict:
    """Read what is said in an audio clip (WAV, MP3, M4A, Ogg) as text, with each segment's start and end time where known: the transcript stored with the file, else one from the configured speech-to-text endpoint.

    Args:
        path: Path of the audio file, e.g. /voicemail/message-0412.wav.
    """
    f = file_at(ctx, resolve(path))
    if media_class(f.mime_type) != "audio" or f.is_text:
        raise _wrong_kind(f, "an audio file")
    raw = _raw(f)
    mime, seconds = _inspect_audio(raw, f.path)
    t = _stored_transcript(f)
    if t is None:
        t = _speech_to_text(ctx, f, raw, mime)
    return {"path": f.path, "mime_type": mime, "seconds": seconds, **t.to_json()}


def _speech_to_text(ctx: ToolContext, f: File, raw: bytes, mime: str) -> Transcript:
    """The clip's transcript from the configured endpoint (kept by its bytes' sha256: sent once), or Unavailable
    saying why there is none."""
    from workspace_sim.media import speech_to_text as stt

    try:
        settings = stt.settings_from_env()
    except stt.SettingsError as e:
        raise Unavailable(f"no transcript of {f.path}: {e}") from None
    if settings is None:
        raise Unavailable(f"no transcript is available for {f.path}: none is stored with the file and no "
                          f"speech-to-text endpoint is configured; {stt.HOW_TO}")
    start = time.perf_counter()
    try:
        return stt.transcribe(raw, f.path.rsplit("/", 1)[-1], mime, hashlib.sha256(raw).hexdigest(), settings)
    except stt.TranscriptionError as e:
        raise Unavailable(f"no transcript of {f.path}: {e}") from None
    finally:
        ctx.waited(time.perf_counter() - start)  # bounded by the endpoint's timeout, not the call's budget


def _pdf_text(d: dict) -> str:
    parts = {p.name: p for p in media_parts(d)}
    out = []
    for page in d["read"]:
        if page.get("scanned"):
            out.append(f"--- page {page['page']} of {d['pages']} (scanned: no text layer; as images) ---")
            out += [placeholder(parts[n]) for n in page["images"] if n in parts]
        else:
            out.append(f"--- page {page['page']} of {d['pages']} ---\n{page['text']}")
    return "\n".join(out)


@tool(read_only=True, render=_pdf_text)
def read_pdf(ctx: ToolContext, path: str, pages: list[int] = []) -> dict:
    """Read a PDF page by page: a page's text where it has a text layer, the page's images where it is a scan (at most 20 pages per call).

    Args:
        path: Path of the PDF file.
        pages: Page numbers to read, from 1; empty reads the first 20.
    """
    f = file_at(ctx, resolve(path))
    if f.mime_type != "application/pdf" or f.is_text:
        raise _wrong_kind(f, "a PDF")
    from workspace_sim.media.pdf import read_pages

    try:
        n, got = read_pages(_raw(f), f.path, list(pages))
    except MediaError as e:
        raise InvalidArgument(str(e)) from None
    read, media = [], []
    for page in got:
        if page.images:
            names = []
            for name, mime, data in page.images:
                part = media_part("image", mime, name, data, base64.b64encode(data).decode())
                media.append(part.to_json())
                names.append(name)
            read.append({"page": page.number, "scanned": True, "images": names})
        else:
            read.append({"page": page.number, "text": page.text})
    out: dict[str, Any] = {"path": f.path, "pages": n, "read": read}
    if media:
        out["media"] = media
    return out


def _sheet_text(d: dict) -> str:
    head = f"{d['path']}, sheet {d['sheet']!r} (sheets: {', '.join(d['sheets'])}), range {d['range']}"
    first = int("".join(ch for ch in d["range"].split(":")[0] if ch.isdigit()))
    lines = [f"{first + i}: " + " | ".join("" if v is None else str(v) for v in row) for i, row in enumerate(d["rows"])]
    return "\n".join([head, *lines])


@tool(read_only=True, render=_sheet_text)
def read_sheet(ctx: ToolContext, path: str, sheet: str | None = None, range: str | None = None) -> dict:
    """Read cells of a spreadsheet (xlsx, or csv as one sheet) by sheet and A1 range; formulas come back as their text.

    Args:
        path: Path of the .xlsx or .csv file.
        sheet: Sheet name; the first sheet when not given.
        range: Cells in A1 notation, e.g. A1:D20, B:B, 3:7 or C5; the used area when not given.
    """
    f = file_at(ctx, resolve(path))
    try:
        if f.mime_type == XLSX and not f.is_text:
            return {"path": f.path, **read_xlsx(_raw(f), f.path, sheet, range)}
        if f.mime_type == "text/csv" or (f.is_text and f.path.lower().endswith(".tsv")):
            return {"path": f.path, **read_csv(f.content, f.path, range)}
    except MediaError as e:
        raise InvalidArgument(str(e)) from None
    raise _wrong_kind(f, "a spreadsheet (xlsx or csv)")


@tool()
def write_sheet(ctx: ToolContext, path: str, rows: list[list[Cell]], sheet: str = "Sheet1", start: str = "A1") -> dict:
    """Write rows of cells into an xlsx workbook (or a csv file, one sheet) from a start cell, creating the file or the sheet when missing; other cells are kept.

    Args:
        path: Path of the .xlsx or .csv file; its folder must exist.
        rows: Rows of cell values (text, numbers, true/false, or null for an empty cell).
        sheet: Sheet to write in (a csv file is one sheet: leave it out).
        start: Top-left cell of the rows, e.g. A1 or B3.
    """
    p = resolve(path)
    if not p.lower().endswith((".xlsx", ".csv")):
        raise InvalidArgument(f"{p}: write_sheet writes .xlsx workbooks and .csv files (one sheet); for other text "
                              "use write_file")
    if is_dir(ctx, p):
        raise InvalidArgument(f"{p} is a folder; give a file path")
    need_dir_for_write(ctx, parent(p))
    old = ctx.get(FILES, p)
    if old is None:
        need_new_name(ctx, p)
    if p.lower().endswith(".csv"):
        return _write_csv_sheet(ctx, p, rows, sheet, start, old)
    if old is not None and (old.mime_type != XLSX or old.is_text):
        raise _wrong_kind(old, "an xlsx workbook")
    try:
        raw = write_xlsx(_raw(old) if old else None, p, sheet, start, rows)
    except MediaError as e:
        raise InvalidArgument(str(e)) from None
    rec = _binary(ctx, p, raw, XLSX, old)
    return {"path": p, "sheet": sheet, "start": start.upper(), "cells": sum(len(r) for r in rows),
            "size": rec.size, "created": old is None}


def _write_csv_sheet(ctx: ToolContext, p: str, rows: list[list[Cell]], sheet: str, start: str,
                     old: File | None) -> dict:
    """write_sheet on a CSV file: its one sheet (named after the file, as read_sheet names it)."""
    name = p.rsplit("/", 1)[-1]
    if sheet not in ("Sheet1", name):
        raise InvalidArgument(f"{p} is a CSV file, one sheet ({name!r}); leave sheet out, or write an .xlsx workbook "
                              f"for sheet {sheet!r}")
    if old is not None and (not old.is_text or old.mime_type != "text/csv"):
        raise _wrong_kind(old, "a CSV file")
    try:
        text = write_csv(old.content if old else None, p, start, rows)
        rec = File(path=p, content=text, created=old.created if old else ctx.now, modified=ctx.now)
    except MediaError as e:
        raise InvalidArgument(str(e)) from None
    except ValueError as e:
        raise InvalidArgument(str(e).splitlines()[-1]) from None
    ctx.put(FILES, rec)
    return {"path": p, "sheet": name, "start": start.strip().upper(), "cells": sum(len(r) for r in rows),
            "size": rec.size, "created": old is None}


def _binary(ctx: ToolContext, p: str, raw: bytes, mime: str, old: File | None) -> File:
    try:
        rec = File(path=p, content=base64.b64encode(raw).decode(), encoding="base64", mime_type=mime,
                   created=old.created if old else ctx.now, modified=ctx.now)
    except ValueError as e:
        raise InvalidArgument(str(e).splitlines()[-1]) from None
    ctx.put(FILES, rec)
    return rec


@tool(read_only=True, render=lambda d: d["text"])
def read_document(ctx: ToolContext, path: str) -> dict:
    """Read the text of a Word (.docx) or PowerPoint (.pptx) document: paragraphs then tables, or slide by slide.

    Args:
        path: Path of the .docx or .pptx file.
    """
    f = file_at(ctx, resolve(path))
    if f.mime_type not in (DOCX, PPTX) or f.is_text:
        raise _wrong_kind(f, "a docx or pptx document")
    from workspace_sim.media.documents import document_text

    try:
        return {"path": f.path, "mime_type": f.mime_type, "text": document_text(_raw(f), f.path, f.mime_type)}
    except MediaError as e:
        raise InvalidArgument(str(e)) from None


@tool()
def write_document(ctx: ToolContext, path: str, paragraphs: list[str], title: str = "") -> dict:
    """Create or overwrite a Word document (.docx) made of the given paragraphs, with an optional heading.

    Args:
        path: Path of the .docx file; its folder must exist.
        paragraphs: The paragraphs, in order.
        title: A heading above the paragraphs.
    """
    p = resolve(path)
    if not p.lower().endswith(".docx"):
        raise InvalidArgument(f"{p}: write_document writes .docx documents; for text use write_file")
    if is_dir(ctx, p):
        raise InvalidArgument(f"{p} is a folder; give a file path")
    need_dir_for_write(ctx, parent(p))
    old = ctx.get(FILES, p)
    if old is None:
        need_new_name(ctx, p)
    from workspace_sim.media.documents import write_docx

    try:
        raw = write_docx(list(paragraphs), title)
    except MediaError as e:
        raise InvalidArgument(str(e)) from None
    rec = _binary(ctx, p, raw, DOCX, old)
    return {"path": p, "paragraphs": len(paragraphs), "size": rec.size, "created": old is None}
