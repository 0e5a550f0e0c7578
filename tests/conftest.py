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
