"""scikit-learn's gradient-boosted classifiers read as forests of the additive vote: the decision
equals ``predict`` on training rows, random inputs and every threshold with its float32
neighbours; the SAT engine equals the oracle on small boosted models (binary and multi-class)
and every reason verifies against the model's own ``predict``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier

import rfexplain as rx
from rfexplain import Budget, Forest
from rfexplain.core.errors import InvalidForestError, UnsupportedModelError, UnsupportedQueryError
from rfexplain.engines.base import Instance
from rfexplain.oracle import Oracle
from rfexplain.sat.engine import SatEngine


def _iris(binary: bool) -> tuple[np.ndarray, np.ndarray]:
    X, y = load_iris(return_X_y=True)
    return (X, (y == 2).astype(int)) if binary else (X, y)


def _model(kind: str, binary: bool, rounds: int = 10, depth: int = 2) -> Any:
    X, y = _iris(binary)
    if kind == "gb":
        return GradientBoostingClassifier(n_estimators=rounds, max_depth=depth, random_state=0).fit(X, y)
    return HistGradientBoostingClassifier(max_iter=rounds, max_depth=depth, random_state=0).fit(X, y)


def _threshold_inputs(forest: Forest, X: np.ndarray) -> np.ndarray:
    """Rows of ``X`` with one feature moved to each threshold and its float32 neighbours."""
    rows = []
    for f, ts in enumerate(forest.thresholds):
        for t in ts:
            t32 = np.float32(t)
            for v in (np.nextafter(t32, np.float32(-np.inf)), t32, np.nextafter(t32, np.float32(np.inf))):
                row = X[len(rows) % len(X)].copy()
                row[f] = float(v)
                rows.append(row)
    return np.asarray(rows).astype(np.float32)


@pytest.mark.parametrize("kind", ["gb", "hgb"])
@pytest.mark.parametrize("binary", [True, False])
def test_decision_equals_predict(kind: str, binary: bool) -> None:
    model = _model(kind, binary, rounds=30, depth=3)
    X, _ = _iris(binary)
    forest = Forest.from_sklearn(model)
    assert forest.vote == "additive" and forest.n_trees == 30 * (1 if binary else 3) + 1
    random = np.random.default_rng(0).uniform(X.min(0) - 1, X.max(0) + 1, size=(5000, X.shape[1]))
    for inputs in (X, random, random.astype(np.float32)):  # float64 inputs to the model as they are
        assert (forest.predict(inputs) == model.predict(inputs)).all()
    if kind == "gb":  # float32 inputs and thresholds, exactly; HGB's float64 ones are tested below
        assert forest.agreement(_threshold_inputs(forest, X), model).fraction == 1.0


@pytest.mark.parametrize("data", ["iris", "cancer"])
def test_hist_gradient_boosting_at_its_float64_thresholds(data: str) -> None:
    """HistGradientBoosting compares float64 inputs with float64 thresholds, often values of
    its training data (0.07135 on breast cancer). At every threshold ``t``: ``t`` itself, the
    float64 numbers next to it, ``float32(t)`` and the float32 numbers next to that are decided
    as ``predict`` decides them, except exactly the documented inputs (module
    :mod:`rfexplain.core.boosted_import`): above ``t`` and rounding to ``float32(t)``."""
    X, y = load_breast_cancer(return_X_y=True) if data == "cancer" else load_iris(return_X_y=True)
    model = HistGradientBoostingClassifier(max_iter=20, max_depth=3, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model)
    assert (forest.predict(X) == model.predict(X)).all()
    rows, documented = [], []
    for iteration in model._predictors:
        for predictor in iteration:
            for node in predictor.nodes:
                t = float(node["num_threshold"])
                if node["is_leaf"] or not np.isfinite(t):
                    continue
                t32 = np.float32(t)
                near32 = [np.nextafter(t32, np.float32(-np.inf)), t32, np.nextafter(t32, np.float32(np.inf))]
                for v in [t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), *map(float, near32)]:
                    row = X[len(rows) % len(X)].copy()
                    row[node["feature_idx"]] = v
                    rows.append(row)
                    documented.append(v > t and np.float32(v) == t32)
    rows64 = np.asarray(rows)  # to the model as they are (Forest.agreement would round them to float32)
    differ = np.flatnonzero(forest.predict(rows64) != model.predict(rows64))
    assert set(differ.tolist()) <= set(np.flatnonzero(documented).tolist())


def test_binary_gradient_boosting_gives_ties_to_the_second_class() -> None:
    """GradientBoostingClassifier predicts ``classes_[1]`` iff its raw score is ``>= 0``: the
    forest lists it first, so that the tie rule (lowest index) gives it the ties; the initial
    score is the last tree, a single leaf."""
    model = _model("gb", binary=True)
    forest = Forest.from_sklearn(model)
    assert list(forest.classes) == [1, 0]
    last = forest.trees[-1]
    assert last.n_nodes == 1 and last.proba is not None and last.proba[0] is not None
    assert last.proba[0][0] == pytest.approx(float(model._raw_predict_init(np.zeros((1, 4)))[0, 0]))
    assert forest.decide([0, 0, 0, 0]) in (0, 1)
    hgb = Forest.from_sklearn(_model("hgb", binary=True))
    assert list(hgb.classes) == [0, 1]


def test_boosted_models_refuse_other_votes_and_unsupported_parts() -> None:
    model = _model("hgb", binary=False)
    with pytest.raises(InvalidForestError, match="summed scores"):
        Forest.from_sklearn(model, vote="hard")
    X, y = _iris(False)
    custom = GradientBoostingClassifier(n_estimators=2, init=DecisionTreeClassifier(max_depth=1), random_state=0)
    with pytest.raises(UnsupportedModelError, match="depends on the input"):
        Forest.from_sklearn(custom.fit(X, y))
    categorical = HistGradientBoostingClassifier(max_iter=2, categorical_features=[0], random_state=0)
    with pytest.raises(UnsupportedModelError, match="categorical"):
        Forest.from_sklearn(categorical.fit(np.c_[np.arange(len(X)) % 3, X[:, 1:]], y))
    with pytest.raises(UnsupportedModelError, match="HistGradientBoostingClassifier"):
        Forest.from_sklearn(LogisticRegression(max_iter=1000).fit(X, y))


def test_pipeline_of_a_boosted_model() -> None:
    model = _model("hgb", binary=False)
    X, _ = _iris(False)
    piped = Pipeline([("none", "passthrough"), ("model", model)])
    forest = Forest.from_sklearn(piped)
    assert forest == Forest.from_sklearn(model) and forest.agreement(X, piped).fraction == 1.0


def _keys(reasons: Any) -> set[Any]:
    return {(r.kind, tuple(sorted((f, tuple(sorted(s))) for f, s in r.literals.items())), r.target) for r in reasons}


@pytest.mark.parametrize("kind, binary", [("gb", True), ("gb", False), ("hgb", True), ("hgb", False)])
def test_sat_equals_oracle_on_small_boosted_models(kind: str, binary: bool) -> None:
    """Every query of the SAT engine equals the oracle's on a few inputs of a small boosted
    model, and every sufficient and necessary reason verifies against the model itself."""
    model = _model(kind, binary, rounds=4, depth=2)
    forest = Forest.from_sklearn(model)
    oracle = Oracle(forest)
    grid = np.asarray(oracle.grid)
    with SatEngine(forest) as engine:
        for k in np.random.default_rng(1).choice(len(grid), size=4, replace=False):
            instance = Instance.from_states(forest, grid[k])
            assert forest.classes[instance.prediction] == model.predict(np.asarray([instance.values]))[0]
            axps = engine.sufficient_reasons(instance, Budget())
            cxps = engine.necessary_reasons(instance, Budget())
            assert _keys(axps) == _keys(oracle.sufficient_reasons(instance))
            assert _keys(cxps) == _keys(oracle.necessary_reasons(instance))
            assert engine.robustness(instance) == oracle.robustness(instance)
            all_axps = oracle.sufficient_reasons(instance)
            fewest = min(len(r.literals) for r in all_axps)
            shortest = [r for r in all_axps if len(r.literals) == fewest]
            assert _keys(engine.shortest_sufficient_reasons(instance, Budget())) == _keys(shortest)
            assert _keys(engine.shortest_flips(instance, Budget())) == _keys(oracle.shortest_flips(instance))
            for target in range(forest.n_classes):
                if target != instance.prediction:
                    got = _keys(engine.contrastive_reasons(instance, target, Budget()))
                    assert got == _keys(oracle.contrastive_reasons(instance, target))
            for reason in [*axps, *cxps]:
                result = rx.verify(reason, model)
                assert result.ok, (str(reason), result.problems)


def test_explainer_on_a_boosted_model_and_the_circuit_engine_refuses_it() -> None:
    model = _model("hgb", binary=False, rounds=20, depth=3)
    X, _ = _iris(False)
    with rx.Explainer(model, engine="sat") as explainer:
        decision = explainer.explain(X[60])
        assert decision.prediction == model.predict(X[60:61])[0]
        reason = decision.sufficient_reason()
        assert rx.verify(reason, model).ok
        assert rx.verify(decision.necessary_reason(), model).ok
    with pytest.raises(UnsupportedQueryError, match="boosted"):
        rx.Explainer(model, engine="circuit").explain(X[60]).sufficient_reason()
