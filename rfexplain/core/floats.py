"""Exact, readable numbers: the float32 values scikit-learn's trees compare, as short decimals.

A tree tests ``float32(x) <= t``: every number the package shows (a reason's bounds, a witness's
values, a domain's bounds) stands for a float32 value, so it is written as the **shortest
decimal that reads back as that float32 value** (``float(np.float32(text)) == value``):
``6.1`` for ``6.099999904632568``, ``4.65`` for ``4.650000095367432``.

:func:`float32_number` gives that decimal as a Python float (for JSON; ``json.dumps`` writes a
float's shortest form), optionally on one side of the value; :func:`float32_text` writes it,
padded with zeros to a number of significant digits so that the numbers of one text have even
precision; :func:`significant_digits` counts the digits the shortest form needs.

>>> float32_number(6.099999904632568), float32_number(float("inf"))
(6.1, inf)
>>> float32_text(0.2192, digits=5), float32_text(27550.0, digits=5), float32_text(0.8)
('0.21920', '27550', '0.8')
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

import numpy as np

__all__ = [
    "cell_decimal",
    "float32_number",
    "float32_text",
    "largest_float32_at_most",
    "nearest_float32",
    "significant_digits",
]


def largest_float32_at_most(t: float) -> float:
    """The largest float32 number not above ``t`` (as a float): the same test ``x <= t`` for
    every float32 ``x``."""
    with np.errstate(over="ignore"):  # beyond the largest float32: infinite, then the largest
        f = np.float32(t)
        if float(f) > t:
            f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def nearest_float32(values: Any) -> np.ndarray:
    """``values`` rounded to the nearest float32 numbers, as float64: beyond the largest float32
    number, an infinity of their sign (a threshold no float32 number exceeds, such as LightGBM's
    ``1e308`` of a split that separates the missing values from every number)."""
    with np.errstate(over="ignore"):
        return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64)


def float32_number(value: float, side: int = 0) -> float:
    """The shortest decimal ``d`` (as a float) with ``float32(d) == float32(value)``.

    ``side=-1`` asks for the shortest such ``d <= float32(value)``, ``side=1`` for ``d >=`` it
    (needed where ``d`` is read as a float64 by code that does not round to float32 first, e.g.
    a pipeline's scaler, and ``value`` is the last float32 on its side of a boundary). Infinite
    values and NaN are returned as they are."""
    v = np.float32(value)
    exact = float(v)
    if not math.isfinite(exact):
        return exact
    shortest = float(np.format_float_positional(v, unique=True))
    if side == 0 or (side < 0 and shortest <= exact) or (side > 0 and shortest >= exact):
        return shortest
    precise = Decimal(exact)
    for digits in range(1, 18):
        quantum = Decimal(1).scaleb(precise.adjusted() - digits + 1)
        candidate = float(precise.quantize(quantum, rounding=ROUND_FLOOR if side < 0 else ROUND_CEILING))
        if np.float32(candidate) == v:
            return candidate
    return exact


def _scientific(value: float) -> bool:
    return value != 0 and not 1e-4 <= abs(value) < 1e7


def significant_digits(value: float) -> int:
    """How many significant digits the shortest decimal of ``float32(value)`` has (``0`` has 1)."""
    v = np.float32(value)
    if v == 0 or not math.isfinite(float(v)):
        return 1
    mantissa = np.format_float_scientific(v, unique=True, trim="-").split("e")[0]
    return len(mantissa.lstrip("-").replace(".", ""))


def float32_text(value: float, digits: int | None = None) -> str:
    """``float32(value)`` as its shortest decimal, positional between ``1e-4`` and ``1e7`` and
    scientific beyond; with ``digits``, padded with trailing zeros to that many significant
    digits (never rounded: a ``digits`` below :func:`significant_digits` pads nothing), so a
    text's numbers can share one precision and each still reads back as its float32 value."""
    v = np.float32(value)
    x = float(v)
    if not math.isfinite(x):
        return str(x)
    if _scientific(x):
        mantissa, exponent = np.format_float_scientific(v, unique=True, trim="-").split("e")
    else:
        mantissa, exponent = np.format_float_positional(v, unique=True, trim="-"), ""
    shown = len(mantissa.lstrip("-").replace(".", "").lstrip("0")) or 1  # "27550": 5, "0.05": 1
    missing = (digits or 0) - shown
    if missing > 0:
        mantissa += ("" if "." in mantissa else ".") + "0" * missing
    return mantissa + ("e" + exponent if exponent else "")


def cell_decimal(value: float, thresholds: Sequence[float]) -> float:
    """An input value of a feature tested at ``thresholds`` (``x <= t``, in increasing order) as
    the shortest decimal that reads back as its float32 number, on the side of it that stays in
    its cell: below it when it is the last float32 at or below a threshold, above it when it is
    the first one past a threshold, the number itself when it is both (:func:`float32_number`).
    So the decimal is in the value's cell both for code that rounds it to float32 (scikit-learn's
    trees) and for code that reads it as a float64 first (a pipeline's scaler).

    A float32 ``m`` is the last float32 at or below ``t`` (:func:`largest_float32_at_most`) iff
    ``m <= t`` and the next float32 is above ``t``: two binary searches over the thresholds."""
    v32 = np.float32(value)
    v = float(v32)
    if not math.isfinite(v):
        return v
    with np.errstate(over="ignore"):  # the float32 next to the largest one is infinite
        above = float(np.nextafter(v32, np.float32(np.inf)))
        below = float(np.nextafter(v32, np.float32(-np.inf)))
    top = _any_in(thresholds, v, above)
    bottom = _any_in(thresholds, below, v)
    if top and bottom:
        return v
    return float32_number(v, -1 if top else (1 if bottom else 0))


def _any_in(ordered: Sequence[float], low: float, high: float) -> bool:
    """Whether some entry ``t`` of the increasing ``ordered`` has ``low <= t < high``."""
    i = bisect_left(ordered, low)
    return i < len(ordered) and ordered[i] < high
