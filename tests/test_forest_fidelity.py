"""Fidelity: Forest.predict is exactly the hard majority vote of scikit-learn's own trees
(``vote="hard"``) and exactly the model's own ``predict`` (``vote="auto"``, the soft vote for
forests).

The reference hard vote is computed here from each fitted tree's own ``predict`` (ties to the
lowest class index), independently of rfexplain's discretisation.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier

from rfexplain import Forest
from rfexplain.core.errors import InvalidForestError, InvalidInstanceError
from tests.hypothesis_budget import examples


def sklearn_hard_vote(model: Any, X: np.ndarray) -> np.ndarray:
    X32 = np.asarray(X, dtype=np.float32)
    classes = list(model.classes_)
    trees = getattr(model, "estimators_", [model])
    votes = []
    for tree in trees:
        pred = tree.predict(X32)
        # sub-estimators of a forest predict class indices; a lone tree predicts labels
        votes.append([classes.index(p) if tree is model else int(p) for p in pred])
    votes_arr = np.asarray(votes).T
    counts = np.stack([(votes_arr == c).sum(axis=1) for c in range(len(classes))], axis=1)
    return np.asarray(classes)[np.argmax(counts, axis=1)]


def probe_points(forest: Forest, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rows of X with values replaced by thresholds exactly and one float32 step either side (the
    finite thresholds: ``+inf`` asks whether a value is missing, and no input is infinite)."""
    rows = []
    for f, ts in enumerate(forest.thresholds):
        for t in filter(math.isfinite, ts):
            t32 = np.float32(t)
            for value in (t, t32, np.nextafter(t32, np.float32(-np.inf)), np.nextafter(t32, np.float32(np.inf))):
                row = X[rng.integers(len(X))].copy()
                row[f] = float(value)
                rows.append(row)
    return np.asarray(rows) if rows else X[:0]


def float_rounding_explains(model: Any, row: np.ndarray, ours: Any, theirs: Any) -> bool:
    """Whether scikit-learn's float64 summation explains a soft-vote difference on ``row``: the
    exact sums of the two classes differ by no more than the rounding error of adding the trees'
    vectors one by one (``trees**2 * 2**-52`` bounds it, the vectors' entries being in [0, 1])."""
    classes = list(model.classes_)
    trees = getattr(model, "estimators_", [model])
    vectors = [t.predict_proba(np.asarray([row], dtype=np.float32))[0] for t in trees]
    exact = [sum(Fraction(float(v[c])) for v in vectors) for c in range(len(classes))]
    gap = abs(exact[classes.index(ours)] - exact[classes.index(theirs)])
    return bool(gap <= Fraction(len(trees) ** 2, 2**52))


def check_fidelity(model: Any, X: np.ndarray, seed: int = 0) -> None:
    """The hard vote equals the trees' majority; the model's own vote (``"auto"``) equals
    ``model.predict`` except where float64 summation decides a near-tie differently from exact
    arithmetic (each such row is checked to be one)."""
    forest = Forest.from_sklearn(model, vote="hard")
    own = Forest.from_sklearn(model)
    rng = np.random.default_rng(seed)
    for data in (X, probe_points(forest, X, rng)):
        if len(data):
            assert np.array_equal(forest.predict(data), sklearn_hard_vote(model, data))
            ours, theirs = own.predict(data), model.predict(np.asarray(data, dtype=np.float32))
            for row in np.flatnonzero(ours != theirs):
                assert float_rounding_explains(model, data[row], ours[row], theirs[row])


DATASETS = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}


@pytest.mark.parametrize("name", sorted(DATASETS))
@pytest.mark.parametrize("n_trees", [1, 2, 4, 7, 20])
def test_random_forest_fidelity(name: str, n_trees: int) -> None:
    X, y = DATASETS[name](return_X_y=True)
    model = RandomForestClassifier(n_estimators=n_trees, max_depth=4, random_state=n_trees).fit(X, y)
    check_fidelity(model, X)


def test_extra_trees_and_decision_tree_fidelity() -> None:
    X, y = load_wine(return_X_y=True)
    check_fidelity(ExtraTreesClassifier(n_estimators=10, max_depth=5, random_state=0).fit(X, y), X)
    check_fidelity(DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y), X)


def test_string_labels_and_pipeline() -> None:
    X, y = load_iris(return_X_y=True)
    labels = np.asarray(["setosa", "versicolor", "virginica"])[y]
    model = RandomForestClassifier(n_estimators=6, max_depth=3, random_state=1).fit(X, labels)
    check_fidelity(model, X)
    pipe = Pipeline([("model", RandomForestClassifier(n_estimators=3, random_state=0))]).fit(X, labels)
    assert np.array_equal(Forest.from_sklearn(pipe, vote="hard").predict(X), sklearn_hard_vote(pipe[-1], X))
    assert np.array_equal(Forest.from_sklearn(pipe).predict(X), pipe.predict(X))


def test_single_leaf_trees_and_constant_features() -> None:
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=60), np.ones(60), rng.integers(0, 3, size=60)])
    y = (X[:, 0] > 0).astype(int)
    model = RandomForestClassifier(n_estimators=8, max_depth=1, min_impurity_decrease=0.3, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model)
    assert any(t.n_nodes == 1 for t in forest.trees), "expected some single-leaf trees"
    assert forest.n_states(1) == 1, "the constant feature is never tested"
    check_fidelity(model, X)


@settings(max_examples=examples(25), deadline=None)
@given(n_trees=st.integers(1, 6), depth=st.integers(0, 6), seed=st.integers(0, 10_000))
def test_flat_walk_reaches_each_trees_own_leaf(n_trees: int, depth: int, seed: int) -> None:
    """``FlatForest.tree_leaves`` (all trees a step at a time) against a plain walk down each tree,
    on every state of a grid and on random state rows, single-leaf trees included."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=80), rng.integers(0, 4, size=80), np.ones(80)])
    y = rng.integers(0, 3, size=80)
    model = RandomForestClassifier(n_estimators=n_trees, max_depth=depth or 1, random_state=seed)
    if depth == 0:
        model.set_params(min_impurity_decrease=10.0)  # single-leaf trees
    forest = Forest.from_sklearn(model.fit(X, y))
    S = np.column_stack([rng.integers(0, n, size=50) for n in forest.states_per_feature])
    expected = np.zeros((len(S), n_trees), dtype=np.int64)
    for r, row in enumerate(S):
        for k, tree in enumerate(forest.trees):
            node = 0
            while tree.feature[node] >= 0:
                node = tree.left[node] if row[tree.feature[node]] <= tree.split[node] else tree.right[node]
            expected[r, k] = node
    assert np.array_equal(forest.flat.tree_leaves(S), expected)
    assert np.array_equal(forest.flat.tree_leaves(S[0]), expected[:1])


@settings(max_examples=examples(40), deadline=None)
@given(
    n_classes=st.integers(2, 5),
    n_trees=st.integers(1, 8),
    depth=st.integers(1, 5),
    seed=st.integers(0, 10_000),
    extra=st.booleans(),
)
def test_fidelity_on_random_data(n_classes: int, n_trees: int, depth: int, seed: int, extra: bool) -> None:
    """Random data with duplicated and coarse values (many ties in votes and in thresholds)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(80, 4)) * rng.choice([1, 10, 1000], size=4), decimals=rng.integers(0, 4))
    y = rng.integers(0, n_classes, size=80)
    cls = ExtraTreesClassifier if extra else RandomForestClassifier
    model = cls(n_estimators=n_trees, max_depth=depth, random_state=seed).fit(X, y)
    check_fidelity(model, X, seed)


def test_ties_go_to_lowest_class_index() -> None:
    """Two trees voting differently: the hard vote takes the lower class index."""
    X = np.asarray([[0.0], [1.0], [0.0], [1.0]])
    y = np.asarray([0, 1, 0, 1])
    model = RandomForestClassifier(n_estimators=2, bootstrap=False, max_depth=1, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model, vote="hard")
    # Rewire: one tree always votes 1, the other always votes 0 -> tie -> class 0
    trees = [
        {"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [1]},
        {"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0]},
    ]
    tied = Forest.from_raw_trees(trees, n_features=1, classes=["b", "a"])
    assert list(tied.predict([[0.0], [5.0]])) == ["b", "b"]
    assert list(forest.predict(X)) == list(sklearn_hard_vote(model, X))


def test_agreement_reports_soft_vote_differences() -> None:
    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=4, max_depth=2, random_state=5).fit(X, y)
    forest = Forest.from_sklearn(model, vote="hard")
    agreement = forest.agreement(X, model)
    differ = np.flatnonzero(forest.predict(X) != model.predict(X.astype(np.float32)))
    assert len(differ) > 0, "expected rows where the hard and soft votes differ"
    assert np.array_equal(agreement.disagreeing_rows, differ)
    assert agreement.fraction == pytest.approx(1 - len(differ) / len(X))
    assert Forest.from_sklearn(model).agreement(X, model).fraction == 1.0


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(
                st.floats(0, 1, allow_nan=False),
                st.sampled_from([0.0, 2.0**-1074, 2.0**-1022, 0.1, 0.2, 0.3, 0.5, 1.0]),
            ),
            min_size=3,
            max_size=3,
        ),
        min_size=1,
        max_size=12,
    )
)
def test_exact_soft_winner_is_the_winner_of_the_rational_sums(vectors: list[list[float]]) -> None:
    """Against the definition in ``Fraction`` arithmetic, subnormal and exactly tied sums included."""
    from rfexplain.core.forest import exact_soft_winner

    sums = [sum((Fraction(v[c]) for v in vectors), Fraction(0)) for c in range(3)]
    assert exact_soft_winner(vectors) == sums.index(max(sums))


def test_soft_vote_ties_and_near_ties_are_decided_exactly() -> None:
    """Exact rational sums, ties to the lowest index: 0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1 are
    equal exactly although their float64 sums differ."""
    from rfexplain.core.forest import exact_soft_winner, soft_vote

    vectors = [(0.1, 0.3), (0.2, 0.2), (0.3, 0.1)]
    assert (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1
    assert exact_soft_winner(vectors) == 0
    assert exact_soft_winner([(0.1, 0.3), (0.2, 0.2), (0.3, 0.1 + 2**-55)]) == 1
    probas = np.asarray([[v] for v in vectors], dtype=np.float64)
    assert soft_vote(probas).tolist() == [0]
    raw = [
        {"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0], "proba": [v]} for v in vectors
    ]
    forest = Forest.from_raw_trees(raw, n_features=1, classes=["a", "b"], vote="soft")
    assert forest.predict([[0.0]]).tolist() == ["a"]
    E, weights = forest.aggregation.integer_weights()
    sums = [sum(w[0][c] for w in weights) for c in range(2)]
    assert sums[0] == sums[1] and all(isinstance(x, int) for x in sums)


def test_decision_tree_auto_is_hard_and_soft_needs_vectors() -> None:
    X, y = load_iris(return_X_y=True)
    assert Forest.from_sklearn(DecisionTreeClassifier(max_depth=2).fit(X, y)).vote == "hard"
    assert Forest.from_sklearn(RandomForestClassifier(n_estimators=2, max_depth=2).fit(X, y)).vote == "soft"
    raw = [{"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0]}]
    with pytest.raises(InvalidForestError):
        Forest.from_raw_trees(raw, n_features=1, classes=[0, 1], vote="soft")
    with pytest.raises(ValueError):
        Forest.from_sklearn(DecisionTreeClassifier(max_depth=2).fit(X, y), vote="majority")


def test_thresholds_in_one_float32_gap_become_one_test() -> None:
    """Two thresholds with no float32 number between them are the same test on float32 inputs:
    the forest keeps one, and every state holds a float32 value."""
    a = np.float32(1.0)
    b = np.nextafter(a, np.float32(2.0))
    t1 = float(a) + (float(b) - float(a)) * 0.25
    t2 = float(a) + (float(b) - float(a)) * 0.75
    trees = [
        {
            "feature": [0, -1, -1],
            "threshold": [t1, 0, 0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [-1, 0, 1],
        },
        {
            "feature": [0, -1, -1],
            "threshold": [t2, 0, 0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [-1, 0, 1],
        },
        {
            "feature": [0, -1, -1],
            "threshold": [3.0, 0, 0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [-1, 1, 0],
        },
    ]
    forest = Forest.from_raw_trees(trees, n_features=1, classes=[0, 1])
    assert forest.thresholds == ((float(a), 3.0),)
    for state in range(forest.n_states(0)):
        value = forest.state_value(0, state)
        assert forest.states([[value]])[0, 0] == state
    for x in (a, b, np.float32(3.0), np.nextafter(np.float32(3.0), np.float32(9))):
        votes = [int(float(x) > t1), int(float(x) > t2), int(float(x) <= 3.0)]
        assert forest.predict([[float(x)]])[0] == int(sum(votes) >= 2)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.lists(st.floats(min_value=0.0, max_value=1.0, allow_subnormal=True), min_size=2, max_size=2),
        min_size=1,
        max_size=6,
    )
)
def test_soft_weights_are_the_vectors_times_the_common_power_of_two(vectors: list[list[float]]) -> None:
    """``soft_weights`` is its definition, ``p * 2**E`` with ``E`` the largest binary exponent of
    any ``p``'s denominator, checked in rational arithmetic, and it is computed once per forest
    (the SAT encoding and every soft :meth:`Forest.decide` share it)."""
    raw = [
        {"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0], "proba": [tuple(v)]}
        for v in vectors
    ]
    forest = Forest.from_raw_trees(raw, n_features=1, classes=["a", "b"], vote="soft")
    E, weights = forest.aggregation.integer_weights()
    assert E == max(Fraction(p).denominator.bit_length() - 1 for v in vectors for p in v)
    for vector, tree_weights in zip(vectors, weights):
        assert tree_weights == {0: tuple(Fraction(p) * 2**E for p in vector)}
        assert all(type(w) is int for w in tree_weights[0])
    assert forest.aggregation.integer_weights() is forest.aggregation.integer_weights()


@pytest.mark.parametrize("cls", [RandomForestClassifier, ExtraTreesClassifier, DecisionTreeClassifier])
def test_models_trained_with_missing_values_are_exact_on_finite_inputs(cls: Any) -> None:
    """scikit-learn (>= 1.3) trains trees on data with NaN; a split that separates the missing
    values from every finite one stores the threshold ``inf``. Read with missing values (the
    default, tests/test_missing_values.py) or without (``missing="none"``: such a node is its
    child every finite input goes to), the forest is exact on every finite input; without, a
    missing value in an instance is refused."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.2] = np.nan
    y[np.isnan(X[:, 0])] = 1 - y[np.isnan(X[:, 0])]
    options = {"max_depth": 4, "random_state": 0}
    if cls is not DecisionTreeClassifier:
        options["n_estimators"] = 10
    model = cls(**options).fit(X, y)
    if cls is not ExtraTreesClassifier:  # extra trees draw finite thresholds only
        trees = getattr(model, "estimators_", [model])
        assert any(np.isinf(t.tree_.threshold).any() for t in trees), "expected a missing-value split"
    finite = np.where(np.isnan(X), rng.normal(size=X.shape), X)
    check_fidelity(model, finite)
    assert Forest.from_sklearn(model).accepts_missing(0)
    forest = Forest.from_sklearn(model, missing="none")
    assert np.array_equal(forest.predict(finite), model.predict(finite.astype(np.float32)))
    assert all(math.isfinite(t) for ts in forest.thresholds for t in ts)
    with pytest.raises(InvalidInstanceError, match="NaN"):
        forest.predict(X[np.isnan(X).any(axis=1)][:1])


def test_end_states_are_represented_on_the_thresholds_scale() -> None:
    """A witness value in an end state lies one neighbouring interval beyond the threshold, not
    a unit away: a feature split at 0.08 and 0.10 is shown as 0.06 and 0.12, not -0.92."""
    data = load_breast_cancer()
    model = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(data.data, data.target)
    forest = Forest.from_sklearn(model)
    checked = 0
    for f, ts in enumerate(forest.thresholds):
        for state in range(len(ts) + 1):
            row = np.zeros((1, forest.n_features))
            row[0, f] = forest.state_value(f, state)
            assert forest.states(row)[0][f] == state
        if len(ts) > 1:
            low, high = forest.state_value(f, 0), forest.state_value(f, len(ts))
            width = ts[-1] - ts[0]
            assert ts[0] - low <= width + 1e-6 * max(1.0, abs(ts[0]))
            assert high - ts[-1] <= width + 1e-6 * max(1.0, abs(ts[-1]))
            checked += 1
    assert checked > 5


def test_end_state_representatives_stay_finite_near_the_float32_limit() -> None:
    """Stepping beyond the last threshold must not overflow float32 to an infinite witness (it
    did, with thresholds at 5e37 and 2.2e38): the value is finite and in its state."""
    X = np.array([[0.0], [1e38], [3.4e38]])
    forest = Forest.from_sklearn(DecisionTreeClassifier().fit(X, [0, 1, 0]))
    for state in range(len(forest.thresholds[0]) + 1):
        value = forest.state_value(0, state)
        assert math.isfinite(value)
        assert forest.states(np.array([[value]]))[0][0] == state
