"""Shared test set-up. With COWORKENV_NO_SKIP=1 (set by .ci/run) every skip becomes a failure and hypothesis
draws the same examples on every run."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

# CI draws the same examples on every run, so a red build is a bug in the code, never the luck of a draw
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") or os.environ.get("COWORKENV_NO_SKIP") == "1":
    settings.load_profile("ci")

pytest_plugins = ["pytester"]

NO_SKIP = os.environ.get("COWORKENV_NO_SKIP") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Modules holding a test marked `slow` first, then the others by their number of tests, most first.

    With `--no-loadscope-reorder` (pyproject's addopts) xdist hands modules to its workers in this order, so
    the few end-to-end tests of minutes start at once; ordered by test count alone (xdist's default) a module of
    one long test came last and ran alone at the end of the suite."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    slow = {m for m, its in modules.items() if any(i.get_closest_marker("slow") for i in its)}
    order = sorted(modules, key=lambda m: (m not in slow, 0 if m in slow else -len(modules[m])))
    items[:] = [i for m in order for i in modules[m]]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if NO_SKIP and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where nothing may be skipped: {reason}"


@pytest.fixture(autouse=True)
def _restore_root_logging() -> Iterator[None]:
    """Give each test the root logger as it found it: code under test (`configure_logging` of a server run
    in-process) sets a global level, and a later test at INFO has pytest keep every record it logs."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    root.setLevel(level)
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
    for h in handlers:
        if h not in root.handlers:
            root.addHandler(h)
