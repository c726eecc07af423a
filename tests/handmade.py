"""Small hand-built forests from the papers' worked examples (for oracle and engine tests).

A tree is written as nested tuples: ``(feature, threshold, left, right)`` for an internal node
(``x[feature] <= threshold`` goes left) and a class index for a leaf.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rfexplain import Forest


def raw_tree(spec: Any) -> dict[str, list[Any]]:
    """Node arrays (preorder) of a nested-tuple tree."""
    arrays: dict[str, list[Any]] = {"feature": [], "threshold": [], "left": [], "right": [], "label": []}

    def grow(node: Any) -> int:
        index = len(arrays["feature"])
        for key, default in (("feature", -1), ("threshold", 0.0), ("left", -1), ("right", -1), ("label", -1)):
            arrays[key].append(default)
        if isinstance(node, int):
            arrays["label"][index] = node
            return index
        feature, threshold, left, right = node
        arrays["feature"][index] = feature
        arrays["threshold"][index] = float(threshold)
        arrays["left"][index] = grow(left)
        arrays["right"][index] = grow(right)
        return index

    stack_guard = grow(spec)
    assert stack_guard == 0
    return arrays


def forest(trees: Sequence[Any], n_features: int, classes: Sequence[Any], names: Sequence[str]) -> Forest:
    return Forest.from_raw_trees(
        [raw_tree(t) for t in trees], n_features=n_features, classes=classes, feature_names=names
    )


def rfxpl_running_example() -> Forest:
    """Izza and Marques-Silva (2021)'s running example (Fig. 1 and Example 2 [IM21]): heart disease, 3 trees.

    Features: blocked-arteries, good-blood-circulation, chest-pain (Boolean, threshold 0.5) and
    weight (threshold 75); classes No (0) and Yes (1). The paper's text fixes trees 1 and 2 and
    the two subtrees of tree 3; which branch of tree 3 tests which feature is not recoverable
    from the text and does not change any claim of Examples 1-2.
    """
    ba, gbc, cp, w = 0, 1, 2, 3
    t1 = (ba, 0.5, 0, (cp, 0.5, 0, 1))
    t2 = (gbc, 0.5, (w, 75, 0, 1), 0)
    t3 = (gbc, 0.5, (cp, 0.5, 0, 1), (ba, 0.5, 0, 1))
    return forest(
        [t1, t2, t3], 4, ["No", "Yes"], ["blocked-arteries", "good-blood-circulation", "chest-pain", "weight"]
    )


def susan_example() -> Forest:
    """Ji and Darwiche (2026)'s Susan example (Sect. 2 [JD26]) as one decision tree.

    Age (state 1 = Age >= 55), Btype (states A, B, AB, O), Weight (states under, norm, over);
    yes iff Age >= 55 and (Btype in {A,B,AB} or Weight in {norm,over}) and
    (Btype in {A,B} or Weight in {under,over}): the class formula whose complete and general
    reasons for Susan (Age >= 55, Btype A, Weight over) are the ones the paper lists. Dummy splits
    (both children equal) keep every state of Btype and Weight distinct.
    """
    age, btype, weight = 0, 1, 2
    w_all = (weight, 0.5, 1, (weight, 1.5, 1, 1))
    yes_ab = (btype, 0.5, w_all, 1)
    ab = (weight, 0.5, 1, (weight, 1.5, 0, 1))
    o = (weight, 1.5, 0, 1)
    tree = (age, 54.5, 0, (btype, 1.5, yes_ab, (btype, 2.5, ab, o)))
    return forest([tree], 3, ["no", "yes"], ["Age", "Btype", "Weight"])


def ternary_complete_reason_example() -> Forest:
    """Darwiche and Ji (2022), Sect. 3 [DJ22]: Δ = x̄1 (x2 + ȳ1)(ȳ1 + z1) over ternary X, Y, Z
    (states 0, 1, 2 = x1, x2, x3)."""
    x, y, z = 0, 1, 2
    y_split = (y, 1.5, 1, 1)
    z_split = (z, 1.5, 0, 0)
    x2_branch = (y, 0.5, (z, 0.5, 1, z_split), y_split)
    x3_branch = (y, 0.5, 0, 1)
    tree = (x, 0.5, 0, (x, 1.5, x2_branch, x3_branch))
    return forest([tree], 3, [0, 1], ["X", "Y", "Z"])


def three_class_tree_example() -> Forest:
    """Darwiche and Ji (2022), Fig. 4(a) [DJ22]: binary X, Y, classes c1, c2, c3; x1 -> c1, x2 y1 -> c2, x2 y2 -> c3."""
    x, y = 0, 1
    return forest([(x, 0.5, 0, (y, 0.5, 1, 2))], 2, ["c1", "c2", "c3"], ["X", "Y"])


def shortest_flip_example() -> Forest:
    """Ji and Darwiche (2026), Sect. 4 [JD26]: ternary X, Y and Δ = x12 ∨ y12 (states 0, 1 vs 2);
    the instance is x1 y1."""
    x, y = 0, 1
    tree = (x, 1.5, (x, 0.5, 1, 1), (y, 1.5, (y, 0.5, 1, 1), 0))
    return forest([tree], 2, ["no", "yes"], ["X", "Y"])
