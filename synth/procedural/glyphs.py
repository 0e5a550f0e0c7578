"""Text set glyph by glyph from Pillow's built-in font, each glyph rasterised once per size and process.

FreeType renders the built-in font at ~30 us a glyph, which made drawing text most of a receipt's cost; a glyph
kept as a mask and pasted costs a few microseconds. Pasting glyph by glyph is also what handwriting needs (each
glyph jittered, slanted and scaled on its own: `screens.whiteboard`). Glyphs are placed at the font's own advance
widths, rounded per glyph, so a line is as wide as `width` says, and the output depends only on the text, the
size and Pillow's built-in font: the same on every machine with the same Pillow.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=64)
def font(size: int) -> Any:
    """Pillow's built-in scalable font at `size` px, loaded once per size."""
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


@lru_cache(maxsize=8192)
def glyph(ch: str, size: int) -> tuple[Any, int, int, float]:
    """The glyph of `ch` at `size`: (its coverage mask, mode L, or None for a blank; x and y offsets; advance)."""
    from PIL import Image, ImageDraw

    f = font(size)
    advance = f.getlength(ch)
    x0, y0, x1, y1 = f.getbbox(ch)
    if x1 <= x0 or y1 <= y0:
        return None, 0, 0, advance
    mask = Image.new("L", (x1 - x0, y1 - y0), 0)
    ImageDraw.Draw(mask).text((-x0, -y0), ch, fill=255, font=f)
    return mask, x0, y0, advance


def width(text: str, size: int) -> int:
    """How many pixels `text` takes at `size` when drawn by `draw`."""
    return int(round(sum(glyph(ch, size)[3] for ch in text)))


def draw(img: Any, xy: tuple[float, float], text: str, size: int, fill: tuple[int, ...]) -> None:
    """Draw `text` on `img` with its top-left at `xy`, in colour `fill`."""
    x, y = xy
    for ch in text:
        mask, dx, dy, advance = glyph(ch, size)
        if mask is not None:
            img.paste(fill, (int(round(x)) + dx, int(round(y)) + dy), mask)
        x += advance
