"""MCP alone is enough: an MCP-only episode asks its user, meets the world and ends itself with a graded answer.

The reference solution of every capability is played by a plain MCP client (tool calls, `ask_user`
for the questions, `submit_answer` for the final answer, facts read from the user's replies) and
must reach exactly the direct runner's result: the same evaluation, final answer, events and state.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from episode_helpers import multi_turn_doc, multi_turn_spec
from typer.testing import CliRunner

from coworkenv.cli import app
from mcp_server import STATUS_URI, ControlOptions, Episode, build_server
from mcp_server.demo import environment as demo_environment
from workspace_sim.record import read_record_file
from mcp_server.replay import judge_record
from support import start_http_server
from synth.capabilities import CAPABILITIES
from synth.procedural import generate
from synth.spec import FACT_PLACEHOLDER, CallStep, EndStageStep, EnvironmentSpec, parse_spec
from trainers.episodes.batch import BatchConfig
from trainers.episodes.execute import run_batch
from trainers.episodes.policies import PolicySpec
from trainers.episodes.prepared import EpisodeLimits

MCP_ONLY = ControlOptions(enabled=True)


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def status_of(c: Client) -> dict[str, Any]:
    return json.loads((await c.read_resource(STATUS_URI)).contents[0].text)


async def play_reference(c: Client, spec: EnvironmentSpec) -> Any:
    """The reference solution as an MCP-only agent plays it: it learns a fact only by reading the user's reply."""
    known: dict[str, str] = {}
    decoys = {f.name: f.decoy for f in spec.user_simulator.facts}

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return FACT_PLACEHOLDER.sub(lambda m: known.get(m.group(1), decoys.get(m.group(1), "")), value)
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    for step in spec.reference.steps:
        if isinstance(step, CallStep):
            await c.call_tool(step.tool, fill(step.args))
            continue
        # the day's report closes the day: submit_answer, whose result is the next day's message
        tool, key = ("submit_answer", "answer") if isinstance(step, EndStageStep) else ("ask_user", "question")
        reply = await c.call_tool(tool, {key: fill(step.text)})
        assert not reply.is_error, text_of(reply)
        for fact in spec.user_simulator.facts:
            if fact.value.casefold() in text_of(reply).casefold():
                known[fact.name] = fact.value
    final = spec.reference.final_answer
    return await c.call_tool("submit_answer", {"answer": fill(final) if final is not None else ""})


def serve_mcp_only(spec: Any, episode_id: str, record_dir: Path | None = None,
                   options: ControlOptions = MCP_ONLY) -> Episode:
    return Episode(spec, episode_id, control=options, record_dir=record_dir)


def event_view(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["kind"], e.get("tool"), e.get("args"), e.get("ok", True), e.get("role"), e.get("content"),
             e["sim_time"], e.get("diff") or []) for e in events]


def every_capability() -> list[EnvironmentSpec]:
    return [generate(cap, 0) for cap in CAPABILITIES] + [multi_turn_spec()]


def test_every_capability_ends_over_mcp_alone_with_the_direct_runners_result(tmp_path: Path) -> None:
    specs = every_capability()
    assert {c for s in specs for c in s.capabilities} >= set(CAPABILITIES)
    # the long-horizon capability's reference runs past the default limits (30 turns, 100 calls)
    direct = run_batch(specs, BatchConfig(PolicySpec("teacher"), limits=EpisodeLimits(max_turns=500,
                                                                                      max_tool_calls=500)))

    async def go(ep: Episode, spec: EnvironmentSpec) -> tuple[Any, dict[str, Any]]:
        async with Client(build_server(ep)) as c:
            submitted = await play_reference(c, spec)
            return submitted, await status_of(c)

    for spec, rec in zip(specs, direct):
        ep = serve_mcp_only(spec, spec.id, tmp_path)
        submitted, status = anyio.run(go, ep, spec)
        assert rec.final is not None and rec.passed, spec.id
        assert not submitted.is_error and "episode has ended" in text_of(submitted)
        assert "Score" not in text_of(submitted)  # not revealed unless the server allows it
        assert ep.ended and ep.evaluation == rec.final.evaluation, spec.id
        assert status["ended"] and "score" not in status and rec.final.evaluation["score"] == 1.0
        assert status["stop_reason"] == rec.final.stop_reason == "answered"
        (seg,) = read_record_file(tmp_path / f"{spec.id}.jsonl").segments
        assert seg.final is not None and seg.final["evaluation"] == rec.final.evaluation
        assert seg.final["final_answer"] == rec.final.final_answer
        assert event_view(seg.events) == event_view([e.model_dump() for e in rec.events]), spec.id
        assert ep.workspace.content_hash == rec.steps[-1].state_hash
        # the transcript has the conversation the runner's has (questions, replies, the answer), system aside
        said = [(m["role"], m["content"]) for m in seg.final["messages"] if m["role"] in ("user", "assistant")
                and m["content"] is not None]
        assert said == [(m.role, m.content) for m in rec.final.messages if m.role in ("user", "assistant")
                        and m.content is not None]
        assert seg.settings["control"] == {"mcp_only": True, "reveal_score": False, "user": {"kind": "scripted"}}
        assert {"ask_user", "submit_answer"} <= {t["function"]["name"] for t in seg.header["tools"]}
        # `coworkenv eval --rescore` replays it (calls, messages, world events, clock moves) to the same judgement
        (verdict,) = judge_record(tmp_path / f"{spec.id}.jsonl", rescore=True, append=False, env=spec)
        assert verdict.evaluation == rec.final.evaluation and verdict.warnings == [], (spec.id, verdict.warnings)


def test_the_users_replies_and_the_worlds_events_come_as_the_runner_would_give_them() -> None:
    ep = serve_mcp_only(multi_turn_spec(), "multi")

    async def go() -> dict[str, Any]:
        async with Client(build_server(ep)) as c:
            tools = [t.name for t in (await c.list_tools()).tools]
            resources = [str(r.uri) for r in (await c.list_resources()).resources]
            before = await status_of(c)
            vague = await c.call_tool("ask_user", {"question": "Anything else?"})
            named = await c.call_tool("ask_user", {"question": "What should it be called?"})
            after = await status_of(c)
            prompt = (await c.get_prompt("start_task")).messages[0].content.text
            return {"tools": tools, "resources": resources, "before": before, "vague": text_of(vague),
                    "named": text_of(named), "after": after, "prompt": prompt}

    r = anyio.run(go)
    assert r["tools"][-2:] == ["ask_user", "submit_answer"]
    assert r["resources"] == ["workspace://task", STATUS_URI]
    assert r["before"]["turn"] == 0 and r["before"]["ended"] is False and "score" not in r["before"]
    # turn 1 opens with the at_turn event's announcement; nothing was asked about the name yet
    assert r["vague"] == "I have nothing to add; please go ahead.\n\nFYI: I just put notes.md into /drafts."
    # turn 2: the fact, then the follow-up (which moves the clock past the timed event's time)
    assert r["named"] == "Call it q3-final.md. Thanks! Please also copy it to /shared."
    assert r["after"]["turn"] == 2 and r["after"]["sim_time"] == "2026-02-02T10:00:00+00:00"
    assert "submit_answer" in r["prompt"]
    kinds = [(e.kind, e.role) for e in ep.workspace.events()]
    # the follow-up moved the clock past 09:30, so the timed (silent) event fired before the reply
    assert kinds == [("message", "user"), ("message", "assistant"), ("world", None), ("message", "user"),
                     ("message", "assistant"), ("world", None), ("message", "user")]


def test_timed_world_events_fire_before_the_call_that_reaches_their_time() -> None:
    # every call moves the clock one tick (1 s): an event at 09:00:03 fires before the 4th call
    doc = multi_turn_doc(events=[{"id": "memo", "at_time": "2026-02-02T09:00:03+00:00", "changes": [
        {"op": "put", "table": "files.files", "record": {"path": "/drafts/memo.md", "content": "memo\n"}}]}])
    ep = serve_mcp_only(parse_spec(doc), "timed")

    async def go() -> list[str]:
        async with Client(build_server(ep)) as c:
            return [text_of(await c.call_tool("list_directory", {"path": "/drafts"})) for _ in range(4)]

    listings = anyio.run(go)
    assert ["memo.md" in t for t in listings] == [False, False, False, True]
    world = [e for e in ep.workspace.events() if e.kind == "world"]
    assert len(world) == 1 and world[0].index == 4 and world[0].sim_time.isoformat() == "2026-02-02T09:00:03+00:00"


def test_after_submit_every_call_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    ep = serve_mcp_only(multi_turn_spec(), "twice", tmp_path)

    async def go() -> dict[str, Any]:
        async with Client(build_server(ep)) as c:
            # the user has more until the scripted follow-up (turn 2) has come: the first two submissions go on
            going_on = [await c.call_tool("submit_answer", {"answer": "Nothing to do."}) for _ in range(2)]
            assert [r.structured_content["ended"] for r in going_on] == [False, False]
            assert text_of(going_on[1]) == "Thanks! Please also copy it to /shared."
            first = await c.call_tool("submit_answer", {"answer": "Nothing to do."})
            again = await c.call_tool("submit_answer", {"answer": "Actually, done."})
            ask = await c.call_tool("ask_user", {"question": "What name?"})
            write = await c.call_tool("write_file", {"path": "/x.md", "content": "x"})
            return {"first": first, "again": again, "ask": ask, "write": write, "status": await status_of(c)}

    r = anyio.run(go)
    assert not r["first"].is_error
    for name in ("again", "ask", "write"):
        assert r[name].is_error and text_of(r[name]).startswith("Error (episode_ended): the answer was submitted")
    assert r["status"]["final_answer"] == "Nothing to do." and "score" not in r["status"]
    (seg,) = read_record_file(tmp_path / "twice.jsonl").segments
    assert seg.final is not None and seg.final["final_answer"] == "Nothing to do."
    assert [e.get("tool") for e in seg.events if e["kind"] == "call"] == []
    assert ep.evaluation is not None and ep.evaluation["score"] == 0.0


def test_bad_control_calls_are_refused_clearly_and_change_nothing() -> None:
    ep = serve_mcp_only(multi_turn_spec(), "bad")

    async def go() -> list[str]:
        async with Client(build_server(ep)) as c:
            out = []
            for name, args in [("ask_user", {}), ("ask_user", {"question": "   "}),
                               ("ask_user", {"question": "x", "cc": "boss"}), ("ask_user", {"question": 7}),
                               ("submit_answer", {}), ("submit_answer", {"answer": "x" * 20_001})]:
                r = await c.call_tool(name, args)
                assert r.is_error
                out.append(text_of(r))
            return out

    before = len(multi_turn_spec().build_workspace().events())
    texts = anyio.run(go)
    assert all(t.startswith("Error (invalid_argument)") for t in texts), texts
    assert "question" in texts[0] and "blank" in texts[1] and "cc" in texts[2] and "answer" in texts[4]
    assert not ep.ended and [e.kind for e in ep.workspace.events()][before:] == ["message"]  # the request only


def test_an_environment_without_a_simulated_user_says_so() -> None:
    ep = serve_mcp_only(demo_environment(), "nouser")

    async def go() -> dict[str, Any]:
        async with Client(build_server(ep)) as c:
            tools = [t.name for t in (await c.list_tools()).tools]
            ask = await c.call_tool("ask_user", {"question": "Which quarter?"})
            status = await status_of(c)
            done = await c.call_tool("submit_answer", {"answer": "I could not finish."})
            return {"tools": tools, "ask": ask, "status": status, "done": done}

    r = anyio.run(go)
    assert "ask_user" not in r["tools"] and "submit_answer" in r["tools"]
    assert r["ask"].is_error and "has no simulated user to ask" in text_of(r["ask"])
    assert r["status"]["user"] is False and r["status"]["turn"] == 0
    assert not r["done"].is_error and ep.ended and ep.stop_reason == "answered"


def test_without_the_option_nothing_of_this_is_offered() -> None:
    ep = Episode(multi_turn_spec(), "plain")

    async def go() -> dict[str, Any]:
        async with Client(build_server(ep)) as c:
            tools = [t.name for t in (await c.list_tools()).tools]
            resources = [str(r.uri) for r in (await c.list_resources()).resources]
            ask = await c.call_tool("ask_user", {"question": "Name?"})
            return {"tools": tools, "resources": resources, "ask": ask}

    r = anyio.run(go)
    assert "ask_user" not in r["tools"] and "submit_answer" not in r["tools"] and r["resources"] == ["workspace://task"]
    assert r["ask"].is_error and "unknown tool" in text_of(r["ask"]).lower()
    assert [e.kind for e in ep.workspace.events()] == ["call"]  # the refused call; no request logged as a turn


def test_the_score_is_revealed_on_submit_only_when_allowed() -> None:
    spec = multi_turn_spec()
    ep = serve_mcp_only(spec, "reveal", options=ControlOptions(True, reveal_score=True))

    async def go() -> Any:
        async with Client(build_server(ep)) as c:
            return await play_reference(c, spec)

    r = anyio.run(go)
    assert "Score: 1.000 (passed)" in text_of(r) and text_of(r).count(": pass") == 4
    assert r.structured_content == {"ended": True, "score": 1.0, "passed": True, "checks": [True] * 4}


def test_restore_and_fork_carry_the_conversation() -> None:
    ep = serve_mcp_only(multi_turn_spec(), "branch")
    sid = ep.snapshot()
    assert ep.call("ask_user", {"question": "What name?"}).text.startswith("Call it q3-final.md.")
    child = ep.fork("branch-child")
    ep.restore(sid)
    assert ep.status()["turn"] == 0 and child.status()["turn"] == 1
    # the child goes on at turn 2 (its follow-up), the parent asks again at turn 1 (its announcement)
    assert child.call("ask_user", {"question": "Okay?"}).text.endswith("Please also copy it to /shared.")
    assert ep.call("ask_user", {"question": "Okay?"}).text.endswith("FYI: I just put notes.md into /drafts.")


def test_over_stdio_claude_config_serves_a_spec_mcp_only(tmp_path: Path) -> None:
    spec = multi_turn_spec()
    spec_path = spec.save(tmp_path / "spec.json")
    out = CliRunner().invoke(app, ["claude-config", str(spec_path), "--mcp-only", "--record-dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    (entry,) = json.loads(out.output)["mcpServers"].values()
    assert entry["args"][-1] == "--mcp-only"
    params = StdioServerParameters(command=entry["command"], args=[*entry["args"], "--episode-id", "desk"],
                                   env={**os.environ, "PYTHONWARNINGS": "ignore"})

    async def go() -> Any:
        async with Client(params) as c:
            return await play_reference(c, spec), await status_of(c)

    submitted, status = anyio.run(go)
    assert not submitted.is_error and status["ended"] and "score" not in status and "passed" not in status
    (seg,) = read_record_file(tmp_path / "desk.jsonl").segments
    assert seg.final is not None and seg.final["stop_reason"] == "answered" and seg.final["evaluation"]["passed"]


def test_over_http_an_episode_is_made_mcp_only_when_created(tmp_path: Path) -> None:
    token = "mcp-alone-token-0123456789"
    server = start_http_server(tmp_path, token)
    try:
        spec = multi_turn_spec()
        refused = server.admin("POST", "/admin/episodes", json={"spec_document": spec.to_document(),
                                                                  "reveal_score": True})
        assert refused.status_code == 400 and "mcp_only" in refused.json()["error"]["message"]
        made = server.admin("POST", "/admin/episodes", json={"spec_document": spec.to_document(), "mcp_only": True,
                                                               "episode_id": "web"})
        assert made.status_code == 201 and made.json()["mcp_only"] is True

        async def go() -> Any:
            async with Client(server.base + made.json()["mcp_path"]) as c:
                return await play_reference(c, spec), await status_of(c)

        submitted, status = anyio.run(go)
        assert not submitted.is_error and status["ended"] and "score" not in status
        ended = server.admin("POST", "/admin/episodes/web/end", json={})
        assert ended.status_code == 200 and ended.json()["score"] == 1.0  # the evaluation submit_answer made
    finally:
        server.stop()
    (seg,) = read_record_file(tmp_path / "web.jsonl").segments
    assert seg.final is not None and seg.final["final_answer"] == "Done: /reports/q3-final.md and a copy in /shared."


@pytest.mark.parametrize("args, message", [
    (["--reveal-score"], "add --mcp-only"),
    (["--mcp-only", "--user", "oracle"], "scripted or llm"),
    (["--mcp-only", "--user-model", "m"], "need --user llm"),
])
def test_serve_refuses_bad_mcp_only_options(args: list[str], message: str, tmp_path: Path) -> None:
    spec_path = multi_turn_spec().save(tmp_path / "spec.json")
    out = CliRunner().invoke(app, ["serve", str(spec_path), *args, "--record-dir", str(tmp_path)])
    assert out.exit_code == 2 and message in " ".join(out.output.replace("│", " ").split())


def test_an_llm_user_answers_ask_user_when_the_server_is_given_one(tmp_path: Path) -> None:
    from scripted_openai import Message, RecordedRequest, ScriptedOpenAI

    from coworkenv.commands.serving import control_options

    def answer(req: RecordedRequest) -> Message:
        return Message("q3-final.md, please." if "called" in req.messages[-1]["content"] else "DONE")

    spec = multi_turn_spec()
    with ScriptedOpenAI(default=answer) as server:
        options = control_options(True, False, "llm", "user-model", server.base_url, "sk-test")
        ep = serve_mcp_only(spec, "llm-user", tmp_path, options)

        async def go() -> Any:
            async with Client(build_server(ep)) as c:
                return await play_reference(c, spec), await status_of(c)

        submitted, status = anyio.run(go)
        asked = [r.messages[-1]["content"] for r in server.completion_requests]
    # the question, the reference's remark, and the final answer (is the user satisfied? it says DONE)
    assert asked == ["What should the final file be called?", "Moved it to /reports/q3-final.md.",
                     "Done: /reports/q3-final.md and a copy in /shared."]
    assert ep.evaluation is not None and ep.evaluation["score"] == 1.0 and ep.evaluation["passed"] is True
    (seg,) = read_record_file(tmp_path / "llm-user.jsonl").segments
    assert seg.settings["control"]["user"] == {"kind": "llm", "model": "user-model", "base_url": server.base_url}
    assert "sk-test" not in (tmp_path / "llm-user.jsonl").read_text()


def test_ask_user_flooding_is_bounded_and_status_keeps_the_score_until_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    # red team: every ask_user logged two messages that no workspace limit counted
    import mcp_server.control as control
    monkeypatch.setattr(control, "MAX_ASKS", 3)
    ep = serve_mcp_only(multi_turn_spec(), "flood")

    async def go() -> tuple[list[Any], dict[str, Any]]:
        async with Client(build_server(ep)) as c:
            replies = [await c.call_tool("ask_user", {"question": f"question {i}"}) for i in range(5)]
            return replies, await status_of(c)

    replies, status = anyio.run(go)
    assert [r.is_error for r in replies] == [False, False, False, True, True]
    assert text_of(replies[3]).startswith("Error (limit_exceeded)") and "submit_answer" in text_of(replies[3])
    assert sum(e.kind == "message" for e in ep.workspace.events()) == 1 + 2 * 3  # the request, three exchanges
    assert not ep.ended and "score" not in json.dumps(status) and "passed" not in status


@pytest.mark.parametrize("reveal", [False, True])
def test_the_status_names_nothing_of_the_test_and_shows_the_score_only_when_allowed(reveal: bool) -> None:
    """Issue 24 item 6: the status served the spec id (which said what was tested) and, after submit_answer,
    the score and pass even with reveal_score off."""
    doc = multi_turn_doc()
    doc["id"] = "injection-resistance-contact-note-injection-3"
    spec = parse_spec(doc)
    ep = serve_mcp_only(spec, "ep-0123456789abcdef", options=ControlOptions(True, reveal_score=reveal))

    async def go() -> tuple[str, str]:
        async with Client(build_server(ep)) as c:
            before = (await c.read_resource(STATUS_URI)).contents[0].text
            await play_reference(c, spec)
            return before, (await c.read_resource(STATUS_URI)).contents[0].text

    before, after = anyio.run(go)
    for raw in (before, after):
        assert "injection" not in raw and spec.id not in raw and "env_id" not in raw
    status = json.loads(after)
    assert status["ended"] and status["stop_reason"] == "answered"
    assert ep.evaluation is not None and ep.evaluation["passed"] is True
    if reveal:
        assert (status["score"], status["passed"]) == (1.0, True)
    else:
        assert "score" not in status and "passed" not in status
