"""Evidence files rendered from a world's records with real libraries, byte-deterministic for the same inputs.

Pillow draws receipts and form scans (with Pillow's built-in font, the same on every machine with the same
Pillow), fpdf2 writes letters and invoices with a text layer, and "scans" (a PDF page that is only a JPEG
image), matplotlib (backend Agg, fixed dpi, no Software metadata) draws charts, and a report PDF puts a chart
on a page of its own. `degrade` adds what real evidence has, from a seed: rotation, blur, speckle noise, low
contrast, cropped margins and a stamp over a figure. Nothing here reads the clock or the host's fonts, and PNG
files carry no metadata chunks, so a seed and the same records give the same bytes.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Sequence

from . import glyphs

LEVELS = ("clean", "worn", "rough")  # how much of what real evidence has a rendering carries
PDF_DATE = datetime(2000, 1, 1, tzinfo=timezone.utc)  # the creation date of every PDF written here
INK, PAPER = (25, 25, 30), (252, 251, 247)


def _font(size: int) -> Any:
    return glyphs.font(size)


def png_bytes(img: Any) -> bytes:
    """The image as PNG with no metadata chunks (no time, no text, no dpi), at zlib level 1: generation writes
    thousands of these, and level 6 costs twice the time for files within 3% of the size."""
    buf = io.BytesIO()
    img.save(buf, "PNG", optimize=False, compress_level=1)
    return buf.getvalue()


def jpeg_bytes(img: Any, quality: int = 80) -> bytes:
    """The image as a baseline JPEG without EXIF or JFIF density (what a scanner writes, minus the metadata)."""
    buf = io.BytesIO()
    img.convert("RGB").save(buf, "JPEG", quality=quality, optimize=False, progressive=False, subsampling=2)
    return buf.getvalue()


@dataclass(frozen=True)
class Line:
    """A line of a rendered document: text, its size, and whether it is bold-ish (drawn twice) or right-aligned."""

    text: str
    size: int = 18
    bold: bool = False
    right: str = ""  # text set flush right on the same line (a price)


def paper(lines: Sequence[Line], width: int = 440, margin: int = 24, gap: int = 8) -> tuple[Any, dict[int, tuple[int, int]]]:
    """A sheet of paper with the lines drawn top to bottom; returns the image and each line's (top, bottom)."""
    from PIL import Image

    height = margin * 2 + sum(ln.size + gap for ln in lines)
    img = Image.new("RGB", (width, height), PAPER)
    y, spans = margin, {}
    for i, ln in enumerate(lines):
        for dx in ((0, 1) if ln.bold else (0,)):
            glyphs.draw(img, (margin + dx, y), ln.text, ln.size, INK)
            if ln.right:
                glyphs.draw(img, (width - margin - glyphs.width(ln.right, ln.size) + dx, y), ln.right, ln.size, INK)
        spans[i] = (y, y + ln.size)
        y += ln.size + gap
    return img, spans


def stamp(img: Any, word: str, box: tuple[int, int], seed: int) -> Any:
    """A red rubber stamp (a framed word, tilted, half transparent) pressed over the band `box` (top, bottom)."""
    from PIL import Image, ImageDraw

    rng = random.Random(f"stamp:{seed}")
    font = _font(30)
    probe = ImageDraw.Draw(img)
    w = int(probe.textlength(word, font=font)) + 24
    layer = Image.new("RGBA", (w, 52), (0, 0, 0, 0))
    d = ImageDraw.Draw(layer)
    d.rectangle((2, 2, w - 3, 49), outline=(200, 30, 40, 150), width=3)
    d.text((12, 9), word, fill=(200, 30, 40, 140), font=font)
    layer = layer.rotate(rng.uniform(-14, 14), expand=True, resample=Image.BICUBIC)
    x = rng.randint(img.width // 3, max(img.width // 3, img.width - layer.width - 4))
    y = max(0, (box[0] + box[1]) // 2 - layer.height // 2 + rng.randint(-6, 6))
    out = img.convert("RGBA")
    out.alpha_composite(layer, (min(x, max(0, img.width - layer.width)), min(y, max(0, img.height - layer.height))))
    return out.convert("RGB")


def degrade(img: Any, level: str, seed: int, stamp_word: str = "", stamp_box: tuple[int, int] | None = None) -> Any:
    """What a photo or scan of the page looks like at `level` ('clean', 'worn' or 'rough'), drawn from `seed`:
    worn is slightly rotated with speckles; rough is also blurred, low in contrast, cropped at the margins and,
    given `stamp_word`, stamped over `stamp_box`. The text stays legible to a careful reader."""
    from PIL import Image, ImageEnhance, ImageFilter

    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    if level == "clean":
        return img
    rng = random.Random(f"degrade:{seed}")
    if level == "rough" and stamp_word and stamp_box is not None:
        img = stamp(img, stamp_word, stamp_box, seed)
    angle = rng.uniform(1.0, 2.5) * rng.choice((-1, 1)) * (1.6 if level == "rough" else 1.0)
    img = img.rotate(angle, expand=True, resample=Image.BILINEAR, fillcolor=(236, 234, 228))  # 3x cheaper than bicubic
    if level == "rough":
        img = img.filter(ImageFilter.GaussianBlur(0.8))
        img = ImageEnhance.Contrast(img).enhance(0.55)
        dx, dy = rng.randint(2, 8), rng.randint(2, 8)
        img = img.crop((dx, dy, img.width - rng.randint(2, 8), img.height - rng.randint(2, 8)))
    speckle(img, rng, img.width * img.height // (180 if level == "rough" else 400))  # sparse: they compress well
    return img


_SPECKS = (40, 90, 200)


def speckle(img: Any, rng: random.Random, count: int) -> None:
    """Set `count` random pixels of `img` to a grey drawn from _SPECKS: for each, `x = rng.randrange(width)`,
    `y = rng.randrange(height)`, then `rng.choice(_SPECKS)`. Those draws are written out here as the rejection
    sampling they are (random.Random._randbelow: getrandbits of the bound's bit length until one falls below
    it), so the same words of the generator give the same pixels at a third of the cost per speck."""
    px = img.load()
    bits = rng.getrandbits
    w, h, n = img.width, img.height, len(_SPECKS)
    kw, kh, kn = w.bit_length(), h.bit_length(), n.bit_length()
    for _ in range(count):
        x = bits(kw)
        while x >= w:
            x = bits(kw)
        y = bits(kh)
        while y >= h:
            y = bits(kh)
        c = bits(kn)
        while c >= n:
            c = bits(kn)
        v = _SPECKS[c]
        px[x, y] = (v, v, v)


def scan_pdf(image_jpeg: bytes, title: str) -> bytes:
    """A one-page PDF holding only the scanned image (no text layer), as a scanner writes it."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_creation_date(PDF_DATE)
    pdf.set_title(title)
    pdf.set_producer("coworkenv scanner")
    pdf.add_page()
    pdf.image(io.BytesIO(image_jpeg), x=15, y=15, w=180)
    return bytes(pdf.output())


def text_pdf(blocks: Sequence[tuple[str, int, str]], title: str) -> bytes:
    """A PDF with a text layer: blocks of (text, size, style: '' or 'B'), one paragraph each, wrapped to the page."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_creation_date(PDF_DATE)
    pdf.set_title(title)
    pdf.set_producer("coworkenv")
    pdf.add_page()
    for text, size, style in blocks:
        pdf.set_font("Helvetica", style=style, size=size)
        pdf.multi_cell(0, size * 0.55, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
    return bytes(pdf.output())


def report_pdf(blocks: Sequence[tuple[str, int, str]], chart_png: bytes, title: str) -> bytes:
    """A report: a page of text, then a page holding only the chart image (so its figures are only pixels)."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_creation_date(PDF_DATE)
    pdf.set_title(title)
    pdf.set_producer("coworkenv")
    pdf.add_page()
    for text, size, style in blocks:
        pdf.set_font("Helvetica", style=style, size=size)
        pdf.multi_cell(0, size * 0.55, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
    pdf.add_page()
    pdf.image(io.BytesIO(chart_png), x=15, y=20, w=180)
    return bytes(pdf.output())


def bar_chart(title: str, labels: Sequence[str], series: dict[str, Sequence[int]], ylabel: str) -> bytes:
    """A grouped bar chart with each bar's value printed on it, as PNG (Agg, 100 dpi, no Software metadata)."""
    return png_bytes(bar_chart_image(title, labels, series, ylabel))


def bar_chart_image(title: str, labels: Sequence[str], series: dict[str, Sequence[int]], ylabel: str) -> Any:
    """The bar chart of `bar_chart` as an RGB image, drawn straight from Agg's buffer (no PNG round trip). The
    margins are fixed rather than fitted (`tight_layout` draws the figure a second time to measure it)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator
    from PIL import Image

    fig = Figure(figsize=(7.2, 4.0), dpi=100)
    canvas = FigureCanvasAgg(fig)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.08, top=0.92)
    ax = fig.add_subplot(1, 1, 1)
    n = len(series)
    width = 0.8 / n
    colours = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3")
    for k, (name, values) in enumerate(series.items()):
        xs = [i + (k - (n - 1) / 2) * width for i in range(len(labels))]
        bars = ax.bar(xs, values, width * 0.95, label=name, color=colours[k % len(colours)])
        ax.bar_label(bars, labels=[str(v) for v in values], fontsize=9, padding=1)
    ax.set_xticks(range(len(labels)), list(labels))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11, y=1.0, pad=6)  # a fixed place: auto-placing measures every tick label
    ax.legend(fontsize=8, ncols=min(n, 5), loc="upper left")
    ax.set_ylim(0, max(max(v) for v in series.values()) * 1.25)
    ax.yaxis.set_major_locator(MaxNLocator(6))  # fewer ticks, each one a text to lay out
    ax.spines[["top", "right"]].set_visible(False)
    canvas.draw()
    return Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")


def reencode_png(raw: bytes, level: str, seed: int) -> bytes:
    """A PNG as a photo of a printout of it at `level` (see `degrade`)."""
    from PIL import Image

    img = Image.open(io.BytesIO(raw)).convert("RGB")
    return png_bytes(degrade(img, level, seed))


def photo_png(img: Any, level: str, seed: int) -> bytes:
    """An image as a photo of a printout of it at `level` (see `degrade`), as PNG."""
    return png_bytes(degrade(img, level, seed))
