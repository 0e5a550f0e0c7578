"""The docs and examples stay in step with the code: every capability and spec field is documented,
and every example spec validates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from synth import CAPABILITIES, EnvironmentSpec, load_spec, loads_spec, validate_spec
from synth.procedural import templates_for

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples" / "specs").glob("*.yaml"))


def test_capabilities_doc_covers_taxonomy_and_templates() -> None:
    text = (ROOT / "docs" / "capabilities.md").read_text()
    for cap in CAPABILITIES.values():
        assert f"`{cap.id}`" in text and cap.title in text
        for t in templates_for(cap.id):
            assert f"`{t.name}`" in text, t.name


def test_spec_doc_covers_every_field() -> None:
    text = (ROOT / "docs" / "spec.md").read_text()
    for name in EnvironmentSpec.model_fields:
        assert f"`{name}" in text, name


def test_examples_include_hand_written_and_generated() -> None:
    names = [p.name for p in EXAMPLES]
    assert any(n.startswith("handwritten-") for n in names) and any(n.startswith("generated-") for n in names)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_is_valid(path: Path) -> None:
    report = validate_spec(load_spec(path), max_mutants=None)
    assert report.ok, report.text()


def _doc_specs() -> list[str]:
    """Every full spec (a YAML block starting with `version:`) in docs/spec.md."""
    text = (ROOT / "docs" / "spec.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    return [b for b in blocks if b.startswith("version:")]


def test_spec_doc_examples_are_real_specs_that_validate() -> None:
    specs = _doc_specs()
    assert specs, "docs/spec.md should show a full spec of the rules for accepting every right solution"
    for text in specs:
        spec = loads_spec(text, "yaml", "docs/spec.md")
        report = validate_spec(spec, max_mutants=None)
        assert report.ok, report.text()
        doc = yaml.safe_load(text)
        # the example shows each rule it documents
        assert spec.alternatives and any(s.get("free") for s in doc["reference"]["steps"])
        assert any(p.get("maintain") for p in doc["predicates"]) and report.stats["mutants_equivalent"] >= 1
