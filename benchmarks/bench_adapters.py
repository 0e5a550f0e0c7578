"""Adapter overhead: the same teacher turns played through each framework adapter, against the direct runner.

Each figure is episodes per second of full recorded episodes on generated environments, the turns
taken from teacher records (so every face plays identical episodes); baseline: `run_episode` with
the teacher on the same environments, same run. Ratios near 1 mean the face adds little.

- `gym_episodes_per_s`: `CoworkEnv` (reset/step with JSON text actions). Target >= 0.5x.
- `openenv_episodes_per_s`: `CoworkOpenEnv` in process (the Environment the server wraps; the
  WebSocket hop is OpenEnv's own transport and not measured here). Target >= 0.5x.
- `verifiers_episodes_per_s`: `CoworkVerifiersEnv.setup_state` + `env_response` + the rubric's reward
  (the model call is verifiers' own and excluded). Target >= 0.5x.
Skipped per framework when its package is not installed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import time
from typing import Any

from synth.procedural import generate
from trainers.episodes.policies import TeacherPolicy
from trainers.episodes.prepared import PreparedSpec
from trainers.episodes.runner import run_episode


def _figure(key: str, value: float, baseline: float, note: str) -> dict[str, Any]:
    return {"key": key, "value": round(value, 2), "unit": "episodes/s", "baseline_key": "runner_episodes_per_s",
            "baseline": round(baseline, 2), "note": note}


def _turns(record: Any) -> list[dict[str, Any]]:
    out = []
    for m in record.final.messages:
        if m.role == "assistant":
            out.append({"content": m.content, "calls": [(c.function.name, c.function.arguments, c.id)
                                                         for c in (m.tool_calls or [])]})
    return out


def _rate(fn: Any, n: int) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
    return n / (time.perf_counter() - t0)


def run(quick: bool) -> list[dict[str, Any]]:
    """Measure the figures (quick: fewer episodes)."""
    specs = [generate(c, s) for c in ("file_management", "document_from_data") for s in range(2)]
    prepared = [PreparedSpec(s) for s in specs]
    teacher = TeacherPolicy()
    scripts = [_turns(run_episode(p, teacher, seed=0)) for p in prepared]
    n = 40 if quick else 300
    _rate(lambda i: run_episode(prepared[i % 4], teacher, seed=i), 10)
    base = _rate(lambda i: run_episode(prepared[i % 4], teacher, seed=i), n)
    figures: list[dict[str, Any]] = []

    def text(turn: dict[str, Any], last: bool) -> str:
        if turn["calls"]:
            return json.dumps([{"tool": name, "arguments": args} for name, args, _ in turn["calls"]])
        return json.dumps({"answer": turn["content"]}) if last else turn["content"]

    if importlib.util.find_spec("gymnasium"):
        from trainers.adapters.gym import CoworkEnv

        env = CoworkEnv(specs)

        def gym(i: int) -> None:
            env.reset(seed=i, options={"env": i % 4})
            turns = scripts[i % 4]
            for k, t in enumerate(turns):
                env.step(text(t, k == len(turns) - 1))

        gym(0)
        figures.append(_figure("gym_episodes_per_s", _rate(gym, n), base,
                               "CoworkEnv reset/step with JSON text actions vs run_episode; target >= 0.5x"))
    if importlib.util.find_spec("openenv"):
        from trainers.adapters.common import EpisodeSettings, SpecSource
        from trainers.adapters.openenv import CoworkAction, CoworkOpenEnv, ToolCallAction

        oe = CoworkOpenEnv(SpecSource(specs), EpisodeSettings())

        def openenv(i: int) -> None:
            oe.reset(env=i % 4, seed=i)
            turns = scripts[i % 4]
            for k, t in enumerate(turns):
                if t["calls"]:
                    oe.step(CoworkAction(calls=[ToolCallAction(tool=c, arguments=a) for c, a, _ in t["calls"]]))
                else:
                    oe.step(CoworkAction(answer=t["content"]) if k == len(turns) - 1 else CoworkAction(message=t["content"]))

        openenv(0)
        figures.append(_figure("openenv_episodes_per_s", _rate(openenv, n), base,
                               "CoworkOpenEnv reset/step in process (typed actions) vs run_episode; target >= 0.5x"))
    if importlib.util.find_spec("verifiers"):
        figures.append(_verifiers(specs, scripts, n, base))
    return figures


def _verifiers(specs: list[Any], scripts: list[Any], n: int, base: float) -> dict[str, Any]:
    from trainers.adapters.verifiers_env import load_environment

    env = load_environment(envs=specs)

    async def episode(i: int) -> None:
        state: dict[str, Any] = {"info": {"coworkenv_env": specs[i % 4].id, "seed": i}}
        await env.setup_state(state)  # type: ignore[arg-type]
        for t in scripts[i % 4]:
            msg = {"role": "assistant", "content": t["content"], "tool_calls": [
                {"id": cid, "function": {"name": name, "arguments": json.dumps(args)}} for name, args, cid in t["calls"]]}
            await env.env_response([msg], state)  # type: ignore[arg-type]
            if state.get("final_env_response") is not None:
                break
        await env.coworkenv_reward(state)  # type: ignore[arg-type]

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(episode(0))
        rate = _rate(lambda i: loop.run_until_complete(episode(i)), n)
    finally:
        loop.close()
    return _figure("verifiers_episodes_per_s", rate, base,
                   "CoworkVerifiersEnv setup_state/env_response/reward (model call excluded) vs run_episode; "
                   "target >= 0.5x")
