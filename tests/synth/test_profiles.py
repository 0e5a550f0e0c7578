"""Task kinds, mix profiles, kind-directed compositions and `coworkenv synth/stats --profile` (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from typer.testing import CliRunner

from coworkenv.cli import app
from synth import load_spec
from synth.generate import compose
from synth.generate.kinded import compose_kind
from synth.generate.mix import generate_mixed, kind_for
from synth.generate.profiles.kinds import EVIDENCE_KINDS, FAMILIES, TURNS, TaskKind, coverage, kind_of, matches
from synth.generate.profiles.profile import SHIPPED, ProfileError, load_profile, marginals_of, validate
from synth.generate.profiles.sampler import targets
from synth.validate import validate_spec

runner = CliRunner()

kinds_st = hs.builds(TaskKind, hs.frozensets(hs.sampled_from(FAMILIES)), hs.frozensets(hs.sampled_from(EVIDENCE_KINDS)),
                     hs.integers(1, 6), hs.sampled_from(TURNS), hs.booleans(), hs.booleans())


@settings(max_examples=200)
@given(kinds_st, kinds_st)
def test_matching_invariants(a: TaskKind, b: TaskKind) -> None:
    assert matches(a, a) and matches(a, a, relaxed=False)
    assert TaskKind.from_json(a.to_json()) == a
    if matches(a, b, relaxed=False):
        assert matches(a, b)
    fewer = TaskKind(frozenset(), a.evidence | frozenset(EVIDENCE_KINDS), a.days, a.turns, False, False)
    assert matches(a, fewer)  # no services and every evidence kind: relaxed, it covers any task of its turns and days
    assert matches(a, b) == (b.services <= a.services and b.evidence >= a.evidence and abs(a.days - b.days) <= 1
                             and a.turns == b.turns)


def test_kind_of_a_composition() -> None:
    k = kind_of(compose("scheduling", 3))
    assert "calendar" in k.services and k.turns in TURNS and k.days >= 1
    assert coverage([k], [k]) == 1.0 and coverage([k], []) == 0.0


def test_kind_fields_are_checked_by_name() -> None:
    with pytest.raises(ValueError, match=r"kind\.services: unknown 'fax'"):
        TaskKind.from_json({"services": ["fax"]})
    with pytest.raises(ValueError, match=r"kind\.turns"):
        TaskKind.from_json({"turns": "many"})
    with pytest.raises(ValueError, match=r"kind\.days"):
        TaskKind.from_json({"days": 0})


@pytest.mark.parametrize("doc, field", [
    ({"marginals": {}}, r"profile\.name"),
    ({"name": "x"}, r"profile\.marginals: required"),
    ({"name": "x", "marginals": {"services": {"mail": 1.5}}}, r"marginals\.services\.mail: expected a share"),
    ({"name": "x", "marginals": {"evidence": {"hologram": 0.1}}}, r"marginals\.evidence: unknown 'hologram'"),
    ({"name": "x", "marginals": {"turns": {"single": 0.5}}}, r"marginals\.turns: the shares must sum to 1"),
    ({"name": "x", "marginals": {"languages": {"fr": 1}}}, r"marginals\.languages: unknown 'fr'"),
    ({"name": "x", "marginals": {"professions": {"pirate": 1}}}, r"marginals\.professions: unknown 'pirate'"),
    ({"name": "x", "marginals": {}, "kinds": [{"days": 2, "weight": -1}]}, r"kinds\[0\]\.weight"),
    ({"name": "x", "marginals": {}, "kinds": [{"evidence": ["smell"]}]}, r"kinds\[0\]\.evidence: unknown 'smell'"),
    ({"name": "x", "marginals": {}, "colour": "red"}, r"profile: unknown field\(s\) colour"),
    ({"name": "x", "marginals": {}, "generator": "magic"}, r"profile\.generator"),
])
def test_bad_profiles_name_the_field(doc: dict, field: str) -> None:
    with pytest.raises(ProfileError, match=field):
        validate(doc)


def test_shipped_profiles_load_and_their_kinds_give_their_marginals() -> None:
    for name in SHIPPED:
        p = load_profile(name)
        assert p.name == name
        if p.kinds:
            kinds = [k for k, w in p.kinds for _ in range(round(w))]
            again = marginals_of(kinds)
            for key in ("services", "evidence", "days", "turns", "safety", "changes"):
                assert again[key] == p.marginals[key], (name, key)
    assert load_profile("clawmark").marginals["days"]["3"] > 0.3 and load_profile("claw-eval").marginals["days"] == {"1": 1.0}


def test_a_user_profile_file_in_yaml(tmp_path: Path) -> None:
    f = tmp_path / "mine.yaml"
    f.write_text("name: mine\nmarginals:\n  services: {mail: 0.5, databases: 0.5}\n  evidence: {pdf: 0.7}\n"
                 "  days: {'1': 0.5, '3': 0.5}\n  turns: {single: 0.6, multi: 0.4}\n  languages: {en: 0.5, zh: 0.5}\n")
    p = load_profile(f)
    t = targets(p, 20, 1)
    assert t == targets(p, 20, 1) and t != targets(p, 20, 2)  # deterministic per seed
    assert sum(x["locale"] == "zh-CN" for x in t) == 10  # in quotas, not left to chance
    f.write_text("name: [")
    with pytest.raises(ProfileError, match="mine.yaml: not valid YAML"):
        load_profile(f)


def test_targets_follow_a_profiles_kinds_in_quotas() -> None:
    p = load_profile("clawmark")
    t = targets(p, 100, 0)
    days = [x["kind"]["days"] for x in t]
    assert {d: days.count(d) for d in set(days)} == {1: 7, 2: 12, 3: 40, 4: 25, 5: 16}
    assert sum(x["locale"] == "zh-CN" for x in t) == 4


@pytest.mark.parametrize("kind", [
    {"services": [], "evidence": ["pdf", "audio"]},
    {"services": ["web"], "turns": "clarify"},
    {"services": ["files", "mail", "databases", "sheets"], "evidence": ["image", "video"], "days": 3, "turns": "multi"},
    {"services": ["todo", "notes", "tickets"], "evidence": ["sheet"], "turns": "multi", "safety": True},
])
def test_kind_directed_compositions_validate_and_match(kind: dict) -> None:
    target = TaskKind.from_json(kind)
    spec = compose_kind(target, 5)
    assert validate_spec(spec).ok
    assert matches(target, kind_of(spec))
    assert compose_kind(target, 5).dumps("json") == spec.dumps("json")  # same kind and seed, same bytes


def test_balanced_mix_draws_benchmark_kinds_for_some_seeds() -> None:
    seed = next(s for s in range(60) if kind_for("dynamic_world", s) is not None)
    spec = generate_mixed("dynamic_world", seed)
    assert spec.capabilities[0] == "dynamic_world" and spec.metadata["generator"] == "kinded"
    assert int(spec.id.rsplit("-", 1)[1]) == seed and validate_spec(spec).ok
    assert kind_for("secret_handling", seed) is None


def test_cli_synth_and_stats_by_profile(tmp_path: Path) -> None:
    out = tmp_path / "cm"
    r = runner.invoke(app, ["synth", "--profile", "claw-eval", "-n", "4", "-s", "3", "-o", str(out), "--json"])
    assert r.exit_code == 0, r.output
    again = runner.invoke(app, ["synth", "--profile", "claw-eval", "-n", "4", "-s", "3", "-o", str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    names = json.loads(r.output.strip().splitlines()[-1])["written"]
    assert len(names) == 4
    for name in names:
        assert (out / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert load_spec(out / name).metadata["generator"] == "kinded"
    s = runner.invoke(app, ["stats", str(out), "--profile", "claw-eval"])
    assert s.exit_code == 0 and "marginals: this mix vs profile claw-eval" in s.output and "languages" in s.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "bad", "marginals": {"days": {"1": 0.2}}}))
    r = runner.invoke(app, ["synth", "--profile", str(bad), "-n", "1", "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "bad.json.marginals.days" in r.output
    r = runner.invoke(app, ["synth", "--profile", "clawmark", "-c", "scheduling", "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "leave out --capability" in r.output
