"""Missing values as one more state: a scikit-learn tree rewritten with ``<=`` tests only
(docs/design.md, section 1).

scikit-learn (1.3 on) sends a NaN at every split by the node's ``missing_go_to_left`` flag, and a
number by ``x <= threshold`` (a threshold ``+inf`` sends every number left, ``-inf`` right). The
forest model only has tests ``state <= j`` over the ordered states of a feature. Taking NaN as the
state above a threshold ``+inf`` (``x <= inf`` holds for every number and never for NaN, as in
IEEE 754; it is also where ``numpy.searchsorted`` puts NaN) makes a split whose NaN goes right
such a test already. A split whose NaN goes left, or with an infinite threshold, becomes a test
``x <= inf`` (is ``x`` a number?) whose left subtree is the split read on numbers and whose right
subtree is the NaN child read with ``x`` missing. Along every path each feature's presence is
tested at most once: below the test, the feature is known to be a number (its splits are plain
tests) or known missing (its splits are skipped to their NaN child), so a tree grows by at most
one copy of a subtree per feature tested missing above it.

The copies can multiply: a path meeting splits that send NaN left on ``k`` different features
holds up to ``2**k`` copies of what lies below them, so deep trees over many features can grow by
orders of magnitude (a tree path is the engines' unit; shared subtrees would need a DAG). A tree
that grows past :data:`MAX_GROWTH` times its size (plus :data:`GROWTH_ALLOWANCE` nodes) is
refused, naming the remedies.

Features outside the chosen set keep their number-only reading: a split with an infinite
threshold is its one child reachable by numbers, and NaN routing is dropped (NaN is refused
there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rfexplain.core.errors import UnsupportedModelError

__all__ = ["RoutedTree", "route_missing", "MAX_GROWTH", "GROWTH_ALLOWANCE"]

#: The most a tree may grow by when its splits that send NaN left are rewritten (nodes after /
#: nodes before), beyond an allowance of :data:`GROWTH_ALLOWANCE` nodes for small trees.
MAX_GROWTH = 64
GROWTH_ALLOWANCE = 10_000


@dataclass
class RoutedTree:
    """A tree in preorder: per node, its feature (``-1`` at a leaf), raw threshold, children (``-1``
    at a leaf) and ``source``, the scikit-learn node it copies (the leaf whose values it has)."""

    feature: list[int] = field(default_factory=list)
    threshold: list[float] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    right: list[int] = field(default_factory=list)
    source: list[int] = field(default_factory=list)

    def _add(self, source: int) -> int:
        self.feature.append(-1)
        self.threshold.append(0.0)
        self.left.append(-1)
        self.right.append(-1)
        self.source.append(source)
        return len(self.feature) - 1

    def _split(self, node: int, feature: int, threshold: float, left: int, right: int) -> None:
        self.feature[node], self.threshold[node] = feature, threshold
        self.left[node], self.right[node] = left, right


def route_missing(tree: Any, missing: frozenset[int]) -> RoutedTree:
    """The ``sklearn.tree._tree.Tree`` ``tree`` (or a boosted model's
    :class:`~rfexplain.core.imported.NodeArrays`) with NaN of the features in ``missing`` as the
    state above ``+inf`` (see the module docstring); its live nodes only, the root first."""
    children_left = np.asarray(tree.children_left).tolist()
    children_right = np.asarray(tree.children_right).tolist()
    features = np.asarray(tree.feature).tolist()
    thresholds = np.asarray(tree.threshold, dtype=np.float64).tolist()
    go_left = np.asarray(getattr(tree, "missing_go_to_left", np.zeros(len(features), dtype=bool))).tolist()
    out = RoutedTree()
    limit = MAX_GROWTH * len(features) + GROWTH_ALLOWANCE
    # (sklearn node, features known to be numbers, features known missing, slot to fill)
    stack: list[tuple[int, frozenset[int], frozenset[int], int]] = [(0, frozenset(), frozenset(), out._add(0))]
    while stack:
        node, present, absent, slot = stack.pop()
        while children_left[node] >= 0:  # skip the splits this path decides already
            f, t = features[node], thresholds[node]
            if f in absent:
                node = children_left[node] if go_left[node] else children_right[node]
            elif math.isinf(t) and (f in present or f not in missing):
                node = children_left[node] if t > 0 else children_right[node]
            else:
                break
        out.source[slot] = node
        if children_left[node] < 0:
            continue
        f, t = features[node], thresholds[node]
        if f in present or f not in missing or not (go_left[node] or math.isinf(t)):
            # a plain test; NaN (if f may be missing and is not known a number) goes right with it,
            # so on the left x[f] is a number
            left, right = out._add(children_left[node]), out._add(children_right[node])
            out._split(slot, f, t, left, right)
            stack.append((children_right[node], present, absent, right))
            stack.append((children_left[node], present | ({f} & missing), absent, left))
        else:  # is x[f] a number? then the split on numbers, else its NaN child
            if len(out.feature) > limit:
                raise UnsupportedModelError(
                    f"reading missing values would grow a tree of {len(features)} nodes past {limit} nodes (its "
                    "splits send NaN left on many features along deep paths, and each such split copies what lies "
                    "below it): name fewer features with missing=[...], read without them (missing='none'), or "
                    "train with a smaller max_depth"
                )
            number, nan = out._add(node), out._add(node)
            out._split(slot, f, math.inf, number, nan)
            stack.append((node, present, absent | {f}, nan))
            stack.append((node, present | {f}, absent, number))
    return out
