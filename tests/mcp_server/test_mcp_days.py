"""MCP alone plays follow-ups and multi-day scenarios: `submit_answer` is how the agent says it is done, and the
user's next message (a follow-up, or the next working day) comes back as its result until the episode is over.

The agents here have nothing but an MCP client (`mcp.Client`), in process and over stdio, and do what the
`start_task` prompt tells them; their results are compared with the episode runner's for the same actions.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from test_mcp_alone import event_view, play_reference, status_of, text_of

from mcp_server import ControlOptions, Episode, build_server
from workspace_sim.record import read_record_file
from mcp_server.replay import judge_record
from synth import load_spec
from trainers.episodes.policies import make_policy
from trainers.episodes.runner import run_episode

SPECS = Path(__file__).resolve().parents[2] / "examples" / "specs"
CLARIFY = SPECS / "handwritten-clarify-recipient.yaml"
WEEK = SPECS / "handwritten-multiday-vendor-week.yaml"
MCP_ONLY = ControlOptions(enabled=True)


async def follow_the_prompt_on_clarify(c: Client) -> dict[str, Any]:
    """What an agent does that reads the prompt: asks which Kim, sends the decision, submits, and goes on with
    whatever comes back until a submission ends the episode."""
    prompt = (await c.get_prompt("start_task")).messages[0].content.text
    task = (await c.read_resource("workspace://task")).contents[0].text
    answer = text_of(await c.call_tool("ask_user", {"question": "Which Kim: the designer or the engineer?"}))
    kim = "kim.nguyen@brightline.example" if "kim.nguyen@" in answer else "kim.ngo@brightline.example"
    submits = []
    for _ in range(4):
        notes = text_of(await c.call_tool("read_text_file", {"path": "/notes/design-sync.md"}))
        decision = next(line for line in notes.splitlines() if line.startswith("Decision:"))
        await c.call_tool("send_email", {"to": [kim], "subject": "Design sync decision",
                                         "body": f"Hi Kim, the {decision.lower()}"})
        result = await c.call_tool("submit_answer", {"answer": f"Sent Kim the {decision.lower()}"})
        submits.append(result)
        if result.structured_content.get("ended"):
            break
    return {"prompt": prompt, "task": task, "submits": submits, "status": await status_of(c)}


def test_an_agent_that_follows_the_prompt_gets_the_follow_up_and_scores_1() -> None:
    """Issue 19 item 10: the follow-up reached the agent only through another ask_user; it scored 0.67."""
    spec = load_spec(CLARIFY)
    ep = Episode(spec, "clarify", control=MCP_ONLY)

    async def go() -> dict[str, Any]:
        async with Client(build_server(ep)) as c:
            return await follow_the_prompt_on_clarify(c)

    r = anyio.run(go)
    assert "submit_answer" in r["prompt"] and "their message comes back" in r["prompt"]
    assert r["task"].startswith(spec.request) and "submit_answer" in r["task"]
    first, last = r["submits"]
    assert not first.is_error and first.structured_content["ended"] is False
    assert text_of(first) == "Oh, and the notes were just updated; send Kim the new decision too."
    assert last.structured_content == {"ended": True}
    assert r["status"]["ended"] and "score" not in r["status"] and r["status"]["final_answer"].endswith("green theme.")
    assert ep.evaluation is not None and ep.evaluation["passed"] is True


async def play_the_week(c: Client, spec: Any) -> dict[str, Any]:
    """The reference's calls, ask_user for its questions, submit_answer for each day's report and the end; what
    came back each day, the status each morning, and what the day-2 read of the data showed."""
    seen: dict[str, Any] = {"days": [], "statuses": [], "reads": []}
    original = c.call_tool

    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        result = await original(name, arguments)
        if name == "submit_answer" and not result.structured_content.get("ended"):
            seen["days"].append((text_of(result), result.structured_content))
            seen["statuses"].append(await status_of(c))
        if name == "read_text_file" and arguments.get("path") == "/data/vendors.csv":
            seen["reads"].append(text_of(result))
        return result

    c.call_tool = call_tool  # type: ignore[method-assign]
    seen["first_status"] = await status_of(c)
    seen["prompt"] = (await c.get_prompt("start_task")).messages[0].content.text
    seen["final"] = await play_reference(c, spec)
    seen["status"] = await status_of(c)
    return seen


def stage_scores(evaluation: dict[str, Any]) -> list[tuple[str, bool, float, bool]]:
    return [(s["id"], s["passed"], s["score"], s["reached"]) for s in evaluation["stages"]]


def check_the_week(seen: dict[str, Any], evaluation: dict[str, Any], spec: Any, rec: Any) -> None:
    assert "3 working days" in seen["prompt"] and "closes the day" in seen["prompt"]
    assert seen["first_status"]["day"] == 1 and seen["first_status"]["days"] == 3
    (day2, meta2), (day3, meta3) = seen["days"]
    assert day2.startswith("[Day 2 of 3, Tuesday 3 March]") and spec.stages[1].instructions in day2
    assert day3.startswith("[Day 3 of 3, Wednesday 4 March]") and spec.stages[2].instructions in day3
    assert (meta2["day"], meta3["day"]) == (2, 3) and "stage" not in meta2  # the author's stage ids stay unseen
    assert [s["day"] for s in seen["statuses"]] == [2, 3]
    assert not any("tue" in json.dumps(s) or "stage" in s for s in seen["statuses"])
    assert seen["statuses"][0]["sim_time"].startswith("2026-03-03T09:00")
    monday, tuesday = seen["reads"]  # the overnight correction is silent, yet there on day 2
    assert monday != tuesday and "Acme" in tuesday and "Acme" not in day2
    assert seen["final"].structured_content == {"ended": True}
    assert seen["status"]["ended"] and "score" not in seen["status"] and "passed" not in seen["status"]
    users = [m.content for m in rec.final.messages if m.role == "user"]
    assert day2 in users and day3 in users  # the very messages the runner's user sent
    assert evaluation == rec.final.evaluation
    assert stage_scores(evaluation) == stage_scores(rec.final.evaluation) == [
        ("mon", True, 1.0, True), ("tue", True, 1.0, True), ("wed", True, 1.0, True)]


def test_a_multi_day_scenario_over_mcp_alone_gets_the_runners_days_and_stage_scores(tmp_path: Path) -> None:
    spec = load_spec(WEEK)
    rec = run_episode(spec, make_policy("teacher"))
    ep = Episode(spec, "week", control=MCP_ONLY, record_dir=tmp_path)

    async def go() -> dict[str, Any]:
        async with Client(build_server(ep)) as c:
            return await play_the_week(c, spec)

    seen = anyio.run(go)
    assert ep.evaluation is not None
    check_the_week(seen, ep.evaluation, spec, rec)
    (seg,) = read_record_file(tmp_path / "week.jsonl").segments
    assert event_view(seg.events) == event_view([e.model_dump() for e in rec.events])
    assert [e["args"]["stage"] for e in seg.events if e["kind"] == "stage"] == ["mon", "tue"]
    assert seg.final is not None and seg.final["evaluation"] == rec.final.evaluation
    # `coworkenv eval --rescore` replays the days (stage events included) to the same judgement
    (verdict,) = judge_record(tmp_path / "week.jsonl", rescore=True, append=False, env=spec)
    assert verdict.evaluation == rec.final.evaluation and verdict.warnings == []


def test_a_multi_day_scenario_over_stdio_mcp_only(tmp_path: Path) -> None:
    spec = load_spec(WEEK)
    rec = run_episode(spec, make_policy("teacher"))
    script = Path(sys.executable).parent / "coworkenv"
    params = StdioServerParameters(command=str(script), args=["serve", str(WEEK), "--mcp-only", "--record-dir",
                                                              str(tmp_path), "--episode-id", "week-stdio"],
                                   env={**os.environ, "PYTHONWARNINGS": "ignore"})

    async def go() -> dict[str, Any]:
        async with Client(params) as c:
            return await play_the_week(c, spec)

    seen = anyio.run(go)
    (seg,) = read_record_file(tmp_path / "week-stdio.jsonl").segments
    assert seg.final is not None and seg.final["stop_reason"] == "answered"
    check_the_week(seen, seg.final["evaluation"], spec, rec)
    assert event_view(seg.events) == event_view([e.model_dump() for e in rec.events])
    assert json.loads(json.dumps(seg.settings["control"]))["mcp_only"] is True
