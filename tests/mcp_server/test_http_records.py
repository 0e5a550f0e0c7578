"""Records written after the answers (`recording.DeferredRecords`): the same bytes, in order, nothing lost."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workspace_sim.record import DeferredRecords, RecordReadError, RecordWriter, read_record_file
from support import start_http_server
from trainers.episodes.harness_client import EpisodeClient, ServerConnection

TOKEN = "records-admin-token-0123456789"

TOOLS = [{"type": "function", "function": {"name": f"tool_{i}", "description": "d" * 40, "parameters": {}}}
         for i in range(3)]
texts = st.one_of(st.text(max_size=30), st.sampled_from(["x" * 5000, 'a "quoted" ' * 500, "$blob", "\u00e9\u4e2d"]))
lines = st.one_of(
    st.builds(lambda t: {"type": "event", "episode_id": "e", "index": 0, "kind": "call", "args": {"text": t}}, texts),
    st.builds(lambda t: {"type": "header", "episode_id": "e", "note": t, "tools": TOOLS}, texts),
    st.builds(lambda k: {"type": "event", "episode_id": "e", "$blob": k, "kind": "call"}, st.text(max_size=5)),
)
# each step: (writer, line, where it is written from: the loop, a worker thread, or a flush point)
steps = st.lists(st.tuples(st.integers(0, 2), lines, st.sampled_from(["loop", "loop", "thread", "flush"])),
                 max_size=30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=steps)
def test_deferred_lines_are_the_same_bytes_in_the_same_order(tmp_path: Path, steps: list[tuple[int, dict, str]]) -> None:
    for p in tmp_path.glob("*.jsonl"):
        p.unlink()
    later = DeferredRecords()
    deferred = [RecordWriter(tmp_path / f"d{i}.jsonl", later=later) for i in range(3)]
    direct = [RecordWriter(tmp_path / f"s{i}.jsonl") for i in range(3)]

    async def run() -> None:
        for n, line, where in steps:
            direct[n].write_header(line) if line["type"] == "header" else direct[n].write(line)
            if where == "flush":
                later.flush_due()  # what the HTTP app does once an answer has been sent
            put = deferred[n].write_header if line["type"] == "header" else deferred[n].write
            if where == "thread":  # a tool call run off the loop writes at once, queued lines first
                t = threading.Thread(target=put, args=(line,))
                t.start()
                t.join()
            else:
                put(line)
        for w in deferred:
            w.close(sync=False)

    anyio.run(run)
    later.close()
    for d, s in zip(deferred, direct):
        s.close(sync=False)
        assert d.path.read_bytes() == s.path.read_bytes()


def test_a_closed_writer_refuses_more_lines(tmp_path: Path) -> None:
    later = DeferredRecords()
    w = RecordWriter(tmp_path / "a.jsonl", later=later)

    async def run() -> None:
        w.write({"type": "event", "episode_id": "e"})
        w.close(sync=False)
        with pytest.raises(RecordReadError, match="already closed"):
            w.write({"type": "event", "episode_id": "e"})

    anyio.run(run)
    assert (tmp_path / "a.jsonl").read_text().count("\n") == 1


def _episodes(conn: ServerConnection, n: int, calls: int) -> list[str]:
    eids = []
    for i in range(n):
        ep = conn.create(episode_id=f"rec-{i}")
        client = EpisodeClient(conn, ep["mcp_path"], ep["env_hash"])
        for j in range(calls):
            client.call_tool("write_file", {"path": f"/reports/r{j}.md", "content": "x" * (j * 3000)})
        eids.append(ep["episode_id"])
    return eids


def test_every_answered_call_is_in_the_record_before_the_next_request(tmp_path: Path) -> None:
    server = start_http_server(tmp_path, TOKEN)
    conn = ServerConnection(server.base, TOKEN)
    try:
        ep = conn.create(episode_id="live-1")
        client = EpisodeClient(conn, ep["mcp_path"], ep["env_hash"])
        for j in range(6):
            client.call_tool("write_file", {"path": f"/reports/n{j}.md", "content": str(j)})
            conn.admin("GET", "/admin/episodes")  # the next request: the answered call's line is written by now
            (seg,) = read_record_file(tmp_path / "live-1.jsonl").segments
            assert [e["args"]["path"] for e in seg.calls] == [f"/reports/n{k}.md" for k in range(j + 1)]
        log = conn.admin_json("GET", "/admin/episodes/live-1/log")
        assert len(log["segments"][0]["events"]) == 6
    finally:
        conn.close()
        server.stop()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_server_leaves_every_record_complete(tmp_path: Path, sig: signal.Signals) -> None:
    server = start_http_server(tmp_path, TOKEN)
    conn = ServerConnection(server.base, TOKEN)
    try:
        eids = _episodes(conn, 5, 4)
    finally:
        conn.close()
    server.proc.send_signal(sig)
    assert server.proc.wait(30) is not None
    for eid in eids:
        rec = read_record_file(tmp_path / f"{eid}.jsonl")
        assert rec.ends_cleanly and not rec.skipped
        (seg,) = rec.segments
        assert [e["args"]["path"] for e in seg.calls] == [f"/reports/r{j}.md" for j in range(4)]
        assert [len(e["args"]["content"]) for e in seg.calls] == [0, 3000, 6000, 9000]  # blobs resolved
        assert seg.final is not None and seg.final["stop_reason"] == "user_ended"


def test_records_match_with_lines_written_before_the_answers(tmp_path: Path, monkeypatch: Any) -> None:
    texts: dict[str, str] = {}
    for mode in ("0", "1"):
        monkeypatch.setenv("COWORKENV_RECORD_AFTER_ANSWER", mode)
        folder = tmp_path / mode
        server = start_http_server(folder, TOKEN)
        conn = ServerConnection(server.base, TOKEN)
        try:
            (eid,) = _episodes(conn, 1, 3)
            conn.end(eid, "done", "answered")
        finally:
            conn.close()
            server.stop()
        (seg,) = read_record_file(folder / f"{eid}.jsonl").segments
        texts[mode] = repr([e["args"] for e in seg.events]) + repr(seg.final["evaluation"])
    assert texts["0"] == texts["1"]


def test_a_record_opened_after_the_answer_is_made_by_its_first_flush(tmp_path: Path) -> None:
    later = DeferredRecords()
    path = tmp_path / "late.jsonl"

    async def run() -> None:
        w = RecordWriter(path, exclusive=True, later=later, open_later=True)
        w.write({"type": "event", "episode_id": "e"})
        assert not path.exists()  # nothing on the request path
        later.flush_due()
        assert path.read_text().count("\n") == 1
        w.close(sync=False)
        taken = RecordWriter(path, exclusive=True, later=later, open_later=True)  # the id's record exists
        taken.write({"type": "event", "episode_id": "e"})
        later.flush_due()  # logged; the lines stay with the writer, each flush tries again
        taken.write({"type": "event", "episode_id": "e"})
        with pytest.raises(RecordReadError, match="could not be written: .*File exists"):
            taken.close(sync=False)

    anyio.run(run)
    assert path.read_text().count("\n") == 1  # the second writer never touched the first one's record


class _Disk:
    """A record file whose flushes fail while `full` is set (ENOSPC), its text kept in the buffer as a real full
    disk leaves it: what a write error that later clears looks like to a writer."""

    full = False

    def __init__(self, fh: Any) -> None:
        self._fh = fh

    def flush(self) -> None:
        if _Disk.full:
            raise OSError(28, "No space left on device (simulated)")
        self._fh.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


def test_a_write_failure_that_clears_loses_no_line_and_breaks_no_episode(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2

    from mcp_server.demo import environment
    from mcp_server.http import build_app
    from mcp_server.hub import EpisodeHub

    real_open = RecordWriter._open

    def flaky_open(self: RecordWriter) -> None:
        real_open(self)
        self._fh = _Disk(self._fh)

    monkeypatch.setattr(RecordWriter, "_open", flaky_open)
    monkeypatch.setattr(_Disk, "full", False)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo":
                {"name": "t", "version": "0"}, "io.modelcontextprotocol/clientCapabilities": {}}
    mcp_headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                   "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "write_file"}

    async def main() -> None:
        hub = EpisodeHub(environment(), None, tmp_path)
        async with hub.run():
            app = httpx2.ASGITransport(app=build_app(hub, TOKEN))
            async with httpx2.AsyncClient(transport=app, base_url="http://127.0.0.1:9") as http:
                for eid in ("a", "b"):
                    assert (await http.post("/admin/episodes", json={"episode_id": eid}, headers=auth)).status_code == 201

                async def write(eid: str, i: int) -> int:
                    body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                        "name": "write_file", "arguments": {"path": f"/n{i}.md", "content": str(i)}, "_meta": envelope}}
                    r = await http.post(f"/episodes/{eid}/mcp", json=body, headers=mcp_headers)
                    return r.status_code

                assert await write("a", 0) == 200
                _Disk.full = True  # the disk fills: the answers still come, the lines wait
                assert [await write("a", 1), await write("b", 2)] == [200, 200]
                await anyio.sleep(0.08)  # the fallback flush fails too (logged)
                _Disk.full = False  # space again: the next flush writes everything, once, in order
                assert await write("a", 3) == 200
                ended = await http.post("/admin/episodes/a/end", json={"final_answer": "done"}, headers=auth)
                assert ended.status_code == 200 and "record_error" not in ended.json(), ended.text
                _Disk.full = True  # full at shutdown: b's record cannot be completed, c's can
                assert (await http.post("/admin/episodes", json={"episode_id": "c"}, headers=auth)).status_code == 201
                ended = await http.post("/admin/episodes/b/end", json={}, headers=auth)
                assert ended.status_code == 200 and "No space left" in ended.json()["record_error"]  # judged anyway
                assert (await http.get("/admin/episodes/b", headers=auth)).status_code == 410
                _Disk.full = False

    anyio.run(main)
    (seg,) = read_record_file(tmp_path / "a.jsonl").segments
    assert [e["args"]["path"] for e in seg.calls] == ["/n0.md", "/n1.md", "/n3.md"] and seg.final is not None
    (seg,) = read_record_file(tmp_path / "c.jsonl").segments  # ended at shutdown
    assert seg.final is not None


def test_ended_records_are_synced_in_batches_with_one_wake_and_one_syncfs_each(tmp_path: Path, monkeypatch: Any) -> None:
    """A sync thread woken per ended record takes the interpreter lock from the event loop at the next request's
    first system call: only a batch's first record wakes it, and a batch is made durable by one syncfs."""
    import workspace_sim.record.writer as recording

    batches: list[list[Path]] = []
    monkeypatch.setattr(recording, "sync_files", lambda paths: batches.append(list(paths)))
    later = DeferredRecords()
    wakes = 0
    real_set = later._wake.set

    def counted_set() -> None:
        nonlocal wakes
        wakes += 1
        real_set()

    monkeypatch.setattr(later._wake, "set", counted_set)
    paths = [tmp_path / f"r{i}.jsonl" for i in range(40)]
    for p in paths:
        later.sync_later(p)
    later.close()  # does every fsync owed
    assert [p for b in batches for p in b] == paths  # each once, in order
    assert wakes <= 2 and len(batches) <= 2  # not one per record (close wakes it once more to stop)


def test_sync_files_uses_one_syncfs_per_folder_and_falls_back_to_fsync(tmp_path: Path, monkeypatch: Any) -> None:
    import workspace_sim.record.writer as recording

    folders = [tmp_path / "a", tmp_path / "b"]
    paths = []
    for f in folders:
        f.mkdir()
        for i in range(recording.SYNCFS_FROM):
            (f / f"{i}.jsonl").write_text("{}\n")
            paths.append(f / f"{i}.jsonl")
    calls: list[int] = []
    synced: list[Path] = []
    monkeypatch.setattr(recording, "sync_file", lambda p: synced.append(Path(p)))
    monkeypatch.setattr(recording, "_SYNCFS", [lambda fd: calls.append(fd) or 0])
    recording.sync_files(paths)
    assert len(calls) == 2 and synced == []  # one per folder, no fsync per file
    monkeypatch.setattr(recording, "_SYNCFS", [lambda fd: -1])  # a syncfs that fails: each file is fsynced
    recording.sync_files(paths)
    assert synced == paths
    synced.clear()
    recording.sync_files(paths[:1])  # a batch of one: fsync, no syncfs
    assert synced == paths[:1]
    monkeypatch.undo()
    recording.sync_files(paths + [tmp_path / "gone" / "x.jsonl"])  # the real thing; a missing file is left alone


def test_a_line_that_cannot_be_built_leaves_the_others_and_the_close_says_so(tmp_path: Path) -> None:
    from workspace_sim.record import LaterLine

    def broken() -> dict:
        raise KeyError("no such field")

    async def run() -> None:
        later = DeferredRecords()
        w = RecordWriter(tmp_path / "r.jsonl", later=later)
        w.write({"type": "event", "episode_id": "e", "index": 0})
        w.write(LaterLine(broken))
        w.write_header({"type": "header", "episode_id": "e", "tools": TOOLS})
        later.flush_due()
        with pytest.raises(RecordReadError, match="could not be built and is missing: KeyError"):
            w.close(sync=False)

    anyio.run(run)
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert [json_type(line) for line in lines] == ["event", "header"]  # the line before and the one after it


def json_type(line: str) -> str:
    import json

    return json.loads(line)["type"]


def test_an_ended_record_is_synced_soon_without_a_close(tmp_path: Path, monkeypatch: Any) -> None:
    """Ends spaced out in time: each batch is synced within about SYNC_BATCH_S, none waits for the next end."""
    import time

    import workspace_sim.record.writer as recording

    synced: list[Path] = []
    monkeypatch.setattr(recording, "sync_files", lambda paths: synced.extend(paths))
    later = DeferredRecords()
    try:
        for i in range(3):
            path = tmp_path / f"r{i}.jsonl"
            later.sync_later(path)
            deadline = time.monotonic() + 5
            while path not in synced and time.monotonic() < deadline:
                time.sleep(0.01)
            assert path in synced, f"record {i} was not synced without a close"
    finally:
        later.close()
