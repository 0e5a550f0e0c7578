"""App screenshots and whiteboard photos rendered with Pillow, byte-deterministic for the same inputs and seed.

`screenshot` draws an app window (title bar, sidebar, a page title and a table, one row highlighted) as a
screen capture would; at the worn and rough levels it is a photo of the screen instead (rotated, speckled,
blurred, low contrast: `render.degrade`). `whiteboard` writes lines in a handwriting-like hand: every glyph of
the built-in font is scaled, slanted, rotated and set off the baseline on its own, the strokes are thickened
like a marker's, and the board is shot at an angle (a perspective warp) with uneven light; the level sets how
much of each. Nothing reads the clock or the host's fonts.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

from . import glyphs, render

BOARD = (236, 238, 234)
MARKERS = ((30, 60, 150), (25, 25, 30), (170, 30, 35), (20, 110, 60))
JITTER = {"clean": (0.06, 1.5, 3.0), "worn": (0.08, 2.0, 4.0), "rough": (0.12, 3.0, 7.0)}  # scale, baseline px, degrees


def screenshot(app: str, page: str, columns: Sequence[str], rows: Sequence[Sequence[str]], level: str, seed: int,
               highlight: int | None = None, sidebar: Sequence[str] = ("Home", "Reports", "Approvals", "Settings"),
               status: str = "") -> Any:
    """An app window showing `page` of `app` with a table of `rows` under `columns` (row `highlight` selected),
    as an RGB image; a plain capture when `level` is 'clean', a photo of the screen otherwise."""
    from PIL import Image, ImageDraw

    if level not in render.LEVELS:
        raise ValueError(f"level must be one of {', '.join(render.LEVELS)}, got {level!r}")
    rng = random.Random(f"screen:{seed}")
    widths = [max(glyphs.width(c, 15), *(glyphs.width(r[i], 15) for r in rows)) + 28 for i, c in enumerate(columns)]
    side = 150
    w = side + 24 + sum(widths) + 24
    h = 34 + 56 + 34 + 30 * len(rows) + 40
    img = Image.new("RGB", (w, h), (255, 255, 255))
    d = ImageDraw.Draw(img)
    accent = rng.choice(((37, 99, 235), (5, 150, 105), (124, 58, 237), (219, 39, 119)))
    d.rectangle((0, 0, w, 30), fill=(229, 231, 235))  # the window's title bar
    for i, c in enumerate(((239, 68, 68), (245, 158, 11), (34, 197, 94))):
        d.ellipse((10 + 18 * i, 10, 20 + 18 * i, 20), fill=c)
    glyphs.draw(img, (w // 2 - glyphs.width(app, 13) // 2, 8), app, 13, (55, 65, 81))
    d.rectangle((0, 30, side, h), fill=(243, 244, 246))
    for i, item in enumerate(sidebar):
        y = 50 + 30 * i
        if item == page.split()[0] or (i == 2 and page.split()[0] not in sidebar):
            d.rectangle((8, y - 5, side - 8, y + 19), fill=accent)
            glyphs.draw(img, (18, y), item, 14, (255, 255, 255))
        else:
            glyphs.draw(img, (18, y), item, 14, (75, 85, 99))
    x0, y = side + 24, 48
    glyphs.draw(img, (x0, y), page, 22, (17, 24, 39))
    y += 44
    d.rectangle((x0 - 6, y - 6, w - 18, y + 22), fill=(249, 250, 251))
    x = x0
    for c, cw in zip(columns, widths):
        glyphs.draw(img, (x, y), c, 15, (107, 114, 128))
        x += cw
    y += 30
    for k, row in enumerate(rows):
        if k == highlight:
            d.rectangle((x0 - 6, y - 6, w - 18, y + 22), fill=(*[min(255, v + 170) for v in accent],))
        d.line((x0 - 6, y + 23, w - 18, y + 23), fill=(229, 231, 235))
        x = x0
        for cell, cw in zip(row, widths):
            glyphs.draw(img, (x, y), cell, 15, (31, 41, 55))
            x += cw
        y += 30
    if status:
        glyphs.draw(img, (x0, h - 26), status, 13, (107, 114, 128))
    return render.degrade(img, level, seed) if level != "clean" else img


def _warp(img: Any, rng: random.Random, amount: float) -> Any:
    """The board shot at an angle: its corners moved inwards by up to `amount` of the size (a perspective)."""
    from PIL import Image

    w, h = img.size
    dx, dy = w * amount, h * amount
    src = [(rng.uniform(0, dx), rng.uniform(0, dy)), (w - rng.uniform(0, dx), rng.uniform(0, dy)),
           (w - rng.uniform(0, dx), h - rng.uniform(0, dy)), (rng.uniform(0, dx), h - rng.uniform(0, dy))]
    dst = [(0, 0), (w, 0), (w, h), (0, h)]
    # coefficients of the map from output pixels to input pixels (8 unknowns, 8 equations)
    a, bvec = [], []
    for (X, Y), (x, y) in zip(dst, src):
        a.append([X, Y, 1, 0, 0, 0, -x * X, -x * Y])
        a.append([0, 0, 0, X, Y, 1, -y * X, -y * Y])
        bvec += [x, y]
    return img.transform((w, h), Image.PERSPECTIVE, _solve(a, bvec), Image.BILINEAR, fillcolor=(120, 118, 112))


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (8x8: no numpy needed, same floats everywhere)."""
    n = len(b)
    m = [row[:] + [v] for row, v in zip(a, b)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c and m[r][c]:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def _slant_and_turn(size: tuple[int, int], slant: float, degrees: float) -> tuple[float, ...]:
    """The affine map (output pixel -> input pixel) of a shear by `slant` then a turn by `degrees`, both about the
    canvas's centre: one resampling instead of two."""
    import math

    w, h = size
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    return (c + slant * s, -s + slant * c, w / 2 + (-c * w / 2 + s * h / 2) + slant * (-s * w / 2 - c * h / 2),
            s, c, h / 2 - s * w / 2 - c * h / 2)


def whiteboard(lines: Sequence[str], level: str, seed: int, size: int = 30) -> Any:
    """A photo of a whiteboard with `lines` written by hand (see the module's docstring), as an RGB image."""
    from PIL import Image, ImageDraw, ImageFilter

    if level not in render.LEVELS:
        raise ValueError(f"level must be one of {', '.join(render.LEVELS)}, got {level!r}")
    rng = random.Random(f"board:{seed}")
    scale_j, base_j, angle_j = JITTER[level]
    slant = rng.uniform(0.12, 0.3)  # a writer's forward lean, the same for every glyph
    gap = int(size * 1.5)
    w = max(glyphs.width(t, size) for t in lines) + 140
    h = 60 + gap * len(lines) + 40
    ink = Image.new("L", (w, h), 0)
    y = 50.0
    for t in lines:
        x = 50.0 + rng.uniform(0, 20)
        drift = rng.uniform(-0.03, 0.03)  # lines run slightly uphill or downhill
        for ch in t:
            mask, ox, oy, advance = glyphs.glyph(ch, size)
            k = 1 + rng.uniform(-scale_j, scale_j)
            if mask is not None:
                gw, gh = max(1, int(mask.width * k)), max(1, int(mask.height * k))
                g = mask.resize((gw, gh), Image.BILINEAR)
                pad = gh // 2 + 2
                canvas = Image.new("L", (gw + 2 * pad, gh + 2 * pad), 0)
                canvas.paste(g, (pad, pad))
                canvas = canvas.transform(canvas.size, Image.AFFINE, _slant_and_turn(canvas.size, slant,
                                                                                     rng.uniform(-angle_j, angle_j)),
                                          Image.BILINEAR)
                px = int(x + ox * k) - pad
                py = int(y + oy * k + rng.uniform(-base_j, base_j) + drift * (x - 50)) - pad
                ink.paste(255, (px, py), canvas)  # where the glyph has coverage the board is inked
            x += advance * k + rng.uniform(-0.5, 1.5)
        y += gap
    ink = ink.filter(ImageFilter.MaxFilter(3))  # a marker's stroke, thicker than type
    board = Image.new("RGB", (w, h), BOARD)
    shade = ImageDraw.Draw(board)
    for i in range(0, w, 8):  # uneven light across the board: darker towards one side
        v = int(14 * i / w)
        shade.rectangle((i, 0, i + 8, h), fill=tuple(max(0, c - v) for c in BOARD))
    board.paste(rng.choice(MARKERS), (0, 0), ink)
    if level == "clean":
        return board
    board = _warp(board, rng, 0.04 if level == "worn" else 0.09)
    if level == "rough":
        board = board.filter(ImageFilter.GaussianBlur(0.9))
    return render.degrade(board, "worn", seed)


def sample_dashboard_png(seed: int) -> bytes:
    """A fixed approvals screenshot at the level `seed` picks (for benchmarks and docs)."""
    rows = [("Travel", "Q1", "Approved", "12,400.00"), ("Training", "Q1", "Draft", "8,950.00"),
            ("Hardware", "Q2", "Approved", "31,075.50"), ("Events", "Q2", "Pending", "4,300.00")]
    return render.png_bytes(screenshot("Budget desk", "Approvals", ("Budget", "Quarter", "Status", "Amount (USD)"),
                                       rows, render.LEVELS[seed % 3], seed, highlight=2))


def sample_whiteboard_png(seed: int) -> bytes:
    """A fixed whiteboard photo at the level `seed` picks (for benchmarks and docs)."""
    return render.png_bytes(whiteboard(["Hardware Q2", "approved: 31,075.50", "- Dana"], render.LEVELS[seed % 3], seed))
