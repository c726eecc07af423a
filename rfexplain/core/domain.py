"""Domain constraints: value ranges per feature and features that may not change.

Both are applied the same way, by **restricting the forest** to the allowed part of the input
space, so every engine (and the oracle) honours them without knowing about them:

- ``bounds`` ``{feature: (low, high)}`` keeps, for a numeric feature, only the states that meet
  ``[low, high]``: a tree test whose threshold lies outside the range always goes the same way
  and is removed, and the forest records the range so that instances outside it are refused and
  witness values are taken inside it. A sufficient reason of the restricted forest is sufficient
  *for inputs within the bounds* (its rendering says so).
- ``fixed`` ``{feature: state}`` (what ``immutable=`` means for one instance) keeps a single
  state of the feature: necessary and contrastive reasons and flips of the restricted forest then
  never change it ("what would have to change, given that these cannot").

Example
-------
>>> from rfexplain.core.forest import Forest
>>> raw = [{"feature": [0, -1, -1], "threshold": [5.0, 0, 0], "left": [1, -1, -1],
...         "right": [2, -1, -1], "label": [0, 0, 1]}]
>>> forest = Forest.from_raw_trees(raw, n_features=1, classes=["no", "yes"])
>>> restrict(forest, bounds={0: (0.0, 4.0)}).thresholds
((),)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from rfexplain.core.errors import InvalidInstanceError
from rfexplain.core.forest import Forest, Tree

__all__ = ["restrict"]


def _as_float32(low: float, high: float) -> tuple[float, float]:
    """``[low, high]`` as float32 numbers (rounded to nearest): an input ``x`` with
    ``low <= x <= high`` has ``low32 <= float32(x) <= high32``, rounding being monotone."""
    return float(np.float32(low)), float(np.float32(high))


def restrict(
    forest: Forest,
    *,
    bounds: Mapping[int, tuple[float, float]] | None = None,
    fixed: Mapping[int, int] | None = None,
) -> Forest:
    """The forest on the part of the input space allowed by ``bounds`` and ``fixed``.

    Raises :class:`InvalidInstanceError` for an empty range or a range on a categorical feature.
    """
    n = forest.n_features
    ranges = [(0, forest.n_states(f) - 1) for f in range(n)]
    raw_bounds: list[tuple[float, float] | None] = list(forest.bounds) if forest.bounds else [None] * n
    for f, (low, high) in (bounds or {}).items():
        if forest.categories and forest.categories[f] is not None:
            raise InvalidInstanceError(f"bounds apply to numeric features; {forest.feature_names[f]!r} is categorical")
        if not (low <= high) or math.isnan(low) or math.isnan(high):
            raise InvalidInstanceError(
                f"bounds of {forest.feature_names[f]!r} must satisfy low <= high, got {(low, high)}"
            )
        lo, hi = _as_float32(float(low), float(high))
        old = raw_bounds[f]
        if old is not None:
            lo, hi = max(lo, old[0]), min(hi, old[1])
        if lo > hi:
            raise InvalidInstanceError(f"the bounds of {forest.feature_names[f]!r} contain no float32 number")
        raw_bounds[f] = (lo, hi)
        ts = np.asarray(forest.thresholds[f], dtype=np.float64)
        ranges[f] = (int(np.searchsorted(ts, lo, side="left")), int(np.searchsorted(ts, hi, side="left")))
    for f, state in (fixed or {}).items():
        ranges[f] = (state, state)
        if not (forest.categories and forest.categories[f] is not None) and not math.isnan(
            forest.state_value(f, state)
        ):
            low, high = forest.state_interval(f, state)  # a missing value fixed bounds no number
            lo = -math.inf if math.isinf(low) else float(np.nextafter(np.float32(low), np.float32(np.inf)))
            old = raw_bounds[f]
            raw_bounds[f] = (max(lo, old[0]), min(high, old[1])) if old is not None else (lo, high)
    thresholds = [forest.thresholds[f][lo:hi] for f, (lo, hi) in enumerate(ranges)]
    categories = None
    if forest.categories:
        categories = [
            None if labels is None else labels[lo : hi + 1] for labels, (lo, hi) in zip(forest.categories, ranges)
        ]
        for f, labels in enumerate(forest.categories):
            if labels is not None and ranges[f] != (0, len(labels) - 1) and ranges[f][0] != ranges[f][1]:
                raise InvalidInstanceError("a categorical feature can be restricted to one category only")
    trees = [_prune(tree, ranges) for tree in forest.trees]
    return Forest(
        thresholds=thresholds,
        trees=trees,
        classes=forest.classes,
        feature_names=forest.feature_names,
        source=forest.source,
        categories=categories,
        bounds=raw_bounds if any(b is not None for b in raw_bounds) else None,
        vote=forest.vote,
    )


def _prune(tree: Tree, ranges: list[tuple[int, int]]) -> Tree:
    """``tree`` with the tests decided by the state ranges removed and splits re-indexed."""
    feature: list[int] = []
    split: list[int] = []
    left: list[int] = []
    right: list[int] = []
    label: list[int] = []
    proba: list[tuple[float, ...] | None] = []

    def emit(node: int) -> int:
        while tree.feature[node] >= 0:
            f, j = tree.feature[node], tree.split[node]
            lo, hi = ranges[f]
            if j < lo:
                node = tree.right[node]
            elif j >= hi:
                node = tree.left[node]
            else:
                break
        me = len(feature)
        f = tree.feature[node]
        feature.append(f)
        split.append(tree.split[node] - ranges[f][0] if f >= 0 else -1)
        left.append(-1)
        right.append(-1)
        label.append(tree.label[node])
        proba.append(tree.proba[node] if tree.proba is not None else None)
        if f >= 0:
            left[me] = emit(tree.left[node])
            right[me] = emit(tree.right[node])
        return me

    emit(0)
    return Tree(
        tuple(feature),
        tuple(split),
        tuple(left),
        tuple(right),
        tuple(label),
        tuple(proba) if tree.proba is not None else None,
    )
