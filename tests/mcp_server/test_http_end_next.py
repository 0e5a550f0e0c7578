"""End-and-next: `POST /admin/episodes/{id}/end` with `next` ends an episode and creates the next in one request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workspace_sim.record import read_record_file
from support import HttpServer, connection_fixture, http_server_fixture
from synth.procedural import generate
from trainers.episodes.harness_client import EpisodeClient, HarnessError, ServerConnection

TOKEN = "end-next-admin-token-0123456789"
READ = {"path": "/reports/q1.csv"}


server = http_server_fixture(TOKEN)
conn = connection_fixture(TOKEN)


def test_an_episode_loop_is_calls_plus_one_request_each(server: HttpServer, conn: ServerConnection) -> None:
    ep = conn.create(episode_id="loop-0")
    seen = []
    for i in range(1, 4):
        result = EpisodeClient(conn, ep["mcp_path"], ep["env_hash"]).call_tool("read_text_file", READ)
        assert "north,400" in result["content"][0]["text"]
        ended = conn.end(ep["episode_id"], "Done.", "answered", next={"episode_id": f"loop-{i}"})
        assert {"passed", "score", "results"} <= set(ended)  # the evaluation, as a plain end answers it
        nxt = ended["next"]
        assert nxt["episode_id"] == f"loop-{i}" and nxt["mcp_path"] == f"/episodes/loop-{i}/mcp"
        assert nxt["env_hash"] == ep["env_hash"] and nxt["start"]["count"] == 0  # what a create answers
        assert set(nxt) == set(ep)
        seen.append(ep["episode_id"])
        ep = nxt
    assert server.admin("GET", "/admin/episodes/loop-0").status_code == 410
    assert server.admin("GET", "/admin/episodes/loop-3").status_code == 200
    for eid in seen:  # each ended episode is recorded and finished, with its one call
        (seg,) = read_record_file(server.record_dir / f"{eid}.jsonl").segments
        assert seg.final is not None and seg.final["stop_reason"] == "answered"
        assert [e["tool"] for e in seg.calls] == ["read_text_file"]
    plain = conn.end("loop-3")
    assert "next" not in plain and {"passed", "score"} <= set(plain)  # without next: the end as before


def test_next_without_a_spec_keeps_the_ended_episodes_environment(server: HttpServer, conn: ServerConnection) -> None:
    doc = generate("file_management", 3).to_document()
    inline = conn.create(spec_document=doc)
    default = conn.create()
    assert inline["env_hash"] != default["env_hash"]
    same = conn.end(inline["episode_id"], next={})["next"]
    assert same["env_hash"] == inline["env_hash"] and same["env_id"] == inline["env_id"]
    other = conn.end(same["episode_id"], next={"spec_document": generate("file_management", 4).to_document()})
    assert other["next"]["env_hash"] not in (inline["env_hash"], default["env_hash"])
    control = conn.end(default["episode_id"], next={"mcp_only": True})["next"]
    assert control["mcp_only"] is True and control["env_hash"] == default["env_hash"]
    conn.end(other["next"]["episode_id"])
    conn.end(control["episode_id"])


@pytest.mark.parametrize("nxt,status,code,names", [
    ({"spek": "x"}, 400, "malformed_body", "next.spek"),
    ({"mcp_only": "yes"}, 400, "malformed_body", "next.mcp_only"),
    ({"episode_id": 7}, 400, "malformed_body", "next.episode_id"),
    ({"episode_id": "../etc"}, 400, "invalid_episode_id", "next.episode_id"),
    ({"spec": "a.yaml", "spec_document": {}}, 400, "malformed_body", "next.spec"),
    ({"spec_document": {"id": 5}}, 400, "bad_environment", "spec_document"),
    ({"reveal_score": True}, 400, "malformed_body", "reveal_score"),
    ({"spec": "/etc/passwd"}, 403, "spec_outside_roots", "--spec-root"),
    ({"episode_id": "taken-1"}, 409, "episode_exists", "taken-1"),
])
def test_a_bad_next_is_refused_before_the_episode_ends(server: HttpServer, conn: ServerConnection, nxt: dict[str, Any],
                                                       status: int, code: str, names: str) -> None:
    if nxt.get("episode_id") == "taken-1" and server.admin("GET", "/admin/episodes/taken-1").status_code != 200:
        conn.create(episode_id="taken-1")
    ep = conn.create()
    r = server.admin("POST", f"/admin/episodes/{ep['episode_id']}/end", json={"next": nxt})
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] == code and names in err["message"], err
    assert server.admin("GET", f"/admin/episodes/{ep['episode_id']}").status_code == 200  # still live
    with pytest.raises(HarnessError) as e:
        conn.end(ep["episode_id"], next=nxt)
    assert e.value.status == status and e.value.code == code
    conn.end(ep["episode_id"])


def test_next_must_be_an_object(server: HttpServer, conn: ServerConnection) -> None:
    ep = conn.create()
    r = server.admin("POST", f"/admin/episodes/{ep['episode_id']}/end", json={"next": [1]})
    assert r.status_code == 400 and "field next must be dict" in r.json()["error"]["message"]
    conn.end(ep["episode_id"])


def test_starlettes_test_client_drives_the_admin_api(tmp_path: Path) -> None:
    # its scope["server"] is a list, as ASGI allows (a tuple from uvicorn): the base URL's cache key takes both
    from starlette.testclient import TestClient

    from mcp_server.demo import environment
    from mcp_server.http import build_app
    from mcp_server.hub import EpisodeHub

    hub = EpisodeHub(environment(), None, tmp_path)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(build_app(hub, TOKEN)) as c:
        made = c.post("/admin/episodes", json={"episode_id": "tc"}, headers=auth)
        assert made.status_code == 201 and made.json()["mcp_url"].startswith("http://testserver"), made.text
        assert c.get("/admin/episodes", headers=auth).status_code == 200
        assert c.get("/admin/episodes/tc", headers=auth).status_code == 200
        ended = c.post("/admin/episodes/tc/end", json={"next": {}}, headers=auth)
        assert ended.status_code == 200 and "passed" in ended.json() and ended.json()["next"]["episode_id"]
        assert list(hub.live) == [ended.json()["next"]["episode_id"]]


def test_a_next_episode_that_cannot_open_its_record_still_answers_the_evaluation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import anyio
    import httpx2

    from workspace_sim.record import writer as recording
    from mcp_server.demo import environment
    from mcp_server.http import build_app
    from mcp_server.hub import EpisodeHub

    real = recording.RecordWriter._open

    def refuse(self: Any) -> Any:
        if self.path.stem == "next1":
            raise PermissionError(13, "Permission denied (simulated)")
        return real(self)

    monkeypatch.setattr(recording.RecordWriter, "_open", refuse)
    auth = {"Authorization": f"Bearer {TOKEN}"}

    async def main() -> None:
        hub = EpisodeHub(environment(), None, tmp_path)
        async with hub.run():
            app = httpx2.ASGITransport(app=build_app(hub, TOKEN))
            async with httpx2.AsyncClient(transport=app, base_url="http://127.0.0.1:9") as http:
                await http.post("/admin/episodes", json={"episode_id": "first"}, headers=auth)
                r = await http.post("/admin/episodes/first/end", headers=auth,
                                    json={"final_answer": "Total: 1234", "next": {"episode_id": "next1"}})
                err = r.json()["error"]
                assert r.status_code == 500 and err["code"] == "next_not_created" and "PermissionError" in err["message"]
                assert "score" in err["evaluation"]  # the ended episode's evaluation reaches the client
                assert (await http.get("/admin/episodes/first", headers=auth)).status_code == 410
                assert list(hub.live) == []
        assert read_record_file(tmp_path / "first.jsonl").segments[-1].final is not None

    anyio.run(main)
