"""How many torch CPU threads to use when the user does not say."""

from __future__ import annotations

import os


def default_torch_threads(cpu_count: int | None = None) -> int:
    """One thread on machines with 2 cores or fewer, else min(4, cores).

    Small models gain little from more threads, and on a busy 2-core machine two threads run about
    ten times slower than one (they wait on each other and on the neighbours), so results that must
    not depend on the machine's load use one.
    """
    n = os.cpu_count() if cpu_count is None else cpu_count
    return 1 if (n or 1) <= 2 else min(4, n or 1)
