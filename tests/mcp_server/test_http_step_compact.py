"""Compact step judgements: a harness's per-step sync may ask for the verdicts without the descriptions."""

from __future__ import annotations

from typing import Any

import pytest

from support import HttpServer, connection_fixture, http_server_fixture
from synth.procedural import generate
from trainers.episodes.harness_client import EpisodeClient, ServerConnection
from trainers.episodes.remote import RemoteError, RemoteEvaluation, RemoteWorkspace

TOKEN = "compact-admin-token-0123456789"


server = http_server_fixture(TOKEN)
conn = connection_fixture(TOKEN)


def _same_verdicts(compact: dict[str, Any], full: dict[str, Any]) -> None:
    assert compact["compact"] is True and "compact" not in full
    assert compact["passed"] == full["passed"] and compact["score"] == full["score"]
    assert compact["results"] == [{"passed": r["passed"], "weight": r["weight"]} for r in full["results"]]
    assert compact.get("stages") == full.get("stages")
    assert set(compact) <= {"passed", "score", "results", "compact", "stages"}
    full_doc, compact_doc = RemoteEvaluation(full), RemoteEvaluation(compact)
    assert compact_doc.score == full_doc.score and compact_doc.vector() == full_doc.vector()


@pytest.mark.parametrize("staged", [False, True])
def test_every_step_sync_gives_the_same_verdicts_compact(conn: ServerConnection, staged: bool) -> None:
    ep = conn.create(spec_document=generate("file_management", 2).to_document()) if staged else conn.create()
    eid = ep["episode_id"]
    client = EpisodeClient(conn, ep["mcp_path"], ep["env_hash"])
    tool = "list_directory"
    full = client.call_tool(tool, {"path": "/"}, step_since=0)["_meta"]["coworkenv/step"]
    small = client.call_tool(tool, {"path": "/"}, step_since=0, compact=True)["_meta"]["coworkenv/step"]
    assert small["count"] == full["count"] + 1 and small["events"][:-1] == full["events"]
    _same_verdicts(small["evaluation"], full["evaluation"])
    step_full = conn.admin_json("POST", f"/admin/episodes/{eid}/step", {"since": 1})
    step_small = conn.admin_json("POST", f"/admin/episodes/{eid}/step", {"since": 1, "compact": True})
    assert step_small["events"] == step_full["events"]
    _same_verdicts(step_small["evaluation"], step_full["evaluation"])
    said = conn.admin_json("POST", f"/admin/episodes/{eid}/message",
                           {"role": "user", "content": "go on", "step_since": 2, "step_compact": True})
    _same_verdicts(said["step"]["evaluation"], conn.admin_json("POST", f"/admin/episodes/{eid}/evaluate", {}))
    assert len(str(small["evaluation"])) < len(str(full["evaluation"]))
    conn.end(eid)


@pytest.mark.parametrize("path,body,field", [
    ("step", {"compact": "yes"}, "compact"),
    ("message", {"role": "user", "content": "x", "step_since": 0, "step_compact": 1}, "step_compact"),
])
def test_a_bad_compact_flag_is_refused_by_name(server: HttpServer, conn: ServerConnection, path: str,
                                               body: dict[str, Any], field: str) -> None:
    eid = conn.create()["episode_id"]
    r = server.admin("POST", f"/admin/episodes/{eid}/{path}", json=body)
    assert r.status_code == 400 and f"field {field} must be bool" in r.json()["error"]["message"], r.text
    conn.end(eid)


def test_a_compact_judgement_never_stands_in_for_the_full_evaluation() -> None:
    compact = RemoteEvaluation({"passed": True, "score": 1.0, "results": [{"passed": True, "weight": 1.0}],
                                "compact": True})
    assert compact.vector() == [True] and compact.score == 1.0
    with pytest.raises(RemoteError, match="compact"):
        compact.to_json()


def test_a_message_sync_may_be_judged_with_a_final_answer(server: HttpServer, conn: ServerConnection) -> None:
    eid = conn.create()["episode_id"]
    said = conn.admin_json("POST", f"/admin/episodes/{eid}/message",
                           {"role": "assistant", "content": "Total: 1234", "step_since": 0,
                            "step_final_answer": "Total: 1234"})
    assert said["step"]["evaluation"] == conn.admin_json("POST", f"/admin/episodes/{eid}/evaluate",
                                                         {"final_answer": "Total: 1234"})
    bad = server.admin("POST", f"/admin/episodes/{eid}/message",
                       json={"role": "assistant", "content": "x", "step_since": 0, "step_final_answer": 5})
    assert bad.status_code == 400 and "field step_final_answer must be str" in bad.json()["error"]["message"]
    conn.end(eid)


def test_run_connect_asks_no_separate_judgement_of_its_final_answer(server: HttpServer, monkeypatch: Any) -> None:
    from trainers.episodes import harness_client
    from trainers.episodes.policies import TeacherPolicy
    from trainers.episodes.remote import RemoteTarget, close_pools
    from trainers.episodes.prepared import PreparedSpec
    from trainers.episodes.runner import run_episode

    sent: list[str] = []
    admin = harness_client.ServerConnection.admin

    def counting(self: Any, method: str, path: str, *a: Any, **kw: Any) -> Any:
        sent.append(path.rsplit("/", 1)[-1])
        return admin(self, method, path, *a, **kw)

    monkeypatch.setattr(harness_client.ServerConnection, "admin", counting)
    spec = PreparedSpec(generate("file_management", 1))
    local = run_episode(spec, TeacherPolicy(), seed=1)
    remote = run_episode(spec, TeacherPolicy(), seed=1, connect=RemoteTarget(server.base, TOKEN, client="lean"))
    close_pools()
    assert remote.final is not None and remote.final.stop_reason == local.final.stop_reason == "answered"
    assert [s.predicates for s in remote.steps] == [s.predicates for s in local.steps]
    assert remote.final.evaluation == local.final.evaluation
    assert "evaluate" not in sent and sent.count("end") == 1


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_a_message_reaches_a_server_from_before_message_step_syncs(role: str) -> None:
    # such a server refuses step_since, step_compact and step_final_answer together (its check_fields 400): the
    # message goes again without any of them, and the workspace syncs the older way
    sent: list[dict[str, Any]] = []
    allowed = {"role", "content"}

    class OlderAdmin:
        def request(self, method: str, path: str, body: Any = None, params: Any = None) -> dict[str, Any]:
            sent.append(dict(body or {}))
            unknown = sorted(set(body) - allowed)
            if unknown:
                raise RemoteError(f"{method} {path} failed with HTTP 400 (malformed_body): unknown field(s) "
                                  f"{', '.join(unknown)}; allowed: content, role")
            return {"index": 0, "kind": "message", "sim_time": "2026-01-01T00:00:00", "role": role,
                    "content": body["content"]}

    start = {"events": [], "now": "2026-01-01T00:00:00", "content_hash": "h", "count": 0,
             "evaluation": {"passed": False, "score": 0.0, "results": []}}
    ws = RemoteWorkspace(OlderAdmin(), "e1", start)  # type: ignore[arg-type]
    event = ws.add_message(role, "hello")
    assert "step_since" in sent[0] and sent[-1] == {"role": role, "content": "hello"} and len(sent) == 2
    assert event.doc["content"] == "hello"
