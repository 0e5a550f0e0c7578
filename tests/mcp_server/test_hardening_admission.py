"""Server-wide admission: slow calls beyond the bound answer a retryable, paced `busy` at once; cheap calls of
other episodes never wait behind slow ones; simultaneous sandbox calls start one spare, not one each."""

from __future__ import annotations

import json
import random
import statistics
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_server import admission
from mcp_server.demo import environment
from mcp_server.episode import Episode
from mcp_server.http import build_app
from mcp_server.hub import EpisodeHub
from test_hardening_input import AUTH, ENVELOPE, HEADERS, TOKEN
from workspace_sim.sandboxes import python_sandbox


def request(rid: int, name: str, path: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": {"path": path}, "_meta": ENVELOPE}}).encode()


def test_slow_calls_past_the_bound_are_busy_and_cheap_calls_are_answered_while_every_slot_is_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real_call = Episode.call

    def call(self: Episode, name: str, arguments: Any) -> Any:
        if arguments.get("path") == "/slow":
            assert release.wait(60)
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
                    with anyio.fail_after(30):
                        while len(answers) < 42:  # all but the three admitted are answered busy at once
                            await anyio.sleep(0.01)
                    assert all("Error (busy)" in a and '"retryable":true' in a for a in answers), answers[0]
                    delays = [json.loads(a)["result"]["structuredContent"]["error"]["retry_after_s"] for a in answers]
                    assert all(admission.RETRY_MIN_S * (1 - admission.JITTER) <= d <= 42 / admission.RETRY_RATE
                               * (1 + admission.JITTER) for d in delays)
                    assert len(set(delays)) > 10  # jittered: the waiting episodes do not come back in step
                    assert admission.shared().running_slow == 3 and admission.shared().waiting == 42
                    # every slow slot (and its thread) is held and stays held until `release`: a cheap call that
                    # queued behind slow work would never be answered here
                    cheap = {**HEADERS, "mcp-name": "list_directory"}
                    for i in range(5):
                        with anyio.fail_after(30):
                            r = await c.post(f"/episodes/{ids[0]}/mcp", headers=cheap,
                                             content=request(2 + i, "list_directory", "/reports"))
                        assert r.status_code == 200 and r.json()["result"]["isError"] is False
                    assert admission.shared().running_slow == 3 and not release.is_set()
                    release.set()
                assert sum("Error (busy)" in a for a in answers) == 42
                assert admission.shared().running_slow == 0

    anyio.run(main)


def test_a_busy_episode_that_is_admitted_stops_counting_as_waiting() -> None:
    async def main() -> None:
        adm = admission.Admission(1, frozenset({"slow"}), rng=random.Random(1))
        gate = threading.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: adm.run("slow", gate.wait, 30, waiter="a"))
            await anyio.sleep(0.1)
            for waiter in ("b", "c", "b"):  # b asks twice: one waiter
                with pytest.raises(admission.Busy) as busy:
                    await adm.run("slow", lambda: None, waiter=waiter)
                assert f"retry in {busy.value.retry_after_s:g} s" in str(busy.value)
            assert adm.waiting == 2
            assert await adm.run("cheap", lambda: "cheap ran", waiter="c") == "cheap ran"  # never waits for a slot
            gate.set()
        assert await adm.run("slow", lambda: "ran", waiter="b") == "ran"
        assert adm.waiting == 1  # c still has its retry due

    anyio.run(main)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 600), st.integers(0, 2**32 - 1), st.floats(1.0, 100.0))
def test_busy_delays_keep_the_invited_retry_rate_whatever_the_number_waiting(n: int, seed: int, rate: float) -> None:
    adm = admission.Admission(1, rng=random.Random(seed), retry_rate=rate)
    delays = [adm.retry_after(i) for i in range(n)]
    for i, d in enumerate(delays):
        paced = min(admission.RETRY_MAX_S, max(admission.RETRY_MIN_S, (i + 1) / rate))
        assert paced * (1 - admission.JITTER) - 0.01 <= d <= paced * (1 + admission.JITTER) + 0.01
    assert adm.waiting == n
    # once everyone has been told, they come back at about `rate` a second (never faster than 1/RETRY_MIN_S each)
    again = [adm.retry_after(i) for i in range(n)]
    invited = sum(1 / d for d in again)
    expected = min(n / admission.RETRY_MIN_S, max(rate, n / admission.RETRY_MAX_S))
    assert invited >= expected * (1 - admission.JITTER) - 0.5
    assert statistics.mean(again) <= min(admission.RETRY_MAX_S, max(admission.RETRY_MIN_S, n / rate)) * 1.5 + 0.01


def _until(condition: Any, timeout_s: float = 10.0) -> bool:
    done = threading.Event()
    for _ in range(int(timeout_s / 0.01)):
        if condition():
            return True
        done.wait(0.01)
    return bool(condition())


def test_sandbox_calls_taking_spares_at_once_start_one_replacement(monkeypatch: pytest.MonkeyPatch) -> None:
    gate, refills, lock = threading.Event(), [], threading.Lock()
    main_thread = threading.current_thread()

    def fake_start(*key: Any) -> Any:
        if threading.current_thread() is not main_thread:  # a background replacement: held until the gate opens
            with lock:
                refills.append(key)
            assert gate.wait(30)
        return SimpleNamespace(proc=SimpleNamespace(poll=lambda: None), discard=lambda: None)

    monkeypatch.setattr(python_sandbox, "_start", fake_start)
    spares = python_sandbox._Spares()
    key: Any = ("layout", 1, None, 512, 256, 8)
    boxes = [spares.take(key) for _ in range(8)]  # eight sandbox calls while the replacement is still starting
    assert _until(lambda: refills) and not _until(lambda: len(refills) > 1, 0.2)
    assert len(boxes) == 8 and len(refills) == 1  # was eight, seven of them stopped again right away
    gate.set()
    assert _until(lambda: key in spares._ready)
    ready = spares._ready[key]
    assert spares.take(key) is ready  # the replacement serves the next call, which starts the next one
    assert _until(lambda: len(refills) == 2)
    spares.close()


def test_the_bound_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(admission.MAX_SLOW_ENV, "16")
    assert admission.max_slow_from_env() == 16
    monkeypatch.setenv(admission.MAX_SLOW_ENV, "zero")
    with pytest.raises(ValueError, match="COWORKENV_MAX_SLOW_CALLS must be a whole number"):
        admission.max_slow_from_env()


def test_inline_tools_are_registered_point_reads_without_a_sandbox() -> None:
    from workspace_sim import all_tools

    tools = dict(all_tools())
    for name in admission.INLINE_TOOLS:
        assert name in tools, f"{name} is not a registered tool"
        assert tools[name].hints.read_only, f"{name} is not read-only"
        assert name not in admission.SLOW_TOOLS and tools[name].service not in ("python", "shell")


def test_point_reads_run_on_the_loop_and_everything_else_on_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    def where() -> int:
        return threading.get_ident()

    async def main(adm: admission.Admission) -> dict[str, bool]:
        loop = threading.get_ident()
        return {name: await adm.run(name, where) == loop for name in ("read_text_file", "search_files", "slow")}

    monkeypatch.delenv(admission.INLINE_ENV, raising=False)
    assert anyio.run(main, admission.Admission(2)) == {"read_text_file": True, "search_files": False, "slow": False}
    # a slow tool is never inline, even when it is also a point read
    assert anyio.run(main, admission.Admission(2, frozenset({"read_text_file"})))["read_text_file"] is False
    monkeypatch.setenv(admission.INLINE_ENV, "0")
    assert not any(anyio.run(main, admission.Admission(2)).values())
    monkeypatch.setenv(admission.INLINE_ENV, "yes")
    with pytest.raises(ValueError, match="COWORKENV_INLINE_READS must be 0 or 1, got 'yes'"):
        admission.inline_tools_from_env()
