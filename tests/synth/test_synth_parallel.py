"""Parallel synthesis (synth.parallel, `synthesize(workers=N)`, `coworkenv synth -w N`) gives the serial run's
result byte for byte, in the serial order, and fails loudly: a producer that raises or a worker that dies names
the capability and seed, and Ctrl-C stops the workers.

The producers below are module-level so spawned workers can import them (pytest puts tests/ on sys.path and a
spawned child inherits it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synth.parallel import SynthJobError, WorkerPool, resolve_workers
from synth.pipeline import Attempt, SynthResult, plan, procedural_attempt, synthesize

ROOT = Path(__file__).resolve().parents[2]
COWORKENV = Path(sys.executable).parent / "coworkenv"
# Multi-day stories (long_horizon, media_evidence) beside single-day templates and one capability with choices.
CAPS = ["long_horizon", "media_evidence", "scheduling", "clarification"]


def uneven(cap: str, seed: int) -> Attempt:
    """A cheap producer whose jobs finish out of order (later seeds are faster) and of which some are discarded."""
    time.sleep(0.002 * ((7 - seed) % 5))
    if seed % 3 == 0:
        return Attempt(cap, seed, None, error=f"discarded {cap} {seed}")
    return Attempt(cap, seed, None, repaired=seed % 2 == 0, error=None if seed % 2 else f"odd {seed}")


def raising(cap: str, seed: int) -> Attempt:
    """Fails on scheduling seed 6 and on every later job of the plan (the first in plan order must be named)."""
    if seed >= 6 and (cap == "scheduling" or seed > 6):
        raise RuntimeError(f"template exploded on {cap}/{seed}")
    return uneven(cap, seed)


def dying(cap: str, seed: int) -> Attempt:
    """Kills its own process on clarification seed 4, as a crash in native code or the OOM killer would."""
    if cap == "clarification" and seed == 4:
        os._exit(3)
    return uneven(cap, seed)


def slow(cap: str, seed: int) -> Attempt:
    """A job that takes long enough for Ctrl-C to land while the workers are busy."""
    time.sleep(0.5)
    return uneven(cap, seed)


def broken_warm_up() -> None:
    raise OSError("no pools here")


def report(attempt: Attempt) -> object:
    """The validation report without its timing (`seconds` is wall time, the one figure that may differ)."""
    if attempt.report is None:
        return None
    doc = attempt.report.to_json()
    return {**doc, "stats": {k: v for k, v in doc["stats"].items() if k != "seconds"}}


def trace(result: SynthResult, seen: list[Attempt]) -> tuple[object, ...]:
    """Everything a caller can observe: specs as written, stats, discards and the attempts in callback order."""
    return (result.to_json(), [s.dumps("json") for s in result.specs],
            [(a.capability, a.seed, a.valid, a.repaired, a.error, a.spec.dumps("yaml") if a.spec else None,
              report(a)) for a in seen])


def run(workers: int, producer=procedural_attempt, count: int = 8, seed: int = 3):  # type: ignore[no-untyped-def]
    seen: list[Attempt] = []
    result = synthesize(CAPS, count, seed, producer=producer, on_attempt=seen.append, workers=workers)
    return trace(result, seen)


@pytest.mark.slow  # 10-25 s on the shared 2-core machine: worker start-up and two multi-day stories
def test_parallel_is_the_serial_run_byte_for_byte() -> None:
    serial = run(1)
    assert len(serial[1]) == 8 and serial[0]["stats"]["long_horizon"]["valid"] == 2  # type: ignore[index]
    assert run(2) == serial


@pytest.fixture(scope="module")
def pools() -> Iterator[dict[int, WorkerPool]]:
    made = {n: WorkerPool(n, uneven) for n in (2, 3)}
    yield made
    for p in made.values():
        p.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.integers(1, 30), seed=st.integers(0, 50), workers=st.sampled_from([2, 3]),
       chunk=st.one_of(st.none(), st.integers(1, 7)))
def test_results_come_back_in_plan_order_whatever_the_chunking(pools: dict[int, WorkerPool], count: int, seed: int,
                                                                 workers: int, chunk: int | None) -> None:
    jobs = plan(None, count, seed)
    got = list(pools[workers].map(jobs, chunk=chunk))
    assert [(a.capability, a.seed, a.repaired, a.error) for a in got] == \
        [(a.capability, a.seed, a.repaired, a.error) for a in (uneven(c, s) for c, s in jobs)]


def test_a_pool_folds_like_the_serial_run(pools: dict[int, WorkerPool]) -> None:
    seen: list[Attempt] = []
    pooled = synthesize(CAPS, 13, 2, producer=uneven, on_attempt=seen.append, pool=pools[2])
    assert trace(pooled, seen) == run(1, producer=uneven, count=13, seed=2)
    with pytest.raises(ValueError, match="the pool runs uneven, not procedural_attempt"):
        synthesize(CAPS, 2, pool=pools[2])


@pytest.mark.parametrize("workers", [1, 2])
def test_a_producer_that_raises_names_the_first_failing_job(workers: int) -> None:
    with pytest.raises(SynthJobError, match=r"^scheduling seed 6: RuntimeError: template exploded on scheduling/6"):
        run(workers, producer=raising, count=16, seed=3)


def test_a_worker_that_dies_names_its_job_and_does_not_hang() -> None:
    t0 = time.monotonic()
    with pytest.raises(SynthJobError, match=r"^clarification seed 4: the worker process running it died") as e:
        run(2, producer=dying, count=12, seed=3)
    assert (e.value.capability, e.value.seed) == ("clarification", 4)
    assert time.monotonic() - t0 < 60


def test_a_warm_up_that_fails_is_reported() -> None:
    with WorkerPool(2, uneven, warm=broken_warm_up) as pool:
        with pytest.raises(SynthJobError, match=r"failed while warming up:(.|\n)*OSError: no pools here"):
            list(pool.map(plan(None, 4, 0)))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_cli_reports_a_failing_job_and_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  workers: str) -> None:
    from typer.testing import CliRunner

    import synth.pipeline
    from coworkenv.cli import app

    real = synth.pipeline.synthesize
    monkeypatch.setattr(synth.pipeline, "synthesize", lambda *a, **k: real(*a, **{**k, "producer": raising}))
    result = CliRunner().invoke(app, ["synth", *sum((["-c", c] for c in CAPS), []), "-n", "16", "-s", "3",
                                      "-o", str(tmp_path), "-w", workers])
    assert result.exit_code == 1, result.output
    assert "scheduling seed 6: RuntimeError: template exploded on scheduling/6" in result.output
    assert "wrote 0 of 16 environment(s) before it" in result.output  # `raising` writes nothing (spec None)


def test_bad_worker_counts_and_producers_are_refused() -> None:
    assert resolve_workers(0) >= 1 and resolve_workers(3) == 3
    with pytest.raises(ValueError, match="workers must be 0"):
        synthesize(CAPS, 2, workers=-1)
    with pytest.raises(ValueError, match="module-level functions"):
        WorkerPool(2, lambda cap, seed: None)


def test_ctrl_c_stops_the_workers(tmp_path: Path) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(textwrap.dedent(f"""
        import multiprocessing, sys
        sys.path.insert(0, {str(ROOT / 'tests' / 'synth')!r})
        from synth.pipeline import synthesize
        from test_synth_parallel import slow

        def started(attempt):
            if attempt.seed == 0:
                print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)

        if __name__ == "__main__":
            try:
                synthesize(None, 200, 0, producer=slow, workers=2, on_attempt=started)
            except KeyboardInterrupt:
                print("interrupted", flush=True)
                sys.exit(130)
    """))
    for _ in range(3):  # a Ctrl-C inside concurrent.futures.wait hung exit in ~1 of 5 runs under load
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert proc.stdout is not None
        children = [int(p) for p in proc.stdout.readline().split()]
        assert len(children) >= 2, children
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 130 and "interrupted" in out
        assert time.monotonic() - t0 < 10  # the workers are stopped, not left to finish their queued jobs (0.5 s each)
        for pid in children:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


@pytest.mark.slow  # two `coworkenv synth` processes, one of them starting workers: 15-30 s on 2 shared cores
def test_the_cli_writes_the_same_files_with_workers(tmp_path: Path) -> None:
    def cli(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        args = [str(COWORKENV), "synth", *sum((["-c", c] for c in CAPS), []), "-n", "8", "-s", "3", "-o", str(out)]
        # a console wide enough for the folder's path: "parallel" is two characters longer than "serial", and a
        # path that wraps at the default width in one run and not the other is no difference in what was written
        env = {**os.environ, "COLUMNS": "400"}
        return subprocess.run(args + list(extra), capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)

    serial, parallel = cli(tmp_path / "serial"), cli(tmp_path / "parallel", "-w", "2")
    assert serial.returncode == parallel.returncode == 0, parallel.stderr
    assert parallel.stdout.replace("parallel", "serial") == serial.stdout and "wrote 8 valid" in serial.stdout
    files = sorted(p.name for p in (tmp_path / "serial").iterdir())
    assert len(files) == 8 and files == sorted(p.name for p in (tmp_path / "parallel").iterdir())
    for name in files:
        assert (tmp_path / "parallel" / name).read_bytes() == (tmp_path / "serial" / name).read_bytes()
    bad = subprocess.run([str(COWORKENV), "synth", "-w", "-1", "-o", str(tmp_path / "x")], capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "--workers" in bad.stderr
