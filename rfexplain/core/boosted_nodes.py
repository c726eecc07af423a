"""A boosted model's trees, given as :class:`~rfexplain.core.imported.NodeArrays` by its reader
(:mod:`rfexplain.core.boosted_import`, :mod:`rfexplain.core.xgboost_import`,
:mod:`rfexplain.core.lightgbm_import`), read into raw trees of the additive vote with the forests'
missing values (:mod:`rfexplain.core.missing_routes`); the score vectors of their leaves."""

from __future__ import annotations

from typing import Any

from rfexplain.core.imported import NodeArrays
from rfexplain.core.missing_routes import missing_features, read_tree

__all__ = ["read_boosted", "leaf_vector", "one_leaf"]


def read_boosted(
    nodes: list[NodeArrays], n_features: int, missing: Any, names: Any, shown: bool | None = None
) -> tuple[list[dict[str, Any]], tuple[int, ...]]:
    """The raw trees of a boosted model's trees ``nodes`` and the features whose NaN they route:
    those ``missing`` chooses (:func:`~rfexplain.core.missing_routes.missing_features`, ``names``
    its feature names or ``None``; ``shown`` whether the model shows training with missing
    values, else read off the trees as for scikit-learn's), read as the forests' missing values
    (:func:`~rfexplain.core.missing_routes.read_tree`, :mod:`rfexplain.core.missing_routes`)."""
    known = [f"x{i}" for i in range(n_features)] if names is None else [str(n) for n in names]
    chosen = missing_features(nodes, n_features, missing, known, shown)
    return [read_tree(tree, tree.vectors, chosen) for tree in nodes], tuple(sorted(chosen))


def leaf_vector(value: float, k: int, n_scores: int, reverse: bool = False) -> list[float]:
    """The score vector of a leaf adding ``value`` to raw score ``k`` of ``n_scores``: a binary
    model's one raw score is the second class's score (the first's when ``reverse``)."""
    if n_scores == 1:
        return [float(value), 0.0] if reverse else [0.0, float(value)]
    vector = [0.0] * n_scores
    vector[k] = float(value)
    return vector


def one_leaf(vector: list[float]) -> dict[str, Any]:
    """A raw tree of one leaf adding ``vector`` (a model's initial scores)."""
    return {"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0], "proba": [vector]}
