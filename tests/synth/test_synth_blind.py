"""Validation's blind baselines (synth.blind_check): an environment a blind agent passes is rejected, the check plays
the agents exactly as the runner's blind policies do, and it is deterministic."""

from __future__ import annotations

import pytest

from synth.blind_check import BLIND_AGENTS, blind_passes, check_blind, play
from synth.feedback import ValidationReport
from synth.procedural import generate
from synth.spec import EnvironmentSpec, parse_spec
from synth.validate import validate_spec
from trainers.episodes.policies import make_policy
from trainers.episodes.runner import run_episode


def _weakened_quote(seed: int) -> EnvironmentSpec:
    """quoted_amount with its answer check as it was before excludes: the right figure contained, nothing else."""
    spec = generate("information_retrieval", seed, template="quoted_amount")
    doc = spec.model_dump(mode="json", exclude_none=True)
    i, judged = next((i, p) for i, p in enumerate(doc["predicates"]) if p["kind"] == "judged")
    amount = judged["criteria"][0]["key_facts"][0]
    doc["predicates"][i] = {"kind": "answer", "condition": {"contains": amount}}
    return parse_spec(doc)


@pytest.fixture(scope="module")
def weak() -> EnvironmentSpec:
    return _weakened_quote(25)


def test_validation_rejects_an_environment_a_kitchen_sink_answer_passes(weak: EnvironmentSpec) -> None:
    assert validate_spec(weak, mutants=False).ok  # without the blind check (mutants off) nothing else sees it
    report = validate_spec(weak)
    blind = [f for f in report.feedback if f.check == "blind"]
    assert not report.ok and [f.problem.split()[3] for f in blind] == ["answer_only"]
    assert "excludes" in blind[0].hint and "answer_only" in report.text()


def test_the_fixed_template_passes_validation_and_no_blind_agent_passes_it() -> None:
    spec = generate("information_retrieval", 25, template="quoted_amount")
    report = validate_spec(spec)
    assert report.ok, report.text()
    assert blind_passes(spec, spec.build_workspace()) == []


@pytest.mark.parametrize("make", [lambda: _weakened_quote(25),
                                  lambda: generate("mail_triage", 23, template="reply_with_figure"),
                                  lambda: generate("secret_handling", 101, template="rotated_key_ticket")])
def test_the_check_agrees_with_the_runners_blind_policies(make) -> None:  # type: ignore[no-untyped-def]
    """The validation shortcut (shared listings, resumed from a checkpoint) passes exactly the blind policies that
    pass a full runner episode, and a full play of each agent gives the same verdict."""
    spec = make()
    runner = [n for n in BLIND_AGENTS if run_episode(spec, make_policy(n)).passed]
    assert blind_passes(spec, spec.build_workspace()) == runner
    assert [n for n in BLIND_AGENTS if play(spec, n)[0]] == runner


def test_agents_are_deterministic_and_the_runner_sees_their_calls(weak: EnvironmentSpec) -> None:
    for name in BLIND_AGENTS:
        a, b = play(weak, name), play(weak, name)
        assert a[2] == b[2] and a[1].ws.state.content_hash == b[1].ws.state.content_hash
        rec = run_episode(weak, make_policy(name))
        said = [m["content"] for m in rec.messages if m["role"] == "assistant" and m.get("content")]
        assert said[-1] == a[2]
        made = [(tc["function"]["name"], tc["function"]["arguments"]) for m in rec.messages
                for tc in m.get("tool_calls") or []]
        assert made == [(e.tool, e.args) for e in a[1].ws.events() if e.tool]


def test_check_blind_reports_each_passing_agent_with_a_hint(weak: EnvironmentSpec) -> None:
    report = ValidationReport(weak.id)
    check_blind(weak, weak.build_workspace(), report)
    assert [(f.check, f.path) for f in report.feedback] == [("blind", "predicates")]
    assert "answer_only passes without trying the task" in report.feedback[0].problem
