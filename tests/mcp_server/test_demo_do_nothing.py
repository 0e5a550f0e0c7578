"""The built-in demo that docs/mcp.md tells you to try scores a do-nothing episode exactly zero over HTTP, as
docs/spec.md's rule says (its two guards held on the untouched start state and scored 0.67), and the reference
solution one; a Python environment grades its guards as a spec does."""

from __future__ import annotations

from mcp_server.demo import environment
from support import HttpServer, connection_fixture, http_server_fixture
from trainers.episodes.harness_client import EpisodeClient, ServerConnection

TOKEN = "demo-do-nothing-token-0123456789"
server = http_server_fixture(TOKEN)
conn = connection_fixture(TOKEN)


def test_a_do_nothing_episode_scores_zero_and_the_reference_one(server: HttpServer, conn: ServerConnection) -> None:
    for finish, want in (("nothing", 0.0), ("reference", 1.0)):
        ep = server.admin("POST", "/admin/episodes", json={"episode_id": f"demo-{finish}"}).json()
        if finish == "reference":
            client = EpisodeClient(conn, ep["mcp_path"], ep["env_hash"])  # over MCP, as an agent acts
            for step in environment().solution:
                assert not client.call_tool(step["tool"], step["args"]).get("isError")
        ended = server.admin("POST", f"/admin/episodes/{ep['episode_id']}/end", json={}).json()
        assert ended["score"] == want, ended
        assert ended["passed"] is (want == 1.0)
        if finish == "nothing":
            guards = [r for r in ended["results"] if "not credited" in str(r.get("observed"))]
            assert len(guards) == 2, ended["results"]  # the archive and only-/reports guards, withdrawn
