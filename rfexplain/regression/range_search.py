"""The exact range of a regression forest's prediction when only some features change.

Best-first branch and bound over boxes of states (Kantchelian, Tygar and Joseph (2016) [KTJ16]
pose the same largest sum over consistent leaves as a mixed-integer program; Chen et al. (2019)
[Che19] bound it per tree as here). A box fixes the kept features to the instance's state and lets each free
feature range over an interval of its states. Its bound is the sum over trees of the largest
leaf value among the leaves whose box meets it. When the leaves reaching those maxima have boxes
with a common point inside the box, the bound is reached there; otherwise the box is cut in two
on a feature where they have none, between the lowest upper end and the rest. Boxes are searched
depth first, the half with the higher bound first, each holding the rows of the leaves that meet
it (a half's are those of its parent that meet it on the feature cut). A box is dropped when its
bound is below the best value found by more than the rounding error of a float64 sum; every
bound reached is compared with the best exactly (rationals), so the answer is the exact maximum.
The minimum is the maximum of the negated values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from rfexplain.core.budget import Budget
from rfexplain.regression.model import RegressionForest

__all__ = ["PredictionRange", "LeafBoxes", "prediction_range"]


@dataclass(frozen=True)
class PredictionRange:
    """The exact lowest and highest prediction over the inputs that agree with the instance on
    every feature but ``free``, each with a state vector reaching it (``low_states``,
    ``high_states``) and the raw values of an input there (``low_values``, ``high_values``)."""

    free: tuple[int, ...]
    low: Fraction
    high: Fraction
    low_states: tuple[int, ...]
    high_states: tuple[int, ...]
    low_values: tuple[float, ...]
    high_values: tuple[float, ...]

    @property
    def width(self) -> Fraction:
        return self.high - self.low

    def __str__(self) -> str:
        return f"[{float(self.low)!r}, {float(self.high)!r}]"


class LeafBoxes:
    """Every leaf of the forest as a box of states (``lo``/``hi`` rows, one column per feature),
    rows grouped by tree (``starts``), with its value."""

    def __init__(self, forest: RegressionForest) -> None:
        n_states = forest.base.states_per_feature
        lows: list[list[int]] = []
        highs: list[list[int]] = []
        values: list[float] = []
        starts: list[int] = []
        for t, tree in enumerate(forest.base.trees):
            starts.append(len(values))
            for box, leaf in tree.leaf_paths(n_states):
                lows.append([box.get(f, (0, n - 1))[0] for f, n in enumerate(n_states)])
                highs.append([box.get(f, (0, n - 1))[1] for f, n in enumerate(n_states)])
                values.append(forest.leaf_value(t, leaf))
        self.lo = np.asarray(lows, dtype=np.int64).reshape(len(values), len(n_states))
        self.hi = np.asarray(highs, dtype=np.int64).reshape(len(values), len(n_states))
        self.value = np.asarray(values, dtype=np.float64)
        self.starts = np.asarray(starts, dtype=np.int64)
        #: a bound on the rounding error of any float64 sum of one leaf value per tree
        self.slack = len(starts) * 2.0**-50 * float(sum(np.abs(v).max() for v in np.split(self.value, starts[1:])))


def _meeting(boxes: LeafBoxes, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The rows of the leaves whose box meets the box ``[lo, hi]``, in order."""
    return np.flatnonzero(np.all((boxes.lo <= hi) & (boxes.hi >= lo), axis=1))


def _best_per_tree(boxes: LeafBoxes, values: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    """Per tree, the first of the ``rows`` (sorted) with the largest value among its own
    (``None``: a tree has none)."""
    cuts = np.searchsorted(rows, boxes.starts)
    sizes = np.diff(np.append(cuts, len(rows)))
    if not sizes.all():
        return None
    candidates = values[rows]
    best = np.maximum.reduceat(candidates, cuts)
    reaching = np.flatnonzero(candidates == np.repeat(best, sizes))  # rows at their tree's best
    return rows[reaching[np.searchsorted(reaching, cuts)]]  # the first of each tree, as argmax


#: A box to search: its bound, ``lo``, ``hi``, the rows of the leaves meeting it, each tree's best row.
_Open = tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _maximum(
    boxes: LeafBoxes, values: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: Budget
) -> tuple[Fraction, tuple[int, ...]]:
    """The exact largest sum of ``values`` (one leaf per tree) over the box ``[lo, hi]``, with a
    state vector reaching it."""
    best: tuple[Fraction, tuple[int, ...]] | None = None

    def opened(lo: np.ndarray, hi: np.ndarray, meeting: np.ndarray) -> _Open | None:
        rows = _best_per_tree(boxes, values, meeting)
        if rows is None:
            return None
        bound = float(values[rows].sum())
        if best is not None and bound < float(best[0]) - boxes.slack:
            return None
        return bound, lo, hi, meeting, rows

    root = opened(lo, hi, _meeting(boxes, lo, hi))
    stack = [root] if root is not None else []
    while stack:
        budget.check("searching the prediction's range")
        bound, lo, hi, meeting, rows = stack.pop()
        if best is not None and bound < float(best[0]) - boxes.slack:
            continue
        common_lo = np.maximum(lo, boxes.lo[rows].max(axis=0))
        common_hi = np.minimum(hi, boxes.hi[rows].min(axis=0))
        apart = np.flatnonzero(common_lo > common_hi)
        if len(apart) == 0:  # the bound is reached at common_lo
            exact = sum((Fraction(float(v)) for v in values[rows]), Fraction(0))
            if best is None or exact > best[0]:
                best = (exact, tuple(int(s) for s in common_lo))
            continue
        f = int(apart[0])
        cut = int(common_hi[f])  # lo[f] <= cut < hi[f]: both halves hold a state
        left_hi, right_lo = hi.copy(), lo.copy()
        left_hi[f], right_lo[f] = cut, cut + 1
        halves = [
            opened(lo, left_hi, meeting[boxes.lo[meeting, f] <= cut]),
            opened(right_lo, hi, meeting[boxes.hi[meeting, f] > cut]),
        ]
        stack.extend(sorted((h for h in halves if h is not None), key=lambda h: h[0]))  # the higher bound first
    assert best is not None, "every tree has a leaf in every box of states"
    return best


def prediction_range(
    forest: RegressionForest,
    boxes: LeafBoxes,
    states: Sequence[int],
    values: Sequence[float],
    free: Iterable[int],
    budget: Budget | None = None,
) -> PredictionRange:
    """The exact range of the prediction over the inputs agreeing with the instance (``states``,
    raw ``values``) on every feature but ``free`` (see the module docstring)."""
    budget = budget or Budget()
    chosen = tuple(sorted({int(f) for f in free}))
    n_states = forest.base.states_per_feature
    lo = np.asarray(states, dtype=np.int64)
    hi = lo.copy()
    for f in chosen:
        lo[f], hi[f] = 0, n_states[f] - 1
    top, top_states = _maximum(boxes, boxes.value, lo, hi, budget)
    bottom, bottom_states = _maximum(boxes, -boxes.value, lo, hi, budget)
    n = forest.n_trees
    return PredictionRange(
        free=chosen,
        low=-bottom / n,
        high=top / n,
        low_states=bottom_states,
        high_states=top_states,
        low_values=forest.base.values_for_states(bottom_states, values),
        high_values=forest.base.values_for_states(top_states, values),
    )
