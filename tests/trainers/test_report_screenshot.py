"""Report pages as a person sees them: real episodes rendered, checked for structure and screenshotted in
headless Chromium (from Debian's `chromium` package, .ci/setup_chromium.sh)."""

from __future__ import annotations

import re
from collections import Counter
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from PIL import Image

from support import need
from synth.procedural import generate
from trainers.demo.index import PLOT, write_index
from trainers.demo.metrics import CapabilityScore, StudentScore
from trainers.demo.pipeline import DemoSummary
from trainers.episodes.batch import BatchConfig
from trainers.episodes.execute import run_batch
from trainers.episodes.policies import PolicySpec
from trainers.report import write_report
from trainers.report.html import SHOWN_OPEN, episode_pages

NS = {"h": "http://www.w3.org/1999/xhtml"}


def parse(path: Path) -> ET.Element:
    return ET.fromstring(path.read_text(encoding="utf-8").replace("<!DOCTYPE html>", "").encode("utf-8"))


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    need(path is not None, "Chromium is not installed (run .ci/setup_chromium.sh)")
    return str(path)


def screenshot(page: Path, out: Path, size: str = "1200,1800") -> Image.Image:
    """The page as headless Chromium draws it in a window of `size`."""
    subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size={size}", f"--screenshot={out}", page.resolve().as_uri()],
                   check=True, capture_output=True, timeout=120)
    assert out.is_file() and out.stat().st_size > 10_000, "the screenshot is (nearly) empty"
    return Image.open(out).convert("RGB")


def assert_drawn(img: Image.Image, least_colours: int = 40) -> None:
    """Not blank: many distinct colours (text antialiasing, badges, the plot) and ink over much of the page."""
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) >= least_colours, f"only {len(colours or [])} colours"
    small = img.resize((60, 90)).convert("L")
    inked = sum(1 for v in small.getdata() if v < 235)
    assert inked > 0.05 * 60 * 90, f"only {inked} of {60 * 90} cells have ink"


def legends_cover_columns(root: ET.Element) -> None:
    """Every table header cell has a tooltip, and the legend line after the table names every column."""
    body = root.find("h:body", NS)
    tables = [t for t in root.iterfind(".//h:table", NS) if t.find("h:tr", NS).find("h:td", NS) is None]
    assert tables
    parents = {c: p for p in body.iter() for c in p}
    for table in tables:
        header = table.find("h:tr", NS)
        names = [th.text for th in header.findall("h:th", NS)]
        assert all(th.get("title") for th in header.findall("h:th", NS)), names
        siblings = list(parents[table])
        legend = siblings[siblings.index(table) + 1]
        assert legend.get("class") == "legend", names
        assert [s.text for s in legend.findall("h:strong", NS)] == names


def test_report_pages_explain_every_column_show_each_result_once_and_are_drawn(tmp_path: Path) -> None:
    # a long episode (long results), one with a world change, one with failing calls; and a do-nothing run
    specs = [generate(c, 0) for c in ("long_horizon", "dynamic_world", "fault_robustness")]
    recs = run_batch(specs, BatchConfig(PolicySpec("teacher"))) + run_batch(specs[:1], BatchConfig(PolicySpec("noop")))
    assert any(e.kind == "world" for r in recs for e in r.events) and any(not e.ok for r in recs for e in r.events)
    index = write_report(recs, tmp_path / "report", title="teacher and noop")
    legends_cover_columns(parse(index))
    folded = 0
    pages = episode_pages(recs)
    for n, rec in enumerate(recs):
        page = tmp_path / "report" / "episodes" / pages[n]
        html = page.read_text(encoding="utf-8")
        root = parse(page)
        legends_cover_columns(root)
        assert "by step" in html and "1 held, 0 did not" in html
        details = [d for d in root.iterfind(".//h:details", NS)]
        results = Counter(m.content for m in rec.final.messages if m.role == "tool" and m.content)
        blocks = [pre.text or "" for pre in root.iterfind(".//h:pre", NS)]
        for content, times in results.items():  # each result once (a call repeated gives its result again)
            shown = [d for d in details if d.find("h:pre", NS) is not None and d.find("h:pre", NS).text == content]
            assert len(shown) == times, f"{rec.episode_id}: a tool result shown {len(shown)} times, not {times}"
            if len(content) >= 30:  # and in no other block of the page (a transcript copy, an events table)
                assert sum(content.strip() == b.strip() for b in blocks) == times, content
            if len(content) > SHOWN_OPEN:
                assert all(d.get("open") is None for d in shown)  # long: folded, in full inside <details>
                folded += 1
        calls = sum(1 for e in rec.events if e.kind == "call")
        assert len(root.findall(".//h:div[@class='call']", NS)) == calls
    assert folded, "no long result among these episodes: the test would not check folding"
    busiest = max(range(len(recs)), key=lambda n: sum(1 for e in recs[n].events if e.kind == "call"))
    img = screenshot(tmp_path / "report" / "episodes" / pages[busiest], tmp_path / "episode.png")
    assert_drawn(img)
    assert_drawn(screenshot(index, tmp_path / "index.png"), least_colours=60)  # the plot adds colour


def test_the_index_of_every_capability_fits_a_1400_px_window(tmp_path: Path) -> None:
    """All 14 capabilities (the README's synth mix): the plot keeps its labels and nothing runs off the page."""
    from synth.capabilities import CAPABILITIES

    recs = run_batch([generate(c, 0) for c in CAPABILITIES], BatchConfig(PolicySpec("teacher")))
    index = write_report(recs, tmp_path / "report")
    plot = Image.open(tmp_path / "report" / "success.png")
    assert plot.width <= 1000, plot.size  # the body is 70em wide; a wider plot would be cut
    img = screenshot(index, tmp_path / "index.png", size="1400,1200")
    right = img.crop((img.width - 40, 0, img.width, img.height)).convert("L")
    assert min(right.getdata()) > 200, "something runs into the right edge of a 1400 px window"


def demo_summary() -> DemoSummary:
    def scores(rates: list[float]) -> StudentScore:
        caps = [CapabilityScore(c, 10, round(10 * r), r, r * 0.8) for c, r in
                zip(["file_management", "email", "calendar", "all"], rates)]
        return StudentScore(success_rate=rates[-1], mean_reward=rates[-1] * 0.8, mean_predicate_score=0.5,
                            tool_calls=20, accepted_calls=10, heldout_loss=2.0, per_capability=caps)

    summary = DemoSummary(settings={}, out="demo", environments={"train": 20, "heldout": 30})
    summary.before, summary.after = scores([0.0, 0.1, 0.0, 0.03]), scores([0.6, 0.4, 0.3, 0.43])
    summary.timings = {"synthesize": 1.0, "teacher": 2.0, "train": 30.0}
    return summary


def test_demo_front_page_plots_before_and_after_and_explains_its_columns(tmp_path: Path) -> None:
    page = write_index(demo_summary(), tmp_path / "demo" / "index.html", {"held-out": Path("heldout/index.html")})
    root = parse(page)
    legends_cover_columns(root)
    img = root.find(".//h:img", NS)
    assert img is not None and img.get("src") == PLOT and "before and after" in img.get("alt")
    plot = Image.open(tmp_path / "demo" / PLOT).convert("RGB")
    assert plot.size[0] >= 500 and len(plot.getcolors(1 << 20)) > 30
    shot = screenshot(page, tmp_path / "front.png", "1100,1400")
    assert_drawn(shot, least_colours=60)
    # the plot's two bar colours are on screen
    assert {(0x9a, 0xa5, 0xb1), (0x2f, 0x7d, 0x4f)} <= {c for _, c in shot.getcolors(1 << 20)}
    assert not re.search(r"<script", page.read_text())
