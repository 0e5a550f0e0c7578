"""The media_evidence templates: evidence rendered from the world's records (Pillow, fpdf2, openpyxl, matplotlib),
byte-deterministic, with the facts the task turns on only in pixels or in a PDF; each template valid by execution
over many seeds (reference passes, do nothing scores 0, every mutant fails), a text-only guess fails, the two-day
invoice story fails an agent that never re-reads, and the teacher passes through the runner and over MCP, its SFT
export carrying the images it looked at."""

from __future__ import annotations

import base64
import io
import struct
from functools import lru_cache

import pytest
from media_samples import evidence_reads

from synth import validate_spec
from synth.spec import run_reference
from synth.procedural import generate
from synth.procedural import render
from synth.spec import CallStep, EnvironmentSpec, ReferenceSolution
from trainers.episodes.policies import make_policy
from trainers.episodes.runner import run_episode
from trainers.export.sft import to_hf

CAP = "media_evidence"
TEMPLATES = ["receipts_into_expenses", "scanned_form_to_database", "chart_answer_from_report",
             "invoice_to_budget_over_days", "voicemail_to_task"]
SEEDS = 24


@lru_cache(maxsize=None)
def spec_of(name: str, seed: int) -> EnvironmentSpec:
    return generate(CAP, seed, template=name)


def _chunks(png: bytes) -> list[bytes]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    out, i = [], 8
    while i < len(png):
        (n,) = struct.unpack(">I", png[i:i + 4])
        out.append(png[i + 4:i + 8])
        i += 12 + n
    return out


def _binary_files(spec: EnvironmentSpec) -> dict[str, bytes]:
    return {f["path"]: base64.b64decode(f["content"]) for f in spec.initial["files"]["files"]
            if f.get("encoding") == "base64"}


def _solve(spec: EnvironmentSpec, steps: list, answer: str | None):  # type: ignore[no-untyped-def]
    run = run_reference(spec, solution=ReferenceSolution(steps=steps, final_answer=answer))
    return spec.evaluate(run.workspace, run.final_answer)


@pytest.mark.parametrize("name", TEMPLATES)
def test_valid_by_execution_over_many_seeds(name: str) -> None:
    for seed in range(SEEDS):
        spec = spec_of(name, seed)
        report = validate_spec(spec)
        assert report.ok, f"{spec.id}\n{report.text()}"
        assert spec.evaluate(spec.build_workspace(), None).score == 0.0
        assert report.stats["mutants_killed"] >= 1
        assert spec.capabilities[0] == CAP


@pytest.mark.parametrize("name", TEMPLATES)
def test_a_seed_renders_the_same_bytes_and_pngs_carry_no_metadata(name: str) -> None:
    a = generate(CAP, 5, template=name)
    b = generate(CAP, 5, template=name)
    assert a.model_dump_json() == b.model_dump_json()
    files = _binary_files(a)
    assert files, "the task has evidence files"
    for path, raw in files.items():
        if path.endswith(".png"):
            assert set(_chunks(raw)) <= {b"IHDR", b"PLTE", b"IDAT", b"IEND"}, path
        if path.endswith(".pdf"):
            assert b"CreationDate (D:20000101" in raw, path
    assert generate(CAP, 6, template=name).model_dump_json() != a.model_dump_json()


def test_the_chart_png_has_no_software_metadata_and_is_stable() -> None:
    args = ("Sign-ups", ["Jan", "Feb"], {"North": [10, 20], "South": [30, 5]}, "sign-ups")
    png = render.bar_chart(*args)
    assert png == render.bar_chart(*args)
    assert b"Software" not in png and b"matplotlib" not in png.lower()
    assert set(_chunks(png)) <= {b"IHDR", b"PLTE", b"IDAT", b"IEND", b"pHYs"}


def test_levels_of_wear_differ_and_all_occur_over_seeds() -> None:
    from PIL import Image

    img, spans = render.paper([render.Line("TOTAL", 20, True, right="12.50")])
    outs = {lv: render.png_bytes(render.degrade(img, lv, 3, "PAID", spans[0])) for lv in render.LEVELS}
    assert len(set(outs.values())) == 3
    rough = Image.open(io.BytesIO(outs["rough"]))
    assert rough.size != img.size  # rotated with the canvas expanded, then cropped
    with pytest.raises(ValueError, match="level must be one of"):
        render.degrade(img, "ruined", 1)
    sizes = {Image.open(io.BytesIO(r)).size for s in range(12) for p, r in
             _binary_files(spec_of("receipts_into_expenses", s)).items() if p.startswith("/receipts/")}
    assert len(sizes) > 6  # widths, rotations and crops vary with the seed


def test_receipt_facts_are_only_in_pixels_and_a_text_only_guess_fails() -> None:
    for seed in range(6):
        spec = spec_of("receipts_into_expenses", seed)
        texts = evidence_reads(spec)
        creates = [s for s in spec.reference.calls() if s.tool == "create_row"]
        for step in creates:
            v = {x["property"]: x["value"] for x in step.args["values"]}
            total = f"{v['Amount']:,.2f}"
            assert all(total not in t and v["Name"] not in t for t in texts.values())
            assert all(t.startswith("[image: ") for t in texts.values())
        # a text-only agent copies the ledger's amounts and takes every receipt as matching: it fails
        ws = spec.build_workspace()
        ledger = {t.id: t.amount_minor / 100 for t in ws.table("finance.transactions").values()}
        steps = list(spec.reference.steps)
        for i, s in enumerate(steps):
            if isinstance(s, CallStep) and s.tool == "create_row":
                vals = [{"property": x["property"], "value": ledger[s.args["values"][3]["value"]]
                         if x["property"] == "Amount" else "Matches" if x["property"] == "Ledger" else x["value"]}
                        for x in s.args["values"]]
                steps[i] = s.model_copy(update={"args": {**s.args, "values": vals}})
        assert not _solve(spec, steps, spec.reference.final_answer).passed
        assert _solve(spec, list(spec.reference.steps), spec.reference.final_answer).passed


def test_a_scanned_form_has_no_text_layer_and_its_fields_are_only_in_the_image() -> None:
    spec = spec_of("scanned_form_to_database", 4)
    texts = evidence_reads(spec)
    (create,) = [s for s in spec.reference.calls() if s.tool == "create_row"]
    tax = next(x["value"] for x in create.args["values"] if x["property"] == "Tax ID")
    assert len(texts) == 2
    for t in texts.values():
        assert "(scanned: no text layer; as images)" in t and "[image: page1-image1.jpg (image/jpeg" in t
        assert tax not in t


def test_the_chart_figure_is_only_in_the_image_and_last_quarters_figure_fails() -> None:
    spec = next(sp for sp in (spec_of("chart_answer_from_report", k) for k in range(3, 20))
                if not any(s.tool == "send_email" for s in sp.reference.calls()))  # the variant answered in chat
    (pdf_text,) = evidence_reads(spec).values()
    figure = spec.reference.final_answer.rsplit(": ", 1)[1].rstrip(".")
    assert "scanned: no text layer" in pdf_text and figure not in pdf_text
    assert "[image: page2-image1.png (image/png" in pdf_text
    steps = list(spec.reference.steps)
    ws = spec.build_workspace()
    old = next(p for p in ws.table("files.files") if p.endswith(".pdf") and p not in evidence_reads(spec))
    old_text = ws.call("read_pdf", {"path": old}).text
    wrong = spec.reference.final_answer.replace(figure, "7777")
    assert not _solve(spec, steps, wrong).passed
    assert "in the last month" in old_text  # the distractor's figures are in its text layer


def test_the_two_day_invoice_story_fails_an_agent_that_never_rereads() -> None:
    days = set()
    for seed in range(6):
        spec = spec_of("invoice_to_budget_over_days", seed)
        days.add(len(spec.stages))  # a third day brings a third invoice in some seeds
        assert len(spec.stages) in (2, 3) and any(e.at_stage == "day-2" and e.announce is None for e in spec.events)
        steps = list(spec.reference.steps)
        good = _solve(spec, steps, spec.reference.final_answer)
        assert good.passed and all(s.passed for s in good.stages())
        stale = [s.model_copy(update={"args": s.stale_args, "stale_args": None})
                 if isinstance(s, CallStep) and s.stale_args else s for s in steps]
        ev = _solve(spec, stale, spec.reference.final_answer)
        assert not ev.passed and [s.passed for s in ev.stages()][:2] == [True, False]
        forgetful = [s for s in steps if not (isinstance(s, CallStep) and s.recalls)]
        assert not _solve(spec, forgetful, spec.reference.final_answer).passed
    assert days == {2, 3}


@pytest.mark.parametrize("name", ["receipts_into_expenses", "invoice_to_budget_over_days"])
def test_the_teacher_passes_directly_and_over_mcp(name: str) -> None:
    spec = spec_of(name, 2)
    direct = run_episode(spec, make_policy("teacher"), episode_id="e")
    mcp = run_episode(spec, make_policy("teacher"), episode_id="e", transport="mcp")
    assert direct.passed and mcp.passed
    assert [e.model_dump() for e in direct.events] == [e.model_dump() for e in mcp.events]
    assert direct.final.evaluation == mcp.final.evaluation


def test_the_sft_export_of_a_teacher_record_carries_the_images() -> None:
    spec = spec_of("scanned_form_to_database", 1)
    example = to_hf(run_episode(spec, make_policy("teacher")))
    parts = [p for m in example["messages"] if isinstance(m.get("content"), list) for p in m["content"]]
    assert sum(1 for p in parts if p == {"type": "image"}) == len(example["images"]) == 2
    from workspace_sim.media.pdf import read_pages

    shown = {base64.b64decode(u.split(",", 1)[1]) for u in example["images"]}
    pages = {img[2] for raw in _binary_files(spec).values() if raw[:4] == b"%PDF"
             for page in read_pages(raw, "/x.pdf", [])[1] for img in page.images}
    assert shown == pages
    receipts = to_hf(run_episode(spec_of("receipts_into_expenses", 1), make_policy("teacher")))
    assert {base64.b64decode(u.split(",", 1)[1]) for u in receipts["images"]} == {
        raw for p, raw in _binary_files(spec_of("receipts_into_expenses", 1)).items() if p.startswith("/receipts/")}
