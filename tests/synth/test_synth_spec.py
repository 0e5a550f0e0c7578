"""EnvironmentSpec: loading, saving, error paths, schema, hashing and guard-gated evaluation."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from synth import EnvironmentSpec, SpecLoadError, load_spec, loads_spec, parse_spec, spec_json_schema
from synth.spec import run_reference
from synth.procedural import generate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-archive-invoices.yaml"


@pytest.fixture(scope="module")
def doc() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def test_load_yaml_and_contract_surface(doc: dict) -> None:
    spec = load_spec(EXAMPLE)
    assert isinstance(spec, EnvironmentSpec)
    assert spec.id == "handwritten-archive-invoices" and spec.title
    assert spec.task_text() == doc["request"]
    ws = spec.build_workspace()
    assert ws.config.user == spec.user and ws.config.timezone == "Europe/Dublin" and ws.config.seed == 7
    assert "/finance/invoices/2025-11-acme.txt" in ws.table("files.files")
    ev = spec.evaluate(ws, None)
    assert not ev.passed and ev.score == 0.0


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_save_load_round_trip(tmp_path: Path, suffix: str) -> None:
    spec = load_spec(EXAMPLE)
    path = spec.save(tmp_path / f"spec{suffix}")
    again = load_spec(path)
    assert again == spec
    assert again.content_hash() == spec.content_hash()


def test_content_hash_changes_with_content(doc: dict) -> None:
    a = parse_spec(doc)
    b = parse_spec({**doc, "request": doc["request"] + " Thanks!"})
    assert a.content_hash() != b.content_hash()
    assert parse_spec(copy.deepcopy(doc)).content_hash() == a.content_hash()


@pytest.mark.parametrize("mutate, path, words", [
    (lambda d: d.pop("id"), "id", "Field required"),
    (lambda d: d.update(capabilities=["juggling"]), "capabilities", "unknown capability"),
    (lambda d: d.update(services=["files", "fax"]), "services", "unknown service"),
    (lambda d: d.update(now="2026-02-02T09:00:00"), "now", "time zone"),
    (lambda d: d.update(user="nobody@northwind.example"), "user", "not one of world.people"),
    (lambda d: d["initial"]["files"]["files"][0].update(path="relative/x.txt"), "initial.files.files[0]", "path"),
    (lambda d: d["initial"]["files"].update(drives=[]), "initial.files.drives", "unknown table"),
    (lambda d: d["predicates"][0].update(kind="telepathy"), "predicates[0].kind", "unknown kind"),
    (lambda d: d["predicates"][0].update(content={"regex": "("}), "predicates[0]", "regex"),
    (lambda d: d["reference"]["steps"][1].update(kind="dance"), "reference.steps[1]", "dance"),
    (lambda d: d["reference"].update(steps=[]), "reference.steps", "at least 1"),
    (lambda d: d["world"]["people"].append(dict(d["world"]["people"][0])), "world.people[1].email", "duplicate"),
    (lambda d: d.update(version="9"), "version", "unsupported"),
    (lambda d: d.update(events=[{"id": "e1", "changes": [{"op": "put"}]}]), "events[0]", "exactly one of"),
    (lambda d: d.update(user_simulator={"facts": [{"name": "x", "value": "42", "reveal_keywords": ["x"],
                                                   "answer": "no idea"}]}), "user_simulator.facts[0]", "contain the value"),
])
def test_errors_name_the_field_path(doc: dict, mutate, path: str, words: str) -> None:  # type: ignore[no-untyped-def]
    d = copy.deepcopy(doc)
    mutate(d)
    with pytest.raises(SpecLoadError) as info:
        parse_spec(d)
    paths = [p for p, _ in info.value.problems]
    assert any(p.startswith(path) for p in paths), paths
    assert words.lower() in str(info.value).lower()


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    ("id: [unclosed", "not valid YAML"),
    ("- a list\n- of things\n", "must be an object"),
    ("", "must be an object"),
])
def test_unreadable_documents(text: str, words: str) -> None:
    with pytest.raises(SpecLoadError, match=words):
        loads_spec(text)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError) as info:
        load_spec(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(info.value) and "not found" in str(info.value)


def test_json_schema_accepts_real_specs_and_rejects_broken_ones(doc: dict) -> None:
    schema = spec_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(load_spec(EXAMPLE).to_document(), schema)
    jsonschema.validate(generate("cross_service", 3).to_document(), schema)
    broken = copy.deepcopy(doc)
    broken["expected_horizon"] = 0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(json.loads(json.dumps(broken, default=str)), schema)


def test_guards_earn_nothing_until_the_task_progresses() -> None:
    spec = load_spec(EXAMPLE)
    ws = spec.build_workspace()
    raw = spec.evaluate(ws, None, gate_guards=False)
    gated = spec.evaluate(ws, None)
    guard = [i for i in range(len(spec.predicates)) if spec.is_guard(i)]
    assert guard and all(raw.results[i].passed for i in guard)
    assert gated.score == 0.0 and not any(r.passed for r in gated.results)
    done = run_reference(spec)
    assert spec.evaluate(done.workspace, done.final_answer).score == 1.0
    assert spec.passes_all(done.workspace, done.final_answer)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), cap=st.sampled_from(["file_management", "mail_triage", "clarification",
                                                         "dynamic_world", "scheduling"]))
def test_dump_load_is_a_fixed_point(seed: int, cap: str) -> None:
    spec = generate(cap, seed)
    for fmt in ("json", "yaml"):
        text = spec.dumps(fmt)  # type: ignore[arg-type]
        again = loads_spec(text, fmt)  # type: ignore[arg-type]
        assert again.dumps(fmt) == text  # type: ignore[arg-type]
        assert again.content_hash() == spec.content_hash()
