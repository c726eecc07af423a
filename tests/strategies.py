"""Hypothesis strategies for small random forests, shared by every engine's property tests.

``forests()`` draws forests of 1-7 trees of depth <= 3 over <= 4 features with 2-4 classes; each
feature has at most three distinct thresholds (so at most four states), which keeps every query
within the oracle's reach. Trees may re-test a feature, including in ways that make a branch
unreachable, and ties between classes are reachable (even tree counts, many classes).

``forests(vote="soft")`` gives every leaf an impure class-probability vector (few samples per
leaf: counts out of 1-6, sometimes the non-dyadic 0.1/0.2/0.3/0.4 of weighted leaves) whose argmax is the
leaf's label, so the soft vote meets exact ties and float64 near-ties. ``impure=`` chooses how
many leaves get such a vector, the others a pure one (a whole vote, as scikit-learn's fully grown
trees have): ``"all"`` (the default), ``"none"``, ``"one"`` (one leaf of the forest), ``"few"``
(about one leaf in five) or ``"mixed"`` (one of those four, drawn), so that the soft vote's
deciders meet forests at every distance from the hard vote.

``forests(missing=True)`` lets features be missing: each feature's thresholds may include
``+inf``, whose test ``x <= inf`` asks whether ``x`` is a number (docs/design.md, section 1), so
such a feature has one more state, NaN.

``forests(vote="additive")`` draws a boosted model: every leaf a score vector of either sign
(eighths, sometimes tenths, whose float64 sums round), in one class's column (a tree of one
class per boosting round) or in every column, and sometimes a last tree with a single leaf (the
initial score); exact ties and near-ties are reachable.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from rfexplain import Forest
from rfexplain.engines.base import Instance

THRESHOLD_POOL = (0.5, 1.5, 2.5, 3.5)


@st.composite
def _tree(draw: Any, n_features: int, pools: list[list[float]], n_classes: int, max_depth: int) -> dict:
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    label: list[int] = []
    testable = [f for f in range(n_features) if pools[f]]

    def grow(depth: int) -> int:
        node = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        label.append(draw(st.integers(0, n_classes - 1)))
        if depth < max_depth and testable and draw(st.booleans() if depth else st.integers(0, 4).map(bool)):
            f = draw(st.sampled_from(testable))
            feature[node] = f
            threshold[node] = draw(st.sampled_from(pools[f]))
            label[node] = -1
            left[node] = grow(depth + 1)
            right[node] = grow(depth + 1)
        return node

    grow(0)
    return {"feature": feature, "threshold": threshold, "left": left, "right": right, "label": label}


#: Leaf vectors of weighted leaves: tenths, whose float64 sums round (0.1 + 0.2 != 0.3).
TENTHS = ((0.1, 0.2, 0.3, 0.4), (0.4, 0.3, 0.2, 0.1), (0.3, 0.3, 0.2, 0.2), (0.6, 0.1, 0.2, 0.1))


@st.composite
def _leaf_vector(draw: Any, n_classes: int) -> tuple[float, ...]:
    """An impure class-probability vector: sample counts over a small leaf, or tenths."""
    if draw(st.integers(0, 3)) == 0:
        base = draw(st.sampled_from(TENTHS))
        vector = [base[c % len(base)] for c in range(n_classes)]
        total = sum(vector)
        return tuple(v / total for v in vector)
    counts = draw(st.lists(st.integers(0, 3), min_size=n_classes, max_size=n_classes).filter(any))
    return tuple(k / sum(counts) for k in counts)


#: The choices of ``forests(impure=...)``.
IMPURE = ("all", "none", "one", "few", "mixed")


def _with_vectors(draw: Any, tree: dict, n_classes: int, impure: str = "all", chosen: int = -1) -> dict:
    """``tree`` with class-probability vectors: impure as ``impure`` says (``"one"``: the leaf
    ``chosen``, counted over the tree's nodes; ``-1``: none of this tree's)."""
    proba: list[tuple[float, ...] | None] = []
    for node, (f, label) in enumerate(zip(tree["feature"], tree["label"])):
        if f >= 0:
            proba.append(None)
            continue
        if (
            impure == "all"
            or (impure == "one" and node == chosen)
            or (impure == "few" and draw(st.integers(0, 4)) == 0)
        ):
            proba.append(draw(_leaf_vector(n_classes)))
        else:
            proba.append(tuple(1.0 if c == label else 0.0 for c in range(n_classes)))
    label = [max(range(n_classes), key=lambda c: (v[c], -c)) if v is not None else -1 for v in proba]
    return {**tree, "label": label, "proba": proba}


#: Leaf scores of boosted trees: eighths (exact ties) and tenths (float64 near-ties).
SCORES = (-1.0, -0.5, -0.25, -0.125, 0.0, 0.125, 0.25, 0.5, 1.0, -0.3, -0.1, 0.1, 0.2, 0.3)


def _with_scores(draw: Any, tree: dict, n_classes: int) -> dict:
    """``tree`` with boosted leaf score vectors (see the module docstring)."""
    column = draw(st.sampled_from([None, *range(n_classes)]))
    proba: list[tuple[float, ...] | None] = []
    for f in tree["feature"]:
        if f >= 0:
            proba.append(None)
            continue
        drawn = [draw(st.sampled_from(SCORES)) for _ in range(n_classes)]
        proba.append(tuple(v if column is None or c == column else 0.0 for c, v in enumerate(drawn)))
    label = [max(range(n_classes), key=lambda c: (v[c], -c)) if v is not None else -1 for v in proba]
    return {**tree, "label": label, "proba": proba}


@st.composite
def forests(
    draw: Any,
    *,
    min_trees: int = 1,
    max_trees: int = 7,
    max_depth: int = 3,
    max_features: int = 4,
    min_classes: int = 2,
    max_classes: int = 4,
    vote: str = "hard",
    impure: str = "all",
    missing: bool = False,
) -> Forest:
    """A random small forest (see the module docstring)."""
    if impure not in IMPURE:
        raise ValueError(f"impure must be one of {list(IMPURE)}. Got {impure!r} instead.")
    n_features = draw(st.integers(1, max_features))
    n_classes = draw(st.integers(min_classes, max_classes))
    pools = [sorted(draw(st.sets(st.sampled_from(THRESHOLD_POOL), min_size=0, max_size=3))) for _ in range(n_features)]
    if missing:
        pools = [pool + [math.inf] if draw(st.booleans()) else pool for pool in pools]
    if not any(pools):
        pools[0] = [THRESHOLD_POOL[1]]
    n_trees = draw(st.integers(min_trees, max_trees))
    trees = [draw(_tree(n_features, pools, n_classes, max_depth)) for _ in range(n_trees)]
    if vote == "soft":
        if impure == "mixed":
            impure = draw(st.sampled_from(IMPURE[:-1]))
        chosen_tree, chosen_leaf = -1, -1
        if impure == "one":
            chosen_tree = draw(st.integers(0, n_trees - 1))
            leaves = [i for i, f in enumerate(trees[chosen_tree]["feature"]) if f < 0]
            chosen_leaf = draw(st.sampled_from(leaves))
        trees = [
            _with_vectors(draw, tree, n_classes, impure, chosen_leaf if k == chosen_tree else -1)
            for k, tree in enumerate(trees)
        ]
    if vote == "additive":
        trees = [_with_scores(draw, tree, n_classes) for tree in trees]
        if draw(st.booleans()):  # the initial score: one leaf
            leaf = {"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0]}
            trees.append(_with_scores(draw, leaf, n_classes))
    classes = draw(st.sampled_from([list(range(n_classes)), [f"c{i}" for i in range(n_classes)]]))
    return Forest.from_raw_trees(trees, n_features=n_features, classes=classes, vote=vote)


@st.composite
def forests_and_instances(draw: Any, **kwargs: Any) -> tuple[Forest, Instance]:
    """A random small forest and one of its state vectors, as an :class:`Instance`."""
    forest = draw(forests(**kwargs))
    states = [draw(st.integers(0, n - 1)) for n in forest.states_per_feature]
    return forest, Instance.from_states(forest, states)
