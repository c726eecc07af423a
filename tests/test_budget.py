"""One budget mechanism: every long computation given an expired Budget raises the one
BudgetExpired (an RFExplainError and a TimeoutError); plus the shared bit-set and tie helpers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from rfexplain import Forest
from rfexplain.circuit import logic
from rfexplain.circuit.compilers import ClassFormulas, NNFManager
from rfexplain.comparators.add import aggregate
from rfexplain.comparators.sdd import SDDForest, equivalent
from rfexplain.core.bits import bits_of, lowest_bit, mask_of
from rfexplain.core.budget import Budget, BudgetExpired
from rfexplain.core.errors import RFExplainError
from rfexplain.core.forest import winning_class, winning_classes
from rfexplain.engines.base import Instance
from rfexplain.sat.engine import SatEngine
from rfexplain.sat.search import Search


@pytest.fixture(scope="module")
def iris() -> tuple[Forest, np.ndarray]:
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0).fit(X, y)
    return Forest.from_sklearn(model, vote="hard"), X  # every engine and comparator answers it


def test_budget_expired_is_the_one_timeout_error() -> None:
    assert issubclass(BudgetExpired, RFExplainError) and issubclass(BudgetExpired, TimeoutError)
    Budget().check()  # no deadline: never raises
    Budget(timeout=60).check()
    with pytest.raises(BudgetExpired, match="while testing"):
        Budget(timeout=0).check("testing")
    shared = Budget(timeout=1)
    assert Budget.of(shared) is shared and Budget.of(None).deadline is None and Budget.of(2.0).timeout == 2.0


def test_an_active_budget_expires_with_the_one_active_around_it() -> None:
    """Nested active budgets: the inner one (no deadline of its own, or a later one) expires
    when the outer one does, says which, and shares its remaining time; a budget made active
    again inside its own block does not wait on itself."""
    now = [0.0]
    outer = Budget(timeout=5, clock=lambda: now[0])
    inner, later = Budget(clock=lambda: now[0]), Budget(timeout=60, clock=lambda: now[0])
    with outer.active():
        with inner.active(), later.active():
            assert later.remaining() == 5.0 and not later.expired() and not inner.expired()
            with outer.active():  # the same budget again, inside its own block
                assert not outer.expired()
            now[0] = 6.0
            assert inner.expired() and later.expired()
            with pytest.raises(BudgetExpired, match="budget of 5.0 s"):
                later.check()
    assert not Budget(clock=lambda: now[0]).expired()  # outside every block: no deadline again


def test_a_query_s_own_budget_keeps_the_deadline_set_around_it(iris: tuple[Forest, np.ndarray]) -> None:
    """A Decision's query runs under a budget of its own (its ``timeout=``); a caller's budget
    made active around it still stops it (it was hidden until 2026-12-07)."""
    import rfexplain as rx

    forest, X = iris
    decision = rx.Explainer(forest, engine="sat").explain(X[0])
    with Budget(timeout=0).active(), pytest.raises(BudgetExpired, match="budget of 0.0 s"):
        decision.sufficient_reason()
    assert decision.sufficient_reason(timeout=60) is not None


def test_circuit_algorithms_raise_on_an_expired_budget(iris: tuple[Forest, np.ndarray]) -> None:
    forest, X = iris
    formulas = ClassFormulas(forest)
    inst = Instance.of(forest, X[0])
    parts = formulas.dg_3b(inst.prediction)
    nnf = NNFManager(forest.states_per_feature)
    cr = logic.complete_reason(formulas.dg, parts, inst.states, nnf)
    gr = logic.general_reason(formulas.dg, parts, inst.states, nnf)
    nrs = logic.prime_implicates(nnf, cr)
    assert nrs  # the circuit is not trivial
    expired = Budget(timeout=0)
    for run in (
        lambda: logic.prime_implicants(nnf, cr, expired),
        lambda: logic.prime_implicates(nnf, cr, expired),
        lambda: logic.shortest_prime_implicates(nnf, cr, expired),
        lambda: logic.shortest_prime_implicants(nnf, cr, expired),
        lambda: logic.cnf_within_varsets(nnf, gr, nrs, expired),
        lambda: logic.general_necessary_reasons(nnf, gr, nrs, expired),
        lambda: logic.false_projections(formulas.dg, parts, list(range(forest.n_features)), expired),
    ):
        with pytest.raises(BudgetExpired):
            run()


def test_sat_search_raises_on_an_expired_budget(iris: tuple[Forest, np.ndarray]) -> None:
    forest, X = iris
    engine = SatEngine(forest)
    try:
        inst = Instance.of(forest, X[0])
        search = Search(engine.oracle("not", inst.prediction), inst.states)
        with pytest.raises(BudgetExpired):
            search.has_counterexample([], Budget(timeout=0))
        with pytest.raises(BudgetExpired):
            next(search.sufficient_reasons(Budget(timeout=0)))
        assert search.has_counterexample(list(search.features)) is False  # all fixed: sufficient
    finally:
        engine.close()


def test_comparators_take_the_same_budget(iris: tuple[Forest, np.ndarray]) -> None:
    forest, _ = iris
    with pytest.raises(BudgetExpired):
        SDDForest(forest, timeout=0).class_formula(0)
    with pytest.raises(BudgetExpired):
        equivalent(forest, ClassFormulas(forest), timeout=Budget(timeout=0))
    assert equivalent(forest, ClassFormulas(forest), timeout=60)
    with pytest.raises(BudgetExpired):
        aggregate(forest, timeout=0)


def test_deprecated_logic_aliases_are_the_long_names() -> None:
    assert logic.snr is logic.shortest_prime_implicates
    assert logic.ssr is logic.shortest_prime_implicants
    assert logic.scnf is logic.cnf_within_varsets
    assert logic.sgnr is logic.shortest_general_necessary_reasons
    assert logic.gnrs is logic.general_necessary_reasons


@given(st.sets(st.integers(0, 70)))
def test_bits_round_trip(positions: set[int]) -> None:
    mask = mask_of(positions)
    assert bits_of(mask) == tuple(sorted(positions))
    assert mask.bit_count() == len(positions)
    if positions:
        assert lowest_bit(mask) == min(positions)


@given(st.lists(st.lists(st.integers(0, 5), min_size=3, max_size=3), min_size=1, max_size=20))
def test_winning_class_is_argmax_with_ties_to_the_lowest_index(rows: list[list[int]]) -> None:
    for row in rows:
        best = max(row)
        assert winning_class(row) == row.index(best)
    assert winning_classes(np.asarray(rows)).tolist() == [winning_class(r) for r in rows]
