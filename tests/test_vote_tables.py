"""The vote's tables computed on whole arrays equal their definitions: ``SoftAverage.is_majority``
(the soft vote is the hard majority vote exactly when every leaf votes its vector's argmax and,
with several trees, every leaf vector is one-hot) and ``exact_leaf_weights`` (every leaf entry
as an exact integer over the common power-of-two denominator)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rfexplain import Tree
from rfexplain.core.vote import SoftAverage, exact_leaf_weights, winning_class

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


ENTRIES = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 5e-324, -(2.0**-1074), 2.0**1023, 1e300, 0.1]),
)


@st.composite
def scored_stumps(draw: st.DrawFn) -> Tree:
    a, b = (tuple(draw(st.lists(ENTRIES, min_size=3, max_size=3))) for _ in range(2))
    return Tree(
        feature=(0, -1, -1), split=(0, 0, 0), left=(1, 0, 0), right=(2, 0, 0), label=(0, 0, 0), proba=(None, a, b)
    )


def _weights_by_definition(trees: list[Tree]) -> tuple[int, list[dict[int, tuple[int, ...]]]]:
    from fractions import Fraction

    leaves = [{i: v for i, v in enumerate(t.proba or ()) if v is not None} for t in trees]
    exponent = max(
        (Fraction(p).denominator.bit_length() - 1 for vs in leaves for v in vs.values() for p in v), default=0
    )
    return exponent, [{i: tuple(int(Fraction(p) * 2**exponent) for p in v) for i, v in vs.items()} for vs in leaves]


@settings(max_examples=300, deadline=None)
@given(st.lists(scored_stumps(), min_size=1, max_size=3))
def test_exact_leaf_weights_are_their_definition(trees: list[Tree]) -> None:
    assert exact_leaf_weights(trees) == _weights_by_definition(trees)
