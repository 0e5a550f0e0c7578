"""The MCP server in process, through the SDK's own `mcp.Client`: tools, errors, pages, task, no leaks."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from mcp_server import PAGER_TOOL, START_PROMPT, TASK_URI, Episode, PythonEnvironment, build_server
from mcp_server.demo import build_workspace, environment
from mcp_server.results import ResultPager, split_pages
from workspace_sim import Workspace, WorkspaceConfig, all_services


def run(coro_fn: Any, *args: Any) -> Any:
    return anyio.run(coro_fn, *args)


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def small_limit_env(limit: int) -> PythonEnvironment:
    def factory() -> Workspace:
        ws = build_workspace()
        cfg = ws.config.model_copy(update={"max_result_chars": limit})
        return Workspace.create(cfg, ws.export_data())

    env = environment()
    return PythonEnvironment(env.id, env.title, env.task, factory, env.predicates)


def test_tools_are_generated_from_the_registry() -> None:
    ep = Episode(environment())

    async def go() -> list[Any]:
        async with Client(build_server(ep)) as c:
            return (await c.list_tools()).tools

    tools = run(go)
    assert [t.name for t in tools] == [*ep.workspace.tools, PAGER_TOOL]
    for t in tools[:-1]:
        reg = ep.workspace.tools[t.name]
        assert t.description == reg.description
        assert t.input_schema == reg.strict_input_schema  # the strict form by default (issue 38 item 12)
        assert t.annotations.model_dump(by_alias=True, exclude_none=True) == reg.mcp_annotations()
        assert t.annotations.open_world_hint is False
    services = {ep.workspace.tools[t.name].service for t in tools[:-1]}
    assert services == {"files"}  # only the services the environment uses


@pytest.mark.parametrize("service", sorted(all_services()))
def test_every_tool_of_every_service_answers_like_the_workspace(service: str) -> None:
    """Each MCP call gives exactly the workspace's own outcome: same text, same error flag, same data."""
    cfg = WorkspaceConfig(services=[service])
    env = PythonEnvironment(f"only-{service}", service, "Look around.", lambda: Workspace.create(cfg))
    ep = Episode(env)
    mirror = env.build_workspace()

    async def go() -> None:
        async with Client(build_server(ep)) as c:
            for name in mirror.tools:
                got = await c.call_tool(name, {})
                want = mirror.call(name, {})
                assert got.is_error == (not want.ok), name
                assert text_of(got) == want.text, name
                if want.ok:
                    data = want.data if isinstance(want.data, dict) else {"result": want.data}
                    assert got.structured_content == json.loads(json.dumps(data)), name

    run(go)
    assert ep.workspace.content_hash == mirror.content_hash


def test_errors_reach_the_model_as_tool_errors_with_the_workspace_message() -> None:
    ep = Episode(environment())

    async def go() -> dict[str, Any]:
        async with Client(build_server(ep)) as c:
            return {
                "missing": await c.call_tool("read_text_file", {"path": "/reports/q9.csv"}),
                "bad_type": await c.call_tool("read_text_file", {"path": "/reports/q1.csv", "head": "three"}),
                "extra": await c.call_tool("write_file", {"path": "/a.md", "content": "x", "mode": "append"}),
                "unknown": await c.call_tool("read_txt_file", {"path": "/reports/q1.csv"}),
                "conflict": await c.call_tool("move_file", {"source": "/reports/q1.csv", "destination": "/reports/README.md"}),
            }

    r = run(go)
    assert all(x.is_error for x in r.values())
    assert text_of(r["missing"]).startswith("Error (not_found): file /reports/q9.csv not found")
    assert "did you mean /reports/q1.csv" in text_of(r["missing"])
    assert text_of(r["bad_type"]).startswith("Error (invalid_argument): invalid arguments for read_text_file: head")
    assert "mode" in text_of(r["extra"])
    assert "did you mean read_text_file" in text_of(r["unknown"])
    assert text_of(r["conflict"]) == "Error (conflict): destination /reports/README.md already exists"
    assert not any("Error executing tool" in text_of(x) for x in r.values())
    assert ep.workspace.diff().changes == ()  # failed calls change nothing


def test_long_results_are_paged_and_every_answer_fits() -> None:
    limit = 2000
    ep = Episode(small_limit_env(limit))
    full = ep.workspace.call("read_text_file", {"path": "/archive/2025/batch.log"}).data["content"]

    async def go() -> tuple[list[str], list[int]]:
        async with Client(build_server(ep)) as c:
            first = await c.call_tool("read_text_file", {"path": "/archive/2025/batch.log"})
            sizes = [len(text_of(first)) + len(json.dumps(first.structured_content or ""))]
            assert first.structured_content is None and not first.is_error
            note = text_of(first).rsplit("\n\n[", 1)[1]
            assert PAGER_TOOL in note and "page 2" in note
            rid = note.split('result_id "')[1].split('"')[0]
            pages, n = [text_of(first)], 2
            while "To read on" in pages[-1]:
                nxt = await c.call_tool(PAGER_TOOL, {"result_id": rid, "page": n})
                sizes.append(len(text_of(nxt)))
                pages.append(text_of(nxt))
                n += 1
            bad = await c.call_tool(PAGER_TOOL, {"result_id": rid, "page": n})
            assert bad.is_error and f"from 1 to {n - 1}" in text_of(bad)
            nope = await c.call_tool(PAGER_TOOL, {"result_id": "r999", "page": 1})
            assert nope.is_error and "no long result" in text_of(nope)
            return pages, sizes

    pages, sizes = run(go)
    assert max(sizes) <= limit
    assert "".join(p.rsplit("\n\n[", 1)[0] for p in pages) == full
    assert "Last page" in pages[-1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(min_size=0, max_size=5000), limit=st.integers(min_value=500, max_value=3000))
def test_paging_property_every_answer_fits_and_pages_rebuild_the_text(text: str, limit: int) -> None:
    cfg = WorkspaceConfig(services=["files"], max_result_chars=limit)
    ws = Workspace.create(cfg, {"files": {"files": [{"path": "/t.txt", "content": text}]}})
    pager = ResultPager(limit)
    result = ws.call("read_text_file", {"path": "/t.txt"})
    first = pager.shape(result)
    assert first.size <= limit
    if first.result_id is None:
        assert first.text == result.text and first.structured == result.data
        return
    parts = [pager.page(first.result_id, n) for n in range(1, first.pages + 1)]
    assert all(p.size <= limit and not p.is_error for p in parts)
    assert "".join(p.text.rsplit("\n\n[", 1)[0] for p in parts) == result.text


@given(text=st.text(max_size=3000), page=st.integers(min_value=1, max_value=700))
def test_split_pages_is_lossless_and_bounded(text: str, page: int) -> None:
    pages = split_pages(text, page)
    assert "".join(pages) == text
    assert all(len(p) <= page for p in pages)
    assert all(pages[:-1])  # no empty page before the last


def test_task_resource_and_start_prompt() -> None:
    env = environment()
    ep = Episode(env)

    async def go() -> tuple[Any, Any, Any, Any]:
        async with Client(build_server(ep)) as c:
            return (await c.list_resources(), await c.read_resource(TASK_URI), await c.list_prompts(),
                    await c.get_prompt(START_PROMPT))

    resources, task, prompts, prompt = run(go)
    assert [str(r.uri) for r in resources.resources] == [TASK_URI]
    assert task.contents[0].text == env.task_text()
    assert [p.name for p in prompts.prompts] == [START_PROMPT]
    assert prompt.messages[0].role == "user" and env.task_text() in prompt.messages[0].content.text


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def test_nothing_served_reveals_hidden_parts_of_the_environment() -> None:
    """Every tool result, resource, prompt, description and instruction of an episode, searched for secrets."""
    env = environment()
    ep = Episode(env)
    visible = env.task_text() + json.dumps(ep.workspace.export_data()) + json.dumps(
        [t.openai_schema() for t in ep.workspace.tools.values()])
    hidden = [env.predicates, env.solution, env.hidden_facts]
    secrets = {s for s in _strings(hidden) if len(s) >= 6 and s not in visible}
    assert any("Total: 1234" in s for s in secrets) and any("QUOKKA-77" in s for s in secrets)

    async def go() -> list[str]:
        served: list[str] = []
        async with Client(build_server(ep)) as c:
            served.append(c.instructions or "")
            served.append(json.dumps(c.server_info.model_dump(mode="json") if c.server_info else {}))
            tools = (await c.list_tools()).tools
            served += [json.dumps(t.model_dump(mode="json")) for t in tools]
            served.append((await c.read_resource(TASK_URI)).contents[0].text)
            served.append(json.dumps((await c.get_prompt(START_PROMPT)).model_dump(mode="json")))
            served.append(json.dumps((await c.list_resources()).model_dump(mode="json")))
            calls = [("directory_tree", {}), ("list_directory", {"path": "/reports"}),
                     ("search_files", {"pattern": "*"}), ("grep", {"pattern": "."}),
                     ("read_multiple_files", {"paths": ["/reports/q1.csv", "/reports/README.md", "/drafts/notes.md"]}),
                     ("get_file_info", {"path": "/reports/q1.csv"}), ("read_text_file", {"path": "/archive/2025/batch.log"}),
                     ("read_text_file", {"path": "/nowhere"}), (PAGER_TOOL, {"result_id": "r6", "page": 2}),
                     ("read_text_file", {"path": "/reports/summary.md"})]
            for name, args in calls:
                r = await c.call_tool(name, args)
                served.append(text_of(r) + json.dumps(r.structured_content))
        return served

    served = "\n".join(run(go))
    leaks = sorted(s for s in secrets if s in served)
    assert not leaks, f"served output reveals hidden parts: {leaks}"


def test_episode_state_changes_and_is_judged() -> None:
    ep = Episode(environment())

    async def go() -> None:
        async with Client(build_server(ep)) as c:
            await c.call_tool("write_file", {"path": "/reports/summary.md", "content": "Total: 1234\n"})

    run(go)
    assert ep.workspace.table("files.files")["/reports/summary.md"].content == "Total: 1234\n"
    verdict = ep.end()
    assert verdict["passed"] and verdict["score"] == 1.0
    assert ep.call("list_directory", {}).is_error  # an ended episode accepts nothing more


def test_an_agent_invites_a_colleague_by_name_and_learns_of_namesakes() -> None:
    """Through a real MCP client: "Dana Reyes" resolves through the directory; two Sam Ortiz are refused with both listed."""
    people = [{"email": "me@corp.com", "name": "Morgan Lee"},
              {"email": "dana.reyes@corp.com", "name": "Dana Reyes", "title": "VP Sales", "department": "Sales"},
              {"email": "sam.ortiz@corp.com", "name": "Sam Ortiz", "title": "Engineer"},
              {"email": "sam.ortiz2@corp.com", "name": "Sam Ortiz", "title": "Recruiter"}]
    cfg = WorkspaceConfig(services=["calendar", "contacts"], user="me@corp.com")
    env = PythonEnvironment("invite-by-name", "Invite", "Invite Dana Reyes to a pipeline review tomorrow at 10:00.",
                            lambda: Workspace.create(cfg, {"contacts": {"people": people}}),
                            [{"kind": "event_exists", "title": {"contains": "Pipeline"},
                              "attendees": ["dana.reyes@corp.com"]}])
    ep = Episode(env)
    when = {"start": "2026-03-03T10:00:00", "end": "2026-03-03T10:30:00"}

    async def go() -> tuple[Any, Any]:
        async with Client(build_server(ep)) as c:
            made = await c.call_tool("create_event", {"title": "Pipeline review", "attendees": ["Dana Reyes"], **when})
            twice = await c.call_tool("create_event", {"title": "Sync", "attendees": ["sam ortiz"], **when})
            return made, twice

    made, twice = run(go)
    assert not made.is_error, text_of(made)
    guests = {a["email"]: a["response"] for a in made.structured_content["event"]["attendees"]}
    assert guests == {"me@corp.com": "accepted", "dana.reyes@corp.com": "needs_action"}
    assert "  - dana.reyes@corp.com: needs_action" in text_of(made)
    assert twice.is_error
    assert text_of(twice) == ("Error (invalid_argument): attendees[0] 'sam ortiz' matches 2 people: "
                              "Sam Ortiz <sam.ortiz2@corp.com>, Recruiter; Sam Ortiz <sam.ortiz@corp.com>, Engineer; "
                              "give the e-mail address")
    verdict = ep.end()
    assert verdict["passed"], verdict
    assert len(ep.workspace.table("calendar.events")) == 1  # the refused call created nothing
