"""The additive (boosted) vote: exact decisions against rational arithmetic, its float64 scores
and integer weights against each other, the summation guard, validation, JSON and the circuit
engine's refusal."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfexplain import Forest
from rfexplain.core.errors import InvalidForestError, UnsupportedQueryError
from rfexplain.core.tree import Tree
from rfexplain.core.vote import AdditiveScores
from tests.hypothesis_budget import examples
from tests.strategies import forests

SCORE = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False) | st.sampled_from((0.1, 0.2, 0.3, -0.3, 0.0))


def _leaf(vector: tuple[float, ...]) -> Tree:
    return Tree((-1,), (-1,), (-1,), (-1,), (0,), (vector,))


def _exact_winner(vectors: list[tuple[float, ...]]) -> int:
    sums = [sum((Fraction(v[c]) for v in vectors), Fraction(0)) for c in range(len(vectors[0]))]
    return max(range(len(sums)), key=lambda c: (sums[c], -c))


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(2, 4).flatmap(lambda k: st.lists(st.tuples(*[SCORE] * k), min_size=1, max_size=8)))
def test_decision_is_the_exact_argmax_of_the_sums(vectors: list[tuple[float, ...]]) -> None:
    vote = AdditiveScores([_leaf(v) for v in vectors], len(vectors[0]))
    leaves = [0] * len(vectors)
    assert vote.decide(leaves) == _exact_winner(vectors)
    assert int(vote.decide_rows(np.zeros((1, len(vectors)), dtype=np.int64))[0]) == _exact_winner(vectors)


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(2, 4).flatmap(lambda k: st.lists(st.tuples(*[SCORE] * k), min_size=1, max_size=8)))
def test_float_scores_and_integer_weights_are_the_same_scaled_numbers(vectors: list[tuple[float, ...]]) -> None:
    vote = AdditiveScores([_leaf(v) for v in vectors], len(vectors[0]))
    exponent, weights = vote.integer_weights()
    for scores, tree_weights, vector in zip(vote.leaf_scores(), weights, vectors):
        scaled = [Fraction(v) * Fraction(2) ** vote.scale_exponent for v in vector]
        assert [Fraction(w, 1 << exponent) for w in tree_weights[0]] == scaled  # exactly
        assert [float(s) for s in scores[0]] == [float(v) for v in scaled]  # correctly rounded (subnormals)
    largest = max(abs(float(s)) for scores in vote.leaf_scores() for s in scores[0])
    assert largest == 0.0 or 0.25 <= largest < 0.5


def test_ties_go_to_the_lowest_class_and_scores_may_be_negative() -> None:
    vote = AdditiveScores([_leaf((0.0, -0.1)), _leaf((0.0, 0.1))], 2)
    assert vote.decide([0, 0]) == 0  # 0 vs (-0.1 + 0.1) = 0: a tie
    vote = AdditiveScores([_leaf((0.0, -0.1)), _leaf((0.0, 0.2))], 2)
    assert vote.decide([0, 0]) == 1


def test_too_many_trees_per_class_are_refused() -> None:
    with pytest.raises(InvalidForestError, match="near-tie tolerance"):
        AdditiveScores([_leaf((0.0, 0.5))] * 5000, 2)
    assert AdditiveScores([_leaf((0.0, 0.5))] * 500, 2).summation_error() < 1e-10


def test_negative_scores_need_the_additive_vote() -> None:
    raw = [{"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0], "proba": [(0.0, -1.0)]}]
    with pytest.raises(InvalidForestError, match="non-negative"):
        Forest.from_raw_trees(raw, n_features=1, classes=[0, 1], vote="soft")
    forest = Forest.from_raw_trees(raw, n_features=1, classes=[0, 1], vote="additive")
    assert forest.vote == "additive" and forest.predict_states(np.zeros((1, 1))).tolist() == [0]


@settings(max_examples=examples(30), deadline=None)
@given(forests(vote="additive"))
def test_additive_forest_json_round_trips(forest: Forest) -> None:
    again = Forest.from_json(forest.to_json())
    assert again == forest and again.vote == "additive"


def test_circuit_engine_refuses_the_additive_vote() -> None:
    import rfexplain as rx

    raw = [
        {"feature": [0, -1, -1], "threshold": [0.5, 0, 0], "left": [1, -1, -1], "right": [2, -1, -1],
         "label": [-1, 0, 1], "proba": [None, (0.0, -0.5), (0.0, 0.75)]},
    ]  # fmt: skip
    forest = Forest.from_raw_trees(raw, n_features=1, classes=[0, 1], vote="additive")
    with pytest.raises(UnsupportedQueryError, match="sat"):
        rx.Explainer(forest, engine="circuit").explain([1.0]).sufficient_reason()


@settings(max_examples=examples(30), deadline=None)
@given(forests(vote="additive"))
def test_add_comparator_decides_every_state_as_the_forest(forest: Forest) -> None:
    import itertools

    from rfexplain.comparators.add import aggregate

    for core in ("compact", "python"):
        aggregated = aggregate(forest, core=core)
        for states in itertools.product(*(range(n) for n in forest.states_per_feature)):
            assert aggregated.predict_states_one(list(states)) == forest.decide(states)
