"""The document writers of synth.generate.documents: for any seed, kind, locale and profession pack, the
figures add up (line amounts -> subtotal -> tax -> total; derived figures from their rows) and the document
names the facts a task needs (issuer, recipient, reference, the total)."""

from __future__ import annotations

import random
import re
from decimal import ROUND_HALF_UP, Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from synth.generate.documents import COMPANIONS, ITEMISED, KINDS, document, total_of
from synth.generate.worlds import LOCALES, PROFESSIONS

MONEY = re.compile(r"[$£¥]([\d,]+\.\d{2})")


def _facts(seed: int, code: str, prof_i: int) -> dict:
    rng = random.Random(seed)
    prof = PROFESSIONS[prof_i % len(PROFESSIONS)]
    lang = LOCALES[code].language
    items = rng.sample(prof.items[lang], rng.randint(1, 4))
    return {"issuer": rng.choice(prof.parties[lang]), "recipient": rng.choice(prof.orgs[lang]),
            "ref": f"{prof.queue[0]}-{rng.randint(1000, 9899)}", "date": LOCALES[code].date(__import__("datetime").date(2026, 3, 9)),
            "issued": "2026-03-09", "lines": [(n, rng.randint(1, 9), round(rng.uniform(lo, hi), 2)) for n, lo, hi in items],
            "tax_rate": {"en-GB": 0.2, "zh-CN": 0.06}.get(code, 0.0)}


def _amount(cell: str) -> float:
    return float(MONEY.search(cell).group(1).replace(",", ""))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(sorted(LOCALES)), st.integers(0, 50), st.sampled_from(ITEMISED))
def test_itemised_figures_add_up_and_name_the_facts(seed: int, code: str, prof_i: int, kind: str) -> None:
    facts = _facts(seed, code, prof_i)
    title, text = document(kind, facts, LOCALES[code], random.Random(seed))
    assert facts["ref"] in title and facts["issuer"] in text and facts["recipient"] in text
    rows = [r for r in text.splitlines() if r.startswith("| ") and MONEY.search(r)]
    assert len(rows) == len(facts["lines"])
    amounts = []
    for row, (item, qty, unit) in zip(rows, facts["lines"]):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert item in cells and str(qty) in cells
        assert _amount(cells[-1]) == round(qty * unit, 2)
        amounts.append(_amount(cells[-1]))
    sub = _amount(re.search(r"(Subtotal|小计)\S* (\S+)", text).group(2))
    assert abs(sub - sum(amounts)) < 0.005
    tax = re.search(r"(VAT|增值税|Sales tax) \((\d+)%\)\S* (\S+)", text)
    tax_v = _amount(tax.group(3)) if tax else 0.0
    half_up = Decimal(str(sub)) * Decimal(str(facts["tax_rate"]))
    assert abs(tax_v - float(half_up.quantize(Decimal("0.01"), ROUND_HALF_UP))) < 0.005
    total = _amount(re.search(r"\*\*(Total|合计)\S* (\S+)\*\*", text).group(2))
    assert abs(total - (sub + tax_v)) < 0.005 and abs(total - total_of(facts)) < 0.005
    assert LOCALES[code].money(total_of(facts)) in text
    if code == "zh-CN":
        assert "大写" in text and "：" in text


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(sorted(LOCALES)), st.sampled_from(KINDS))
def test_every_kind_writes_its_structure_and_derived_figures_agree(seed: int, code: str, kind: str) -> None:
    facts = _facts(seed, code, seed)
    title, text = document(kind, facts, LOCALES[code])
    assert text.startswith("# ") and len(text.splitlines()) >= 8
    assert "\n## " in text or "\n| " in text or "\n1." in text or "\n- " in text or "\n一、" in text
    fig = facts.get("_figures", {})
    if "net" in fig:
        assert round(fig["gross"] - fig["deductions"], 2) == fig["net"]
        assert LOCALES[code].money(fig["net"]) in text
    if "weights" in fig:
        assert sum(fig["weights"]) == 100
    if "means" in fig:
        for sid, mean in fig["means"].items():
            row = next(r for r in text.splitlines() if r.startswith(f"| {sid} "))
            reps = [float(x) for x in row.strip("|").split("|")[1:4]]
            assert abs(round(sum(reps) / 3, 2) - mean) < 0.006
    if "area" in fig:
        areas = [float(r.strip("|").split("|")[1]) for r in text.splitlines()
                 if r.startswith("| ") and re.fullmatch(r"\s*[\d.]+\s*", r.strip("|").split("|")[-1]) and "---" not in r]
        assert abs(sum(areas) - fig["area"]) < 0.06
    if kind == "media_plan":
        budgets = [_amount(r.strip("|").split("|")[-1]) for r in text.splitlines() if r.startswith("| ") and MONEY.search(r)]
        assert abs(sum(budgets) - fig["total"]) < 0.005


def test_chinese_documents_use_chinese_forms() -> None:
    facts = _facts(3, "zh-CN", 2)
    contract = document("contract", dict(facts), LOCALES["zh-CN"])[1]
    assert "甲方" in contract and "第一条" in contract and "一式两份" in contract
    po = document("purchase_order", dict(facts), LOCALES["zh-CN"])[1]
    assert "供方" in po and "需方" in po and "人民币" in po
    minutes = document("minutes", dict(facts), LOCALES["zh-CN"])[1]
    assert "会议纪要" in minutes and "参会人员" in minutes


def test_every_pack_has_companions_and_at_least_13_kinds_exist() -> None:
    assert {p.id for p in PROFESSIONS} <= set(COMPANIONS)
    assert all(k in KINDS for ks in COMPANIONS.values() for k in ks)
    distinct_writers = {document.__globals__["WRITERS"][k] for k in KINDS}
    assert len(KINDS) >= 13 and len(distinct_writers) >= 13


def test_a_reissued_document_differs_only_where_its_facts_do() -> None:
    facts = _facts(11, "en-GB", 4)
    a = document("invoice", dict(facts), LOCALES["en-GB"])[1]
    lines = list(facts["lines"])
    lines[0] = (lines[0][0], lines[0][1] + 1, lines[0][2])
    b = document("invoice", {**facts, "lines": lines}, LOCALES["en-GB"])[1]
    changed = [x for x, y in zip(a.splitlines(), b.splitlines()) if x != y]
    assert 1 <= len(changed) <= 5 and all(MONEY.search(x) for x in changed)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(sorted(LOCALES)))
def test_an_expense_report_is_claimed_by_a_person_and_each_category_fits_its_line(seed: int, code: str) -> None:
    from synth.generate.documents.financial import expense_category

    hr = next(i for i, p in enumerate(PROFESSIONS) if p.id == "hr")
    facts = _facts(seed, code, hr)
    text = document("expense_claim", facts, LOCALES[code], random.Random(seed))[1]
    claimant = re.search(r"\*\*(Claimant|报销人)\S*\*\* (.+?)  $", text, flags=re.M).group(2)
    assert claimant != facts["issuer"] and claimant not in PROFESSIONS[hr].parties[LOCALES[code].language]
    assert re.search(rf"\*\*(Paid to|收款单位)\S*\*\* {re.escape(facts['issuer'])}", text)  # the provider still named
    rows = [[c.strip() for c in r.strip("|").split("|")] for r in text.splitlines() if r.startswith("| ") and MONEY.search(r)]
    zh = code == "zh-CN"
    for cells, (item, _, _) in zip(rows, facts["lines"]):
        assert cells[1] == expense_category(item, zh) and cells[2] == item
    assert expense_category("Temporary housing (per night)", False) == "Accommodation"
    assert expense_category("Relocation allowance", False) == "Travel"
    assert expense_category("临时住宿（每晚）", True) == "住宿"


def test_a_chinese_address_puts_each_street_in_its_own_city() -> None:
    loc = LOCALES["zh-CN"]
    rng = random.Random(0)
    seen = set()
    for _ in range(400):
        addr = loc.address(rng)
        i = next(i for i, (city, region, _) in enumerate(loc.cities) if addr.startswith(city + region))
        assert any(addr.startswith(loc.cities[i][0] + loc.cities[i][1] + st) for st in loc.city_streets[i]), addr
        seen.add(addr[:12])
    assert len(loc.city_streets) == len(loc.cities) and len(seen) > 30
