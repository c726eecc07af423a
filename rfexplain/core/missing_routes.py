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

:func:`missing_features` chooses the features read with their missing state, :func:`read_tree`
reads a tree (scikit-learn's, or a boosted model's :class:`~rfexplain.core.imported.NodeArrays`)
into a raw tree with them.

Features outside the chosen set keep their number-only reading: a split with an infinite
threshold is its one child reachable by numbers, and NaN routing is dropped (NaN is refused
there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rfexplain.core.errors import InvalidArgumentError, UnsupportedModelError
from rfexplain.core.imported import live_nodes

__all__ = ["RoutedTree", "route_missing", "read_tree", "missing_features", "MAX_GROWTH", "GROWTH_ALLOWANCE"]

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


def read_tree(tree: Any, vectors: np.ndarray, missing: frozenset[int] = frozenset()) -> dict[str, Any]:
    """A raw tree (see :meth:`Forest.from_raw_trees <rfexplain.core.forest.Forest.from_raw_trees>`)
    of the ``sklearn.tree._tree.Tree`` ``tree``, each node's vector (``proba``) the row of
    ``vectors`` of the node it copies and its label that row's argmax; NaN of the features in
    ``missing`` routed as scikit-learn routes it (:func:`route_missing`), splits no number passes
    dropped for the others (:func:`live_nodes`)."""
    if missing:
        routed = route_missing(tree, missing)
        return {
            "feature": routed.feature,
            "threshold": routed.threshold,
            "left": routed.left,
            "right": routed.right,
            "label": np.argmax(vectors[routed.source], axis=1).tolist(),
            "proba": vectors[routed.source].tolist(),
        }
    keep, left, right = live_nodes(tree)
    feature = left >= 0
    return {
        "feature": np.where(feature, tree.feature[keep], -1).tolist(),
        "threshold": np.where(feature, tree.threshold[keep], 0.0).tolist(),
        "left": left.tolist(),
        "right": right.tolist(),
        "label": np.argmax(vectors[keep], axis=1).tolist(),
        "proba": vectors[keep].tolist(),
    }


def missing_features(
    trees: list[Any], n_features: int, missing: Any, names: Any = None, shown: bool | None = None
) -> frozenset[int]:
    """The tested features whose missing values an explanation covers.

    ``missing`` is ``"learned"`` (the default): every tested feature when the model was trained
    with missing values, none otherwise; ``"all"``: every tested feature; ``"none"``: no feature
    (NaN refused everywhere); or a sequence of feature indices or names. A feature no tree tests
    never gets a missing state (the model ignores it).

    Every split of a model trained with missing values holds a NaN direction (scikit-learn's
    ``predict`` routes NaN in every feature): the one learned from the NaN that reached it, or,
    where none did, the child with more training samples. The model does not store which
    features had NaN; it shows that it was trained with some by a split whose threshold is
    infinite (it separates NaN from every number) or whose ``missing_go_to_left`` differs from
    the rule for a split no NaN reached (``n_node_samples[left] > n_node_samples[right]``). A
    model trained with so few NaN that it shows neither is read with ``"all"``. ``shown``, when
    given, is whether the model shows training with missing values, for a library whose trees
    show it otherwise (:mod:`rfexplain.core.boosted_import`).
    """
    tested: set[int] = set()
    learned = False
    for tree in trees:
        feature = np.asarray(tree.feature)
        inner = np.asarray(tree.children_left) >= 0
        tested.update(int(f) for f in feature[inner])
        if missing != "learned" or shown is not None:
            continue
        left = np.asarray(tree.children_left)[inner]
        right = np.asarray(tree.children_right)[inner]
        samples = np.asarray(tree.n_node_samples)
        go_left = np.asarray(getattr(tree, "missing_go_to_left", np.zeros(len(feature), dtype=bool)))[inner]
        shows = np.isinf(np.asarray(tree.threshold)[inner]) | (go_left.astype(bool) != (samples[left] > samples[right]))
        learned = learned or bool(shows.any())
    if missing == "learned":
        return frozenset(tested) if (learned if shown is None else shown) else frozenset()
    if missing == "none" or missing is None:
        return frozenset()
    if missing == "all":
        return frozenset(tested)
    if isinstance(missing, str) or not hasattr(missing, "__iter__"):
        raise InvalidArgumentError(
            f"missing must be 'learned', 'all', 'none' or a sequence of features. Got {missing!r} instead."
        )
    index = {str(n): i for i, n in enumerate(names)} if names is not None else {}
    chosen: set[int] = set()
    for item in missing:
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool) and 0 <= int(item) < n_features:
            chosen.add(int(item))
        elif str(item) in index:
            chosen.add(index[str(item)])
        else:
            raise InvalidArgumentError(f"missing names an unknown feature: {item!r}")
    return frozenset(chosen & tested)
