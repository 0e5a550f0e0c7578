"""Strict tool schemas: every tool has a form OpenAI's strict function calling (and the OpenAI Agents SDK's
strict conversion) takes unchanged, served over MCP on request, and a strict call means what the ordinary
call means."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from agents.mcp import MCPServerStdio, MCPUtil
from agents.strict_schema import ensure_strict_json_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ConfigDict, create_model

from benchmarks.standard_workspace import NOW, USER, standard_data
from mcp_server.results import PAGER
from mcp_server.server import STRICT_SCHEMAS_ENV, _mcp_tools
from workspace_sim import Workspace, WorkspaceConfig, all_services, all_tools
from workspace_sim.core.registry import StrictSchemaError, strict_arguments, strict_schema

TOOLS = {**all_tools(), PAGER.name: PAGER}


def walk(node: Any, path: str = ""):  # type: ignore[no-untyped-def]
    """Every schema node under `node` with its path."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            if k == "properties":
                for name, p in v.items():
                    yield from walk(p, f"{path}.{name}")
            elif k == "items":
                yield from walk(v, f"{path}[]")
            elif k == "anyOf":
                for i, p in enumerate(v):
                    yield from walk(p, f"{path}|{i}")


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_strict_form_is_already_strict_for_the_agents_sdk(name: str) -> None:
    tool = TOOLS[name]
    schema = tool.strict_input_schema
    assert ensure_strict_json_schema(copy.deepcopy(schema)) == schema  # nothing left for the SDK to change
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text
    standard = tool.input_schema
    for path, node in walk(schema):
        assert not {"default", "title", "minLength", "maxLength"} & set(node), (path, node)
        if node.get("type") == "object":
            assert node["additionalProperties"] is False and node["required"] == list(node["properties"]), path
    for arg, prop in standard["properties"].items():  # optional arguments: nullable, their default told
        strict = schema["properties"][arg]
        if arg not in standard.get("required", ()):
            assert {"type": "null"} in strict.get("anyOf", []), arg
            if prop.get("default") is not None:
                assert json.dumps(prop["default"]) in strict["description"], arg
    assert tool.openai_schema(strict=True)["function"] == {
        "name": name, "description": tool.description, "parameters": schema, "strict": True}


def test_strict_form_of_edit_file_inlines_the_edit_model() -> None:
    schema = all_tools()["edit_file"].strict_input_schema
    edit = schema["properties"]["edits"]["items"]
    assert edit["type"] == "object" and edit["required"] == ["old_text", "new_text"]
    assert "At least 1 character" in edit["properties"]["old_text"]["description"]
    assert schema["properties"]["dry_run"]["anyOf"] == [{"type": "boolean"}, {"type": "null"}]


def test_schemas_without_a_strict_form_are_refused_by_name() -> None:
    base = {"type": "object", "properties": {}, "required": []}
    cases = [
        ({**base, "properties": {"f": {"type": "object", "additionalProperties": True}}}, "f: an object open"),
        ({**base, "properties": {"f": {}}}, "f: a value of any type"),
        ({**base, "properties": {"f": {"type": "string", "uniqueItems": True}}}, "keyword 'uniqueItems'"),
        ({**base, "properties": {"f": {"$ref": "#/$defs/N"}}, "$defs": {
            "N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "required": ["n"]}}}, "refers to itself"),
        ({**base, "properties": {"f": {"$ref": "#/other/N"}}}, "not to this schema's $defs"),
    ]
    for schema, words in cases:
        with pytest.raises(StrictSchemaError, match="tool t: .*" + words.replace("$", r"\$")):
            strict_schema(schema, "t")


def test_a_standard_schema_with_a_ref_falls_back_in_the_sdk_and_the_strict_one_does_not() -> None:
    # how the SDK signals a fallback: the FunctionTool it makes is not strict_json_schema
    server = MCPServerStdio(params={"command": sys.executable}, name="unused")
    standard = {t.name: t for t in _mcp_tools(tuple(all_tools()), False)}
    assert MCPUtil.to_function_tool(standard["edit_file"], server, True).strict_json_schema is False
    for tool in _mcp_tools(tuple(all_tools()), True):  # every tool, as served with strict schemas
        fn = MCPUtil.to_function_tool(tool, server, convert_schemas_to_strict=True)
        assert fn.strict_json_schema is True, tool.name
        assert fn.params_json_schema == TOOLS[tool.name].strict_input_schema


@pytest.mark.parametrize("flags", [[], ["--strict-schemas"]], ids=["default", "flag"])
def test_agents_sdk_over_stdio_gets_strict_tools_and_strict_calls_work(tmp_path: Path, flags: list[str]) -> None:
    # issue 38 item 12: by default 18 of 19 tools converted (edit_file's $ref to $defs/Edit fell back)
    env = {**{k: v for k, v in os.environ.items() if k != STRICT_SCHEMAS_ENV}, "PYTHONWARNINGS": "ignore",
           "PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)}
    params = {"command": sys.executable, "args": ["-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment",
                                                  *flags, "--record-dir", str(tmp_path)], "env": env}

    async def go() -> tuple[list[Any], Any, Any, list[Any]]:
        async with MCPServerStdio(params=params, name="coworkenv", client_session_timeout_seconds=30) as server:
            listed = await server.list_tools()
            tools = [MCPUtil.to_function_tool(t, server, convert_schemas_to_strict=True) for t in listed]
            read = await server.call_tool("read_text_file", {"path": "/reports/q1.csv", "head": None, "tail": None})
            edit = await server.call_tool("edit_file", {"path": "/reports/q1.csv", "dry_run": None, "edits": [
                {"old_text": "region", "new_text": "Region"}]})
            return tools, read, edit, listed

    tools, read, edit, listed = anyio.run(go)
    assert tools and all(t.strict_json_schema for t in tools), [t.name for t in tools if not t.strict_json_schema]
    assert "edit_file" in {t.name for t in tools}
    assert not read.is_error and "region" in read.content[0].text
    assert not edit.is_error, edit.content[0].text
    for tool in listed:
        text = json.dumps(tool.input_schema)
        assert "$ref" not in text and "$defs" not in text, tool.name
        assert set(tool.input_schema["required"]) == set(tool.input_schema["properties"]), tool.name
        assert tool.input_schema["additionalProperties"] is False, tool.name


def test_no_strict_schemas_serves_the_ordinary_form(tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if k != STRICT_SCHEMAS_ENV}, "PYTHONWARNINGS": "ignore",
           "PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)}
    params = {"command": sys.executable, "args": ["-m", "coworkenv", "serve", "--python", "mcp_server.demo:environment",
                                                  "--no-strict-schemas", "--record-dir", str(tmp_path)], "env": env}

    async def go() -> list[Any]:
        async with MCPServerStdio(params=params, name="coworkenv", client_session_timeout_seconds=30) as server:
            return await server.list_tools()

    listed = {t.name: t for t in anyio.run(go)}
    assert listed["edit_file"].input_schema == TOOLS["edit_file"].input_schema and "$defs" in json.dumps(
        listed["edit_file"].input_schema)


def test_serving_strict_schemas_refuses_a_bad_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_server.server import strict_schemas_requested

    for value, want in (("1", True), ("true", True), ("0", False), ("no", False), ("", True)):
        monkeypatch.setenv(STRICT_SCHEMAS_ENV, value)
        assert strict_schemas_requested() is want
    monkeypatch.delenv(STRICT_SCHEMAS_ENV)
    assert strict_schemas_requested() is True  # the default (issue 38 item 12)
    monkeypatch.setenv(STRICT_SCHEMAS_ENV, "maybe")
    with pytest.raises(ValueError, match=f"{STRICT_SCHEMAS_ENV} must be 1 or 0"):
        strict_schemas_requested()


# --- a strict call means what the ordinary call means ------------------------------------------------------

SERVICES = sorted(n for n, s in all_services().items() if not s.blocking)
BASE = Workspace.create(WorkspaceConfig(user=USER, now=NOW, services=SERVICES), standard_data())
WORDS = ["msg-0001", "evt-0001", "OPS-1", "person01@example.com", "/projects/p1/docs/file001.txt", "/projects/p1",
         "inbox", "Person 1", "2026-03-04", "2026-03-03T10:00:00+00:00", "high", "name", "-updated", "acc-1", "x"]


def value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for a strict schema node (so drawn arguments pass the schema, if not the tool's own rules)."""
    if "anyOf" in schema:
        return st.one_of([value_for(s) for s in schema["anyOf"] if s.get("type") != "null"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.one_of(st.sampled_from(WORDS), st.text(max_size=8))
    if kind == "integer":
        return st.integers(schema.get("minimum", -3), schema.get("maximum", 300))
    if kind == "number":
        return st.floats(schema.get("minimum", 0), schema.get("maximum", 1e6), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(value_for(schema["items"]), max_size=2)
    assert kind == "object", schema
    return arguments_for(schema)


@st.composite
def arguments_for(draw, schema: dict[str, Any], required: tuple[str, ...] | None = None  # type: ignore[no-untyped-def]
                  ) -> dict[str, Any]:
    """An argument object: required properties always, optional ones sometimes (never as null). Nested objects
    of the registry have only required or nullable properties, so there a nullable one is optional."""
    out = {}
    for name, prop in schema["properties"].items():
        needed = name in required if required is not None else {"type": "null"} not in prop.get("anyOf", [])
        if needed or draw(st.booleans()):
            out[name] = draw(value_for(prop))
    return out


@st.composite
def calls(draw):  # type: ignore[no-untyped-def]
    name = draw(st.sampled_from(sorted(BASE.tools)))
    tool = BASE.tools[name]
    return name, draw(arguments_for(tool.strict_input_schema, tuple(tool.input_schema.get("required", ()))))


VALIDATORS = {n: jsonschema.Draft202012Validator(t.strict_input_schema) for n, t in BASE.tools.items()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls(), min_size=1, max_size=3))
def test_strict_calls_give_the_same_results_as_ordinary_ones(seq: list[tuple[str, dict[str, Any]]]) -> None:
    plain, strict = BASE.fork(), BASE.fork()
    for name, args in seq:
        schema = BASE.tools[name].strict_input_schema
        full = strict_arguments(BASE.tools[name].input_schema, args)
        VALIDATORS[name].validate(full)  # the strict form is what a strict caller may send
        assert set(full) == set(schema["properties"])
        a, b = plain.call(name, args), strict.call(name, full)
        assert (a.ok, a.data, a.error) == (b.ok, b.data, b.error), (name, args)
        assert a.text == b.text
        assert plain.content_hash == strict.content_hash


@settings(max_examples=200, deadline=None)
@given(calls())
def test_ordinary_calls_validate_as_before(call: tuple[str, dict[str, Any]]) -> None:
    # the arguments model with null-as-default against a plain pydantic model of the same fields
    name, args = call
    model = BASE.tools[name].args_model
    plain = create_model("plain", __config__=ConfigDict(extra="forbid"),
                         **{n: (f.annotation, f) for n, f in model.model_fields.items()})  # type: ignore[call-overload]
    try:
        want: Any = plain.model_validate(args).__dict__
    except Exception as e:
        want = type(e).__name__
    try:
        got: Any = model.model_validate(args).__dict__
    except Exception as e:
        got = type(e).__name__
    assert got == want


def test_null_means_the_default_only_where_the_type_refuses_null() -> None:
    ws = BASE.fork()
    assert ws.call("list_directory", {"path": None}).data == ws.call("list_directory", {}).data
    path = "/projects/p1/docs/file001.txt"
    assert ws.call("read_text_file", {"path": path, "head": None, "tail": None}).data \
        == ws.call("read_text_file", {"path": path}).data
    refused = ws.call("read_text_file", {"path": None})  # required: null is still an error
    assert not refused.ok and "path" in refused.error.message
    model = BASE.tools["assign_ticket"].args_model
    assert "assignee" not in model.null_means_default  # null means "unassign" there, as before
    assert "dry_run" in BASE.tools["edit_file"].args_model.null_means_default
    r = ws.call("export_report", {"report": "deals", "filters": {"tier": None, "stage": "proposal", "status": None}})
    assert r.ok, r.error
