"""The typed spec JSON Schema (`coworkenv schema`): `initial` typed from the services' records, predicates a union
discriminated on `kind`; every example and generated spec meets it, and wrong start records or predicates fail it."""

from __future__ import annotations

import copy
import inspect
import json
from pathlib import Path

import jsonschema
import pytest

from synth import CAPABILITIES
from synth.errors import SpecLoadError
from synth.procedural import generate
from synth.spec import load_spec, parse_spec, spec_json_schema
from workspace_sim.predicates.kinds import KINDS
from workspace_sim.services import all_services

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "specs").glob("*.yaml"))
ARCHIVE = next(p for p in EXAMPLES if p.name == "handwritten-archive-invoices.yaml")


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = spec_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _doc(spec) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(json.dumps(spec.to_document()))


def _problems(validator: jsonschema.Draft202012Validator, doc: dict) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(doc)]


def test_the_schema_types_initial_by_service_and_table_and_predicates_by_kind() -> None:
    schema = spec_json_schema()
    initial = schema["$defs"][schema["properties"]["initial"]["$ref"].split("/")[-1]]
    services = all_services()
    assert set(initial["properties"]) == set(services) and initial["additionalProperties"] is False
    mail = schema["$defs"]["MailTables"]["properties"]
    assert set(mail) == set(services["mail"].tables)
    assert mail["messages"]["items"]["$ref"] == "#/$defs/MailMessage"
    assert schema["$defs"]["MailMessage"]["description"] == inspect.cleandoc(services["mail"].tables["messages"].__doc__)
    items = schema["properties"]["predicates"]["items"]
    assert items["discriminator"]["propertyName"] == "kind" and set(items["discriminator"]["mapping"]) == set(KINDS)
    # the untyped variant (the LLM generator's prompt) leaves both open
    untyped = spec_json_schema(typed=False)
    assert untyped["properties"]["predicates"]["items"] == {"additionalProperties": True, "type": "object"}
    assert "MailMessage" not in untyped["$defs"] and len(json.dumps(untyped)) < len(json.dumps(schema)) / 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_spec_meets_the_typed_schema(validator: jsonschema.Draft202012Validator, path: Path) -> None:
    assert _problems(validator, _doc(load_spec(path))) == []


@pytest.mark.parametrize("capability", sorted(CAPABILITIES))
def test_every_generated_spec_meets_the_typed_schema(validator: jsonschema.Draft202012Validator,
                                                      capability: str) -> None:
    for seed in range(2):
        assert _problems(validator, _doc(generate(capability, seed))) == [], (capability, seed)


def test_a_wrong_field_type_in_initial_is_rejected_by_schema_and_loader(
        validator: jsonschema.Draft202012Validator) -> None:
    doc = _doc(load_spec(ARCHIVE))
    wrong = copy.deepcopy(doc)
    wrong["initial"]["files"]["files"][0]["content"] = 1200  # a file's content is text
    assert [p for p in _problems(validator, wrong) if p.startswith("initial.files.files.0.content")]
    with pytest.raises(SpecLoadError, match=r"initial\.files\.files\[0\]"):
        parse_spec(wrong)
    unknown = copy.deepcopy(doc)
    unknown["initial"]["files"]["files"][0]["colour"] = "red"
    assert any("colour" in p for p in _problems(validator, unknown))
    table = copy.deepcopy(doc)
    table["initial"]["files"]["drawers"] = []
    assert any("drawers" in p for p in _problems(validator, table))
    assert _problems(validator, doc) == []


def test_a_wrong_predicate_is_rejected_by_the_schema(validator: jsonschema.Draft202012Validator) -> None:
    doc = _doc(load_spec(ARCHIVE))
    for bad in ({"kind": "file", "path": 7}, {"kind": "no_such_kind"}, {"kind": "file", "path": "/a", "colour": 1},
                {"kind": "all", "predicates": [{"kind": "answer", "text": {"contains": 5}}]}):
        wrong = copy.deepcopy(doc)
        wrong["predicates"][0] = bad
        assert _problems(validator, wrong), bad
    # shorthands the predicate models read are in the schema too: a literal condition, a target by name
    fine = copy.deepcopy(doc)
    fine["predicates"][0] = {"kind": "file", "path": "/finance/budget-2026.md", "content": "# Budget 2026\n"}
    fine["predicates"].append({"kind": "judged", "target": "answer",
                               "criteria": [{"requirement": "Says it is done", "key_facts": ["done"]}]})
    assert _problems(validator, fine) == []
    parse_spec(fine)


def test_the_schema_takes_a_sheet_cell_by_lookup_as_the_loader_does(validator: jsonschema.Draft202012Validator) -> None:
    doc = _doc(load_spec(ARCHIVE))
    lookup = {"kind": "file", "path": "/finance/costs.xlsx",
              "sheet_cell": {"sheet": "Costs", "row_where": {"Supplier": "Acme"}, "column": "Invoiced",
                             "value": {"gte": 100}}}
    doc["predicates"].append(lookup)
    assert _problems(validator, doc) == []
    parse_spec(doc)
    wrong = copy.deepcopy(doc)
    wrong["predicates"][-1]["sheet_cell"]["row_where"] = "Supplier=Acme"
    assert _problems(validator, wrong)
