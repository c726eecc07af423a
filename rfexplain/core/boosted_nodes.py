"""A boosted model's trees, given as :class:`~rfexplain.core.imported.NodeArrays` by its reader
(:mod:`rfexplain.core.boosted_import`, :mod:`rfexplain.core.xgboost_import`,
:mod:`rfexplain.core.lightgbm_import`), read into raw trees of the additive vote with the forests'
missing values (:mod:`rfexplain.core.missing_routes`); the score vectors of their leaves.

A native categorical feature is one categorical feature of the forest (:attr:`Forest.categories
<rfexplain.core.forest.Forest.categories>`) whose value is the category *code* the model reads,
an integer. Its states are the codes ``0, ..., K - 1`` (``K`` one more than the largest code the
model knows), labelled by the codes (``"3"``) unless the reader has the model's own labels for
them, then :data:`~rfexplain.core.set_splits.OTHER`, every other input number (a negative code,
one of ``K`` or more: each library routes all of them alike, see its reader), then, when the
feature may be missing, :data:`~rfexplain.core.set_splits.MISSING` (NaN), the state above the
threshold ``+inf`` as for every feature (:mod:`rfexplain.core.forest`). A reader gives each
native categorical split the codes it sends left (``NodeArrays.left_states``, ``-1`` for the
other codes) and its NaN direction; :func:`read_boosted` rewrites it as a chain of threshold tests
on the state (:func:`~rfexplain.core.set_splits.chain_set_splits`), the cut below the NaN state being the
test ``x <= inf`` (is ``x`` a number?), so that every test sends NaN right and the missing values
are then routed as for a numeric feature.

A numeric feature may have set splits too: LightGBM's splits reading zeros as missing values send
a set of the intervals between the feature's thresholds left, its zero band among them
(:mod:`rfexplain.core.lightgbm_import`). The reader gives those thresholds, the split the
indices of the intervals going left (and its NaN direction), and the chain's cut below interval
``j + 1`` is the test ``x <= thresholds[j]`` (``x <= inf`` below NaN), as for a categorical feature.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rfexplain.core.imported import NodeArrays
from rfexplain.core.missing_routes import missing_features, read_tree
from rfexplain.core.set_splits import MISSING, OTHER, SetSplit, chain_set_splits

__all__ = ["read_boosted", "code_labels", "leaf_vector", "one_leaf", "MAX_CODES", "MAX_CATEGORICAL_NODES"]

#: The most category codes a native categorical feature may have (its largest code plus one).
MAX_CODES = 4096
#: Refuse a tree whose categorical splits would be rewritten into more nodes than this.
MAX_CATEGORICAL_NODES = 200_000


def read_boosted(
    nodes: list[NodeArrays],
    n_features: int,
    missing: Any,
    names: Any,
    shown: bool | None = None,
    codes: Mapping[int, Sequence[str]] | None = None,
    bands: Mapping[int, Sequence[float]] | None = None,
) -> tuple[list[dict[str, Any]], tuple[int, ...], tuple[tuple[str, ...] | None, ...]]:
    """The raw trees of a boosted model's trees ``nodes``, the features whose NaN they route and
    the labels of the categorical features' states (empty without them).

    The missing features are those ``missing`` chooses
    (:func:`~rfexplain.core.missing_routes.missing_features`, ``names`` its feature names or
    ``None``; ``shown`` whether the model shows training with missing values, else read off the
    trees as for scikit-learn's), read as the forests' missing values
    (:func:`~rfexplain.core.missing_routes.read_tree`, :mod:`rfexplain.core.missing_routes`).
    ``codes`` maps each native categorical feature to the labels of its codes ``0, ..., K - 1``;
    its splits are rewritten first (module docstring); one no split tests stays a numeric feature
    without thresholds. ``bands`` maps each numeric feature with set splits (LightGBM's zero band,
    :mod:`rfexplain.core.lightgbm_import`) to its thresholds: its states are the intervals between
    them, the split's ``left_states`` their indices, rewritten the same way."""
    known = [f"x{i}" for i in range(n_features)] if names is None else [str(n) for n in names]
    chosen = missing_features(nodes, n_features, missing, known, shown)
    categories: tuple[tuple[str, ...] | None, ...] = ()
    split = {int(tree.feature[n]) for tree in nodes for n, s in enumerate(tree.left_states or ()) if s is not None}
    codes = {f: labels for f, labels in (codes or {}).items() if f in split}
    cuts = {f: (*(k + 0.5 for k in range(len(labels))), math.inf) for f, labels in codes.items()}
    cuts.update({f: (*thresholds, math.inf) for f, thresholds in (bands or {}).items() if f in split})
    if cuts:
        nodes = [_chained(tree, cuts, chosen) for tree in nodes]
    if codes:
        categories = tuple(
            None if f not in codes else (*codes[f], OTHER, *((MISSING,) if f in chosen else ()))
            for f in range(n_features)
        )
    return [read_tree(tree, tree.vectors, chosen) for tree in nodes], tuple(sorted(chosen)), categories


def _chained(tree: NodeArrays, cuts: Mapping[int, Sequence[float]], chosen: frozenset[int]) -> NodeArrays:
    """``tree`` with its set splits as chains of threshold tests on the state, the cut below state
    ``j + 1`` of feature ``f`` the test ``x <= cuts[f][j]`` (``j + 0.5`` for a categorical
    feature), ``x <= inf`` below the NaN state (module docstring)."""
    if tree.left_states is None:
        return tree
    sets = tree.left_states
    left, right = tree.children_left.tolist(), tree.children_right.tolist()
    feature = tree.feature.tolist()
    nan_left = tree.missing_go_to_left.tolist()
    n_states = [len(cuts.get(f, ())) + (f in chosen) for f in range(max(cuts) + 1)]

    def test(node: int) -> SetSplit | None:
        listed = sets[node]
        if listed is None:
            return None
        k = len(cuts[feature[node]]) - 1  # the last state but the NaN one ("(other)" of a categorical feature)
        other = {k} if -1 in listed else set()
        return SetSplit(
            feature[node], frozenset({c for c in listed if c >= 0} | other | ({k + 1} if nan_left[node] else set()))
        )

    chained = chain_set_splits(
        lambda node: None if left[node] < 0 else (left[node], right[node]),
        test,
        n_states,
        MAX_CATEGORICAL_NODES,
        f"reading its categorical splits would grow a tree past {MAX_CATEGORICAL_NODES} nodes",
    )
    source = np.asarray(chained.source, dtype=np.intp)
    chain = np.asarray(chained.feature) >= 0
    cut = [cuts[f][j] if f >= 0 else 0.0 for f, j in zip(chained.feature, chained.cut)]
    return NodeArrays(
        children_left=np.asarray(chained.left, dtype=np.intp),
        children_right=np.asarray(chained.right, dtype=np.intp),
        feature=np.where(chain, chained.feature, tree.feature[source]),
        threshold=np.where(chain, np.asarray(cut, dtype=np.float64), tree.threshold[source]),
        missing_go_to_left=np.where(chain, False, tree.missing_go_to_left[source]),
        n_node_samples=tree.n_node_samples[source],
        vectors=tree.vectors[source],
    )


def code_labels(names: Sequence[str], top: int) -> list[str]:
    """The labels of the codes ``0, ..., top``: the ``c``-th of ``names`` (the categories a library
    keeps), else the code itself (``"3"``)."""
    return [str(names[c]) if c < len(names) else str(c) for c in range(top + 1)]


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
