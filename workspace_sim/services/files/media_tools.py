"""The media tools of the files service: images and audio as MCP media content, PDFs by page, spreadsheets by
sheet and range (read and written), office documents as text (docx also written).

Each tool checks the file against the documented limits (`workspace_sim.media.limits`) before it decodes it, and
a corrupt or oversized file is an `invalid_argument` naming the file and the limit, with nothing changed. An
image or audio read returns the stored base64 string itself under `media`, so a record holds the bytes once.
"""

from __future__ import annotations

import base64
from typing import Any

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument
from workspace_sim.media import MediaError, media_part, media_parts, placeholder
from workspace_sim.media.limits import DOCX, PPTX, XLSX, media_class
from workspace_sim.media.sheets import Cell, read_csv, read_xlsx, write_xlsx  # Cell types write_sheet's schema
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
    return "\n".join(placeholder(p) for p in parts) + (f"\n{d['path']}:{extra}" if extra else "")


@tool(read_only=True, render=_media_text)
def read_media_file(ctx: ToolContext, path: str) -> dict:
    """Look at an image (PNG, JPEG, GIF, WebP) or listen to an audio clip (WAV, MP3): returns it as image or audio content with its MIME type.

    Args:
        path: Path of the image or audio file, e.g. /receipts/lunch.png.
    """
    f = file_at(ctx, resolve(path))
    kind = media_class(f.mime_type)
    if kind not in ("image", "audio") or f.is_text:
        raise _wrong_kind(f, "an image or audio file")
    raw = _raw(f)
    try:
        if kind == "image":
            from workspace_sim.media.images import inspect_image  # readers load with the first file of their kind

            mime, w, h = inspect_image(raw, f.path)
            extra: dict[str, Any] = {"width": w, "height": h}
        else:
            from workspace_sim.media.audio import inspect_audio

            mime, seconds = inspect_audio(raw, f.path)
            extra = {"seconds": seconds}
    except MediaError as e:
        raise InvalidArgument(str(e)) from None
    part = media_part(kind, mime, f.path.rsplit("/", 1)[-1], raw, f.content)  # type: ignore[arg-type]
    return {"path": f.path, "mime_type": mime, "size": f.size, **extra, "media": [part.to_json()]}


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
    """Write rows of cells into an xlsx workbook from a start cell, creating the workbook or the sheet when missing; other cells are kept.

    Args:
        path: Path of the .xlsx file; its folder must exist.
        rows: Rows of cell values (text, numbers, true/false, or null for an empty cell).
        sheet: Sheet to write in.
        start: Top-left cell of the rows, e.g. A1 or B3.
    """
    p = resolve(path)
    if not p.lower().endswith(".xlsx"):
        raise InvalidArgument(f"{p}: write_sheet writes .xlsx workbooks; for CSV use write_file")
    if is_dir(ctx, p):
        raise InvalidArgument(f"{p} is a folder; give a file path")
    need_dir_for_write(ctx, parent(p))
    old = ctx.get(FILES, p)
    if old is None:
        need_new_name(ctx, p)
    if old is not None and (old.mime_type != XLSX or old.is_text):
        raise _wrong_kind(old, "an xlsx workbook")
    try:
        raw = write_xlsx(_raw(old) if old else None, p, sheet, start, rows)
    except MediaError as e:
        raise InvalidArgument(str(e)) from None
    rec = _binary(ctx, p, raw, XLSX, old)
    return {"path": p, "sheet": sheet, "start": start.upper(), "cells": sum(len(r) for r in rows),
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
