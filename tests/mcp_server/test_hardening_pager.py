"""Issue 24 item 7: the result pager is an MCP tool like any other, so the workspace's argument limits hold for it.

Its error echoed a 5 MB `result_id` back to the agent (5,000,122 characters against the argument limit);
now the argument is refused by the same check as every workspace tool's, naming the limit, and the
pager's own errors quote an argument only cut short. Through a real `mcp.Client`.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client

from mcp_server import PAGER_TOOL, Episode, PythonEnvironment, build_server
from mcp_server.demo import build_workspace, environment
from workspace_sim import Workspace


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def test_a_five_megabyte_result_id_is_refused_by_the_argument_limit_and_never_echoed() -> None:
    ep = Episode(environment())
    limit = ep.workspace.config.limits.max_argument_chars
    huge = "r" + "9" * 5_000_121

    async def go() -> list[Any]:
        async with Client(build_server(ep)) as c:
            return [await c.call_tool(PAGER_TOOL, {"result_id": huge, "page": 1}),
                    await c.call_tool(PAGER_TOOL, {"result_id": "x" * (limit - 1), "page": 1}),
                    await c.call_tool(PAGER_TOOL, {"result_id": "r1", "page": list(range(5_000))})]

    over, under, page = anyio.run(go)
    assert over.is_error and text_of(over).startswith("Error (invalid_argument): argument result_id is 5,000,122")
    assert "limits.max_argument_chars" in text_of(over) and len(text_of(over)) < 300
    # under the limit the pager's own not_found answers, quoting the id cut short
    assert under.is_error and text_of(under).startswith("Error (not_found)") and len(text_of(under)) < 400
    assert page.is_error and len(text_of(page)) < 400
    assert ep.workspace.events() == []  # nothing ran, nothing was logged


def test_a_missing_argument_is_named_with_the_ids_kept_or_that_none_is() -> None:
    """Issue 37 finding 10 (d): `read_result_page` with no arguments said "no long result with id None"."""
    base = environment()

    def factory() -> Workspace:
        ws = build_workspace()
        return Workspace.create(ws.config.model_copy(update={"max_result_chars": 2000}), ws.export_data())

    ep = Episode(PythonEnvironment(base.id, base.title, base.task, factory, base.predicates))

    async def go() -> list[str]:
        async with Client(build_server(ep)) as c:
            before = await c.call_tool(PAGER_TOOL, {})
            long = await c.call_tool("read_text_file", {"path": "/archive/2025/batch.log"})
            rid = text_of(long).split('result_id "')[1].split('"')[0]
            answers = [before, await c.call_tool(PAGER_TOOL, {}), await c.call_tool(PAGER_TOOL, {"page": 2}),
                       await c.call_tool(PAGER_TOOL, {"result_id": rid}),
                       await c.call_tool(PAGER_TOOL, {"result_id": 7, "page": 1}),
                       await c.call_tool(PAGER_TOOL, {"result_id": "r999", "page": 1})]
            assert all(a.is_error for a in answers)
            return [rid, *map(text_of, answers)]

    rid, before, empty, no_id, no_page, not_str, unknown = anyio.run(go)
    assert before.startswith("Error (invalid_argument): result_id is missing; read_result_page needs result_id and page")
    assert "none is kept: no result of this episode has been long enough" in before and "None" not in before
    for text in (empty, no_id):
        assert text.startswith("Error (invalid_argument): result_id is missing"), text
        assert f"kept now: {rid} (" in text and " pages)" in text and "None" not in text, text
    assert no_page.startswith(f"Error (invalid_argument): page is missing; give a whole number from 1 to ") and rid in no_page
    assert not_str.startswith("Error (invalid_argument): result_id must be a string, got 7") and rid in not_str
    assert unknown.startswith("Error (not_found): no long result with id 'r999'") and f"kept now: {rid} (" in unknown
