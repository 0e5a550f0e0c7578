"""The network-path benchmark runs and gives every key the issue names, each beside its same-run baseline and its
goal (no timing asserted: the machine is shared)."""

from __future__ import annotations

import math

from benchmarks.bench_http import figures


def test_http_bench_keys_exist_and_are_sane() -> None:
    out = {f["key"]: f for f in figures(n=5, episodes=2, concurrent=3, calls_each=2, starts=1)}
    assert set(out) == {"http_call_ms", "http_call_sdk_ms", "http_call_httpx_ms", "http_reset_ms", "http_create_ms",
                        "http_episode_ms", "http_reset_call_ms",
                        "http_episode_next_ms", "http_episode_sdk_ms", "remote_episodes_per_s", "http_concurrent_calls_per_s",
                        "http_concurrent_p99_ms", "serve_cold_start_ms", "serve_http_cold_start_ms", "serve_import_ms",
                        "serve_first_call_ms", "serve_http_first_call_ms", "serve_http_cold_start_vs_fastapi_ms",
                        "http_call_vs_fastapi_ms", "http_reset_vs_fastapi_ms", "http_create_vs_fastapi_ms",
                        "http_episode_next_vs_fastapi_ms", "serve_cold_start_vs_fastapi_ms"}
    baselines = {f["baseline_key"] for f in out.values()}
    assert baselines == {"rest_call_ms", "rest_reset_ms", "rest_episode_ms", "remote_before_episodes_per_s",
                         "http_single_calls_per_s", "http_concurrent_p50_ms", "rest_cold_start_ms", "rest_import_ms",
                         "rest_fastapi_cold_start_ms", "rest_fastapi_call_ms", "rest_fastapi_reset_ms",
                         "rest_fastapi_episode_ms"}  # the dev extra has fastapi (through openenv-core)
    for f in out.values():
        assert math.isfinite(f["value"]) and f["value"] > 0, f
        assert math.isfinite(f["baseline"]) and f["baseline"] > 0, f
    for key in ("http_call_ms", "http_reset_ms", "http_create_ms", "http_episode_next_ms", "remote_episodes_per_s",
                "serve_cold_start_ms", "serve_http_cold_start_ms", "serve_http_cold_start_vs_fastapi_ms"):
        assert "goal" in out[key]["note"], key
    assert out["http_concurrent_p99_ms"]["value"] >= out["http_concurrent_p99_ms"]["baseline"]  # p99 >= p50
    assert out["http_episode_ms"]["value"] > out["http_call_ms"]["value"]  # an episode holds a call
    assert out["http_episode_next_ms"]["value"] > out["http_call_ms"]["value"]
    assert out["http_episode_ms"]["baseline"] > out["http_call_ms"]["baseline"]  # the REST episode is reset + call
    assert "heaviest: " in out["serve_import_ms"]["note"]
    assert out["serve_first_call_ms"]["value"] > out["serve_cold_start_ms"]["value"]  # the call comes after
