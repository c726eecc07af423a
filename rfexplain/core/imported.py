"""A fitted model's trees as raw node arrays, whatever library fitted it: what the readers
(:mod:`rfexplain.core.sklearn_import`, :mod:`rfexplain.core.boosted_import`,
:mod:`rfexplain.core.xgboost_import`) give :meth:`Forest.from_raw_trees
<rfexplain.core.forest.Forest.from_raw_trees>`, and the pruning of splits no finite input passes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ImportedModel", "NodeArrays", "live_nodes"]


@dataclass(frozen=True)
class NodeArrays:
    """One fitted tree of any library as the node arrays of a ``sklearn.tree._tree.Tree`` (what
    :func:`rfexplain.core.missing_routes.read_tree` and
    :func:`~rfexplain.core.missing_routes.missing_features` read): per node its children (``-1``
    at a leaf), feature, threshold (a number ``x`` goes left iff ``x <= threshold``), whether a
    missing value (NaN) goes left, its number of training samples (``0`` where the library does
    not say) and its score vector (``vectors``, one row per node; a leaf's is what it adds).
    ``left_states`` holds, at a boosted model's native categorical split, the category codes that
    go left, ``-1`` standing for every code the model does not know (NaN going by
    ``missing_go_to_left``; :mod:`rfexplain.core.boosted_nodes`), or at a set split of a numeric
    feature (LightGBM's zero band) the indices of the intervals between its thresholds that go
    left; ``None`` at the other nodes; it is ``None`` for a tree without such splits."""

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    missing_go_to_left: np.ndarray
    n_node_samples: np.ndarray
    vectors: np.ndarray
    left_states: tuple[frozenset[int] | None, ...] | None = None

    @classmethod
    def of_rows(
        cls,
        rows: list[tuple[int, float, int, int, bool, list[float]]],
        sets: dict[int, frozenset[int]] | None = None,
    ) -> NodeArrays:
        """The arrays of nodes given one row each: ``(feature, threshold, left, right, NaN goes
        left, vector)`` (``-1`` feature and children at a leaf), no sample counts; ``sets`` the
        codes going left at the native categorical splits, by node."""
        feature, threshold, left, right, nan_left, vectors = zip(*rows)
        return cls(
            children_left=np.asarray(left, dtype=np.intp),
            children_right=np.asarray(right, dtype=np.intp),
            feature=np.asarray(feature, dtype=np.intp),
            threshold=np.asarray(threshold, dtype=np.float64),
            missing_go_to_left=np.asarray(nan_left, dtype=bool),
            n_node_samples=np.zeros(len(rows), dtype=np.int64),
            vectors=np.asarray(vectors, dtype=np.float64),
            left_states=tuple(sets.get(node) for node in range(len(rows))) if sets else None,
        )


@dataclass(frozen=True)
class ImportedModel:
    trees: list[dict[str, Any]]
    n_features: int
    classes: list[Any]
    feature_names: list[str] | None
    source: str
    #: The vote the model's own ``predict`` takes: ``"soft"`` for forests, ``"hard"`` for a tree,
    #: ``"additive"`` for a gradient-boosted model (:mod:`rfexplain.core.boosted_import`).
    own_vote: str
    #: The features whose missing values (NaN) the trees route, in increasing order
    #: (:func:`rfexplain.core.missing_routes.missing_features`).
    missing: tuple[int, ...] = ()
    #: Per feature, ``None`` for a numeric one, else the labels of a categorical feature's states
    #: (:attr:`Forest.categories <rfexplain.core.forest.Forest.categories>`); empty when every
    #: feature is numeric.
    categories: tuple[tuple[str, ...] | None, ...] = ()


def live_nodes(tree: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tree without its splits that no finite input passes: ``(kept nodes, left, right)``,
    the children renumbered into the kept order (the root first).

    scikit-learn (1.3 on) trains on data with missing values; a split that separates the missing
    values from every finite one stores the threshold ``+inf`` and sends every finite value left
    (``x <= inf``), a threshold ``-inf`` every finite value right. Read without missing values
    (:func:`rfexplain.core.missing_routes.missing_features`), such a node is its one child the
    inputs explained reach, and reading it as a test would put an infinite threshold in the
    feature's domain. The other nodes' missing-value routing (``missing_go_to_left``) concerns
    NaN only and is ignored for the same reason (:mod:`rfexplain.core.missing_routes` reads it for
    the features that may be missing)."""
    children_left = np.asarray(tree.children_left, dtype=np.intp)
    children_right = np.asarray(tree.children_right, dtype=np.intp)
    threshold = np.asarray(tree.threshold)
    if not np.isinf(threshold[children_left >= 0]).any():  # the usual case: every node kept as it is
        return np.arange(len(children_left)), children_left, children_right

    def skip_dead(node: int) -> int:
        while children_left[node] >= 0 and np.isinf(threshold[node]):
            node = int(children_left[node] if threshold[node] > 0 else children_right[node])
        return node

    keep: list[int] = []
    children: list[tuple[int, int]] = []  # per kept node, its live children (old ids; -1 at a leaf)
    stack = [skip_dead(0)]
    while stack:
        node = stack.pop()
        keep.append(node)
        pair = (-1, -1)
        if children_left[node] >= 0:
            pair = (skip_dead(int(children_left[node])), skip_dead(int(children_right[node])))
            stack.extend(reversed(pair))
        children.append(pair)
    index = {node: i for i, node in enumerate(keep)}
    index[-1] = -1
    left = np.asarray([index[lo] for lo, _ in children], dtype=np.intp)
    right = np.asarray([index[hi] for _, hi in children], dtype=np.intp)
    return np.asarray(keep, dtype=np.intp), left, right
