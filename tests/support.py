"""Helpers for tests: small workspaces and the skip-or-fail rule for optional engines."""

from __future__ import annotations

import os

import pytest


def need(condition: bool, reason: str) -> None:
    """Skip when `condition` is false, saying why; under COWORKENV_NO_SKIP=1 (CI) fail instead."""
    if condition:
        return
    if os.environ.get("COWORKENV_NO_SKIP") == "1":
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)
