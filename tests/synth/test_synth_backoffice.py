"""The back-office templates (expense claim from a trip, restock from stock, lead times and a supplier's mail, a failing
job fixed from its history) validate by execution over many seeds: the reference passes, doing nothing scores 0,
every mutant fails; and the tempting wrong solutions fail."""

from __future__ import annotations

from typing import Any

import pytest

from synth import validate_spec
from synth.capabilities import CAPABILITIES
from synth.spec import run_reference
from synth.pipeline import plan
from synth.procedural import generate
from synth.spec import CallStep, EnvironmentSpec, ReferenceSolution

NAMES = ("expense_claim_from_trip", "reorder_from_supplier_mail", "fix_failing_job")


def _calls(spec: EnvironmentSpec) -> list[CallStep]:
    return [s for s in spec.reference.steps if isinstance(s, CallStep)]


def _score(spec: EnvironmentSpec, steps: list[CallStep]) -> Any:
    run = run_reference(spec, solution=ReferenceSolution(steps=steps, final_answer=spec.reference.final_answer))
    return spec.evaluate(run.workspace, run.final_answer)


@pytest.mark.parametrize("name", NAMES)
def test_templates_validate_over_many_seeds(name: str) -> None:
    for seed in range(55):
        spec = generate("back_office", seed, template=name)
        report = validate_spec(spec, max_mutants=None)
        assert report.ok, f"{spec.id}\n{report.text()}"
        assert report.stats["mutants"] >= 1
        assert report.stats["mutants_killed"] == report.stats["mutants"] - report.stats.get("mutants_equivalent", 0)
        assert spec.evaluate(spec.build_workspace(), None).score == 0.0
        service = {"expense_claim_from_trip": "finance", "reorder_from_supplier_mail": "inventory",
                   "fix_failing_job": "scheduler"}[name]
        assert service in spec.services and spec.capabilities == ["back_office"]


def test_a_claim_with_the_colleagues_or_earlier_spending_fails() -> None:
    for seed in range(5):
        spec = generate("back_office", seed, template="expense_claim_from_trip")
        steps = _calls(spec)
        claim = next(s for s in steps if s.tool == "submit_expense_claim")
        assert _score(spec, steps).passed
        txs = {t["id"]: t for t in spec.initial["finance"]["transactions"]}
        extra = next(i for i, t in txs.items() if i not in claim.args["transaction_ids"] and "status" not in t)
        wrong = claim.model_copy(update={"args": {**claim.args, "transaction_ids": [*claim.args["transaction_ids"],
                                                                                   extra]}})
        # the tool refuses a wrong total, so the wrong claim states the sum of what it lists
        ids = wrong.args["transaction_ids"]
        total = sum(txs[i]["amount_minor"] for i in ids)
        from workspace_sim.text.money import format_minor
        wrong.args["total"] = format_minor(total, claim.args["currency"])
        assert not _score(spec, [s if s is not claim else wrong for s in steps]).passed


def test_a_restock_that_ignores_the_mailed_lead_time_fails() -> None:
    for seed in range(5):
        spec = generate("back_office", seed, template="reorder_from_supplier_mail")
        steps = _calls(spec)
        orders = [s for s in steps if s.tool == "create_purchase_order"]
        products = {p["sku"]: p for p in spec.initial["inventory"]["products"]}
        naive = [s.model_copy(update={"args": {**s.args, "quantity": products[s.args["sku"]]["reorder_quantity"] * (
            2 if products[s.args["sku"]]["lead_time_days"] > 14 else 1)}}) if s in orders else s for s in steps]
        if naive == steps:
            continue
        assert not _score(spec, naive).passed


def test_the_mix_reaches_back_office() -> None:
    assert "back_office" in CAPABILITIES
    jobs = plan(["back_office"], 24, seed=0)
    specs = [generate(cap, seed) for cap, seed in jobs]
    names = {name for s in specs for name in s.metadata["templates"]}
    assert set(NAMES) <= names and "back_office_days" in names  # alone, and as day one of a two-day story
    assert all(set(s.metadata["templates"]) & set(NAMES) for s in specs)  # every story carries one of them
