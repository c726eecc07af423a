"""``rfexplain.core.floats``: the decimals of input values stay in their cells, and writing them
costs a search over the thresholds, not a pass over them."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfexplain.core.floats import cell_decimal, float32_number, largest_float32_at_most

FLOAT32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


def _by_definition(value: float, thresholds: list[float]) -> float:
    """:func:`cell_decimal` as its docstring defines it, over every threshold."""
    v = float(np.float32(value))
    tops = {largest_float32_at_most(t) for t in thresholds}
    top = v in tops
    bottom = float(np.nextafter(np.float32(v), np.float32(-np.inf))) in tops
    if top and bottom:
        return v
    return float32_number(v, -1 if top else (1 if bottom else 0))


@pytest.mark.filterwarnings("ignore:overflow encountered")
@settings(max_examples=300, deadline=None)
@given(FLOAT32, st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=8), st.data())
def test_cell_decimal_is_its_definition(value: float, others: list[float], data: st.DataObject) -> None:
    # thresholds on, just below and just above the value's float32 neighbours, and far ones
    v = np.float32(value)
    near = [float(v), float(np.nextafter(v, np.float32(np.inf))), float(np.nextafter(v, np.float32(-np.inf)))]
    picked = data.draw(st.lists(st.sampled_from(near), max_size=3))
    shifted = [float(np.nextafter(t, data.draw(st.sampled_from([np.inf, -np.inf])))) for t in picked]
    thresholds = sorted(set(others + picked + shifted))
    expected = _by_definition(value, thresholds)
    got = cell_decimal(value, thresholds)
    assert got == expected, (value, thresholds)
    assert float(np.float32(got)) == float(v)  # still the same float32 number


def test_cell_decimal_keeps_the_cell_on_both_sides() -> None:
    t = 4.65  # float32(4.65) = 4.650000095367432 > 4.65: the last float32 at or below is below it
    last = largest_float32_at_most(t)
    assert cell_decimal(last, [t]) <= last  # read as float64, still <= t
    first = float(np.nextafter(np.float32(last), np.float32(np.inf)))
    assert cell_decimal(first, [t]) > t  # read as float64, still past t


def test_cell_decimal_searches_the_thresholds() -> None:
    """On a feature with 200,000 thresholds (a large forest's continuous feature), a value's
    decimal takes a binary search: 200 values in well under a CPU second (a pass over the
    thresholds per value took about 0.2 CPU s each)."""
    thresholds = list(np.cumsum(np.full(200_000, 0.37)))
    values = np.linspace(0.0, thresholds[-1], 200)
    started = time.process_time()
    for value in values:
        cell_decimal(float(value), thresholds)
    assert time.process_time() - started < 1.0
