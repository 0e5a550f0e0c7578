"""The HTML report: pages parse (as XML), the plot exists, record text is escaped, every predicate is shown."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from episode_helpers import generated_specs, multi_turn_spec

from trainers.episodes.batch import BatchConfig, run_local
from trainers.episodes.policies import PolicySpec
from trainers.report import ReportError, write_report
from trainers.report.html import episode_pages

NS = {"h": "http://www.w3.org/1999/xhtml"}


def parse(path: Path) -> ET.Element:
    text = path.read_text(encoding="utf-8").replace("<!DOCTYPE html>", "")
    return ET.fromstring(text.encode("utf-8"))


def hostile_spec() -> object:
    return multi_turn_spec(id="hostile-html", request="Move <script>alert('x')</script> & </pre><b>now</b> please.")


def test_report_renders_index_plot_and_a_parsable_page_per_episode(tmp_path: Path) -> None:
    specs = [multi_turn_spec(), hostile_spec(), generated_specs()[0]]
    recs = run_local(specs, BatchConfig(PolicySpec("teacher"))) + run_local(specs, BatchConfig(PolicySpec("noop")))
    index = write_report(recs, tmp_path / "report", title="Teacher & noop <run>")
    png = tmp_path / "report" / "success.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    root = parse(index)
    assert root.find(".//h:title", NS).text == "Teacher & noop <run>"
    links = [a.get("href") for a in root.iterfind(".//h:a", NS)]
    pages = episode_pages(recs)
    assert links == [f"episodes/{p}" for p in pages] and pages[0] == f"{recs[0].episode_id}.html"
    assert root.find(".//h:img", NS).get("src") == "success.png"
    summary = root.findall(".//h:table", NS)[0]
    caps = [tr.find("h:td", NS).text for tr in summary.findall("h:tr", NS)[1:]]
    assert caps == ["clarification", "dynamic_world", "file_management", "all"]
    for name, rec in zip(pages, recs):
        page = parse(tmp_path / "report" / "episodes" / name)
        text = "".join(page.itertext())
        assert rec.episode_id in text
        assert len(page.findall(".//h:div[@class='msg assistant']", NS)) == sum(
            m.role == "assistant" for m in rec.final.messages)
        predicate_rows = page.findall(".//h:table", NS)[1].findall("h:tr", NS)[1:]
        assert len(predicate_rows) == len(rec.final.evaluation["results"])
    # hostile text from the record is shown as text, never as markup
    hostile = (tmp_path / "report" / "episodes" / pages[1]).read_text(encoding="utf-8")
    assert "<script>" not in hostile and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in hostile
    assert "<b>now</b>" not in hostile
    page = parse(tmp_path / "report" / "episodes" / pages[1])
    assert page.find(".//h:script", NS) is None and page.find(".//h:b", NS) is None


def test_episode_pages_are_named_by_id_safely_and_never_collide() -> None:
    from types import SimpleNamespace

    ids = ["ep-1", "../../etc/passwd", "a b/c", "A B/C", ".hidden", "x" * 300, ""]
    names = episode_pages([SimpleNamespace(episode_id=i) for i in ids])  # type: ignore[misc]
    assert names[:5] == ["ep-1.html", "_.._etc_passwd.html", "a_b_c.html", "A_B_C-2.html", "hidden.html"]
    assert len(names[5]) == 105 and names[6] == "episode.html"
    assert len({n.lower() for n in names}) == len(names) and all("/" not in n for n in names)


def test_report_into_an_unwritable_place_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    try:
        write_report([], blocker / "report")
    except ReportError as e:
        assert str(blocker / "report") in str(e)
    else:  # pragma: no cover
        raise AssertionError("expected ReportError")


def test_report_splits_success_by_policy(tmp_path: Path) -> None:
    specs = generated_specs()[:2]
    recs = run_local(specs, BatchConfig(PolicySpec("teacher"))) + run_local(specs, BatchConfig(PolicySpec("noop")))
    index = write_report(recs, tmp_path / "r").read_text()
    teacher = index.index("<h3>policy: teacher</h3>")
    noop = index.index("<h3>policy: noop</h3>")
    assert "100.0%" in index[teacher:] and "0.0%" in index[noop:teacher]
    assert (tmp_path / "r" / "success.png").stat().st_size > 1000


def test_report_counts_calls_made_parsed_and_accepted_per_policy(tmp_path: Path) -> None:
    from trainers.report.calls import call_counts

    specs = generated_specs()[:2]
    teacher = run_local(specs, BatchConfig(PolicySpec("teacher")))
    noop = run_local(specs, BatchConfig(PolicySpec("noop")))
    root = parse(write_report(teacher + noop, tmp_path / "r"))
    (calls,) = [t for t in root.findall(".//h:table", NS)
                if [th.text for th in t.find("h:tr", NS)][:3] == ["policy", "episodes", "tool calls"]]
    rows = {tr[0].text: [td.text for td in tr] for tr in calls.findall("h:tr", NS)[1:]}
    made, valid, accepted = call_counts(teacher)
    assert made > 0 and rows["teacher"] == ["teacher", "2", str(made), f"{valid}/{made} (100%)",
                                            f"{accepted}/{made} (100%)", "1.000"]
    assert rows["noop"][1:4] == ["2", "0", "0/0"]
