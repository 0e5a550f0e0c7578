"""Episode figures on generated environments: teacher episodes per second, direct and through MCP, and Ray scaling.

- `teacher_episodes_per_s_direct`: full recorded teacher episodes (step predicates, records) on one
  core; baseline: the bare reference run through SpecDriver with one final evaluation, same run.
  Target >= 500.
- `teacher_episodes_per_s_mcp`: the same episodes with every call through the in-process MCP
  client; baseline: the direct figure above. Target >= 50.
- `ray_episodes_per_s_{1,2}_workers`: a batch on a private local Ray with 1 and 2 CPUs (start-up
  excluded); the 2-worker figure's baseline is the 1-worker one. Skipped without Ray.
"""

from __future__ import annotations

import importlib.util
import time
from typing import Any

from synth.spec import run_reference
from synth.procedural import generate
from trainers.episodes.batch import BatchConfig
from trainers.episodes.policies import PolicySpec, TeacherPolicy
from trainers.episodes.prepared import PreparedSpec
from trainers.episodes.runner import run_episode


def _specs(n: int) -> list[Any]:
    caps = ("file_management", "document_from_data")
    return [generate(caps[i % len(caps)], i // len(caps)) for i in range(n)]


def _rate(fn: Any, n: int) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
    return n / (time.perf_counter() - t0)


def _figure(key: str, value: float, unit: str, baseline_key: str | None, baseline: float | None,
            note: str) -> dict[str, Any]:
    return {"key": key, "value": round(value, 2), "unit": unit, "baseline_key": baseline_key,
            "baseline": None if baseline is None else round(baseline, 2), "note": note}


def run(quick: bool) -> list[dict[str, Any]]:
    """Measure the figures (quick: fewer episodes)."""
    specs = _specs(4 if quick else 8)
    prepared = [PreparedSpec(s) for s in specs]
    teacher = TeacherPolicy()
    n = 100 if quick else 600
    n_mcp = 10 if quick else 60

    def bare(i: int) -> None:
        spec = specs[i % len(specs)]
        r = run_reference(spec)
        spec.evaluate(r.workspace, r.final_answer)

    def direct(i: int) -> None:
        run_episode(prepared[i % len(prepared)], teacher, seed=i)

    _rate(direct, 20)  # warm up imports and caches
    base = _rate(bare, n)
    rate = _rate(direct, n)
    figures = [_figure("teacher_episodes_per_s_direct", rate, "episodes/s", "bare_reference_runs_per_s", base,
                       f"recorded teacher episodes on {len(specs)} generated environments, one core; target >= 500")]
    from anyio.from_thread import start_blocking_portal

    with start_blocking_portal() as portal:
        def mcp(i: int) -> None:
            run_episode(prepared[i % len(prepared)], teacher, seed=i, transport="mcp", portal=portal)

        mcp(0)
        figures.append(_figure("teacher_episodes_per_s_mcp", _rate(mcp, n_mcp), "episodes/s",
                               "teacher_episodes_per_s_direct", rate,
                               "every call through the in-process MCP client; target >= 50"))
    if importlib.util.find_spec("ray") is not None:
        figures += _ray_figures(specs, 2 if quick else 10)
    return figures


def _ray_figures(specs: list[Any], per_env: int) -> list[dict[str, Any]]:
    import ray

    from trainers.episodes.ray_executor import run_ray, start_local_ray

    config = BatchConfig(PolicySpec("teacher"), episodes_per_env=per_env)
    rates = {}
    for workers in (1, 2):
        start_local_ray(workers)
        try:
            run_ray(specs[:workers], config, workers=workers)  # start the workers and import everything
            t0 = time.perf_counter()
            recs = run_ray(specs, config, workers=workers)
            rates[workers] = len(recs) / (time.perf_counter() - t0)
        finally:
            ray.shutdown()
    note = f"local Ray, {len(specs)} environments x {per_env} teacher episodes, start-up excluded"
    return [_figure("ray_episodes_per_s_1_worker", rates[1], "episodes/s", None, None, note),
            _figure("ray_episodes_per_s_2_workers", rates[2], "episodes/s", "ray_episodes_per_s_1_worker", rates[1],
                    note + "; ideal ratio 2 on two free cores")]
