"""The CNF encoding of the SAT engine against the forest's own decision, state vector by state
vector, for every cardinality encoding and both multi-class constructions."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pysat.solvers import Solver

from rfexplain.sat.encodings import CARD_ENCODINGS, MULTICLASS_CONSTRUCTIONS, ForestEncoding, Var, VarPool
from tests.handmade import rfxpl_running_example
from tests.hypothesis_budget import examples
from tests.strategies import forests


def _check_formulas(forest: Any, card: str, multiclass: str, soft_bits: int | None = None) -> None:
    """Every formula, made exact (:meth:`ForestEncoding.exact`), holds exactly on the state
    vectors the forest decides accordingly."""
    enc = ForestEncoding(forest, card=card, multiclass=multiclass, soft_bits=soft_bits)
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    labels = forest.predict_states(grid)
    for c in range(forest.n_classes):
        for kind, formula in (("not", enc.not_class(c)), ("predicts", enc.predicts(c))):
            with Solver(name="g3", bootstrap_with=[list(cl) for cl in enc.exact(formula)]) as solver:
                for z, label in zip(grid, labels):
                    assumptions = [enc.selector(f, int(z[f])) for f in enc.features]
                    sat = solver.solve(assumptions=assumptions)
                    expected = label != c if kind == "not" else label == c
                    assert sat == expected, (kind, c, tuple(z), int(label))
                    if sat:
                        assert enc.decode(solver.get_model()) == tuple(int(s) for s in z)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    forests(max_trees=9, max_classes=5),
    st.sampled_from(CARD_ENCODINGS),
    st.sampled_from(MULTICLASS_CONSTRUCTIONS),
)
def test_formulas_decide_like_the_forest(forest: Any, card: str, multiclass: str) -> None:
    _check_formulas(forest, card, multiclass)


@settings(max_examples=examples(80, fast=3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=9, max_classes=5, vote="soft"))
def test_soft_vote_formulas_decide_like_the_forest(forest: Any) -> None:
    """The adder-network comparisons of the soft vote, exact ties and near-ties included."""
    _check_formulas(forest, "cardnetwrk", "selectors")
    _check_formulas(forest, "cardnetwrk", "selectors", soft_bits=1)


@pytest.mark.slow
@settings(max_examples=examples(60, fast=3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=9, max_classes=5, vote="soft"), st.sampled_from([1, 2, 12]))
def test_relaxed_soft_vote_formulas_are_implied_and_refined_to_exact(forest: Any, bits: int) -> None:
    """A relaxed soft-vote formula holds wherever the exact one does, and the refinement loop of
    the SAT engine turns each candidate into the exact answer for every state vector."""
    enc = ForestEncoding(forest, soft_bits=bits)
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    labels = forest.predict_states(grid)
    for c in range(forest.n_classes):
        for kind, formula in (("not", enc.not_class(c)), ("predicts", enc.predicts(c))):
            done: set[Any] = set()
            with Solver(name="g3", bootstrap_with=[list(cl) for cl in formula.clauses]) as solver:
                for z, label in zip(grid, labels):
                    expected = label != c if kind == "not" else label == c
                    assumptions = [enc.selector(f, int(z[f])) for f in enc.features]
                    sat = solver.solve(assumptions=assumptions)
                    assert sat or not expected, "the relaxed formula must be implied by the exact one"
                    while sat:
                        extra = enc.refinement(formula, solver.get_model(), done)
                        if not extra:
                            break
                        solver.append_formula([list(cl) for cl in extra])
                        sat = solver.solve(assumptions=assumptions)
                    assert sat == expected, (kind, c, tuple(z), int(label))


@pytest.mark.parametrize("card", CARD_ENCODINGS)
def test_running_example_every_card(card: str) -> None:
    _check_formulas(rfxpl_running_example(), card, "challengers")


def test_pool_keys_round_trip() -> None:
    pool = VarPool()
    a = pool.var(Var.gt(2, 3))
    b = pool.var(Var.vote(1, 0))
    assert a != b and pool.var(Var.gt(2, 3)) == a
    assert pool.key(a) == ("gt", 2, 3) and pool.key(-b) == ("vote", 1, 0)
    with pytest.raises(ValueError):
        pool.fresh("gt", 2, 3)


def test_bad_options_are_refused() -> None:
    forest = rfxpl_running_example()
    with pytest.raises(ValueError, match="card must be one of"):
        ForestEncoding(forest, card="ladder")
    with pytest.raises(ValueError, match="multiclass must be one of"):
        ForestEncoding(forest, multiclass="both")
