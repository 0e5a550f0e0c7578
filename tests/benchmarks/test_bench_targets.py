"""Reading and checking bench targets, and the ratio wording (never '0.3x better' for a slower figure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from benchmarks.targets import check, ratio


def test_value_and_ratio_bounds_are_checked() -> None:
    fig = {"key": "read_calls_per_s", "value": 60_000.0, "unit": "calls/s", "baseline": 50.0,
           "note": "target >= 50,000"}
    assert check(fig) == (True, ">= 50,000") and ratio(fig) == 1200
    assert check({**fig, "value": 40_000.0})[0] is False
    restore = {"key": "restore_us", "value": 0.1, "unit": "us", "baseline": 10.0, "note": "target <= 40 us, >= 500x"}
    assert check(restore)[0] is False  # 100x, not 500x
    assert check({**restore, "baseline": 100.0})[0] is True
    assert check({"key": "k", "value": 1.0, "note": "no goal here"}) == (None, "")
    memory = {"key": "memory_ratio", "value": 1.09, "unit": "x", "baseline": 565.0, "note": "target < 2x"}
    assert check(memory)[0] is True and check({**memory, "value": 2.5})[0] is False


@given(value=st.floats(1e-3, 1e6), base=st.floats(1e-3, 1e6), per_s=st.booleans())
def test_ratio_is_above_one_exactly_when_the_figure_beats_its_baseline(value: float, base: float, per_s: bool) -> None:
    fig = {"value": value, "baseline": base, "unit": "calls/s" if per_s else "ms"}
    r = ratio(fig)
    assert r is not None and r > 0
    better = value > base if per_s else value < base
    if value != base:
        assert (r > 1) == better
