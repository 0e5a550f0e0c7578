"""Running a batch on Ray: one task per environment, at most `workers` at a time, records in job order.

`address="local"` starts a private local Ray (no dashboard) sized to `workers` CPUs and shuts it
down afterwards; any other address (e.g. `ray://head:10001` or `auto`) joins that cluster and
leaves it running. Tasks run `batch.run_env_jsonl`, the same function local worker processes run,
so a Ray batch gives the same records as a local one for the same seeds.
"""

from __future__ import annotations

import logging

import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

from synth.spec import EnvironmentSpec

from workspace_sim.record import EpisodeRecord
from .batch import BatchConfig, OnRecord, records_from_jsonl, run_env_jsonl


class RayUnavailable(RuntimeError):
    """Ray is not installed or the cluster cannot be reached; the message says what to do."""


class RayTaskFailed(RuntimeError):
    """A batch task failed on the cluster for good (Ray retried a crashed worker or a dead node once); the
    message names the environment, the cause, and how many records had come back before."""


def _task_failure(error: BaseException, spec_id: str, returned: int) -> RayTaskFailed:
    cause = getattr(error, "cause", None) or error
    first = next((line for line in str(cause).splitlines() if line.strip()), type(cause).__name__)
    hint = ""
    if "No module named" in first or isinstance(cause, ModuleNotFoundError):
        hint = " (is coworkenv installed, the same version, on every node? pip install 'coworkenv[ray]' there)"
    return RayTaskFailed(f"the Ray task of environment {spec_id!r} failed: {type(cause).__name__}: "
                         f"{first.strip()}{hint}; {returned} record(s) had come back before it")


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable("Ray is not installed; install it with: pip install 'coworkenv[ray]'") from None
    return ray


def _reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast when nothing listens at a `host:port` address (ray.init would retry for minutes)."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise RayUnavailable(f"Ray address {address!r} must be 'local', 'auto', HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as e:
        raise RayUnavailable(f"cannot start or join Ray at {address!r}: nothing answers there "
                             f"({e.strerror or e})") from None


def start_local_ray(cpus: int) -> None:
    """Start a private local Ray with `cpus` CPUs, quietly.

    Ray announces on stderr that the private cluster it starts uses token authentication (it does;
    the token stays in ~/.ray). Our users did not start a cluster, so the notice is kept back.
    """
    ray = _ray()
    auth_log = logging.getLogger("ray._private.authentication.authentication_token_setup")
    level, auth_log.level = auth_log.level, logging.ERROR
    try:
        # address="local": a new instance even where a `ray start` cluster runs (or left its address file behind)
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    finally:
        auth_log.setLevel(level)


def join_ray(address: str, cpus: int) -> None:
    """Start a private local Ray (`address` "local", with `cpus` CPUs) or join a cluster; RayUnavailable
    says why not, at once when nothing listens at a host:port."""
    ray = _ray()
    _reachable(address)
    try:
        if address == "local":
            start_local_ray(cpus)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except Exception as e:  # connection refused, bad address, ...
        raise RayUnavailable(f"cannot start or join Ray at {address!r}: {type(e).__name__}: {e}") from None


def run_ray(specs: Sequence[EnvironmentSpec], config: BatchConfig, address: str = "local", workers: int = 2,
            on_record: OnRecord | None = None,
            on_status: Callable[[str], None] | None = None) -> list[EpisodeRecord]:
    """Run the batch on Ray; see the module docstring for `address`. `on_status(text)` is told what starts (a
    local Ray instance, or joining a cluster) and when it is ready, since that can take a minute or more."""
    say = on_status or (lambda text: None)
    ray = _ray()
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    started_here = False
    if not ray.is_initialized():
        t0 = time.perf_counter()
        say(f"starting a local Ray instance ({workers} CPU(s): its head, object store and worker processes); "
            "this takes seconds to a minute or more" if address == "local" else
            f"joining the Ray cluster at {address}")
        join_ray(address, workers)
        started_here = True
        say(f"Ray is ready after {time.perf_counter() - t0:.1f} s; {len(specs)} environment(s) on up to {workers} "
            "worker(s), each importing coworkenv on its first task")
    try:
        task = ray.remote(num_cpus=1, max_retries=1)(run_env_jsonl)
        seeds = config.seeds()
        cfg_ref = ray.put(config)
        results: dict[int, list[EpisodeRecord]] = {}
        pending: dict[Any, int] = {}
        queue = list(enumerate(specs))
        while queue or pending:
            while queue and len(pending) < workers:
                i, spec = queue.pop(0)
                pending[task.remote(spec.canonical_json(), cfg_ref, seeds)] = i
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i = pending.pop(ref)
                try:
                    results[i] = records_from_jsonl(ray.get(ref))
                except ray.exceptions.RayError as e:  # a task that raised, a worker or node that died twice
                    for other in pending:
                        ray.cancel(other)
                    raise _task_failure(e, specs[i].id, sum(map(len, results.values()))) from None
                for rec in results[i]:
                    if on_record:
                        on_record(rec)
        return [rec for i in range(len(specs)) for rec in results[i]]
    finally:
        if started_here and address == "local":
            ray.shutdown()
