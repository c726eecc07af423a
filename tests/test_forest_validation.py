"""A forest refuses malformed trees with the first offending node named (checked on whole node
arrays, so reading a large forest stays fast)."""

from __future__ import annotations

import math

import pytest

from rfexplain import Forest, Tree
from rfexplain.core.errors import InvalidForestError

# x0 <= t0 ? (x1 <= t0 ? a : b) : c, over two features with one threshold each
GOOD = dict(feature=(0, 1, -1, -1, -1), split=(0, 0, 0, 0, 0), left=(1, 2, 0, 0, 0), right=(4, 3, 0, 0, 0))
LABEL = (0, 0, 0, 1, 1)
PROBA = (None, None, (1.0, 0.0), (0.25, 0.75), (0.0, 1.0))


def _forest(vote: str = "soft", **changes: object) -> Forest:
    nodes: dict = {**GOOD, "label": LABEL, "proba": PROBA, **changes}
    return Forest(thresholds=[[0.5], [1.5]], trees=[Tree(**nodes)], classes=[0, 1], vote=vote)


def test_a_well_formed_forest_is_read() -> None:
    assert _forest().predict([[0.0, 0.0]]).tolist() == [0]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"label": (0, 0, 2, 1, 1)}, "tree 0, leaf 2: class index 2 out of range"),
        ({"label": (0, 0, 0, -1, 1)}, "tree 0, leaf 3: class index -1 out of range"),
        ({"feature": (0, 2, -1, -1, -1)}, "tree 0, node 1: feature 2 out of range"),
        ({"split": (0, 1, 0, 0, 0)}, "tree 0, node 1: threshold index 1 out of range"),
        ({"split": (-1, 0, 0, 0, 0)}, "tree 0, node 0: threshold index -1 out of range"),
        ({"left": (1, 1, 0, 0, 0)}, "tree 0, node 1: children must follow their parent"),
        ({"right": (5, 3, 0, 0, 0)}, "tree 0, node 0: children must follow their parent"),
        # the first offending node in node order, whatever the check
        ({"right": (4, 3, 0, 0, 0), "split": (0, 3, 0, 0, 0), "label": (0, 0, 0, 0, 7)}, "tree 0, node 1: threshold"),
        ({"proba": (None, None, (1.0,), (0.25, 0.75), (0.0, 1.0))}, "tree 0, leaf 2: needs a probability"),
        ({"proba": (None, None, (1.0, 0.0), (0.25, math.nan), (0.0, 1.0))}, "tree 0, leaf 3: probabilities must"),
        ({"proba": (None, None, (1.0, 0.0), (0.25, 0.75), (-0.5, 1.0))}, "tree 0, leaf 4: probabilities must"),
    ],
)
def test_the_first_offending_node_is_named(changes: dict, message: str) -> None:
    with pytest.raises(InvalidForestError, match=message.replace("(", r"\(")):
        _forest(**changes)


def test_tree_depth_is_scikit_learns() -> None:
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain import Forest as F

    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=8, random_state=0).fit(X, y)
    forest = F.from_sklearn(model)
    assert [t.depth() for t in forest.trees] == [e.get_depth() for e in model.estimators_]
