"""The docs and examples stay in step with the code: every capability and spec field is documented,
and every example spec validates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from synth import CAPABILITIES, EnvironmentSpec, load_spec, loads_spec, validate_spec
from synth.procedural import templates_for

ROOT = Path(__file__).resolve().parents[2]
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


MULTIDAY = ROOT / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml"


def _excerpts(doc: str) -> list[tuple[str, str]]:
    """Every YAML block of a doc that says `# from examples/specs/NAME`: (the file, the excerpt)."""
    text = (ROOT / "docs" / doc).read_text()
    out = []
    for block in re.findall(r"```yaml\n(.*?)```", text, flags=re.S):
        first, _, rest = block.partition("\n")
        if first.startswith("# from examples/specs/"):
            out.append((first.removeprefix("# from "), rest))
    return out


@pytest.mark.parametrize("doc", ["spec.md", "predicates.md"])
def test_multi_day_excerpts_are_verbatim_from_the_validated_example(doc: str) -> None:
    excerpts = _excerpts(doc)
    assert excerpts, f"docs/{doc} should excerpt the validated multi-day example"
    for source, excerpt in excerpts:
        assert source == "examples/specs/handwritten-multiday-vendor-week.yaml"
        assert excerpt in MULTIDAY.read_text(), f"docs/{doc}: this excerpt is not in {source}:\n{excerpt}"
    report = validate_spec(load_spec(MULTIDAY))
    assert report.ok and report.stats["stages"] == 3


def test_spec_doc_version_is_the_codes() -> None:
    from synth.spec import SPEC_VERSION

    text = (ROOT / "docs" / "spec.md").read_text()
    assert text.startswith(f"# Environment spec format (version {SPEC_VERSION})")
    assert f'`"{SPEC_VERSION}"`' in text


def test_schema_command_covers_stages_and_accepts_the_multi_day_example() -> None:
    import json

    import jsonschema
    from typer.testing import CliRunner

    from coworkenv.cli import app

    out = CliRunner().invoke(app, ["schema"])
    assert out.exit_code == 0, out.output
    schema = json.loads(out.output)
    assert "stages" in schema["properties"] and {"Stage", "EndStageStep"} <= set(schema["$defs"])
    assert {"stale_args", "recalls"} <= set(schema["$defs"]["CallStep"]["properties"])
    assert "at_stage" in schema["$defs"]["WorldEvent"]["properties"]
    assert "vague" in schema["$defs"]["HiddenFact"]["properties"]
    doc = yaml.safe_load(MULTIDAY.read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    broken = {**doc, "stages": [{"id": "Mon!"}]}
    assert not jsonschema.Draft202012Validator(schema).is_valid(broken)
