"""XGBoost classifiers read from their JSON dumps as forests of the additive vote: the decision
equals ``predict`` on training rows, random inputs and every split value with its float32
neighbours (``x < split`` goes left); the SAT engine equals the oracle on small models and their
reasons verify against the model's own ``predict``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_iris

import rfexplain as rx
from rfexplain import Forest
from rfexplain.core.boosted_import import boosted_predict
from rfexplain.core.errors import UnsupportedModelError
from tests.boosted_checks import check_sat_equals_oracle

xgboost = pytest.importorskip("xgboost")


def _model(binary: bool, rounds: int, depth: int, **options: Any) -> tuple[Any, np.ndarray]:
    X, y = load_iris(return_X_y=True)
    y = (y == 2).astype(int) if binary else y
    return xgboost.XGBClassifier(n_estimators=rounds, max_depth=depth, random_state=0, **options).fit(X, y), X


def _split_inputs(forest: Forest, X: np.ndarray) -> np.ndarray:
    rows = []
    for f, ts in enumerate(forest.thresholds):
        for t in ts:
            t32 = np.float32(t)
            for v in (t32, np.nextafter(t32, np.float32(np.inf)), np.nextafter(t32, np.float32(-np.inf))):
                row = X[len(rows) % len(X)].copy()
                row[f] = float(v)
                rows.append(row)
    return np.asarray(rows, dtype=np.float32)


@pytest.mark.parametrize("binary", [True, False])
def test_decision_equals_predict(binary: bool) -> None:
    model, X = _model(binary, rounds=30, depth=3)
    forest = Forest.from_sklearn(model)
    assert forest.vote == "additive" and forest.n_trees == 30 * (1 if binary else 3) + 1
    random = np.random.default_rng(0).uniform(X.min(0) - 1, X.max(0) + 1, size=(5000, X.shape[1]))
    for inputs in (X, random, random.astype(np.float32), _split_inputs(forest, X)):
        assert (forest.predict(inputs) == model.predict(inputs)).all()
    booster = model.get_booster()
    from_booster = Forest.from_sklearn(booster)
    assert from_booster.trees == forest.trees
    assert (from_booster.predict_index(X) == boosted_predict(booster, X)).all()
    assert from_booster.agreement(X, booster).fraction == 1.0
    with rx.Explainer(booster) as explainer:
        decision = explainer.explain(X[70])
        assert decision.prediction == model.predict(X[70:71])[0]
        assert rx.verify(decision.sufficient_reason(), booster).ok


def test_unsupported_xgboost_models_are_refused() -> None:
    with pytest.raises(UnsupportedModelError, match="gbtree"):
        Forest.from_sklearn(_model(True, rounds=2, depth=2, booster="dart")[0])
    with pytest.raises(UnsupportedModelError, match="parallel"):
        Forest.from_sklearn(_model(True, rounds=2, depth=2, num_parallel_tree=2)[0])


@pytest.mark.parametrize("binary", [True, False])
def test_sat_equals_oracle_on_small_xgboost_models(binary: bool) -> None:
    check_sat_equals_oracle(_model(binary, rounds=3, depth=2)[0], seed=2)
