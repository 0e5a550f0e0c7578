"""Where a batch runs: here (`run_local`, N processes) or on Ray (`run_ray`), chosen by one argument."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from synth.spec import EnvironmentSpec

from workspace_sim.record import EpisodeRecord
from .batch import BatchConfig, OnRecord, run_local


def run_batch(specs: Sequence[EnvironmentSpec], config: BatchConfig, workers: int = 1, ray: str | None = None,
              on_record: OnRecord | None = None,
              on_status: Callable[[str], None] | None = None) -> list[EpisodeRecord]:
    """Run a batch locally or, with `ray` ("local" or a cluster address), on Ray; records in job order.
    `on_status(text)` hears what Ray is starting and when it is ready (its start takes seconds to minutes)."""
    if ray is not None:
        from .ray_executor import run_ray  # Ray is imported only when asked for

        return run_ray(specs, config, address=ray, workers=workers, on_record=on_record, on_status=on_status)
    return run_local(specs, config, workers, on_record)
