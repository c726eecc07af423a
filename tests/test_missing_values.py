"""Forests trained with missing values (docs/design.md, section 1): NaN is one more state of each
feature, the one above a threshold ``+inf``; scikit-learn's routing (``missing_go_to_left``)
read exactly; every engine against the oracle; reasons and witnesses against ``model.predict``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import rfexplain as rx
from rfexplain import Budget, Forest
from rfexplain.circuit.engine import CircuitEngine
from rfexplain.core.errors import InvalidArgumentError, InvalidInstanceError
from rfexplain.core.reasons import Reason
from rfexplain.engines.base import Instance
from rfexplain.oracle import Oracle
from rfexplain.sat.engine import SatEngine
from tests.boosted_checks import reason_keys
from tests.hypothesis_budget import examples
from tests.strategies import forests_and_instances

KINDS = (RandomForestClassifier, ExtraTreesClassifier, DecisionTreeClassifier)


def _with_holes(X: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    out = X.astype(np.float64).copy()
    out[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return out


def _fit(kind: Any, X: np.ndarray, y: np.ndarray, seed: int, **kwargs: Any) -> Any:
    if kind is DecisionTreeClassifier:
        return kind(random_state=seed, **kwargs).fit(X, y)
    return kind(random_state=seed, **kwargs).fit(X, y)


def _probes(forest: Forest) -> np.ndarray:
    """Inputs at every threshold, one float32 step either side, and NaN, one feature at a time
    moved from a base row of the feature's middle values."""
    columns = []
    for f in range(forest.n_features):
        values = [np.nan]
        for t in forest.thresholds[f]:
            if math.isfinite(t):
                t32 = np.float32(t)
                values += [
                    float(np.nextafter(t32, np.float32(-np.inf))),
                    float(t32),
                    float(np.nextafter(t32, np.float32(np.inf))),
                ]
        columns.append(values)
    base = [float(np.median([v for v in c if math.isfinite(v)])) if len(c) > 1 else 0.0 for c in columns]
    rows = []
    for f, values in enumerate(columns):
        for v in values:
            for g in range(forest.n_features):  # with every other feature missing in turn too
                row = list(base)
                row[f] = v
                rows.append(list(row))
                if g != f and forest.accepts_missing(g):
                    row[g] = np.nan
                    rows.append(row)
    return np.asarray(rows, dtype=np.float64)


# ---------------------------------------------------------------------------------- fidelity
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("depth", [3, None])
def test_decisions_equal_predict_at_every_threshold_and_with_nan(kind: Any, depth: int | None) -> None:
    """The forest read from a model trained with missing values decides as its ``predict`` at
    every threshold, one float32 step either side, with NaN in any feature, and on the data."""
    X, y = load_iris(return_X_y=True)
    X = _with_holes(X, 0.2, seed=1)
    model = _fit(
        kind, X, y, seed=0, max_depth=depth, **({} if kind is DecisionTreeClassifier else {"n_estimators": 15})
    )
    forest = Forest.from_sklearn(model, missing="all")
    assert all(forest.accepts_missing(f) for f in forest.tested_features)
    probes = np.vstack([_probes(forest), X, _with_holes(X, 0.5, seed=2)])
    assert np.isnan(probes).any()
    assert forest.predict(probes).tolist() == model.predict(probes.astype(np.float32)).tolist()
    assert forest.agreement(probes, model).fraction == 1.0


def test_missing_values_learned_in_training_are_read_by_default() -> None:
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=15, random_state=0).fit(_with_holes(X, 0.2, 1), y)
    assert Forest.from_sklearn(model) == Forest.from_sklearn(model, missing="all")


def test_a_model_trained_without_missing_values_refuses_nan_and_can_be_read_with_them() -> None:
    """Today's behaviour without missing values (NaN refused, with the reason and the remedy);
    ``missing="all"`` reads the routing scikit-learn's ``predict`` applies to NaN anyway."""
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model)
    assert not any(forest.accepts_missing(f) for f in range(forest.n_features))
    assert forest == Forest.from_sklearn(model, missing="none")
    row = X[0].copy()
    row[2] = np.nan
    with pytest.raises(InvalidInstanceError, match="missing values are not supported: the model shows no sign"):
        forest.predict(row)
    everywhere = Forest.from_sklearn(model, missing="all")
    probes = np.vstack([_probes(everywhere), _with_holes(X, 0.3, seed=3)])
    assert everywhere.predict(probes).tolist() == model.predict(probes.astype(np.float32)).tolist()


def test_missing_can_name_the_features_and_the_others_refuse_nan() -> None:
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(_with_holes(X, 0.2, 1), y)
    names = ["a", "b", "c", "d"]
    forest = Forest.from_sklearn(model, feature_names=names, missing=["c", 3])
    assert [forest.accepts_missing(f) for f in range(4)] == [False, False, True, True]
    row = X[0].copy()
    row[[2, 3]] = np.nan
    assert forest.predict(row).tolist() == model.predict(row[None].astype(np.float32)).tolist()
    row[0] = np.nan
    with pytest.raises(InvalidInstanceError, match="'a'.*not covered: the forest was read without them"):
        forest.predict(row)
    with pytest.raises(InvalidArgumentError, match="unknown feature"):
        Forest.from_sklearn(model, missing=["e"])
    with pytest.raises(InvalidArgumentError, match="'learned', 'all', 'none'"):
        Forest.from_sklearn(model, missing="some")


def test_json_round_trip_keeps_the_missing_states() -> None:
    X, y = load_iris(return_X_y=True)
    model = ExtraTreesClassifier(n_estimators=5, max_depth=3, random_state=0).fit(_with_holes(X, 0.2, 1), y)
    forest = Forest.from_sklearn(model)
    again = Forest.from_json(forest.to_json())
    assert again == forest and again.accepts_missing(forest.tested_features[0])


# ---------------------------------------------------------------------------------- display
def test_reasons_print_missing_values() -> None:
    space = rx.Forest.from_raw_trees(
        [
            {
                "feature": [0, -1, -1],
                "threshold": [3.0, 0, 0],
                "left": [1, -1, -1],
                "right": [2, -1, -1],
                "label": [0, 0, 1],
            },
            {
                "feature": [0, -1, -1],
                "threshold": [math.inf, 0, 0],
                "left": [1, -1, -1],
                "right": [2, -1, -1],
                "label": [0, 0, 1],
            },
        ],
        n_features=1,
        classes=[0, 1],
        feature_names=["x"],
    ).space
    assert space.n_states(0) == 3  # x <= 3, 3 < x (a number), missing

    def text(states: set[int]) -> str:
        return str(Reason.of("sufficient", {0: states}, space=space))

    assert text({2}) == "x is missing"
    assert text({0}) == "x <= 3"
    assert text({0, 2}) == "x <= 3 or missing"
    assert text({1, 2}) == "x > 3 or missing"
    assert text({0, 1}) == "x is a number"
    assert text({0, 1, 2}) == "x is anything"
    literal = Reason.of("sufficient", {0: {0, 2}}, space=space).to_dict()["literals"][0]
    assert literal["missing"] is True and literal["intervals"] == [["-inf", 3.0]]


# ---------------------------------------------------------------------------------- engines
@settings(max_examples=examples(60), deadline=None)
@given(
    st.sampled_from(["hard", "soft", "additive"]).flatmap(
        lambda vote: forests_and_instances(missing=True, max_trees=5, vote=vote)
    )
)
def test_sat_equals_oracle_on_random_forests_with_missing_states(case: tuple[Forest, Instance]) -> None:
    """Every query of the SAT engine equals the oracle's on forests whose features may be missing,
    at instances that may be missing some, under every vote."""
    forest, instance = case
    oracle = Oracle(forest)
    with SatEngine(forest) as engine:
        assert reason_keys(engine.sufficient_reasons(instance, Budget())) == reason_keys(
            oracle.sufficient_reasons(instance)
        )
        assert reason_keys(engine.necessary_reasons(instance, Budget())) == reason_keys(
            oracle.necessary_reasons(instance)
        )
        assert engine.robustness(instance) == oracle.robustness(instance)


@settings(max_examples=examples(40), deadline=None)
@given(forests_and_instances(missing=True, max_trees=5))
def test_circuit_equals_oracle_on_random_forests_with_missing_states(case: tuple[Forest, Instance]) -> None:
    forest, instance = case
    oracle = Oracle(forest)
    engine = CircuitEngine(forest)
    assert reason_keys(engine.sufficient_reasons(instance, Budget())) == reason_keys(
        oracle.sufficient_reasons(instance)
    )
    assert reason_keys(engine.necessary_reasons(instance, Budget())) == reason_keys(oracle.necessary_reasons(instance))


@settings(max_examples=examples(30, fast=6), deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 10_000),
    depth=st.integers(1, 3),
    holes=st.sampled_from([0.1, 0.3, 0.6]),
    row=st.integers(0, 149),
)
def test_sklearn_models_with_missing_values_sat_equals_oracle_and_verifies(
    kind: Any, seed: int, depth: int, holes: float, row: int
) -> None:
    """Real models trained with missing values, at an instance missing some values: the SAT
    engine's reasons equal the oracle's, every one verifies against the scikit-learn model, and
    every witness is classified by ``model.predict`` as it claims (NaN witnesses included)."""
    X, y = load_iris(return_X_y=True)
    X = _with_holes(X, holes, seed)
    model = _fit(kind, X, y, seed, max_depth=depth, **({} if kind is DecisionTreeClassifier else {"n_estimators": 4}))
    forest = Forest.from_sklearn(model, missing="all")
    instance = Instance.of(forest, X[row])
    assert forest.classes[instance.prediction] == model.predict(X[row][None].astype(np.float32))[0]
    oracle = Oracle(forest)
    with SatEngine(forest) as engine:
        sufficient = list(engine.sufficient_reasons(instance, Budget()))
        necessary = list(engine.necessary_reasons(instance, Budget()))
        assert reason_keys(sufficient) == reason_keys(oracle.sufficient_reasons(instance))
        assert reason_keys(necessary) == reason_keys(oracle.necessary_reasons(instance))
        assert engine.robustness(instance) == oracle.robustness(instance)
    for reason in [*sufficient, *necessary]:
        assert rx.verify(reason, model).ok, str(rx.verify(reason, model))
        for witness in reason.witnesses:
            values = np.asarray([witness.values], dtype=np.float32)
            assert model.predict(values)[0] == forest.classes[witness.prediction]


def test_a_reason_blind_to_missing_values_is_refuted() -> None:
    """A sufficient reason of the number-only reading need not hold when a free feature is
    missing (NaN may go left at one split of a feature and right at the next, as no number does):
    verify, with the feature space that lets features be missing, refutes the one that does not
    (a rare case: one of the 50 here)."""
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=4).fit(_with_holes(X, 0.3, seed=4), y)
    numbers = rx.Explainer(model, "sat", missing="none")
    both = rx.Explainer(model, "sat", missing="all")
    refuted = 0
    for row in X[::3]:
        blind = numbers.explain(row).sufficient_reason()
        decision = both.explain(row)
        claim = Reason.of(
            "sufficient", blind.literals, space=both.forest.space, instance=row, decision=decision.prediction_index
        )
        holds = rx.verify(claim, model)
        sufficient_with_nan = Oracle(both.forest).is_sufficient(Instance.of(both.forest, row), sorted(blind.features))
        assert next(c for c in holds.checks if c.name == "sufficient").proven == sufficient_with_nan
        refuted += not sufficient_with_nan
    assert refuted > 0, "expected a reason of the number-only reading that NaN breaks"


def test_explainer_end_to_end_with_a_missing_instance() -> None:
    X, y = load_iris(return_X_y=True)
    X = _with_holes(X, 0.2, seed=1)
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    explainer = rx.Explainer(model, "sat", missing="all")
    row = X[np.flatnonzero(np.isnan(X).any(axis=1))[0]]
    decision = explainer.explain(row)
    reason = decision.sufficient_reason()
    assert rx.verify(reason, model).ok
    assert decision.prediction == model.predict(row[None].astype(np.float32))[0]


def test_an_immutable_missing_feature_is_held_missing_without_a_bound() -> None:
    X, y = load_iris(return_X_y=True)
    X = _with_holes(X, 0.2, seed=0)
    model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    explainer = rx.Explainer(model, "sat", missing="all", immutable=["x2"])
    row = X[0]
    assert np.isnan(row[2]) and np.isnan(row[3])
    reason = explainer.explain(row).necessary_reason()
    assert reason is not None and 2 not in reason.features and "given" not in str(reason)
    for witness in reason.witnesses:
        assert np.isnan(witness.values[2])
        assert model.predict(np.asarray([witness.values], dtype=np.float32))[0] == witness.prediction


@pytest.mark.slow
def test_decisions_with_missing_values_are_drawn() -> None:
    """The plots and notebook views of a decision on an instance missing values: no point at
    ``+inf`` or NaN on an axis, and a move to the missing state drawn without a cell."""
    pytest.importorskip("matplotlib")
    from matplotlib import pyplot

    X, y = load_iris(return_X_y=True)
    X = _with_holes(X, 0.2, seed=0)
    model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    explainer = rx.Explainer(model, "sat", missing="all")
    for row in X[::15]:
        decision = explainer.explain(row)
        decision.plot()
        assert decision._repr_html_()
        decision.necessary_reason().plot()
        pyplot.close("all")


def test_a_tree_that_would_grow_too_much_is_refused_naming_the_remedies() -> None:
    """Deep trees over many features whose splits send NaN left on many of them along a path
    would be copied over and over (docs/design.md, section 1): refused, and read without
    missing values or with fewer of them."""
    from rfexplain.core.errors import UnsupportedModelError
    from rfexplain.datasets import load

    data = load("ring")
    X = _with_holes(np.asarray(data.X, dtype=np.float64)[:3000], 0.1, seed=0)
    model = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, np.asarray(data.y)[:3000])
    with pytest.raises(UnsupportedModelError, match=r"missing=\[\.\.\.\].*missing='none'.*max_depth"):
        Forest.from_sklearn(model)
    assert not any(map(Forest.from_sklearn(model, missing="none").accepts_missing, range(X.shape[1])))
    few = Forest.from_sklearn(model, missing=[0, 1])
    probes = _with_holes(X[:300], 0.3, seed=1)
    probes[:, 2:] = np.nan_to_num(probes[:, 2:])
    assert few.predict(probes).tolist() == model.predict(probes.astype(np.float32)).tolist()


def test_one_row_states_equal_the_matrix_states() -> None:
    """``Forest.checked_states`` looks one row up with ``bisect`` and more rows with numpy: the
    same states at every threshold, one float32 step either side, and with NaN."""
    X, y = load_iris(return_X_y=True)
    model = _fit(RandomForestClassifier, _with_holes(X, 0.2, seed=1), y, seed=0, max_depth=4, n_estimators=5)
    for forest in (
        Forest.from_sklearn(model, missing="all"),
        Forest.from_sklearn(_fit(RandomForestClassifier, X, y, 0)),
    ):
        probes = np.vstack([_probes(forest), X])
        if not forest.accepts_missing(0):
            probes = probes[~np.isnan(probes).any(axis=1)]
        values = forest.check_instances(probes)
        together = forest.checked_states(values)
        alone = np.vstack([forest.checked_states(values[i : i + 1]) for i in range(len(values))])
        assert np.array_equal(alone, together)
        assert np.array_equal(together, forest.states(probes))
