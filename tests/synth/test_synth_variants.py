"""Seeded variants of the templates and compositions (issue 32: distinct reference tool sequences): over a few dozen
seeds each changed template takes more than one reference path, every path validates, and the path follows the
request (a record the request names exactly is read at once; one it only describes is searched for first)."""

from __future__ import annotations

import re

import pytest

from synth import validate_spec
from synth.generate.compose import compose
from synth.procedural import generate
from synth.spec import CallStep

SEEDS = range(24)

CHANGED = (
    ("injection_resistance", "contact_note_injection"), ("injection_resistance", "kb_article_injection"),
    ("media_evidence", "voicemail_to_task"), ("media_evidence", "invoice_to_budget_over_days"),
    ("media_evidence", "receipts_into_expenses"), ("media_evidence", "chart_answer_from_report"),
    ("evidence_report", "kb_answer_with_citations"), ("evidence_report", "crm_account_review"),
    ("web_research", "plan_advice_dialogue"), ("back_office", "expense_claim_from_trip"),
    ("secret_handling", "rotated_key_ticket"), ("secret_handling", "failing_integrations_triage"),
    ("file_management", "archive_by_year"), ("file_management", "rename_term"),
    ("information_retrieval", "assignee_phone"),
)


def _sequence(spec) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    return tuple(getattr(s, "tool", s.kind) for s in spec.reference.steps)


def _calls(spec) -> list[CallStep]:  # type: ignore[no-untyped-def]
    return [s for s in spec.reference.steps if isinstance(s, CallStep)]


@pytest.mark.parametrize("cap,name", CHANGED, ids=[n for _, n in CHANGED])
def test_template_variants_take_several_paths_and_all_validate(cap: str, name: str) -> None:
    paths: dict[tuple[str, ...], str] = {}
    for seed in SEEDS:
        spec = generate(cap, seed, template=name)
        report = validate_spec(spec, max_mutants=None)  # every mutant, no sampling
        assert report.ok, f"{spec.id}\n{report.text()}"
        st = report.stats  # every mutant of every variant is caught or shown equivalent
        assert st["mutants_killed"] == st["mutants"] - st.get("mutants_equivalent", 0), spec.id
        paths.setdefault(_sequence(spec), spec.id)
    assert len(paths) > 1, f"{name}: one reference path over {len(SEEDS)} seeds: {next(iter(paths))}"


def test_a_named_record_is_read_at_once_and_a_described_one_searched_for() -> None:
    seen = set()
    for seed in SEEDS:
        kb = generate("injection_resistance", seed, template="kb_article_injection")
        first = _calls(kb)[0]
        article = next(s.args["article_id"] for s in _calls(kb) if s.tool == "update_article")
        if first.tool == "get_article":  # the request gave the id
            assert article in kb.request and first.args["article_id"] == article
        else:
            assert first.tool == "search_articles" and article not in kb.request
        seen.add(first.tool)
        ticket = generate("information_retrieval", seed, template="assignee_phone")
        key = next(s.args["key"] for s in _calls(ticket) if s.tool == "get_ticket")
        named = re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", ticket.request) is not None
        assert named == (_calls(ticket)[0].tool == "get_ticket"), ticket.request
        seen.add(("ticket", named))
    assert seen >= {"get_article", "search_articles", ("ticket", True), ("ticket", False)}


def test_compositions_search_only_for_a_document_the_request_describes() -> None:
    kinds = set()
    for seed in SEEDS:
        spec = compose("information_retrieval", seed)
        calls = _calls(spec)
        doc = spec.metadata["figures"][0]["document"]
        named = doc in spec.request
        assert (calls[0].tool == "read_text_file" and calls[0].args["path"] == doc) == named, spec.request
        if not named:
            assert calls[0].tool == "search_files"
        kinds.add((named, _sequence(spec)))
        report = validate_spec(spec)
        assert report.ok, f"{spec.id}\n{report.text()}"
    assert len({seq for _, seq in kinds}) >= 4 and {n for n, _ in kinds} == {True, False}
