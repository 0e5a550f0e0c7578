"""`--connect`: episodes run on a real `coworkenv serve --http` process, through the MCP client over HTTP
and the admin API, give the same records as local runs; a wrong URL or token, or a server that dies
mid-episode, ends with a clear stop reason (or a clear CLI error), never a traceback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import HttpServer, start_http_server
from episode_helpers import generated_specs, multi_turn_spec, without_remote
from typer.testing import CliRunner

from coworkenv.cli import app
from mcp_server.episode import EPISODE_ID
from workspace_sim.record import read_record_file
from synth.procedural import CAPABILITIES, generate
from trainers.episodes.batch import BatchConfig
from trainers.episodes.execute import run_batch
from trainers.episodes.policies import PolicySpec, make_policy
from trainers.episodes.remote import RemoteError, RemoteTarget, check_server
from trainers.episodes.prepared import EpisodeLimits, PreparedSpec
from trainers.episodes.runner import run_episode
from trainers.episodes.turns import AgentTurn, PolicyCall
from workspace_sim.record import read_records

TOKEN = "remote-admin-token-0123456789"
LONG = EpisodeLimits(max_turns=500, max_tool_calls=500)


class Server(HttpServer):
    @property
    def target(self) -> RemoteTarget:
        return RemoteTarget(self.base, TOKEN, timeout=30)


def start_server(record_dir: Path) -> Server:
    """A real `coworkenv serve --http` on a free port of 127.0.0.1, ready for admin requests."""
    return start_http_server(record_dir, TOKEN, Server)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("records"))
    yield srv
    srv.stop()


def every_capability() -> list[Any]:
    return [generate(cap, 0) for cap in CAPABILITIES] + [multi_turn_spec()]


def test_teacher_through_connect_gives_the_local_records(server: Server) -> None:
    specs = every_capability()
    for spec in specs:
        prepared = PreparedSpec(spec)
        # the multi-day capabilities' references run past the default limits (30 turns, 100 calls)
        local = run_episode(prepared, make_policy("teacher"), seed=3, limits=LONG)
        remote = run_episode(prepared, make_policy("teacher"), seed=3, connect=server.target, limits=LONG)
        assert remote.final is not None and remote.final.stop_reason == "answered", (spec.id, remote.final)
        assert remote.passed, (spec.id, remote.final.evaluation)
        assert without_remote(remote) == without_remote(local), spec.id
        where = remote.header.policy.settings["remote"]
        assert where["url"] == server.base and EPISODE_ID.match(where["episode_id"])
        # the server recorded the same events and judged the same way, and the episode is over there
        (seg,) = read_record_file(server.record_dir / f"{where['episode_id']}.jsonl").segments
        assert [(e["index"], e["kind"], e.get("tool"), e.get("diff", [])) for e in seg.events] == \
            [(e.index, e.kind, e.tool, e.diff) for e in remote.events]
        assert seg.final is not None and seg.final["evaluation"] == remote.final.evaluation
        assert seg.final["stop_reason"] == "answered"
        assert server.admin("GET", f"/admin/episodes/{where['episode_id']}").status_code == 410


def test_noop_and_limits_through_connect_match_local(server: Server) -> None:
    spec = generated_specs()[0]
    for policy, limits in (("noop", EpisodeLimits()), ("teacher", EpisodeLimits(max_tool_calls=1)),
                           ("random", EpisodeLimits(max_turns=2))):
        local = run_episode(spec, make_policy(policy), seed=1, limits=limits)
        remote = run_episode(spec, make_policy(policy), seed=1, limits=limits, connect=server.target)
        assert without_remote(remote) == without_remote(local), policy
        assert remote.final is not None and local.final is not None
        rid = remote.header.policy.settings["remote"]["episode_id"]
        (seg,) = read_record_file(server.record_dir / f"{rid}.jsonl").segments
        assert seg.final is not None and seg.final["stop_reason"] == remote.final.stop_reason


def test_a_world_event_that_does_not_apply_stops_as_it_does_locally(server: Server) -> None:
    doc = multi_turn_spec().to_document()
    doc["events"][0]["changes"] = [{"op": "delete", "table": "files.files", "key": "/drafts/missing.md"}]
    from synth import parse_spec

    spec = parse_spec(doc)
    local = run_episode(spec, make_policy("teacher"), seed=0)
    remote = run_episode(spec, make_policy("teacher"), seed=0, connect=server.target)
    assert local.final is not None and local.final.stop_reason == "error"
    assert "events[0].changes[0].key" in (local.final.stop_detail or "")
    assert without_remote(remote) == without_remote(local)


def test_batch_with_connect_matches_the_local_batch(server: Server) -> None:
    specs = generated_specs()[:3]
    base = BatchConfig(PolicySpec("teacher"), episodes_per_env=2)
    local = run_batch(specs, base)
    remote = run_batch(specs, BatchConfig(PolicySpec("teacher"), episodes_per_env=2, connect=server.target))
    assert [without_remote(r) for r in remote] == [without_remote(r) for r in local]
    ids = {r.header.policy.settings["remote"]["episode_id"] for r in remote}
    assert len(ids) == len(remote)  # every episode got its own server-side id


def test_cli_run_connect_writes_records_and_summary(server: Server, tmp_path: Path) -> None:
    envs = tmp_path / "envs"
    envs.mkdir()
    for spec in generated_specs()[:2]:
        spec.save(envs / f"{spec.id}.json")
    out = tmp_path / "remote.jsonl"
    res = CliRunner().invoke(app, ["run", str(envs), "-o", str(out), "--connect", server.base, "--admin-token", TOKEN],
                             terminal_width=200)
    assert res.exit_code == 0, res.output
    recs = read_records(out)
    assert len(recs) == 2 and all(r.passed for r in recs) and "100%" in res.output
    # the token may come from the environment instead
    res = CliRunner().invoke(app, ["run", str(envs), "-o", str(out), "--connect", server.base],
                             env={"COWORKENV_ADMIN_TOKEN": TOKEN}, terminal_width=200)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("args,message", [
    (["--connect", "http://127.0.0.1:9/", "--admin-token", TOKEN], "cannot reach the server at http://127.0.0.1:9"),
    (["--connect", "127.0.0.1:8000", "--admin-token", TOKEN], "--connect needs the server's base URL"),
    (["--connect", "http://127.0.0.1:8000/admin", "--admin-token", TOKEN], "without a path"),
    (["--admin-token", TOKEN], "--admin-token only applies with --connect"),
    (["--connect", "http://127.0.0.1:9", "--mcp", "--admin-token", TOKEN], "exclude each other"),
])
def test_cli_connect_errors_are_clear(tmp_path: Path, args: list[str], message: str) -> None:
    spec = generated_specs()[0]
    path = spec.save(tmp_path / "env.json")
    res = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "o.jsonl"), *args],
                             env={"COWORKENV_ADMIN_TOKEN": ""}, terminal_width=300)
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output


def test_cli_connect_without_a_token_or_with_a_wrong_one(server: Server, tmp_path: Path) -> None:
    path = generated_specs()[0].save(tmp_path / "env.json")
    res = CliRunner().invoke(app, ["run", str(path), "--connect", server.base], env={"COWORKENV_ADMIN_TOKEN": ""},
                             terminal_width=300)
    assert res.exit_code == 2 and "needs the server's admin token" in res.output, res.output
    res = CliRunner().invoke(app, ["run", str(path), "--connect", server.base, "--admin-token", "wrong-token-xxxxxxxx"],
                             terminal_width=300)
    assert res.exit_code == 2 and "refused the admin token (403" in res.output, res.output


def test_bad_url_and_bad_token_end_the_episode_with_a_clear_reason(server: Server) -> None:
    spec = generated_specs()[0]
    unreachable = run_episode(spec, make_policy("teacher"), connect=RemoteTarget("http://127.0.0.1:9", TOKEN, 5))
    assert unreachable.final is not None and unreachable.final.stop_reason == "error"
    assert "the remote server failed: cannot reach the server at http://127.0.0.1:9" in (unreachable.final.stop_detail or "")
    assert unreachable.events == [] and unreachable.final.evaluation["passed"] is False
    refused = run_episode(spec, make_policy("teacher"), connect=RemoteTarget(server.base, "wrong-token-xxxxxxxx", 5))
    assert refused.final is not None and refused.final.stop_reason == "error"
    assert "refused the admin token (403" in (refused.final.stop_detail or "")
    with pytest.raises(RemoteError, match="refused the admin token"):
        check_server(RemoteTarget(server.base, "wrong-token-xxxxxxxx", 5))
    assert check_server(server.target) >= 0
    with pytest.raises(ValueError, match="admin token"):
        RemoteTarget(server.base, "")
    assert TOKEN not in repr(server.target)


class KillServer:
    """Teacher-like: one real call, then the server is killed, then another call; records what it saw."""

    name = "kill-server"

    def __init__(self, server: Server, spec: Any) -> None:
        self.server, self.spec, self.turn = server, spec, 0

    def info(self) -> Any:
        return make_policy("noop").info()

    def start(self, ctx: Any) -> None:
        self.turn = 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        self.turn += 1
        if self.turn == 2:
            self.server.proc.kill()
            self.server.proc.wait()
        if self.turn <= 3:
            step = self.spec.reference.calls()[0]
            return AgentTurn(calls=[PolicyCall(step.tool, json.dumps(step.args), f"c{self.turn}")])
        return AgentTurn(content="done")


def test_server_dying_mid_episode_ends_it_with_a_clear_stop_reason(tmp_path: Path) -> None:
    doomed = start_server(tmp_path / "records")
    try:
        spec = generated_specs()[0]
        t0 = time.perf_counter()
        rec = run_episode(spec, KillServer(doomed, spec), connect=RemoteTarget(doomed.base, TOKEN, 10))  # type: ignore[arg-type]
        assert time.perf_counter() - t0 < 30
    finally:
        doomed.stop()
    assert rec.final is not None and rec.final.stop_reason == "error"
    assert (rec.final.stop_detail or "").startswith("the remote server failed:")
    assert rec.final.evaluation["passed"] is False and "evaluation failed" in rec.final.evaluation["error"]
    # what happened before the crash is in the record: the request and the first call with its result
    assert len(rec.steps) == 1 and [e.kind for e in rec.events] == ["message", "call"]
    tool_msgs = [m for m in rec.final.messages if m.role == "tool"]
    assert len(tool_msgs) == 1 and not tool_msgs[0].content.startswith("Error")
    # the server's own record of the episode is intact up to its death
    (seg,) = read_record_file(doomed.record_dir / f"{rec.header.policy.settings['remote']['episode_id']}.jsonl").segments
    assert [e["kind"] for e in seg.events] == ["message", "call"] and seg.final is None


def test_admin_api_for_user_world_and_clock(server: Server) -> None:
    doc = multi_turn_spec().to_document()
    assert server.admin("POST", "/admin/episodes", json={"spec": "/x.json", "spec_document": doc}).status_code == 400
    bad = server.admin("POST", "/admin/episodes", json={"spec_document": {**doc, "services": "files"}})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_environment"
    assert "spec_document" in bad.json()["error"]["message"]
    made = server.admin("POST", "/admin/episodes", json={"spec_document": doc, "episode_id": "admin-talk-1"})
    assert made.status_code == 201 and made.json()["env_hash"] == multi_turn_spec().content_hash()
    p = "/admin/episodes/admin-talk-1"
    assert server.admin("GET", p + "/events", params={"since": "x"}).json()["error"]["code"] == "malformed_query"
    start = server.admin("GET", p + "/events").json()
    assert start["count"] == 0 and start["events"] == [] and start["now"].startswith("2026-02-02T09:00")
    for body in ({"role": "system", "content": "x"}, {"role": "user"}, {"role": "user", "content": 3}):
        assert server.admin("POST", p + "/message", json=body).status_code == 400, body
    said = server.admin("POST", p + "/message", json={"role": "user", "content": "hello"}).json()
    assert said == {"index": 0, "kind": "message", "sim_time": start["now"], "role": "user", "content": "hello"}
    miss = server.admin("POST", p + "/world", json={"changes": [{"op": "delete", "table": "files.files", "key": "/nope"}]})
    assert miss.status_code == 400 and miss.json()["error"]["code"] == "bad_world_change"
    assert miss.json()["error"]["path"] == "changes[0].key"
    assert server.admin("POST", p + "/world", json={"changes": {"op": "put"}}).status_code == 400
    assert server.admin("POST", p + "/world", json={"changes": ["put"]}).json()["error"]["code"] == "bad_world_change"
    put = server.admin("POST", p + "/world", json={"note": "memo", "changes": [
        {"op": "put", "table": "files.files", "record": {"path": "/drafts/memo.md", "content": "memo\n"}}]}).json()
    assert put["kind"] == "world" and put["ok"] is True and put["diff"][0]["key"] == "/drafts/memo.md"
    for seconds in (-1, True, "60", 1e12):
        assert server.admin("POST", p + "/clock", json={"seconds": seconds}).status_code == 400, seconds
    moved = server.admin("POST", p + "/clock", json={"seconds": 3600}).json()
    assert moved["now"].startswith("2026-02-02T10:00")
    after = server.admin("GET", p + "/events", params={"since": 1}).json()
    assert after["count"] == 2 and [e["kind"] for e in after["events"]] == ["world"] and after["now"] == moved["now"]
    assert server.admin("POST", p + "/end", json={"reason": "Max Turns!"}).status_code == 400
    ended = server.admin("POST", p + "/end", json={"reason": "max_turns"})
    assert ended.status_code == 200 and ended.json()["passed"] is False
    (seg,) = read_record_file(server.record_dir / "admin-talk-1.jsonl").segments
    assert seg.final is not None and seg.final["stop_reason"] == "max_turns"
    assert [e["kind"] for e in seg.events] == ["message", "world"]
    assert server.admin("POST", p + "/message", json={"role": "user", "content": "x"}).status_code == 410


WEEK = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml"


def test_a_multi_day_scenario_through_connect_gives_the_local_record(server: Server) -> None:
    from synth import load_spec

    prepared = PreparedSpec(load_spec(WEEK))
    local = run_episode(prepared, make_policy("teacher"), seed=2)
    remote = run_episode(prepared, make_policy("teacher"), seed=2, connect=server.target)
    assert remote.final is not None and remote.final.stop_reason == "answered", remote.final
    assert without_remote(remote) == without_remote(local)
    assert [e.args["stage"] for e in remote.events if e.kind == "stage"] == ["mon", "tue"]
    stages = remote.final.evaluation["stages"]
    assert stages == local.final.evaluation["stages"]
    assert [(s["id"], s["passed"], s["score"]) for s in stages] == [("mon", True, 1.0), ("tue", True, 1.0),
                                                                     ("wed", True, 1.0)]
    where = remote.header.policy.settings["remote"]
    (seg,) = read_record_file(server.record_dir / f"{where['episode_id']}.jsonl").segments
    assert [(e["index"], e["kind"], e.get("args")) for e in seg.events if e["kind"] == "stage"] == \
        [(e.index, e.kind, e.args) for e in remote.events if e.kind == "stage"]
    assert seg.final is not None and seg.final["evaluation"] == remote.final.evaluation


def test_admin_stage_closes_a_day_and_refuses_bad_ones(server: Server) -> None:
    from synth import load_spec

    doc = load_spec(WEEK).to_document()
    made = server.admin("POST", "/admin/episodes", json={"spec_document": doc, "episode_id": "admin-days-1"})
    assert made.status_code == 201
    p = "/admin/episodes/admin-days-1"
    for body in ({}, {"stage": ""}, {"stage": 3}, {"stage": "mon", "extra": 1}):
        refused = server.admin("POST", p + "/stage", json=body)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "malformed_body", body
    unknown = server.admin("POST", p + "/stage", json={"stage": "fri"})
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "bad_stage"
    assert "no stage 'fri' (stages: mon, tue, wed)" in unknown.json()["error"]["message"]
    closed = server.admin("POST", p + "/stage", json={"stage": "mon"})
    assert closed.status_code == 200 and closed.json()["kind"] == "stage" and closed.json()["args"] == {"stage": "mon"}
    again = server.admin("POST", p + "/stage", json={"stage": "mon"})
    assert again.status_code == 400 and "already closed" in again.json()["error"]["message"]
    evaluation = server.admin("POST", p + "/evaluate", json={}).json()
    assert [s["id"] for s in evaluation["stages"]] == ["mon", "tue", "wed"]
    ended = server.admin("POST", p + "/end", json={"reason": "max_turns"}).json()
    assert [(s["id"], s["reached"]) for s in ended["stages"]] == [("mon", True), ("tue", True), ("wed", False)]
    (seg,) = read_record_file(server.record_dir / "admin-days-1.jsonl").segments
    assert [e["kind"] for e in seg.events] == ["stage"]
    plain = server.admin("POST", "/admin/episodes", json={"spec_document": multi_turn_spec().to_document()}).json()
    one_day = server.admin("POST", f"/admin/episodes/{plain['episode_id']}/stage", json={"stage": "mon"})
    assert one_day.status_code == 400 and "has no stages" in one_day.json()["error"]["message"]
    assert server.admin("POST", p + "/stage", json={"stage": "tue"}).status_code == 410


def test_the_step_sync_is_events_plus_evaluate_and_the_old_sync_gives_the_same_records(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = multi_turn_spec().to_document()
    made = server.admin("POST", "/admin/episodes", json={"spec_document": doc, "episode_id": "step-sync-1"})
    assert made.status_code == 201 and made.json()["start"] == server.admin(
        "GET", "/admin/episodes/step-sync-1/events").json()  # the create's answer carries the start
    p = "/admin/episodes/step-sync-1"
    server.admin("POST", p + "/message", json={"role": "user", "content": "hello"})
    for since in (0, 1):
        step = server.admin("POST", p + "/step", json={"since": since, "final_answer": "done"}).json()
        evaluation = step.pop("evaluation")
        assert step == server.admin("GET", p + "/events", params={"since": str(since)}).json()
        assert evaluation == server.admin("POST", p + "/evaluate", json={"final_answer": "done"}).json()
    for body in ({"since": -1}, {"since": "1"}, {"since": True}, {"final_answer": 3}, {"events": 1}):
        r = server.admin("POST", p + "/step", json=body)
        assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_body", body
    assert server.admin("POST", p + "/end", json={}).status_code == 200
    assert server.admin("POST", p + "/step", json={}).status_code == 410
    prepared = PreparedSpec(multi_turn_spec())
    stepped = run_episode(prepared, make_policy("teacher"), seed=5, connect=server.target)
    monkeypatch.setenv("COWORKENV_REMOTE_STEP_SYNC", "0")  # GET events and POST evaluate apart, as before
    apart = run_episode(prepared, make_policy("teacher"), seed=5, connect=server.target)
    assert stepped.passed and without_remote(stepped) == without_remote(apart)


def test_a_message_asked_for_the_steps_sync_brings_it(server: Server) -> None:
    doc = multi_turn_spec().to_document()
    assert server.admin("POST", "/admin/episodes", json={"spec_document": doc, "episode_id": "msg-sync-1"}).status_code == 201
    p = "/admin/episodes/msg-sync-1"
    both = server.admin("POST", p + "/message", json={"role": "user", "content": "hi", "step_since": 0}).json()
    assert both["event"]["content"] == "hi" and both["step"]["count"] == 1 and both["step"]["events"] == [both["event"]]
    assert both["step"]["evaluation"] == server.admin("POST", p + "/evaluate", json={}).json()
    assert server.admin("POST", p + "/message", json={"role": "user", "content": "x", "step_since": -2}).status_code == 400
    assert server.admin("POST", p + "/end", json={}).status_code == 200
