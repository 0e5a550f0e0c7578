"""Evidence rendering and the media_evidence capability's validation rate, each against a same-run baseline.

`media_evidence_files_per_s`: evidence files rendered from fixed records (photographed receipts, scanned forms
inside PDFs, report PDFs with a chart page, invoice PDFs with a text layer, app screenshots and whiteboard photos
where the renderers exist) against writing the same bytes to files in a temporary folder.
`media_evidence_valid_envs_per_s`: media_evidence environments generated and validated by execution against the
same-run rate of the single-day templates of every capability (benchmarks.bench_synth's baseline), so the ratio
says how much the capability pulls the balanced mix down. Run as a script: `python benchmarks/bench_media.py
[COUNT]`.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Callable

CAP = "media_evidence"


def _renderers() -> list[Callable[[int], bytes]]:
    """One function per kind of evidence file, each rendering a file from fixed records and a seed."""
    from synth.procedural import render
    from synth.procedural.render import Line

    def receipt(seed: int) -> bytes:
        lines = [Line("GREEN LEAF BISTRO", 22, True), Line("12 Harbour Street", 16), Line("Receipt R-12003   2026-03-02", 16),
                 Line("", 8), Line("Pasta of the day", 17, right="18.50"), Line("Sparkling water", 17, right="4.20"),
                 Line("", 6), Line("TOTAL", 21, True, right="22.70"), Line("Paid by card. Thank you!", 15)]
        img, spans = render.paper(lines, width=420)
        return render.png_bytes(render.degrade(img, render.LEVELS[seed % 3], seed, "PAID", spans[7]))

    def form(seed: int) -> bytes:
        lines = [Line("SUPPLIER REGISTRATION FORM", 24, True), Line("Please print clearly.", 14), Line("", 10)]
        for label, value in (("Company name", "Brightwater Ltd"), ("VAT / tax id", "DE123456789"),
                             ("Payment terms", "Net 30"), ("Accounts contact (email)", "ap@brightwater.example")):
            lines += [Line(label, 14), Line("   " + value, 22, True), Line("", 4)]
        img, spans = render.paper(lines, width=640, margin=36)
        return render.scan_pdf(render.jpeg_bytes(render.degrade(img, render.LEVELS[seed % 3], seed, "RECEIVED", spans[4]),
                                                 quality=82), "Scan")

    def report(seed: int) -> bytes:
        args = ("New customers by region, Q1 2026", ["Jan", "Feb", "Mar"],
                {"North": [120, 340, 99], "South": [80, 200, 310 + seed % 7], "East": [150, 60, 220]}, "customers")
        if hasattr(render, "bar_chart_image"):
            chart = render.photo_png(render.bar_chart_image(*args), render.LEVELS[seed % 3], seed)
        else:  # the renderer before the chart was drawn straight from Agg's buffer
            chart = render.reencode_png(render.bar_chart(*args), render.LEVELS[seed % 3], seed)
        return render.report_pdf([("Quarterly operations review: Q1 2026", 16, "B"),
                                  ("Figure 1 (next page) shows new customers per region.", 11, "")], chart, "Q1 review")

    def invoice(seed: int) -> bytes:
        return render.text_pdf([("Brightwater Ltd", 18, "B"), (f"INVOICE INV-{1000 + seed}", 14, "B"),
                                ("Issued 2026-03-02. Payment due 2026-04-01.", 11, ""),
                                ("Consulting services: 4,250.00 USD", 11, ""), ("Total due: 4,250.00 USD", 13, "B")],
                               f"INVOICE INV-{1000 + seed}")

    out = [receipt, form, report, invoice]
    try:
        from synth.procedural import screens
    except ImportError:
        return out
    out.append(lambda seed: screens.sample_dashboard_png(seed))
    out.append(lambda seed: screens.sample_whiteboard_png(seed))
    return out


def _file_rates(n: int) -> tuple[float, float, int]:
    """(files rendered per second, files of the same bytes written per second, total bytes)."""
    kinds = _renderers()
    for make in kinds:
        make(0)  # fonts, matplotlib and fpdf load once per process: not a per-file cost
    t0 = time.perf_counter()
    files = [kinds[i % len(kinds)](i) for i in range(n)]
    render_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for i, raw in enumerate(files):
            Path(tmp, f"evidence-{i}").write_bytes(raw)
        write_s = time.perf_counter() - t0
    return n / render_s, n / max(write_s, 1e-9), sum(map(len, files))


def _validation_rate(n: int) -> tuple[float, int, list]:
    """media_evidence environments generated and validated per second, how many were valid, and those specs."""
    from synth.pipeline import procedural_attempt

    t0 = time.perf_counter()
    attempts = [procedural_attempt(CAP, seed) for seed in range(1000, 1000 + n)]
    rate = sum(a.valid for a in attempts) / (time.perf_counter() - t0)
    return rate, sum(a.valid for a in attempts), [a.spec for a in attempts if a.valid]


def _blind_passes(specs: list) -> tuple[int, int]:
    """(evidence-blind baselines that pass, environments with an evidence-only fact) over `specs`."""
    try:
        from synth.evidence import evidence_blind_passes
    except ImportError:  # before synth.evidence existed
        return 0, 0
    got = [evidence_blind_passes(s) for s in specs]
    return sum(g is True for g in got), sum(g is not None for g in got)


def run(quick: bool) -> list[dict]:
    """The evidence file rate and media_evidence's validation rate, each with its same-run baseline."""
    from synth.pipeline import plan, procedural_attempt
    from synth.procedural.world import pools

    import benchmarks.bench_synth as bench_synth

    pools()
    for cap, seed in plan(None, 18, seed=0):  # every capability's modules load before any timing
        procedural_attempt(cap, seed)
    rendered, written, size = _file_rates(24 if quick else 120)
    count = 12 if quick else 60
    media_rate, valid, specs = _validation_rate(count)
    single = bench_synth._single_day_rate(plan(None, 36 if quick else 180, seed=1000))
    chores = [procedural_attempt(c, s) for c, s in plan(["mail_triage", "document_from_data"], count, seed=2000)]
    blind, blinded = _blind_passes(specs + [a.spec for a in chores if a.valid])
    return [
        {"key": "media_evidence_files_per_s", "value": round(rendered, 1), "unit": "files/s",
         "baseline_key": "media_evidence_file_writes_per_s", "baseline": round(written, 1),
         "note": f"receipts, scans, report and invoice PDFs{', screenshots, whiteboards' if len(_renderers()) > 4 else ''}"
                 f" ({size / 2**20:.1f} MiB); rendering is {written / rendered:.0f}x the cost of writing the bytes"},
        {"key": "media_evidence_valid_envs_per_s", "value": round(media_rate, 1), "unit": "envs/s",
         "baseline_key": "synth_single_day_valid_envs_per_s", "baseline": round(single, 1),
         "note": f"{valid}/{count} valid; ratio {media_rate / single:.2f} of the same-run single-day rate"},
        {"key": "evidence_blind_passes", "value": blind, "unit": "envs", "baseline_key": "envs_with_evidence_only_facts",
         "baseline": blinded, "note": "the reference with every evidence-only fact replaced by a plausible wrong value "
                                      "(media_evidence and the mail_triage/document_from_data mixes); target 0"},
    ]


if __name__ == "__main__":
    import sys

    for row in run(quick=len(sys.argv) < 2 or sys.argv[1] != "full"):
        print(row)
