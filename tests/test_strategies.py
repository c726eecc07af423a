"""The shared hypothesis strategy reaches the cases the engines must handle."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import find, settings

from tests.strategies import forests_and_instances


def tied(case: Any) -> bool:
    forest, instance = case
    counts = forest.flat.vote_counts(np.asarray([instance.states]), forest.n_classes)[0]
    return int((counts == counts.max()).sum()) > 1


def test_ties_are_reachable() -> None:
    forest, instance = find(forests_and_instances(), tied, settings=settings(max_examples=2000, database=None))
    counts = forest.flat.vote_counts(np.asarray([instance.states]), forest.n_classes)[0]
    winners = np.flatnonzero(counts == counts.max())
    assert instance.prediction == winners[0] and len(winners) > 1


def test_multi_class_and_retested_features_are_reachable() -> None:
    def retests(case: Any) -> bool:
        forest, _ = case
        for tree in forest.trees:
            for node in range(tree.n_nodes):
                f = tree.feature[node]
                if f >= 0 and any(tree.feature[c] == f for c in (tree.left[node], tree.right[node])):
                    return True
        return False

    find(
        forests_and_instances(min_classes=4),
        lambda c: c[0].n_classes == 4 and retests(c),
        settings=settings(max_examples=2000, database=None),
    )
