"""LightGBM classifiers read from ``dump_model()`` as forests of the additive vote: the decision
equals ``predict`` on training rows, random inputs and at every threshold (except exactly the
documented float64 inputs); the SAT engine equals the oracle on small models and their reasons
verify against the model's own ``predict``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_iris

from rfexplain import Forest
from rfexplain.core.boosted_import import boosted_predict
from tests.boosted_checks import check_only_documented_differ, check_sat_equals_oracle

lightgbm = pytest.importorskip("lightgbm")


def _model(binary: bool, rounds: int, leaves: int, **options: Any) -> tuple[Any, np.ndarray]:
    X, y = load_iris(return_X_y=True)
    y = (y == 2).astype(int) if binary else y
    model = lightgbm.LGBMClassifier(n_estimators=rounds, num_leaves=leaves, random_state=0, verbose=-1, **options)
    return model.fit(X, y), X


@pytest.mark.parametrize("binary", [True, False])
def test_decision_equals_predict(binary: bool) -> None:
    model, X = _model(binary, rounds=30, leaves=8)
    forest = Forest.from_sklearn(model)
    assert forest.vote == "additive" and forest.n_trees == 30 * (1 if binary else 3)
    random = np.random.default_rng(0).uniform(X.min(0) - 1, X.max(0) + 1, size=(5000, X.shape[1]))
    for inputs in (X, random, random.astype(np.float32)):
        assert (forest.predict(inputs) == model.predict(inputs)).all()
    splits = []
    for info in model.booster_.dump_model()["tree_info"]:
        stack = [info["tree_structure"]]
        while stack:
            node = stack.pop()
            if "leaf_value" not in node:
                stack += [node["left_child"], node["right_child"]]
                splits.append((node["split_feature"], float(node["threshold"])))
    check_only_documented_differ(forest, model, X, splits)
    booster = model.booster_
    assert Forest.from_sklearn(booster).trees == forest.trees
    assert (forest.predict_index(X) == boosted_predict(booster, X)).all()


def test_a_categorical_feature_is_read_as_predict_reads_it() -> None:
    """Native categorical splits are read (tests/test_boosted_categorical.py has the details)."""
    X, y = load_iris(return_X_y=True)
    codes = np.c_[y * 2 + np.arange(len(X)) % 2, X[:, 1:]]  # an informative categorical feature
    model = lightgbm.LGBMClassifier(n_estimators=3, random_state=0, verbose=-1, min_data_per_group=1, cat_smooth=1)
    forest = Forest.from_sklearn(model.fit(codes, y, categorical_feature=[0]))
    assert forest.categories[0] is not None
    assert (forest.predict(codes) == model.predict(codes)).all()


@pytest.mark.parametrize("binary", [True, False])
def test_sat_equals_oracle_on_small_lightgbm_models(binary: bool) -> None:
    check_sat_equals_oracle(_model(binary, rounds=3, leaves=3)[0], seed=3)
