"""Facts only an evidence file holds (synth.evidence), the evidence other capabilities' templates carry (an approval
memo, screenshot or whiteboard photo behind reply_with_figure, a receipt photo in expense_summary_json), the
screenshot and handwriting renderers (synth.procedural.screens), and the memo of workbook/PDF/image reads."""

from __future__ import annotations

import base64
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from media_samples import evidence_reads

from synth import validate_spec
from synth.spec import run_reference
from synth.evidence import evidence_only_facts, spellings, visible_text
from synth.pipeline import profile
from synth.procedural import generate, render, screens
from synth.spec import CallStep, EnvironmentSpec, ReferenceSolution


def _with_text_file(spec: EnvironmentSpec, text: str) -> EnvironmentSpec:
    doc = spec.model_dump(mode="json")
    doc["initial"].setdefault("files", {}).setdefault("files", []).append({"path": "/notes/leak.md", "content": text})
    return EnvironmentSpec.model_validate(doc)


def test_a_fact_counts_only_while_no_text_holds_it() -> None:
    spec = generate("mail_triage", 3, template="reply_with_figure")
    facts = evidence_only_facts(spec)
    assert len(facts) == 1 and profile(spec).evidence_only == 1
    figure = facts[0]["fact"]
    text, binaries = visible_text(spec)
    assert facts[0]["path"] in binaries and figure not in text
    assert figure in json.dumps(spec.model_dump(mode="json")["predicates"])  # the task turns on it
    # the same figure written in a text file, in any usual spelling, is no longer evidence-only
    for written in (figure, figure.replace(",", ""), str(int(figure.replace(",", "").replace(".", "")))):
        assert evidence_only_facts(_with_text_file(spec, f"Approved: {written}")) == []
    assert evidence_only_facts(_with_text_file(spec, "Approved: 1" + figure.replace(",", "") + "9")) == facts
    undeclared = spec.model_copy(update={"metadata": {k: v for k, v in spec.metadata.items() if k != "evidence"}})
    assert evidence_only_facts(undeclared) == []


@given(st.integers(min_value=0, max_value=10**9))
@settings(max_examples=200, deadline=None)
def test_every_spelling_of_an_amount_names_the_same_minor_units(minor: int) -> None:
    fact = f"{minor // 100:,}.{minor % 100:02d}"
    for s in spellings(fact):
        if "." in s:
            whole, dec = s.split(".")
            assert int(whole.replace(",", "")) * 100 + int(dec.ljust(2, "0")) == minor
        else:
            assert int(s.replace(",", "")) in (minor, minor // 100)


def test_each_media_template_declares_facts_that_count() -> None:
    for name in ("receipts_into_expenses", "scanned_form_to_database", "chart_answer_from_report",
                 "invoice_to_budget_over_days"):
        for seed in range(3):
            spec = generate("media_evidence", seed, template=name)
            assert evidence_only_facts(spec), (name, seed)


def _solve(spec: EnvironmentSpec, steps: list, answer: str | None):  # type: ignore[no-untyped-def]
    run = run_reference(spec, solution=ReferenceSolution(steps=steps, final_answer=answer))
    return spec.evaluate(run.workspace, run.final_answer)


def test_the_approved_figure_is_only_in_pixels_in_every_kind_and_the_drafts_figure_fails() -> None:
    kinds = set()
    for seed in range(12):
        spec = generate("mail_triage", seed, template="reply_with_figure")
        (item,) = spec.metadata["evidence"]
        kinds.add(item["kind"])
        figure = item["facts"][0]
        (text,) = evidence_reads(spec).values()
        assert figure not in text and "[image: " in text
        draft = next(f for f in spec.initial["files"]["files"] if "-draft-" in f["path"])
        other = draft["content"].rsplit(": ", 1)[1].strip()
        steps = [s.model_copy(update={"args": {**s.args, "body": s.args["body"].replace(figure, other)}})
                 if isinstance(s, CallStep) and s.tool == "reply_email" else s for s in spec.reference.steps]
        assert not _solve(spec, steps, None).passed
        assert _solve(spec, list(spec.reference.steps), spec.reference.final_answer).passed
    assert kinds == {"photo", "scan", "screenshot", "whiteboard"}


def test_the_expense_summary_needs_the_receipt_photo() -> None:
    for seed in range(6):
        spec = generate("document_from_data", seed, template="expense_summary_json")
        (item,) = spec.metadata["evidence"]
        receipt = float(item["facts"][0].replace(",", ""))
        (text,) = evidence_reads(spec).values()
        assert item["facts"][0] not in text
        steps = []
        for s in spec.reference.steps:
            if isinstance(s, CallStep) and s.tool == "write_file":
                doc = json.loads(s.args["content"])
                doc["total"] = round(doc["total"] - receipt, 2)  # the CSV alone
                s = s.model_copy(update={"args": {**s.args, "content": json.dumps(doc)}})
            steps.append(s)
        assert not _solve(spec, steps, None).passed


@pytest.mark.parametrize("template", ["reply_with_figure", "expense_summary_json"])
def test_templates_with_evidence_validate(template: str) -> None:
    cap = "mail_triage" if template == "reply_with_figure" else "document_from_data"
    for seed in range(8):
        spec = generate(cap, seed, template=template)
        report = validate_spec(spec)
        assert report.ok, f"{spec.id}\n{report.text()}"


def test_screenshots_and_whiteboards_are_deterministic_and_their_levels_differ() -> None:
    from PIL import Image

    rows = [("Travel Q1", "Approved", "1,200.00"), ("Travel Q1", "Draft", "900.00")]
    shots = {lv: render.png_bytes(screens.screenshot("Budget desk", "Approvals", ("Budget", "Status", "Amount"),
                                                     rows, lv, 4, highlight=0)) for lv in render.LEVELS}
    assert len(set(shots.values())) == 3
    assert shots["rough"] == render.png_bytes(screens.screenshot("Budget desk", "Approvals",
                                                                 ("Budget", "Status", "Amount"), rows, "rough", 4,
                                                                 highlight=0))
    boards = {lv: render.png_bytes(screens.whiteboard(["Travel Q1", "approved 1,200.00"], lv, 7))
              for lv in render.LEVELS}
    assert len(set(boards.values())) == 3
    assert boards["worn"] == render.png_bytes(screens.whiteboard(["Travel Q1", "approved 1,200.00"], "worn", 7))
    assert screens.whiteboard(["x"], "clean", 1).tobytes() != screens.whiteboard(["x"], "clean", 2).tobytes()
    clean = Image.open(io.BytesIO(boards["clean"])).convert("L")
    assert min(clean.tobytes()) < 120  # ink on the board
    with pytest.raises(ValueError, match="level must be one of"):
        screens.whiteboard(["x"], "smudged", 1)
    with pytest.raises(ValueError, match="level must be one of"):
        screens.screenshot("a", "b", ("c",), [("d",)], "blurry", 1)


def test_handwriting_moves_each_glyph_more_at_rougher_levels() -> None:
    """The same line at level clean and rough: more ink lands off the type's own rows at rough."""
    from PIL import Image, ImageChops

    def spread(level: str) -> int:
        a = screens.whiteboard(["AAAA AAAA"], level, 3).convert("L")
        b = screens.whiteboard(["AAAA AAAA"], level, 4).convert("L")
        w, h = min(a.width, b.width), min(a.height, b.height)
        diff = ImageChops.difference(a.crop((0, 0, w, h)), b.crop((0, 0, w, h)))
        return sum(1 for v in diff.tobytes() if v > 60)

    assert spread("rough") > spread("clean")


def test_memoised_reads_equal_fresh_reads_and_refusals_are_not_kept() -> None:
    from workspace_sim.media import sheets
    from workspace_sim.media.limits import LIMITS, MediaError

    raw = sheets.write_xlsx(None, "/a.xlsx", "Costs", "A1", [["a", 1, None, "=B1*2"], [None, 2.5, True]])
    first = sheets.read_xlsx(raw, "/a.xlsx", "Costs", "A1:E3")
    again = sheets.read_xlsx(raw, "/a.xlsx", "Costs", "A1:E3")
    fresh = sheets._read_loaded(sheets._parse(raw, "/a.xlsx", LIMITS), "/a.xlsx", "Costs", "A1:E3", LIMITS)
    assert first == again == fresh
    first["rows"][0][0] = "changed"  # a caller's copy: the memo keeps its own
    assert sheets.read_xlsx(raw, "/a.xlsx", "Costs", "A1:E3") == fresh
    broken = raw[:200]
    for _ in range(2):
        with pytest.raises(MediaError, match="/b.xlsx"):
            sheets.read_xlsx(broken, "/b.xlsx")
    with pytest.raises(MediaError, match="no sheet 'Nope'"):
        sheets.read_xlsx(raw, "/a.xlsx", "Nope")


@given(st.lists(st.lists(st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                                   st.floats(allow_nan=False, allow_infinity=False, width=32),
                                   st.text("abc =+1", max_size=6)), min_size=1, max_size=3), min_size=1, max_size=3),
       st.sampled_from(["A1", "B2", "D7"]), st.sampled_from(["Costs", "Other"]))
@settings(max_examples=40, deadline=None)
def test_a_write_through_the_memo_gives_the_bytes_and_cells_of_an_unmemoised_write(rows, start, sheet) -> None:
    from workspace_sim.media import sheets
    from workspace_sim.media.limits import LIMITS

    base = sheets.write_xlsx(None, "/a.xlsx", "Costs", "A1", [["Supplier", "Budget"], ["x", 3]])
    memo = sheets.write_xlsx(base, "/a.xlsx", sheet, start, rows)
    wb = sheets._parse(base, "/a.xlsx", LIMITS)  # the slow path by hand: parse, write, save
    ws = wb[sheet] if sheet in wb.sheetnames else wb.create_sheet(sheet)
    from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

    col, row0 = coordinate_from_string(start)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            ws.cell(row=row0 + i, column=column_index_from_string(col) + j, value=v)
    wb.properties.created = wb.properties.modified = sheets.FIXED_TIME
    wb.properties.creator = wb.properties.lastModifiedBy = "coworkenv"
    buf = io.BytesIO()
    wb.save(buf)
    assert memo == sheets.repack_zip(buf.getvalue())
    assert sheets.read_xlsx(memo, "/a.xlsx", sheet) == sheets._read_loaded(
        sheets._parse(memo, "/a.xlsx", LIMITS), "/a.xlsx", sheet, None, LIMITS)


def test_the_memo_is_bounded_and_skips_large_files() -> None:
    from workspace_sim.media.memo import Memo

    m = Memo(size=3, max_bytes=10)
    calls = []
    for i in range(5):
        m.get(bytes([i]), None, lambda i=i: calls.append(i) or i)
    assert len(m._items) == 3 and m.get(bytes([4]), None, lambda: -1) == 4
    assert m.get(bytes([0]), None, lambda: -1) == -1  # the oldest went
    assert m.get(b"x" * 11, None, lambda: "big") == "big" and all(k[1] != 11 for k in m._items)


def test_stats_prints_the_evidence_only_column(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from coworkenv.cli import app

    generate("mail_triage", 3, template="reply_with_figure").save(tmp_path / "a.json")
    generate("file_management", 0, template="rename_term").save(tmp_path / "b.json")
    res = CliRunner().invoke(app, ["stats", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    dist = json.loads(res.output)
    assert dist["overall"]["share"]["evidence_only"] == 0.5
    assert any(t["target"] == "share with an evidence-only fact" and t["met"] for t in dist["targets"])
    res = CliRunner(env={"COLUMNS": "250"}).invoke(app, ["stats", str(tmp_path)])
    assert "evidence-only" in res.output and "share with an evidence-only fact" in res.output


def test_the_rendered_receipt_bytes_are_stable_per_seed() -> None:
    a = generate("document_from_data", 5, template="expense_summary_json")
    b = generate("document_from_data", 5, template="expense_summary_json")
    raw = [base64.b64decode(f["content"]) for f in a.initial["files"]["files"] if f.get("encoding") == "base64"]
    assert raw and a.model_dump_json() == b.model_dump_json()


EVIDENCE_TEMPLATES = [("mail_triage", "reply_with_figure"), ("document_from_data", "expense_summary_json")] + [
    ("media_evidence", t) for t in ("receipts_into_expenses", "scanned_form_to_database", "chart_answer_from_report",
                                     "invoice_to_budget_over_days", "voicemail_to_task")]


@pytest.mark.parametrize("cap,name", EVIDENCE_TEMPLATES)
def test_the_evidence_blind_baseline_fails_every_template(cap: str, name: str) -> None:
    """The reference with every evidence-only fact (and what is derived from one) replaced by a plausible wrong
    value never passes: the predicates turn on what only the evidence shows."""
    from synth.evidence import blind_solution, evidence_blind_passes

    for seed in range(5):
        spec = generate(cap, seed, template=name)
        assert evidence_only_facts(spec), (name, seed)
        assert evidence_blind_passes(spec) is False, (name, seed)
        assert blind_solution(spec) != spec.reference


def test_the_evidence_blind_baseline_passes_where_the_declared_fact_does_not_matter() -> None:
    from synth.evidence import evidence_blind_passes, wrong

    spec = generate("mail_triage", 3, template="reply_with_figure")
    unused = spec.model_copy(update={"metadata": {**spec.metadata, "evidence": [
        {**spec.metadata["evidence"][0], "facts": ["ZQ-4417"]}]}})
    assert evidence_only_facts(unused) and evidence_blind_passes(unused) is True
    assert evidence_blind_passes(generate("file_management", 0, template="rename_term")) is None
    assert wrong("31,075.50") == "31,075.53" and wrong("2026-04-22") == "2026-04-25" and wrong("abc") == "ABCx"


def test_the_write_memo_tells_minus_zero_from_zero_and_true_from_one() -> None:
    """Values equal in Python but written differently never share a memo entry (hypothesis found -0.0)."""
    from workspace_sim.media import sheets

    base = sheets.write_xlsx(None, "/a.xlsx", "Costs", "A1", [["x"]])
    outs = {repr(v): sheets.write_xlsx(base, "/a.xlsx", "Costs", "B2", [[v]]) for v in (-0.0, 0.0, 1, True, 1.0)}
    assert outs["-0.0"] != outs["0.0"] and outs["True"] != outs["1"]
    sheets._WRITES.clear()
    assert outs == {repr(v): sheets.write_xlsx(base, "/a.xlsx", "Costs", "B2", [[v]]) for v in (0.0, -0.0, True, 1.0, 1)}
