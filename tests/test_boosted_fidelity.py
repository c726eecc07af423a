"""Fidelity of the boosted-model readers on random small models (hypothesis, ``slow``): data with
few distinct values (so that thresholds meet data values), binary and multi-class, each library;
the decision equals ``predict`` on the data and at every threshold with its float64 and float32
neighbours, but for exactly the documented inputs of the float64-comparing libraries
(HistGradientBoosting, LightGBM: above a threshold ``t`` and rounding to ``float32(t)``; LightGBM
below ``-1e-35`` and rounding onto it, where its split at ``-1e-35`` is ``x < -1e-35``). Models
trained with missing values decide as ``predict`` with NaN in any feature, at every threshold
too (:mod:`tests.test_boosted_missing`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

from rfexplain import Forest
from tests.hypothesis_budget import examples
from tests.test_boosted_missing import _assert_decides_as_predict, _data, _rounds_across
from tests.test_boosted_missing import _fit as _fit_missing

pytestmark = pytest.mark.slow

KINDS = ("gb", "hgb", "xgb", "lgbm")


def _fit(kind: str, X: np.ndarray, y: np.ndarray, rounds: int, depth: int) -> Any:
    if kind == "gb":
        return GradientBoostingClassifier(n_estimators=rounds, max_depth=depth, random_state=0).fit(X, y)
    if kind == "hgb":
        return HistGradientBoostingClassifier(max_iter=rounds, max_depth=depth, random_state=0).fit(X, y)
    if kind == "xgb":
        xgboost = pytest.importorskip("xgboost")
        return xgboost.XGBClassifier(n_estimators=rounds, max_depth=depth, random_state=0).fit(X, y)
    lightgbm = pytest.importorskip("lightgbm")
    model = lightgbm.LGBMClassifier(n_estimators=rounds, max_depth=depth, min_child_samples=2, verbose=-1)
    return model.fit(X, y)


def _float64_thresholds(kind: str, model: Any, n_features: int) -> list[list[float]]:
    """The float64 thresholds of a float64-comparing model, per feature (empty lists otherwise)."""
    out: list[list[float]] = [[] for _ in range(n_features)]
    if kind == "hgb":
        for iteration in model._predictors:
            for predictor in iteration:
                for node in predictor.nodes:
                    if not node["is_leaf"] and np.isfinite(node["num_threshold"]):
                        out[int(node["feature_idx"])].append(float(node["num_threshold"]))
    elif kind == "lgbm":
        stack = [info["tree_structure"] for info in model.booster_.dump_model()["tree_info"]]
        while stack:
            node = stack.pop()
            if "leaf_value" not in node:
                out[int(node["split_feature"])].append(float(node["threshold"]))
                stack += [node["left_child"], node["right_child"]]
    return out


def _near(values: np.ndarray) -> list[tuple[float, float]]:
    """Each distinct value with the float64 and float32 numbers next to it and its float32
    rounding: ``(input, the value it stands next to)``."""
    out = []
    for t in np.unique(values).tolist():
        t32 = np.float32(t)
        for v in (t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), float(t32)):
            out.append((float(v), t))
        for v in (np.nextafter(t32, np.float32(-np.inf)), np.nextafter(t32, np.float32(np.inf))):
            out.append((float(v), t))
    return out


@settings(max_examples=examples(20), deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    n_classes=st.integers(2, 3),
    rounds=st.integers(1, 6),
    depth=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_random_boosted_models_decide_as_predict(kind: str, n_classes: int, rounds: int, depth: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    levels = rng.uniform(-5, 5, size=(3, 6)).round(rng.integers(1, 4))  # few distinct values per feature
    X = np.stack([rng.choice(levels[f], size=120) for f in range(3)], axis=1)
    y = (X[:, 0] + rng.normal(0, 1, size=120) > 0).astype(int) + (n_classes == 3) * (X[:, 1] > 1)
    if len(np.unique(y)) < 2:
        return
    model = _fit(kind, X, y, rounds, depth)
    forest = Forest.from_sklearn(model)
    assert (forest.predict(X) == model.predict(X)).all()
    originals = _float64_thresholds(kind, model, 3)
    rows, documented = [], []
    for f in range(3):
        for v, _ in _near(np.concatenate([X[:, f], np.asarray(forest.thresholds[f]), np.asarray(originals[f])])):
            row = X[len(rows) % len(X)].copy()
            row[f] = v
            rows.append(row)
            # the float64-comparing libraries' disagreement: rounding across a float64 threshold
            documented.append(any(_rounds_across(kind, v, t) for t in originals[f]))
    rows64 = np.asarray(rows)
    differ = np.flatnonzero(forest.predict(rows64) != model.predict(rows64))
    assert set(differ.tolist()) <= set(np.flatnonzero(documented).tolist())


@settings(max_examples=examples(20), deadline=None)
@given(
    kind=st.sampled_from(("hgb", "xgb", "lgbm")),
    n_classes=st.integers(2, 3),
    rounds=st.integers(1, 6),
    depth=st.integers(1, 3),
    nan=st.sampled_from((0.05, 0.2, 0.5)),
    seed=st.integers(0, 2**16),
)
def test_random_boosted_models_with_missing_values_decide_as_predict(
    kind: str, n_classes: int, rounds: int, depth: int, nan: float, seed: int
) -> None:
    X, y = _data(seed, n_classes=n_classes, nan=nan)
    if len(np.unique(y)) < 2:
        return
    model = _fit_missing(kind, X, y, rounds=rounds, depth=depth)
    _assert_decides_as_predict(kind, Forest.from_sklearn(model, missing="all"), model, X)
