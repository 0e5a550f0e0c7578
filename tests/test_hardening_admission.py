"""Server-wide admission: slow calls beyond the bound answer a retryable `busy` at once; cheap calls of
other episodes are not held up by slow ones."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcp_server import admission
from mcp_server.demo import environment
from mcp_server.episode import Episode
from mcp_server.http import build_app
from mcp_server.hub import EpisodeHub
from test_hardening_input import AUTH, ENVELOPE, HEADERS, TOKEN


def request(rid: int, name: str, path: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": {"path": path}, "_meta": ENVELOPE}}).encode()


def test_slow_calls_past_the_bound_are_busy_and_cheap_calls_keep_their_latency(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real_call = Episode.call

    def call(self: Episode, name: str, arguments: Any) -> Any:
        if arguments.get("path") == "/slow":
            assert release.wait(30)
        return real_call(self, name, arguments)

    monkeypatch.setattr(Episode, "call", call)
    # 45 slow episodes against a bound of 3 (and the default pool of 40 threads they used to fill)
    monkeypatch.setattr(admission, "_SHARED", admission.Admission(3, frozenset({"read_text_file"})))

    async def main() -> None:
        hub = EpisodeHub(environment(), None, tmp_path)
        async with hub.run():
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=build_app(hub, TOKEN)),
                                          base_url="http://127.0.0.1:1", timeout=60) as c:
                ids = []
                for _ in range(46):
                    ids.append((await c.post("/admin/episodes", json={}, headers=AUTH)).json()["episode_id"])
                answers: list[str] = []

                async def slow(eid: str) -> None:
                    r = await c.post(f"/episodes/{eid}/mcp", content=request(1, "read_text_file", "/slow"),
                                     headers=HEADERS)
                    answers.append(r.text)

                async with anyio.create_task_group() as tg:
                    for eid in ids[1:]:
                        tg.start_soon(slow, eid)
                    with anyio.fail_after(10):
                        while len(answers) < 42:  # all but the three admitted are answered busy at once
                            await anyio.sleep(0.01)
                    assert all("Error (busy)" in a and '"retryable":true' in a for a in answers), answers[0]
                    assert admission.shared().running_slow == 3
                    t = time.perf_counter()
                    r = await c.post(f"/episodes/{ids[0]}/mcp", content=request(2, "list_directory", "/reports"),
                                     headers={**HEADERS, "mcp-name": "list_directory"})
                    assert r.status_code == 200 and r.json()["result"]["isError"] is False
                    fast_s = time.perf_counter() - t
                    release.set()
                    assert fast_s < 2.0  # not behind the slow calls
                assert sum("Error (busy)" in a for a in answers) == 42

    anyio.run(main)


def test_the_bound_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(admission.MAX_SLOW_ENV, "16")
    assert admission.max_slow_from_env() == 16
    monkeypatch.setenv(admission.MAX_SLOW_ENV, "zero")
    with pytest.raises(ValueError, match="COWORKENV_MAX_SLOW_CALLS must be a whole number"):
        admission.max_slow_from_env()
