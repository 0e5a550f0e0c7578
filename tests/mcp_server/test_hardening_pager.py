"""Issue 24 item 7: the result pager is an MCP tool like any other, so the workspace's argument limits hold for it.

Its error echoed a 5 MB `result_id` back to the agent (5,000,122 characters against the argument limit);
now the argument is refused by the same check as every workspace tool's, naming the limit, and the
pager's own errors quote an argument only cut short. Through a real `mcp.Client`.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client

from mcp_server import PAGER_TOOL, Episode, build_server
from mcp_server.demo import environment


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
