"""``SoftAverage.is_majority``: the soft vote is the hard majority vote exactly when every leaf
votes its vector's argmax and (with several trees) every leaf vector is one-hot."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rfexplain import Tree
from rfexplain.core.vote import SoftAverage, winning_class

VECTOR = st.sampled_from([(1.0, 0.0), (0.0, 1.0), (0.5, 0.5), (0.25, 0.75), (-0.0, 1.0), (1.0, 1.0), (0.0, 0.0)])


def _by_definition(trees: list[Tree]) -> bool:
    for tree in trees:
        for leaf, vector in enumerate(tree.proba or ()):
            if vector is None:
                continue
            if winning_class(vector) != tree.label[leaf]:
                return False
            if len(trees) > 1 and sorted(vector) != [0.0] * (len(vector) - 1) + [1.0]:
                return False
    return True


@st.composite
def stumps(draw: st.DrawFn) -> Tree:
    a, b = draw(VECTOR), draw(VECTOR)
    labels = (0, draw(st.sampled_from([winning_class(a), 1 - winning_class(a)])), winning_class(b))
    return Tree(feature=(0, -1, -1), split=(0, 0, 0), left=(1, 0, 0), right=(2, 0, 0), label=labels, proba=(None, a, b))


@settings(max_examples=200, deadline=None)
@given(st.lists(stumps(), min_size=1, max_size=3))
def test_is_majority_is_its_definition(trees: list[Tree]) -> None:
    assert SoftAverage(trees, 2).is_majority == _by_definition(trees)
