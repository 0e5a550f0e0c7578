"""Shared test set-up. With COWORKENV_NO_SKIP=1 (set by .ci/run) every skip becomes a failure."""

from __future__ import annotations

import os

import pytest

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
