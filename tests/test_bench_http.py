"""The network-path benchmark runs and gives every key the issue names, each sane (no timing asserted)."""

from __future__ import annotations

import math

from benchmarks.bench_http import figures


def test_http_bench_keys_exist_and_are_sane() -> None:
    out = {f["key"]: f for f in figures(n=5, episodes=2, concurrent=3, calls_each=2, starts=1)}
    assert set(out) == {"http_call_ms", "http_call_legacy_ms", "mcp_client_call_ms", "http_episode_ms",
                        "http_episode_uncached_ms", "http_episode_legacy_ms", "http_concurrent_calls_per_s",
                        "http_concurrent_p99_ms", "remote_episodes_per_s", "serve_cold_start_ms"}
    baselines = {f["baseline_key"] for f in out.values() if f["baseline_key"]}
    assert {"rest_floor_call_ms", "mock_post_ms", "remote_fresh_episodes_per_s", "http_single_calls_per_s", "http_call_ms"} <= baselines
    for f in out.values():
        assert math.isfinite(f["value"]) and f["value"] > 0, f
        assert f["baseline"] is None or (math.isfinite(f["baseline"]) and f["baseline"] > 0), f
    assert out["http_concurrent_p99_ms"]["value"] >= out["http_concurrent_p99_ms"]["baseline"]  # p99 >= p50
    assert out["http_episode_ms"]["value"] > out["http_call_ms"]["value"] * 0.5  # an episode holds a call
    assert out["mcp_client_call_ms"]["value"] > out["mcp_client_call_ms"]["baseline"]  # the SDK does more than POST
