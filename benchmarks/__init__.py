"""Speed figures. Each `bench_<area>.py` exposes `run(quick: bool) -> list[dict]`; discovered, not listed.

A figure is {"key", "value", "unit", "baseline_key", "baseline", "note"} (baseline measured in the
same process on the same data, since these machines are noisy).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any


def areas() -> list[str]:
    """Names of the benchmark areas available."""
    return sorted(i.name[len("bench_"):] for i in pkgutil.iter_modules(__path__) if i.name.startswith("bench_"))


def run_area(area: str, quick: bool = False) -> list[dict[str, Any]]:
    """Run one area's benchmarks and return its figures."""
    module = importlib.import_module(f"{__name__}.bench_{area}")
    return list(module.run(quick))
