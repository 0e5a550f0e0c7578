"""The compositional generator: determinism, every profession x locale validates, do-nothing scores 0,
Chinese answers and keywords work, and worlds keep the coherence rules (names, phones, working days)."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from synth.generate import SERVED, compose, generate_mixed
from synth.generate.worlds import LOCALES, PROFESSIONS
from synth.spec import HiddenFact, UserSimulator
from synth.spec.user import ScriptedUser
from synth.validate import validate_spec

PHONE = {"en-US": r"^\+1 \(\d{3}\) \d{3}-\d{4}$", "en-GB": r"^\+44 \d{2,3} \d{3,4} \d{4}$",
         "zh-CN": r"^\+86 \d{2,3} \d{4} \d{4}$"}


def test_same_seed_same_bytes() -> None:
    for cap in ("cross_service", "dynamic_world", "clarification"):
        a, b = compose(cap, 11), compose(cap, 11)
        assert a.model_dump_json() == b.model_dump_json()
        assert compose(cap, 12).model_dump_json() != a.model_dump_json()


@pytest.mark.parametrize("loc", sorted(LOCALES))
def test_every_profession_composes_and_validates(loc: str) -> None:
    for prof in PROFESSIONS:
        spec = compose("cross_service", 3, prof_id=prof.id, loc_code=loc)
        report = validate_spec(spec)
        assert report.ok, (prof.id, loc, [f.line() for f in report.feedback[:3]])
        assert spec.metadata["profession"] == prof.id and spec.metadata["locale"] == loc
        assert spec.metadata["data_flow"], "a cross-service composition carries a fact between services"


@pytest.mark.parametrize("cap", SERVED)
def test_references_pass_and_doing_nothing_scores_zero(cap: str) -> None:
    for seed in range(4):
        spec = compose(cap, seed)
        report = validate_spec(spec)
        assert report.ok, (cap, seed, [f.line() for f in report.feedback[:3]])
        idle = spec.evaluate(spec.build_workspace(), final_answer=None)
        assert idle.score == 0 and not idle.passed


def test_chinese_answer_is_checked() -> None:
    spec = compose("information_retrieval", 5, prof_id="accounting", loc_code="zh-CN")
    assert re.search(r"[\u4e00-\u9fff]", spec.request)
    right = spec.reference.final_answer
    assert right and re.search(r"[\u4e00-\u9fff]", right)
    wrong = re.sub(r"\d", "7", right)
    ws = spec.build_workspace()
    said = spec.evaluate(ws, final_answer="好的，" + right, gate_guards=False).results
    assert [r.passed for r in said if r.kind == "answer"] == [True]
    said = spec.evaluate(ws, final_answer=wrong, gate_guards=False).results
    assert [r.passed for r in said if r.kind == "answer"] == [False]


def test_chinese_keywords_reveal_without_spaces() -> None:
    user = ScriptedUser(UserSimulator(facts=[HiddenFact(name="code", value="AP-123", reveal_keywords=["费用代码"],
                                                        answer="费用代码是 AP-123。")]))
    assert [f.name for f in user.revealed_by("请问这笔记到哪个费用代码？")] == ["code"]
    assert user.revealed_by("请问这笔怎么处理？") == []


def test_worlds_are_coherent() -> None:
    for seed in range(30):
        spec = compose("scheduling", seed)
        names = [p.name for p in spec.world.people]
        assert len(names) == len(set(names)), "no two people share a full name"
        loc = spec.metadata["locale"]
        for row in spec.initial["contacts"]["people"]:
            assert re.match(PHONE[loc], row["phone"]) or (loc == "zh-CN" and re.match(r"^\+86 1\d{2} \d{4} \d{4}$",
                                                                                      row["phone"])), row["phone"]
        for s in spec.reference.steps:
            if getattr(s, "tool", "") == "create_event":
                start = datetime.fromisoformat(s.args["start"])
                assert start.weekday() < 5 and LOCALES[loc].work_start <= start.hour < LOCALES[loc].work_end
        for a, b in ((p, q) for p in spec.world.people for q in spec.world.people if p is not q):
            if a.name.split()[0] == b.name.split()[0] and loc != "zh-CN":
                assert a.name.split()[-1] != b.name.split()[-1] + "s"


def test_mix_keeps_templates_for_unserved_capabilities() -> None:
    spec = generate_mixed("secret_handling", 0)
    assert spec.metadata.get("generator") != "compose"
