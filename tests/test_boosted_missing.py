"""Gradient-boosted models with missing values (docs/design.md, section 1): NaN is one more state of
each feature, routed as the library routes it -- HistGradientBoosting's ``missing_go_to_left``
(the child with more samples where no NaN was seen in training), XGBoost's default direction,
LightGBM's ``default_left`` (``missing_type`` NaN) or NaN read as zero (``missing_type`` None).
The decision equals ``predict`` with NaN in any feature and at every threshold with its float
neighbours (but the documented float64 inputs); the SAT engine equals the oracle on small models
with missing states and every reason verifies against the model's own ``predict``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

import rfexplain as rx
from rfexplain import Forest
from rfexplain.core.errors import UnsupportedModelError
from tests.boosted_checks import check_sat_equals_oracle

KINDS = ("hgb", "xgb", "lgbm")


def _data(seed: int, n_classes: int = 2, nan: float = 0.2, rows: int = 160) -> tuple[np.ndarray, np.ndarray]:
    """Three features of few distinct values (thresholds meet data values), a share ``nan`` of
    them missing; the class depends on the first two and on whether the third is missing."""
    rng = np.random.default_rng(seed)
    levels = rng.uniform(-5, 5, size=(3, 6)).round(2)
    X = np.stack([rng.choice(levels[f], size=rows) for f in range(3)], axis=1)
    y = (X[:, 0] + rng.normal(0, 1, size=rows) > 0).astype(int)
    if n_classes == 3:
        y += X[:, 1] > 1
    X[rng.random(X.shape) < nan] = np.nan
    y = np.where(np.isnan(X[:, 2]) & (rng.random(rows) < 0.7), n_classes - 1 - y, y)
    return X, y


def _fit(kind: str, X: np.ndarray, y: np.ndarray, rounds: int = 6, depth: int = 3, **options: Any) -> Any:
    if kind == "hgb":
        return HistGradientBoostingClassifier(max_iter=rounds, max_depth=depth, random_state=0, **options).fit(X, y)
    if kind == "xgb":
        xgboost = pytest.importorskip("xgboost")
        return xgboost.XGBClassifier(n_estimators=rounds, max_depth=depth, random_state=0, **options).fit(X, y)
    lightgbm = pytest.importorskip("lightgbm")
    model = lightgbm.LGBMClassifier(
        n_estimators=rounds, max_depth=depth, min_child_samples=2, verbose=-1, random_state=0, **options
    )
    return model.fit(X, y)


def _thresholds(kind: str, model: Any) -> list[tuple[int, float]]:
    """Every finite split of the model as ``(feature, threshold)`` in the library's own numbers."""
    out: list[tuple[int, float]] = []
    if kind == "hgb":
        for iteration in model._predictors:
            for predictor in iteration:
                for node in predictor.nodes:
                    if not node["is_leaf"] and np.isfinite(node["num_threshold"]):
                        out.append((int(node["feature_idx"]), float(node["num_threshold"])))
    elif kind == "xgb":
        import json

        stack = [json.loads(d) for d in model.get_booster().get_dump(dump_format="json")]
        while stack:
            node = stack.pop()
            if "leaf" not in node:
                out.append((int(node["split"][1:]), float(np.float32(node["split_condition"]))))
                stack += node["children"]
    else:
        stack = [info["tree_structure"] for info in model.booster_.dump_model()["tree_info"]]
        while stack:
            node = stack.pop()
            if "leaf_value" not in node:
                out.append((int(node["split_feature"]), float(node["threshold"])))
                stack += [node["left_child"], node["right_child"]]
    return out


def _rows_around_thresholds(kind: str, model: Any, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows with one feature at each threshold, one float step (of the library's input dtype:
    float32 for XGBoost, float64 for the others, and float32 steps too) either side, the other
    features from the data or missing in turn; and per row whether it is a documented
    disagreement of the float64-comparing libraries (above a float64 threshold, rounding onto its
    float32 number)."""
    rows: list[np.ndarray] = []
    documented: list[bool] = []
    splits = _thresholds(kind, model)
    for k, (feature, t) in enumerate(splits):
        if abs(t) > float(np.finfo(np.float32).max):  # LightGBM's 1e308 splitting off the missing values
            continue
        t32 = np.float32(t)
        values = [t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), float(t32)]
        values += [float(np.nextafter(t32, np.float32(-np.inf))), float(np.nextafter(t32, np.float32(np.inf)))]
        for v in values:
            for other in (None, *range(X.shape[1])):  # every other feature missing in turn
                row = X[(len(rows) + k) % len(X)].copy()
                row[feature] = v
                if other is not None and other != feature:
                    row[other] = np.nan
                rows.append(row)
                documented.append(kind != "xgb" and _rounds_across(kind, v, t))
    return np.asarray(rows), np.asarray(documented, dtype=bool)


#: LightGBM reads every input ``x`` with ``|x| <= ZERO`` as 0 (its ``kZeroThreshold``, 1e-35 in float32).
ZERO = float(np.float32(1e-35))


def _rounds_across(kind: str, v: float, t: float) -> bool:
    """Whether ``v`` is a documented disagreement at the float64 threshold ``t``: above it and
    rounding to ``float32(t)``; for LightGBM, whose split at ``t`` in ``[-ZERO, 0)`` is ``x <
    -ZERO`` (every ``|x| <= ZERO`` read as 0), also below ``-ZERO`` and rounding onto it."""
    if v > t and np.float32(v) == np.float32(t):
        return True
    return kind == "lgbm" and -ZERO <= t < 0 and v < -ZERO and float(np.float32(v)) == -ZERO


def _nan_rows(X: np.ndarray) -> np.ndarray:
    """Every pattern of missing features over some rows of ``X``."""
    rows = []
    for mask in range(1, 2 ** X.shape[1]):
        for row in X[:20]:
            row = row.copy()
            row[[f for f in range(X.shape[1]) if mask >> f & 1]] = np.nan
            rows.append(row)
    return np.asarray(rows)


def _assert_decides_as_predict(kind: str, forest: Forest, model: Any, X: np.ndarray) -> None:
    assert (forest.predict(X) == model.predict(X)).all()
    nan_rows = _nan_rows(X)
    assert (forest.predict(nan_rows) == model.predict(nan_rows)).all()
    rows, documented = _rows_around_thresholds(kind, model, X)
    if not len(rows):  # a model without splits
        return
    differ = forest.predict(rows) != model.predict(rows)
    assert not (differ & ~documented).any(), rows[differ & ~documented][:5]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_trained_with_missing_values_decides_as_predict(kind: str, n_classes: int) -> None:
    X, y = _data(seed=n_classes, n_classes=n_classes)
    model = _fit(kind, X, y)
    forest = Forest.from_sklearn(model)
    assert forest.tested_features and all(forest.accepts_missing(f) for f in forest.tested_features)
    assert forest == Forest.from_sklearn(model, missing="all")
    _assert_decides_as_predict(kind, forest, model, X)


@pytest.mark.parametrize("kind", KINDS)
def test_trained_without_missing_values_reads_as_before_and_all_routes_nan_as_predict(kind: str) -> None:
    """Without NaN in training the default reading has no missing state (the answers of today);
    ``missing="all"`` reads the routing ``predict`` applies to NaN anyway (HistGradientBoosting:
    the child with more samples; XGBoost: its default direction; LightGBM: NaN read as 0)."""
    X, y = _data(seed=5, nan=0.0)
    model = _fit(kind, X, y)
    forest = Forest.from_sklearn(model)
    assert not any(forest.accepts_missing(f) for f in range(forest.n_features))
    assert forest == Forest.from_sklearn(model, missing="none")
    everywhere = Forest.from_sklearn(model, missing="all")
    assert all(everywhere.accepts_missing(f) for f in everywhere.tested_features)
    _assert_decides_as_predict(kind, everywhere, model, X)


@pytest.mark.parametrize("kind", KINDS)
def test_missing_names_the_features(kind: str) -> None:
    X, y = _data(seed=7)
    model = _fit(kind, X, y)
    forest = Forest.from_sklearn(model, missing=[2])
    assert [forest.accepts_missing(f) for f in range(3)] == [False, False, 2 in forest.tested_features]
    numbers = X[~np.isnan(X[:, :2]).any(axis=1)]
    assert (forest.predict(numbers) == model.predict(numbers)).all()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sat_equals_oracle_with_missing_states(kind: str, n_classes: int) -> None:
    """The engine contract on small boosted models with missing states: every AXp, CXp and the
    robustness equal the oracle's on random states (missing ones included), and every reason
    verifies against the model's own ``predict`` (its witnesses with NaN included)."""
    X, y = _data(seed=11 + n_classes, n_classes=n_classes)
    model = _fit(kind, X, y, rounds=3, depth=2)
    forest = check_sat_equals_oracle(model, seed=n_classes, instances=6)
    assert any(forest.accepts_missing(f) for f in range(forest.n_features))


@pytest.mark.parametrize("kind", KINDS)
def test_an_instance_with_nan_is_explained_and_its_reasons_say_missing(kind: str) -> None:
    X, y = _data(seed=3, nan=0.4)
    model = _fit(kind, X, y)
    with rx.Explainer(model, engine="sat") as explainer:
        texts = []
        for row in X[np.isnan(X).any(axis=1)][:8]:
            decision = explainer.explain(row)
            assert decision.prediction == model.predict(row[None, :])[0]
            for reason in (decision.sufficient_reason(), decision.necessary_reason()):
                assert rx.verify(reason, model).ok
                texts.append(str(reason))
    assert any("missing" in text for text in texts)


def test_hist_gradient_boosting_without_nan_in_training_sends_nan_to_the_larger_child() -> None:
    """scikit-learn's rule where no NaN was seen in training for a feature: the NaN goes to the
    child with more training samples; the forest's missing state follows it."""
    X, y = _data(seed=2, nan=0.0)
    gone = np.random.default_rng(0).random(len(X)) < 0.3  # NaN in one feature only, telling the class
    X[gone, 2] = np.nan
    y = np.where(gone, 1 - y, y)
    model = _fit("hgb", X, y)
    forest = Forest.from_sklearn(model)
    tested = set(forest.tested_features)
    assert all(forest.accepts_missing(f) for f in tested)
    _assert_decides_as_predict("hgb", forest, model, X)


def test_lightgbm_nan_as_zero_and_zero_as_missing() -> None:
    """``use_missing=False`` (every NaN read as 0, ``missing_type`` None) decides as ``predict``
    read with ``missing="all"``; ``zero_as_missing=True`` (zeros and NaN routed by
    ``default_left``) decides as ``predict`` read with ``missing="all"``, NaN and zeros included
    (``tests/test_boosted_zero_missing.py`` checks every value class)."""
    X, y = _data(seed=4, nan=0.2)
    model = _fit("lgbm", X, y, use_missing=False)
    forest = Forest.from_sklearn(model, missing="all")
    _assert_decides_as_predict("lgbm", forest, model, X)
    X[::5, 0] = 0.0
    zero = _fit("lgbm", X, y, zero_as_missing=True)
    read = Forest.from_sklearn(zero, missing="all")
    assert read.accepts_missing(0)
    _assert_decides_as_predict("lgbm", read, zero, X)


def test_xgboost_with_a_number_as_missing_value_is_refused() -> None:
    X, y = _data(seed=6, nan=0.0)
    model = _fit("xgb", X, y, missing=-999.0)
    with pytest.raises(UnsupportedModelError, match="missing=-999"):
        Forest.from_sklearn(model)


def test_verify_reads_the_missing_routes_of_a_boosted_model() -> None:
    """A reason whose witness holds NaN is checked with ``predict`` on that NaN: the verifier
    reads the model's trees with its missing routes."""
    X, y = _data(seed=8, nan=0.3)
    model = _fit("hgb", X, y)
    row = X[np.isnan(X[:, 2])][0]
    with rx.Explainer(model, engine="sat") as explainer:
        decision = explainer.explain(row)
        reasons = list(decision.necessary_reasons())
    assert reasons and all(rx.verify(reason, model).ok for reason in reasons)


def test_lightgbm_reads_inputs_next_to_zero_as_zero() -> None:
    """LightGBM's ``predict`` reads every ``|x| <= 1e-35`` (float32) as 0, so its splits at
    ``+-1e-35`` (between the negative numbers, zero and the positive ones) are ``x < -1e-35`` and
    ``x <= 1e-35``: the forest decides the inputs around them as ``predict``."""
    X, y = _data(seed=9, nan=0.0)
    X[::3, 0] = 0.0
    model = _fit("lgbm", X, y)
    forest = Forest.from_sklearn(model)
    below = float(np.nextafter(np.float32(-ZERO), np.float32(-np.inf)))
    above = float(np.nextafter(np.float32(ZERO), np.float32(1)))
    values = [-ZERO, ZERO, below, -below, above, -above, 0.0, -0.0, 1e-36, -1e-36]
    rows = np.repeat(X[:10], len(values), axis=0)
    rows[:, 0] = np.tile(values, 10)
    assert (forest.predict(rows) == model.predict(rows)).all()


def test_gradient_boosting_takes_no_missing_values() -> None:
    """GradientBoostingClassifier's ``predict`` refuses NaN: read as before by default, and asking
    for missing values is refused with the reason."""
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = _data(seed=1, nan=0.0)
    model = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    assert not any(Forest.from_sklearn(model).accepts_missing(f) for f in range(3))
    with pytest.raises(UnsupportedModelError, match="refuses NaN"):
        Forest.from_sklearn(model, missing="all")
