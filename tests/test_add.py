"""The ADD comparator (Gossen and Steffen, 2021 [GS21]): aggregation, counts, rapid evaluation, outcome
explanations and DOT export, against the brute-force oracle and scikit-learn forests."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfexplain import Forest, datasets
from rfexplain.comparators.add import ADDManager, ADDTooLargeError, PredicateOrder, aggregate, majority_index
from rfexplain.comparators.add_explain import CompiledADD, forest_steps, outcome_explanation, to_dot
from rfexplain.core.budget import Budget, BudgetExpired
from rfexplain.core.errors import UnsupportedQueryError
from rfexplain.engines.base import Instance
from rfexplain.oracle import Oracle
from tests.handmade import forest as handmade_forest
from tests.hypothesis_budget import examples
from tests.strategies import forests, forests_and_instances


def _sklearn_forest(name: str, n_trees: int, depth: int | None, seed: int = 0) -> tuple[Forest, np.ndarray]:
    from sklearn.ensemble import RandomForestClassifier

    data = datasets.load(name)
    model = RandomForestClassifier(n_estimators=n_trees, max_depth=depth, random_state=seed).fit(data.X, data.y)
    return Forest.from_sklearn(model), data.X


def test_majority_ties_go_to_lowest_index() -> None:
    assert majority_index((2, 2, 1)) == 0
    assert majority_index((1, 3, 3)) == 1
    assert majority_index((0, 0, 0)) == 0


@settings(max_examples=examples(120), deadline=None)
@given(
    forests(max_trees=8),
    st.booleans(),
    st.sampled_from(["frequency", "index"]),
    st.sampled_from(["balanced", "sequential"]),
)
def test_add_decides_like_the_forest_on_every_state_vector(
    forest: Forest, reduce: bool, order: str, strategy: str
) -> None:
    oracle = Oracle(forest)
    agg = aggregate(forest, reduce=reduce, feature_order=order, strategy=strategy)
    walked = np.array([agg.predict_states_one(z) for z in oracle.grid])
    assert (walked == oracle.labels).all()
    compiled = CompiledADD.of(agg)
    assert (compiled.predict_states(oracle.grid) == oracle.labels).all()
    # the class-vector ADD holds the exact vote counts
    counts = forest.flat.vote_counts(oracle.grid, forest.n_classes)
    got = np.array([agg.manager.evaluate(agg.class_vector, z) for z in oracle.grid])
    assert (got == counts).all()


@settings(max_examples=examples(60), deadline=None)
@given(forests(max_trees=8, vote="soft"), st.booleans(), st.sampled_from(["balanced", "sequential"]))
def test_soft_vote_add_aggregates_exact_class_vectors(forest: Forest, reduce: bool, strategy: str) -> None:
    """Under the soft vote the class-vector ADD holds the exact summed leaf weights and the
    decision ADD their argmax: it decides like the forest (the oracle) on every state vector."""
    oracle = Oracle(forest)
    agg = aggregate(forest, reduce=reduce, strategy=strategy)
    walked = np.array([agg.predict_states_one(z) for z in oracle.grid])
    assert (walked == oracle.labels).all()
    _, weights = forest.aggregation.integer_weights()
    leaves = forest.flat.tree_leaves(oracle.grid)
    for z, row in zip(oracle.grid, leaves):
        expected = tuple(sum(weights[k][leaf][c] for k, leaf in enumerate(row)) for c in range(forest.n_classes))
        assert agg.manager.evaluate(agg.class_vector, z) == expected
    hard = aggregate(forest, vote="hard")
    assert all(
        hard.predict_states_one(z) == y
        for z, y in zip(oracle.grid, forest.with_vote("hard").predict_states(oracle.grid))
    )


@settings(max_examples=examples(120), deadline=None)
@given(forests(max_trees=8), st.sampled_from(["frequency", "index"]))
def test_counts_per_class_equal_the_oracle(forest: Forest, order: str) -> None:
    oracle = Oracle(forest)
    agg = aggregate(forest, feature_order=order)
    assert agg.counts() == [int((oracle.labels == c).sum()) for c in range(forest.n_classes)]
    assert sum(agg.counts()) == math.prod(forest.states_per_feature)


@settings(max_examples=examples(60), deadline=None)
@given(forests(max_trees=7))
def test_reduced_majority_add_is_a_normal_form(forest: Forest) -> None:
    """Reversing the trees changes every intermediate diagram but not the reduced result."""
    a = aggregate(forest)
    reversed_forest = Forest(thresholds=forest.thresholds, trees=forest.trees[::-1], classes=forest.classes)
    b = aggregate(reversed_forest, strategy="sequential")
    assert a.manager.size(a.majority) == b.manager.size(b.majority)
    assert to_dot(a).count("->") == to_dot(b).count("->")


@settings(max_examples=examples(60), deadline=None)
@given(forests(max_trees=7))
def test_reduction_never_grows_the_diagram(forest: Forest) -> None:
    reduced = aggregate(forest, reduce=True)
    symbolic = aggregate(forest, reduce=False)
    assert reduced.manager.size(reduced.majority) <= symbolic.manager.size(symbolic.majority)


@settings(max_examples=examples(150), deadline=None)
@given(forests_and_instances(max_trees=7))
def test_outcome_explanation_is_sufficient_and_condition_minimal(case: tuple[Forest, Instance]) -> None:
    forest, instance = case
    oracle = Oracle(forest)
    agg = aggregate(forest)
    expl = outcome_explanation(agg, instance.states)
    assert expl.prediction == instance.prediction
    grid = oracle.grid

    def inside(box: dict[int, tuple[int, int]]) -> np.ndarray:
        ok = np.ones(len(grid), dtype=bool)
        for f, (lo, hi) in box.items():
            ok &= (grid[:, f] >= lo) & (grid[:, f] <= hi)
        return ok

    # the instance is in the box, and every state vector in the box gets the decision
    assert all(lo <= instance.states[f] <= hi for f, (lo, hi) in expl.box.items())
    assert (oracle.labels[inside(expl.box)] == instance.prediction).all()
    # no condition can be dropped
    from rfexplain.comparators.add_explain import _box_of

    n_states = forest.states_per_feature
    for i in range(len(expl.conditions)):
        box = _box_of(expl.conditions[:i] + expl.conditions[i + 1 :], n_states)
        assert not (oracle.labels[inside(box)] == instance.prediction).all()
    # its features form a sufficient set of features
    assert _is_sufficient(oracle, instance, expl.features)


def _is_sufficient(oracle: Oracle, instance: Instance, features: frozenset[int]) -> bool:
    agree = np.ones(len(oracle.grid), dtype=bool)
    for f in features:
        agree &= oracle.grid[:, f] == instance.states[f]
    return bool((oracle.labels[agree] == instance.prediction).all())


def test_outcome_explanation_is_sufficient_for_the_sat_engine() -> None:
    from rfexplain.sat.engine import SatEngine
    from rfexplain.sat.search import Search

    forest, X = _sklearn_forest("iris", 25, 4)
    agg = aggregate(forest)
    engine = SatEngine(forest)
    try:
        for x in X[::10]:
            inst = Instance.of(forest, x)
            expl = outcome_explanation(agg, inst.states)
            search = Search(engine.oracle("not", inst.prediction), inst.states)
            assert search.has_counterexample(sorted(expl.features)) is False
            # dropping all of its features but one is not sufficient unless the class is constant
            if expl.features:
                assert search.has_counterexample([]) is True
    finally:
        engine.close()


def test_outcome_explanation_of_handmade_forest() -> None:
    # x0 <= 1 and x1 <= 1 -> class 1; the instance (2, 0) is class 0 because x0 > 1 alone
    tree = (0, 1.0, (1, 1.0, 1, 0), 0)
    forest = handmade_forest([tree], 2, [0, 1], ["a", "b"])
    agg = aggregate(forest)
    expl = outcome_explanation(agg, (1, 0))
    assert expl.prediction == 0
    assert expl.box == {0: (1, 1)}
    assert expl.describe(forest).startswith("a >")
    assert [c.describe(forest) for c in expl.conditions] == ["a > 1.0"]
    assert expl.literals() == {0: frozenset({1})}
    assert expl.features == frozenset({0})


@pytest.mark.parametrize(
    "name, n_trees, depth", [("iris", 100, 4), ("wine", 10, 3), ("breast_cancer", 6, 3), ("digits", 3, 4)]
)
def test_add_prediction_equals_forest_predict_on_every_row(name: str, n_trees: int, depth: int) -> None:
    forest, X = _sklearn_forest(name, n_trees, depth)
    agg = aggregate(forest, timeout=60)
    compiled = CompiledADD.of(agg)
    expected = forest.predict(X)
    assert (compiled.predict(X) == expected).all()
    values, steps = compiled.predict_index(X, return_steps=True)
    assert (values == forest.predict_index(X)).all()
    assert (compiled.predict_states(forest.states(X)) == values).all()
    assert steps.max() <= agg.manager.depth(agg.majority)
    assert (steps >= 0).all() and (forest_steps(forest, forest.states(X)) > forest.n_trees).any()


@pytest.mark.slow
def test_add_on_benchmark_csv_rows() -> None:
    from sklearn.ensemble import RandomForestClassifier

    data = datasets.load("banknote")  # the benchmark suite shipped with the package
    model = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=1).fit(data.X, data.y)
    forest = Forest.from_sklearn(model)
    compiled = CompiledADD.of(aggregate(forest, timeout=60))
    assert (compiled.predict(data.X) == forest.predict(data.X)).all()


def test_add_counts_agree_with_sdd_counts_on_a_real_forest() -> None:
    from rfexplain.comparators.sdd import SDDForest

    forest, _ = _sklearn_forest("iris", 15, 3)
    hard = forest.with_vote("hard")  # the SDD comparator compiles the hard vote only
    assert aggregate(hard).counts() == SDDForest(hard).counts()
    with pytest.raises(UnsupportedQueryError):
        SDDForest(forest)


def test_dot_export_draws_every_node() -> None:
    forest, _ = _sklearn_forest("iris", 5, 2)
    agg = aggregate(forest)
    dot = to_dot(agg)
    assert dot.startswith("digraph add {")
    size = agg.manager.size(agg.majority)
    assert dot.count("[shape=") == size
    internal = size - len(agg.manager.terminal_values(agg.majority))
    assert dot.count("->") == 2 * internal
    assert any(str(c) in dot for c in forest.classes)
    bdd_dot = to_dot(agg, agg.class_bdd(0), title="class 0")
    assert "True" in bdd_dot


def test_budget_and_time_limit() -> None:
    forest, _ = _sklearn_forest("iris", 20, 4)
    with pytest.raises(ADDTooLargeError):
        aggregate(forest, reduce=False, max_nodes=500)
    with pytest.raises(BudgetExpired):
        aggregate(forest, reduce=False, timeout=0.0)
    with pytest.raises(TimeoutError):  # BudgetExpired is also the builtin
        aggregate(forest, reduce=False, timeout=Budget(timeout=0.0))


def test_predicate_order_validation() -> None:
    forest, _ = _sklearn_forest("iris", 3, 2)
    with pytest.raises(ValueError, match="feature_order must"):
        PredicateOrder.for_forest(forest, "random")
    with pytest.raises(ValueError, match="strategy must be one of"):
        aggregate(forest, strategy="greedy")
    order = PredicateOrder.for_forest(forest, "index")
    assert [f for f, _ in order.variables] == sorted(f for f, _ in order.variables)
    m = ADDManager(order)
    assert m.terminal(True) != m.terminal(1)  # a BDD terminal is not a class index
