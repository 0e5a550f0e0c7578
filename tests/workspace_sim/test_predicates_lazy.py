"""Predicate kinds load by name: `parse_predicates` imports only the kinds a document uses, and reads every
document exactly as validating the whole list against the union of every kind does (the same predicates, or
the same first problem at the same JSON path)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from workspace_sim.core.errors import SpecError
from workspace_sim.predicates import KINDS, parse_predicates
from workspace_sim.predicates.combinators import Predicate
from workspace_sim.predicates.kinds import KIND_CLASSES, kind_class
from workspace_sim.predicates.parse import spec_error

ROOT = Path(__file__).resolve().parents[2]
WHOLE = TypeAdapter(list[Predicate])


def by_the_union(doc: list[Any]) -> list[Any] | str:
    """The whole list validated against the union of every kind: its predicates, or its first problem."""
    try:
        return WHOLE.validate_python(doc)
    except ValidationError as e:
        err = e.errors()[0]
        return str(spec_error("predicates", tuple(err["loc"]), err))


def lazily(doc: list[Any]) -> list[Any] | str:
    try:
        return parse_predicates(doc)
    except SpecError as e:
        return str(e)


def test_the_kind_map_is_the_union() -> None:
    members = Predicate.__args__[0].__args__  # type: ignore[attr-defined]
    assert {m.model_fields["kind"].default: m for m in members} == {k: kind_class(k) for k in KIND_CLASSES}
    assert KINDS == sorted(KIND_CLASSES)


def _spec_documents() -> list[list[dict[str, Any]]]:
    docs = []
    for path in sorted((ROOT / "examples" / "specs").glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())
        docs.append(spec["predicates"])
        docs += [s["predicates"] for s in spec.get("stages", []) if s.get("predicates")]
    return [d for d in docs if d]


DOCS = _spec_documents()


def test_the_example_specs_parse_as_by_the_union() -> None:
    assert len(DOCS) >= 10
    for doc in DOCS:
        assert lazily(doc) == by_the_union(doc)


def _leaves(v: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    return [path] + [p for k, x in items for p in _leaves(x, (*path, k))]


BAD_VALUES = st.sampled_from([None, 3, -1, 2.5, "", "x", True, [], {}, [1], {"a": 1}, "all", "file"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_broken_document_names_the_first_problem_as_by_the_union(data: st.DataObject) -> None:
    doc = copy.deepcopy(data.draw(st.sampled_from(DOCS)))
    for _ in range(data.draw(st.integers(1, 3))):  # replace or drop a value somewhere (kinds kept, to reach validation)
        path = data.draw(st.sampled_from(_leaves(doc)[1:]))
        *up, last = path
        holder = doc
        for k in up:
            holder = holder[k]
        if last == "kind" and len(up) == 1:
            continue
        if isinstance(holder, dict) and data.draw(st.booleans()):
            del holder[last]
        else:
            holder[last] = copy.deepcopy(data.draw(BAD_VALUES))
    doc = [p for p in doc if isinstance(p, dict) and p.get("kind") in KINDS] or DOCS[0]
    assert lazily(doc) == by_the_union(doc)


@pytest.mark.parametrize("doc", [
    [{"kind": "file", "path": "/a.md", "content": {"contains": "x"}}],
    [{"kind": "unchanged", "scope": "files:/archive/*"}, {"kind": "answer", "contains": 3}],
    [{"kind": "not", "predicate": {"kind": "file", "path": 3}}],
    [{"kind": "judged", "answer": 3, "criteria": []}],
    [{"kind": "all", "predicates": [{"kind": "answer", "contains": "ok"}, {"kind": "mail_sent", "to": []}]}],
    [{"kind": "at_least", "k": 3, "predicates": [{"kind": "answer", "contains": "ok"}]}],
    [{"kind": "answer", "contains": "ok"}, {"kind": "any", "predicates": []}],
], ids=["file", "second bad", "not", "judged", "all", "at_least", "empty any"])
def test_combinations_parse_as_by_the_union(doc: list[Any]) -> None:
    assert lazily(doc) == by_the_union(doc)


def test_only_the_kinds_a_document_uses_are_imported() -> None:
    doc = [{"kind": "file", "path": "/a.md", "content": {"contains": "x"}}, {"kind": "unchanged", "scope": "files:/x/*"}]
    code = (f"import sys, json\nfrom workspace_sim.predicates import parse_predicates\nparse_predicates({doc!r})\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('workspace_sim.predicates'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       cwd=ROOT).stdout)
    assert "workspace_sim.predicates.files" in loaded and "workspace_sim.predicates.scope" in loaded
    for module in ("combinators", "judged", "mail", "calendar", "records", "reads", "secrets", "calls", "evaluation"):
        assert f"workspace_sim.predicates.{module}" not in loaded
