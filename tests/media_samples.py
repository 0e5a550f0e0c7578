"""Small media files built in the tests (no fixtures on disk): images, audio, PDFs, office files and bombs."""

from __future__ import annotations

import base64
import io
import struct
import wave
import zipfile
import zlib
from functools import lru_cache
from datetime import datetime, timezone
from typing import Any


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def png(w: int = 40, h: int = 20, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (w, h), color).save(buf, "PNG")
    return buf.getvalue()


def jpeg(w: int = 64, h: int = 48) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (w, h), (10, 120, 200)).save(buf, "JPEG", quality=80)
    return buf.getvalue()


def photo(fmt: str = "JPEG", *, taken: str | None = "2024:05:17 14:03:22", offset: str | None = "+02:00",
          make: object = "Canon", model: object = "EOS R5", orientation: object = 6,
          gps: tuple | None = ("N", (48, 51, 30.24), "E", (2, 17, 40.2), 35.0), w: int = 32, h: int = 24) -> bytes:
    """A photo (JPEG or PNG) whose EXIF holds a capture time, camera, orientation and GPS position (each left out
    when None): 48.858400 N, 2.294500 E by default."""
    from PIL import Image
    from PIL.TiffImagePlugin import IFDRational

    ex = Image.Exif()
    for tag, v in ((271, make), (272, model), (274, orientation)):
        if v is not None:
            ex[tag] = v
    sub = ex.get_ifd(0x8769)
    if taken is not None:
        sub[36867] = taken
    if offset is not None:
        sub[36881] = offset
    if gps is not None:
        lat_ref, lat, lon_ref, lon, alt = gps
        g = ex.get_ifd(0x8825)
        g[1], g[2], g[3], g[4] = lat_ref, tuple(IFDRational(x) if isinstance(x, (int, float)) else x for x in lat), \
            lon_ref, tuple(IFDRational(x) if isinstance(x, (int, float)) else x for x in lon)
        if alt is not None:
            g[5], g[6] = b"\x00", IFDRational(alt)
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (90, 140, 60)).save(buf, fmt, exif=ex)
    return buf.getvalue()


def photo_with_exif_bytes(block: bytes) -> bytes:
    """A JPEG whose EXIF block is the given bytes (after the 'Exif\\0\\0' marker): corrupt metadata."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (5, 5, 5)).save(buf, "JPEG", exif=b"Exif\x00\x00" + block)
    return buf.getvalue()


def png_header_only(w: int, h: int) -> bytes:
    """A PNG whose header claims w x h pixels and that holds no pixel data (a decompression bomb's shape)."""
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    def part(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return b"\x89PNG\r\n\x1a\n" + part(b"IHDR", ihdr) + part(b"IDAT", zlib.compress(b"\x00" * 64)) + part(b"IEND", b"")


def wav(seconds: float = 0.25, rate: int = 8000) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\x00\x01" * int(seconds * rate))
    return buf.getvalue()


def m4a(seconds: float = 3.5, timescale: int = 44_100) -> bytes:
    """An M4A file's boxes (ftyp, then moov with its movie header; no samples): enough to be recognised and timed."""
    def box(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", 8 + len(body)) + kind + body

    mvhd = struct.pack(">B3xIIII", 0, 0, 0, timescale, int(seconds * timescale)) + b"\x00" * 80
    return box(b"ftyp", b"M4A \x00\x00\x02\x00M4A isommp42") + box(b"moov", box(b"mvhd", mvhd)) + box(b"free", b"")


def ogg(seconds: float = 2.0, rate: int = 16_000) -> bytes:
    """An Ogg Vorbis stream's first page (the identification header) and a last page whose granule position ends
    it after `seconds` (no audio packets): enough to be recognised and timed."""
    def page(granule: int, flags: int, seq: int, body: bytes) -> bytes:
        return (b"OggS" + struct.pack("<BBqIIIB", 0, flags, granule, 1, seq, 0, 1) + bytes([len(body)]) + body)

    ident = b"\x01vorbis" + struct.pack("<IBIiiiBB", 0, 1, rate, 0, 64000, 0, 0xB8, 1)
    return page(0, 2, 0, ident) + page(int(seconds * rate), 4, 1, b"\x00" * 8)


def text_pdf(lines: list[str]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_creation_date(datetime(2000, 1, 1, tzinfo=timezone.utc))
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in lines:
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def scanned_pdf(image: bytes) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_creation_date(datetime(2000, 1, 1, tzinfo=timezone.utc))
    pdf.add_page()
    pdf.image(io.BytesIO(image), x=10, y=10, w=100)
    return bytes(pdf.output())


@lru_cache(maxsize=None)
def pdf_bomb() -> bytes:
    """A one-page PDF whose content stream inflates to 100 MB of spaces (past pypdf's 75 MB limit)."""
    stream = zlib.compress(b" " * (100 * 2**20), 6)
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    out, offsets = io.BytesIO(), []
    out.write(b"%PDF-1.4\n")
    for i, o in enumerate(objs, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + o + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref))
    return out.getvalue()


@lru_cache(maxsize=None)
def zip_bomb_xlsx() -> bytes:
    """An 'xlsx' whose worksheet inflates to 50 MB from a few tens of kilobytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/worksheets/sheet1.xml", b"<" * (50 * 2**20))
    return buf.getvalue()


def pptx(slides: list[list[str]]) -> bytes:
    a = "http://schemas.openxmlformats.org/drawingml/2006/main"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        for i, paras in enumerate(slides, 1):
            body = "".join(f"<a:p><a:r><a:t>{p}</a:t></a:r></a:p>" for p in paras)
            z.writestr(f"ppt/slides/slide{i}.xml", f'<p:sld xmlns:p="p" xmlns:a="{a}"><a:txBody>{body}</a:txBody></p:sld>')
    return buf.getvalue()


def evidence_reads(spec: Any) -> dict[str, str]:
    """What a text-only channel shows for each reference read of an evidence file (path -> the result's text)."""
    ws = spec.build_workspace()
    out = {}
    for s in spec.reference.calls():
        if s.tool in ("read_media_file", "read_pdf"):
            res = ws.call(s.tool, s.args)
            assert res.ok, res.text
            out[s.args["path"]] = res.text
    return out
