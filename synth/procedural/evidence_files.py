"""Evidence files put into a world by any template: stored as binary files and declared in the spec's
`metadata.evidence` with the facts they hold (synth.evidence counts the ones no text holds), and the approval
evidence other capabilities' templates use (a scanned memo, an app screenshot or a whiteboard photo showing
an approved figure).
"""

from __future__ import annotations

import base64
from typing import Any, Sequence

from . import render, screens
from .builder import SpecBuilder
from .render import Line

KINDS = ("scan", "screenshot", "whiteboard")


def attach(b: SpecBuilder, path: str, raw: bytes, kind: str = "", facts: Sequence[str] = (),
           derived: Sequence[str] = (), transcript: str | None = None) -> None:
    """Store `raw` at `path` (base64, dated yesterday; an audio clip with its `transcript`, the script it was
    spoken from) and declare the facts it shows (and the values the solution derives from them: a total that
    includes a receipt's amount)."""
    b.use("files")
    b.table("files", "files").append({"path": path, "content": base64.b64encode(raw).decode(), "encoding": "base64",
                                       "created": b.ago(days=1).isoformat(), "modified": b.ago(days=1).isoformat(),
                                       **({"transcript": transcript} if transcript is not None else {})})
    declare(b, path, kind, facts, derived)


def declare(b: SpecBuilder, path: str, kind: str, facts: Sequence[str], derived: Sequence[str] = ()) -> None:
    """Declare the facts an evidence file at `path` shows (a file that arrives with a world change, too) and the
    values derived from them (synth.evidence.blind_solution replaces both)."""
    if facts:
        b.evidence.append({"path": path, "kind": kind, "facts": [str(f) for f in facts],
                           **({"derived": [str(d) for d in derived]} if derived else {})})


def approval(b: SpecBuilder, topic: str, quarter: str, figure: str, other: str, stem: str) -> tuple[str, str, str]:
    """Evidence that `topic`'s `quarter` budget was approved at `figure` (a draft at `other` is shown too where the
    medium has room for it): a scanned memo (a JPEG photo or an image-only PDF), a screenshot of the budget app (a
    PNG capture, or a JPEG photo of the screen), or a whiteboard photo (JPEG), at a level of wear drawn from the seed. Returns (path, the tool that reads it, kind)."""
    kind = b.rng.choice(KINDS)
    level = b.rng.choice(render.LEVELS)
    seed = b.seed * 7349 + b.rng.randint(0, 9999)
    title = f"{topic.capitalize()} {quarter}"
    if kind == "scan":
        lines = [Line("BUDGET APPROVAL", 24, True), Line(title, 18), Line("", 8),
                 Line("Approved amount:", 16), Line("   " + figure, 24, True), Line("", 10),
                 Line(f"Signed, {b.world.manager.name}", 16), Line("Finance committee", 14)]
        img, spans = render.paper(lines, width=b.rng.choice((460, 500)), margin=30)
        img = render.degrade(img, level, seed, "APPROVED", spans[6])
        if b.rng.random() < 0.5:
            path = f"{stem}.pdf"
            attach(b, path, render.scan_pdf(render.jpeg_bytes(img, quality=84), "Scan"), "scan", [figure])
            return path, "read_pdf", kind
        path = f"{stem}.jpg"  # a phone's photo of the memo
        attach(b, path, render.jpeg_bytes(img, quality=85), "photo", [figure])
        return path, "read_media_file", kind
    if kind == "screenshot":
        rows: list[Any] = [(title, "Approved", figure), (title, "Draft", other)]
        others = [t for t in ("Travel", "Training", "Hardware", "Events", "Marketing") if t.lower() != topic.lower()]
        for t in b.rng.sample(others, 2):
            rows.append((f"{t} {quarter}", b.rng.choice(("Approved", "Pending")),
                         f"{b.rng.randint(1000, 90000):,}.{b.rng.randint(0, 99):02d}"))
        b.rng.shuffle(rows)
        img = screens.screenshot("Budget desk", "Approvals", ("Budget", "Status", "Amount"), rows, level, seed,
                                 status=f"{len(rows)} budgets")
        # a screen capture is a PNG; a photo of the screen (worn, rough) a JPEG
        path = f"{stem}.png" if level == "clean" else f"{stem}.jpg"
        attach(b, path, render.png_bytes(img) if level == "clean" else render.jpeg_bytes(img, quality=85),
               "screenshot", [figure])
        return path, "read_media_file", kind
    path = f"{stem}.jpg"
    img = screens.whiteboard([title, f"approved {figure}", f"(draft was {other})"], level, seed)
    attach(b, path, render.jpeg_bytes(img, quality=85), "whiteboard", [figure])
    return path, "read_media_file", kind
