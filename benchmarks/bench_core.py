"""Core figures on the standard workspace, each next to a naive deep-copy baseline from the same run.

Baseline: the same records held in one pydantic model; copies with `model_copy(deep=True)`, hashes
as sha256 of its sorted JSON, diffs by comparing every record, and calls through a naive
transactional executor that deep-copies the state before each call (for rollback) and diffs the
whole state after it.
"""

from __future__ import annotations

import gc
import hashlib
import json
import statistics
import time
import tracemalloc
from typing import Any, Callable

from pydantic import BaseModel

from workspace_sim.core.diff import diff_states
from workspace_sim.core.state import build_state

from .standard_workspace import standard_workspace


class BaselineState(BaseModel):
    """The naive representation: every table as a dict of records in one pydantic model."""

    tables: dict[str, dict[str, Any]]


def per_op_us(fn: Callable[[], Any], n: int, repeat: int = 5) -> float:
    """Median microseconds per call of `fn` over `repeat` batches of `n`."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(samples)


def _baseline_hash(model: BaselineState) -> str:
    return hashlib.sha256(json.dumps(model.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


def _baseline_diff(a: BaselineState, b: BaselineState) -> int:
    n = 0
    for name in a.tables.keys() | b.tables.keys():
        ta, tb = a.tables.get(name, {}), b.tables.get(name, {})
        for key in ta.keys() | tb.keys():
            if ta.get(key) != tb.get(key):
                n += 1
    return n


class NaiveWorkspace:
    """A transactional executor done the obvious way, for the calls/s baseline."""

    def __init__(self, model: BaselineState) -> None:
        self.model = model
        self.log: list[dict[str, Any]] = []

    def read(self, path: str) -> str:
        before = self.model.model_copy(deep=True)
        content = self.model.tables["files.files"][path].content
        self.log.append({"tool": "read_text_file", "path": path, "changes": _baseline_diff(before, self.model)})
        return content

    def write(self, path: str, content: str) -> None:
        before = self.model.model_copy(deep=True)
        rec = self.model.tables["files.files"][path]
        self.model.tables["files.files"][path] = rec.evolve(content=content)
        self.log.append({"tool": "write_file", "path": path, "changes": _baseline_diff(before, self.model)})


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Measure the core figures; `quick` shortens the loops (same keys)."""
    scale = 0.1 if quick else 1.0
    ws = standard_workspace()
    state = ws.state
    base = BaselineState(tables={name: dict(t.items()) for name, t in state.tables.items()})
    figs: list[dict[str, Any]] = []

    def fig(key: str, value: float, unit: str, baseline: float | None, note: str = "") -> None:
        figs.append({"key": key, "value": round(value, 4), "unit": unit, "baseline_key": f"baseline_{key}",
                     "baseline": None if baseline is None else round(baseline, 4), "note": note})

    n_fast = max(1000, int(100_000 * scale))
    n_slow = max(3, int(20 * scale))
    deep = per_op_us(lambda: base.model_copy(deep=True), n_slow, 3)
    snap = ws.snapshot()
    fig("snapshot_us", per_op_us(ws.snapshot, n_fast), "us", deep, "target <= 20 us")
    fig("restore_us", per_op_us(lambda: ws.restore(snap), n_fast), "us", deep, "target <= 40 us, >= 500x")
    fig("fork_us", per_op_us(ws.fork, n_fast), "us", deep, "target <= 40 us, >= 500x")

    files = sorted(state.table("files.files").keys())
    tickets = sorted(state.table("tickets.tickets").keys())
    people = sorted(state.table("contacts.people").keys())
    changes = {
        ("files.files", files[0]): state.table("files.files")[files[0]].evolve(content="changed"),
        ("tickets.tickets", tickets[0]): state.table("tickets.tickets")[tickets[0]].evolve(status="Closed"),
        ("contacts.people", people[0]): state.table("contacts.people")[people[0]].evolve(phone="+1-555-0000"),
    }
    s3 = state.with_records(changes)
    base3 = base.model_copy(deep=True)
    for (t, k), rec in changes.items():
        base3.tables[t][k] = rec
    assert len(diff_states(state, s3)) == 3 and _baseline_diff(base, base3) == 3
    fig("diff_us", per_op_us(lambda: diff_states(state, s3), max(100, int(2000 * scale))), "us",
        per_op_us(lambda: _baseline_diff(base, base3), n_slow, 3), "states 3 records apart")

    records = [(name, dict(t.items())) for name, t in state.tables.items()]

    def fresh_hash() -> str:
        for _, recs in records:
            for r in recs.values():
                r._digest = None
        return build_state(dict(records), state.now).content_hash

    baseline_hash = per_op_us(lambda: _baseline_hash(base), n_slow, 3)
    fig("hash_us", per_op_us(fresh_hash, n_slow, 3), "us", baseline_hash, "from scratch, no cached digests")
    t0 = state.table("tickets.tickets")[tickets[1]]
    counter = iter(range(10**9))
    fig("hash_after_change_us",
        per_op_us(lambda: state.with_records({("tickets.tickets", tickets[1]): t0.evolve(title=f"t{next(counter)}")}).content_hash,
                  max(1000, int(20_000 * scale))),
        "us", baseline_hash, "one-record change, incremental; target <= 100 us")

    ws.restore(snap)
    paths = iter(files * 1000)
    reads = max(2000, int(50_000 * scale))
    t = time.perf_counter()
    for _ in range(reads):
        ws.call("read_text_file", {"path": next(paths)})
    read_rate = reads / (time.perf_counter() - t)
    naive = NaiveWorkspace(base.model_copy(deep=True))
    t = time.perf_counter()
    for i in range(n_slow):
        naive.read(files[i])
    fig("read_calls_per_s", read_rate, "calls/s", n_slow / (time.perf_counter() - t), "target >= 50,000")

    ws.restore(snap)
    writes = max(2000, int(20_000 * scale))
    t = time.perf_counter()
    for i in range(writes):
        ws.call("write_file", {"path": files[i % 200], "content": f"version {i}"})
    write_rate = writes / (time.perf_counter() - t)
    t = time.perf_counter()
    for i in range(n_slow):
        naive.write(files[i], f"v{i}")
    fig("write_calls_per_s", write_rate, "calls/s", n_slow / (time.perf_counter() - t),
        "event log and diff included; target >= 20,000")

    ws.restore(snap)
    del naive, base3, records
    gc.collect()
    tracemalloc.start()
    m0 = tracemalloc.get_traced_memory()[0]
    one = standard_workspace()
    one_bytes = tracemalloc.get_traced_memory()[0] - m0
    m1 = tracemalloc.get_traced_memory()[0]
    snaps = []
    st = one.state
    keys = [(t, k) for t in ("tickets.tickets", "mail.messages", "files.files") for k in sorted(st.table(t).keys())[:100]]
    for i in range(1000):
        t, k = keys[i % len(keys)]
        rec = st.table(t)[k]
        field = {"tickets.tickets": "title", "mail.messages": "subject", "files.files": "content"}[t]
        st = st.with_records({(t, k): rec.evolve(**{field: f"{getattr(rec, field)[:40]} v{i}"})})
        snaps.append(st)
    snaps_bytes = tracemalloc.get_traced_memory()[0] - m1
    m3 = tracemalloc.get_traced_memory()[0]
    for i in range(1000):
        one.call("mark_email_read", {"id": keys[100 + i % 100][1], "read": i % 2 == 0})
        snaps.append(one.snapshot())
    calls_bytes = tracemalloc.get_traced_memory()[0] - m3
    m2 = tracemalloc.get_traced_memory()[0]
    copies = [base.model_copy(deep=True) for _ in range(5)]
    copy_bytes = (tracemalloc.get_traced_memory()[0] - m2) / len(copies) * 1000
    tracemalloc.stop()
    del copies, snaps
    fig("memory_1000_snapshots_ratio", snaps_bytes / one_bytes, "x", copy_bytes / one_bytes,
        f"one workspace {one_bytes / 1e6:.1f} MB; each snapshot one record apart (tickets, mail, files); "
        "baseline extrapolated from 5 deep copies; target < 2x")
    fig("memory_1000_call_snapshots_ratio", calls_bytes / one_bytes, "x", copy_bytes / one_bytes,
        "1,000 mark_email_read calls, a snapshot after each, event log included")
    return figs
