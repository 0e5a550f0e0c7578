"""Run a synthesis plan in worker processes and hand the results back in plan order.

`WorkerPool` spawns N processes (the `spawn` start method, so it is safe whatever the parent holds),
warms each once, and maps a producer `(capability, seed) -> result` over (capability, seed) jobs
shipped in small chunks. Results come back in plan order whatever order the workers finish in, so a
caller that folds them (`synth.pipeline.synthesize`) gets exactly what a serial run gives.
A producer that raises, a result that cannot be pickled and a worker process that dies all end
the run with `SynthJobError` naming the capability and seed; Ctrl-C (SIGINT) is handled by the
parent alone, which stops the workers and re-raises. This module knows nothing of specs: the
producer and the warm-up are any picklable module-level functions.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

Job = tuple[str, int]
Producer = Callable[[str, int], Any]


class SynthJobError(RuntimeError):
    """One environment could not be produced: the producer raised, or the process running it died.

    `capability` and `seed` name the job (None when a worker died before it took any job); `detail`
    says what happened (the exception and, from a worker, its traceback)."""

    def __init__(self, capability: str | None, seed: int | None, detail: str) -> None:
        self.capability, self.seed, self.detail = capability, seed, detail
        where = f"{capability} seed {seed}" if capability is not None else "a synthesis worker"
        super().__init__(f"{where}: {detail}")


def default_workers() -> int:
    """The cores this process may run on (what `--workers 0` means)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def resolve_workers(workers: int) -> int:
    """`workers` as a process count: 0 means one per available core; below 0 is a ValueError."""
    if workers < 0:
        raise ValueError(f"workers must be 0 (one per core) or more, got {workers}")
    return workers or default_workers()


# --- the worker side ------------------------------------------------------------------------------------------

_PRODUCER: Producer | None = None
_STARTS: Any = None  # the SimpleQueue a worker announces each job on before running it


def _init_worker(producer: Producer, warm: Callable[[], None] | None, warmup: Sequence[Job], starts: Any) -> None:
    """Worker initializer: leave SIGINT to the parent, then warm up once (imports, pools, first-call costs)."""
    global _PRODUCER, _STARTS
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _PRODUCER, _STARTS = producer, starts
    try:
        if warm is not None:
            warm()
        for cap, seed in warmup:
            producer(cap, seed)
    except BaseException:
        starts.put(("init", traceback.format_exc()))
        raise


def _run_chunk(chunk: Sequence[tuple[int, str, int]]) -> list[tuple[int, bytes | None, str | None]]:
    """Run a chunk of jobs: (index, pickled result, None) or (index, None, the error with its traceback)."""
    assert _PRODUCER is not None, "worker used before its initializer ran"
    out: list[tuple[int, bytes | None, str | None]] = []
    for index, cap, seed in chunk:
        _STARTS.put(("start", (index, os.getpid())))
        try:
            payload = pickle.dumps(_PRODUCER(cap, seed), protocol=pickle.HIGHEST_PROTOCOL)
        except (Exception, SystemExit) as e:  # SystemExit too: a producer calling sys.exit must not stop a worker
            out.append((index, None, f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))
            break  # the run stops at this job, so the rest of the chunk is wasted work
        out.append((index, payload, None))
    return out


def _ping() -> int:
    """A worker's pid (WorkerPool.ready waits until every worker has answered)."""
    import time

    time.sleep(0.05)  # keep this worker busy so the next ping goes to another
    return os.getpid()


# --- the parent side ------------------------------------------------------------------------------------------


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT while workers are spawned: a child inherits the disposition, so a Ctrl-C that reaches the
    whole process group never interrupts one half-started (its initializer ignores SIGINT from then on)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _wait_interruptibly(pending: Any) -> set[Future[Any]]:
    """`wait(pending, FIRST_COMPLETED)`, with a Ctrl-C raised here rather than inside it.

    A KeyboardInterrupt that lands inside `concurrent.futures.wait` can leave a future's lock held (it fires
    between taking the lock and the block that releases it), and the executor's manager thread then blocks on that
    lock when it cancels the futures, so interpreter exit hangs joining it (seen in 1 of 5 interrupted runs under
    load). Here SIGINT only sets a flag while the wait polls, and the interrupt is raised once no lock is held."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        return wait(pending, return_when=FIRST_COMPLETED)[0]
    hit: list[Any] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: hit.append(frame))
    try:
        while not hit:
            finished, _ = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            if finished and not hit:
                return finished
    finally:
        signal.signal(signal.SIGINT, previous)
    if callable(previous):
        previous(signal.SIGINT, hit[0])  # the default handler raises KeyboardInterrupt
    raise KeyboardInterrupt


class WorkerPool:
    """N spawned processes running `producer` over jobs; use as a context manager (leaving it stops them).

    `warm` runs once in each worker before it takes a job, then `warmup` jobs are produced and dropped
    there (first-call costs that should not land on the first real job). `map` can be called many times."""

    def __init__(self, workers: int, producer: Producer, warm: Callable[[], None] | None = None,
                 warmup: Sequence[Job] = ()) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        try:
            pickle.dumps((producer, warm))
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            raise ValueError(f"the producer and warm-up must be module-level functions to run in worker processes "
                             f"({e})") from e
        self.workers, self.producer = workers, producer
        ctx = multiprocessing.get_context("spawn")
        self._starts = ctx.SimpleQueue()
        self._executor = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                             initargs=(producer, warm, tuple(warmup), self._starts))
        self._started: dict[int, int] = {}  # this map's jobs a worker announced it began -> that worker's pid
        # every worker process seen, by pid: the executor may drop its own list when a worker dies, before
        # `_died_on_their_own` reads the exit codes (CI named the wrong job once that way)
        self._seen: dict[int, Any] = {}
        self._answered: set[int] = set()  # this map's jobs whose result (or error) came back
        self._init_errors: list[str] = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close(terminate=exc_type is not None)

    def ready(self) -> None:
        """Start every worker and wait until each has warmed up (a benchmark times work, not process start)."""
        seen: set[int] = set()
        while len(seen) < self.workers:
            with _sigint_ignored():
                futures = [self._executor.submit(_ping) for _ in range(self.workers)]
            for fut in futures:
                seen.add(self._result(fut, ()))

    def map(self, jobs: Sequence[Job], chunk: int | None = None) -> Iterator[Any]:
        """Each job's result in job order, as soon as it and every job before it are done.

        `chunk` jobs travel together (default: small enough to keep every worker busy to the end). The first
        job in plan order that fails raises SynthJobError, as a serial run would; the pool stops on any error."""
        if chunk is None:
            chunk = max(1, min(4, len(jobs) // (self.workers * 16)))
        indexed = [(i, cap, seed) for i, (cap, seed) in enumerate(jobs)]
        chunks = [indexed[i:i + chunk] for i in range(0, len(indexed), chunk)]
        self._started.clear()
        self._answered.clear()
        with _sigint_ignored():  # the first submits spawn the workers
            pending: dict[Future[Any], list[tuple[int, str, int]]] = {
                self._executor.submit(_run_chunk, c): c for c in chunks}
        self._remember_processes()
        done_results: dict[int, tuple[bytes | None, str | None]] = {}
        next_index = 0
        try:
            while pending:
                finished = _wait_interruptibly(pending)
                self._drain()  # keep the announcement pipe from filling (a full pipe would block the workers)
                for fut in finished:
                    pending.pop(fut)
                    for index, payload, error in self._result(fut, jobs):
                        done_results[index] = (payload, error)
                        self._answered.add(index)
                while next_index in done_results:
                    payload, error = done_results.pop(next_index)
                    if error is not None:
                        cap, seed = jobs[next_index]
                        raise SynthJobError(cap, seed, error.rstrip())
                    yield pickle.loads(payload)  # type: ignore[arg-type]
                    next_index += 1
                # A chunk that stopped at its failing job leaves later indices unanswered; its error comes first.
            assert next_index == len(jobs), f"{len(jobs) - next_index} job(s) never answered"
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise

    def _result(self, fut: Future[Any], jobs: Sequence[Job]) -> Any:
        """The future's result; a dead worker becomes SynthJobError naming the jobs it may have been running."""
        try:
            return fut.result()
        except BrokenProcessPool as e:
            self._drain()
            if self._init_errors:
                raise SynthJobError(None, None, "a worker process failed while warming up:\n"
                                    + self._init_errors[0].rstrip()) from e
            suspects = sorted(i for i in self._started if i not in self._answered and i < len(jobs))
            if not suspects:
                raise SynthJobError(None, None, f"a worker process died before it started any job ({e})") from e
            dead = self._died_on_their_own()
            last_started: dict[int, int] = {}  # pid -> the job it announced last (a worker runs one at a time)
            for i, pid in self._started.items():  # in the order announced
                last_started[pid] = i
            # the job a dead worker was running; its earlier ones may be unanswered too (a result still in the
            # pipe when the pool broke), and naming the first of those named the wrong job
            culprits = sorted(i for pid, i in last_started.items() if pid in dead and i in suspects)
            first = (culprits or suspects)[0]
            cap, seed = jobs[first]
            also = ", ".join(f"{jobs[i][0]} seed {jobs[i][1]}" for i in suspects if i != first)
            raise SynthJobError(cap, seed, "the worker process running it died (killed, out of memory or a crash "
                                f"in native code){'; also unfinished when it died: ' + also if also else ''}") from e

    def _remember_processes(self) -> None:
        for proc in list((getattr(self._executor, "_processes", None) or {}).values()):
            if proc.pid is not None:
                self._seen[proc.pid] = proc

    def _died_on_their_own(self) -> set[int]:
        """Pids of workers that exited by themselves (a crash, the OOM killer), not by the pool's SIGTERM that
        follows; empty when this Python's executor does not show its processes."""
        self._remember_processes()
        procs = list(self._seen.values())
        for proc in procs:
            proc.join(timeout=10)  # the pool terminates the survivors right after it marks itself broken
        return {proc.pid for proc in procs if proc.exitcode not in (None, 0, -signal.SIGTERM)}

    def _drain(self) -> None:
        """Read the workers' announcements (which job each started; warm-up failures)."""
        self._remember_processes()
        while not self._starts.empty():
            kind, value = self._starts.get()
            if kind == "start":
                index, pid = value
                self._started[index] = pid
            else:
                self._init_errors.append(value)

    def close(self, terminate: bool = False) -> None:
        """Stop the workers: after their current chunk, or at once (`terminate`, e.g. on Ctrl-C or an error)."""
        ex = self._executor
        # shutdown() drops the executor's references to its processes and manager thread: take them first
        procs = list((getattr(ex, "_processes", None) or {}).values())
        manager = getattr(ex, "_executor_manager_thread", None)
        if terminate:
            kill = getattr(ex, "terminate_workers", None)  # Python 3.14+
            if kill is not None:
                kill()
            else:
                ex.shutdown(wait=False, cancel_futures=True)
                for proc in procs:
                    if proc.is_alive():
                        proc.terminate()
                for proc in procs:
                    proc.join(timeout=10)
                if manager is not None:
                    manager.join(timeout=10)  # it sees the workers gone and fails what was still running
        ex.shutdown(wait=True, cancel_futures=terminate)
        self._starts.close()
