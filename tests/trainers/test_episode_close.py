"""Live workspace resources (a sandbox container, here a probe) are released when an episode ends: by the
MCP episode on end, reset and server shutdown, and by the headless runner whatever way the episode stops."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from episode_helpers import generated_specs

from mcp_server.demo import environment
from mcp_server.episode import Episode
from mcp_server.hub import EpisodeHub
from trainers.episodes.policies import make_policy
from trainers.episodes.prepared import EpisodeLimits, PreparedSpec
from trainers.episodes.runner import run_episode
from trainers.episodes.turns import AgentTurn


class Probe:
    """A stand-in for a sandbox container: counts how often it is released."""

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def attach(workspace: Any) -> Probe:
    """Register a probe the way a tool does (`ctx.resources.get(name, factory)`)."""
    return workspace.resources.get("probe", Probe)


def test_ending_an_episode_releases_its_resources_once(tmp_path: Any) -> None:
    ep = Episode(environment(), "close-1", record_dir=tmp_path)
    probe = attach(ep.workspace)
    assert not ep.call("list_directory", {"path": "/"}).is_error
    assert probe.closed == 0
    ep.end("done")
    assert probe.closed == 1
    ep.end("again")  # ending twice releases nothing twice
    assert probe.closed == 1


def test_reset_releases_the_old_workspace_and_restore_keeps_the_live_one(tmp_path: Any) -> None:
    ep = Episode(environment(), "close-2", record_dir=tmp_path)
    old = attach(ep.workspace)
    snap = ep.snapshot()
    ep.restore(snap)  # same workspace, same state handle: its container stays
    assert old.closed == 0 and ep.workspace.resources.peek("probe") is old
    ep.reset()
    assert old.closed == 1
    assert ep.workspace.resources.peek("probe") is None  # the fresh workspace starts without one
    new = attach(ep.workspace)
    ep.end()
    assert new.closed == 1 and old.closed == 1


def test_a_fork_owns_its_resources(tmp_path: Any) -> None:
    ep = Episode(environment(), "close-3", record_dir=tmp_path)
    mine = attach(ep.workspace)
    child = ep.fork("close-3b")
    theirs = attach(child.workspace)
    assert theirs is not mine
    child.end()
    assert (theirs.closed, mine.closed) == (1, 0)
    ep.end()
    assert mine.closed == 1


def test_the_http_hub_releases_resources_on_end_and_on_shutdown(tmp_path: Any) -> None:
    probes: dict[str, Probe] = {}

    async def main() -> None:
        hub = EpisodeHub(environment(), None, tmp_path)
        async with hub.run():
            for eid in ("h-1", "h-2", "h-3"):
                live = await hub.create(None, eid)
                probes[eid] = attach(live.episode.workspace)
            await hub.end("h-1", "done")
            assert probes["h-1"].closed == 1 and probes["h-2"].closed == 0
        # leaving the hub (server shutdown) ends every live episode

    anyio.run(main)
    assert {eid: p.closed for eid, p in probes.items()} == {"h-1": 1, "h-2": 1, "h-3": 1}


class _Probed:
    """Patches PreparedSpec.workspace so every episode's workspace carries a probe, and remembers them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.probes: list[Probe] = []
        original = PreparedSpec.workspace

        def workspace(prepared: PreparedSpec) -> Any:
            ws = original(prepared)
            self.probes.append(attach(ws))
            return ws

        monkeypatch.setattr(PreparedSpec, "workspace", workspace)


class Raising:
    """A policy that fails on its first turn."""

    name = "raising"

    def info(self) -> Any:
        return make_policy("noop").info()

    def start(self, ctx: Any) -> None:
        pass

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        raise RuntimeError("boom")


@pytest.mark.parametrize("transport", ["direct", "mcp"])
def test_the_runner_releases_the_workspace_however_the_episode_stops(monkeypatch: pytest.MonkeyPatch,
                                                                     transport: str) -> None:
    probed = _Probed(monkeypatch)
    spec = generated_specs()[0]
    stops = [
        run_episode(spec, make_policy("teacher"), transport=transport).final.stop_reason,  # type: ignore[arg-type,union-attr]
        run_episode(spec, make_policy("teacher"), transport=transport,  # type: ignore[arg-type]
                    limits=EpisodeLimits(max_tool_calls=1)).final.stop_reason,  # type: ignore[union-attr]
        run_episode(spec, Raising(), transport=transport).final.stop_reason,  # type: ignore[arg-type,union-attr]
    ]
    assert stops == ["answered", "max_tool_calls", "policy_error"]
    assert [p.closed for p in probed.probes] == [1, 1, 1]


def test_the_runner_releases_the_workspace_when_something_unexpected_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    probed = _Probed(monkeypatch)

    class Broken(Raising):
        def start(self, ctx: Any) -> None:
            raise KeyboardInterrupt  # not an error the runner turns into a stop reason

    with pytest.raises(KeyboardInterrupt):
        run_episode(generated_specs()[0], Broken())  # type: ignore[arg-type]
    assert [p.closed for p in probed.probes] == [1]
