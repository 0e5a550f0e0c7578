"""Issue 37 finding 10 (a): a lone surrogate in a call's arguments is a clear `invalid_argument` naming the argument.

`Workspace.call("write_file", {"content": "ab\\ud800"})` answered `internal_error` with a pydantic text (the record
model refused the string after the tool had run); other tools raised a bare UnicodeEncodeError. Now the argument
check every call passes (`check_arguments`, before any tool runs, also for a tool invoked by another) refuses any
string, list item or key holding one, naming the argument, the code point and its position, for every string
argument of every tool. Through the library API.
"""

from __future__ import annotations

from typing import Any

import pytest
from support import call_error

from benchmarks.standard_workspace import NOW, USER, standard_data
from workspace_sim import Workspace, WorkspaceConfig, all_services, all_tools

SERVICES = sorted(n for n, s in all_services().items() if not s.blocking)
WS = Workspace.create(WorkspaceConfig(user=USER, now=NOW, services=SERVICES), standard_data())


def _string_arguments() -> list[tuple[str, str, bool]]:
    """(tool, argument, is a list of strings) for every argument of every tool that takes text."""
    found = []
    for name, tool in sorted(all_tools().items()):
        if tool.service not in SERVICES:
            continue
        for arg, prop in tool.input_schema.get("properties", {}).items():
            kinds = [prop, *prop.get("anyOf", ())]
            if any(k.get("type") == "string" for k in kinds):
                found.append((name, arg, False))
            elif any(k.get("type") == "array" and k.get("items", {}).get("type") == "string" for k in kinds):
                found.append((name, arg, True))
    return found


ARGS = _string_arguments()


def test_the_sweep_covers_the_tools_that_take_text() -> None:
    tools = {t for t, _, _ in ARGS}
    assert len(ARGS) > 150 and len(tools) > 80, (len(ARGS), len(tools))
    assert ("write_file", "content", False) in ARGS and ("write_document", "paragraphs", True) in ARGS


@pytest.mark.parametrize(("tool", "arg", "listed"), ARGS, ids=[f"{t}.{a}" for t, a, _ in ARGS])
def test_every_string_argument_of_every_tool_refuses_a_lone_surrogate(tool: str, arg: str, listed: bool) -> None:
    value: Any = ["fine", "ab\ud800cd"] if listed else "ab\ud800cd"
    message = call_error(WS, tool, {arg: value})
    where = f"{arg}[1]" if listed else arg
    assert message.startswith("invalid_argument: "), message
    assert f"argument {where} contains characters that are not valid Unicode" in message, message
    assert "U+D800 at position 3" in message, message
    assert "pydantic" not in message and "internal" not in message
    message.encode("utf-8")  # the error itself never carries the surrogate


def test_the_reported_content_case_and_its_neighbours() -> None:
    ws = Workspace.create(WorkspaceConfig(services=["files"], user="me@acme.com"),
                          {"files": {"files": [{"path": "/docs/plan.txt", "content": "plan"}]}})
    valid = {"path": "/docs/a.txt", "content": "caf\u00e9 \U0001f600 ok"}
    assert ws.call("write_file", valid).ok  # real non-ASCII text, astral characters included, is fine
    cases = [
        ({"path": "/docs/b.txt", "content": "\u00e9\U0001f600\udc00"}, "argument content", "U+DC00 at position 3"),
        ({"path": "/docs/b\udfff.txt", "content": "x"}, "argument path", "U+DFFF at position 8"),
        ({"path": "/docs/b.txt", "content": "x", "x\ud800": 1}, "argument name 'x\\ud800'", "U+D800 at position 2"),
    ]
    for args, where, at in cases:
        message = call_error(ws, "write_file", args)
        assert message.startswith(f"invalid_argument: {where} contains characters that are not valid"), message
        assert at in message, message
    doc = call_error(ws, "write_document", {"path": "/docs/d.docx", "paragraphs": ["ok", "x\ud800"]})
    assert doc.startswith("invalid_argument: argument paragraphs[1] "), doc
    assert valid["content"] in ws.call("read_text_file", {"path": "/docs/a.txt"}).text
