"""LightGBM models reading zeros as missing values (``zero_as_missing=True``, splits of
``missing_type`` Zero; :mod:`rfexplain.core.lightgbm_import`): the zero band ``|x| <= 1e-35``
(float32) and NaN go by ``default_left``, every other number by ``x <= threshold``; NaN is read
with ``missing="all"``. The decision
equals ``predict`` on every value class (0, -0.0, the band's edges and their neighbours, tiny
numbers, NaN, numbers on both sides of the thresholds), with ``use_missing=False`` and
categorical features too; the SAT engine equals the oracle on small models and every reason
verifies against LightGBM's ``predict``; the forest survives its JSON round trip."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import rfexplain as rx
from rfexplain import Forest
from rfexplain.core.lightgbm_import import ZERO
from tests.boosted_checks import check_sat_equals_oracle

lightgbm = pytest.importorskip("lightgbm")

_Z = np.float32(ZERO)
#: Every class of value around LightGBM's zero band, as float64 inputs.
VALUES = (
    0.0,
    -0.0,
    ZERO,
    -ZERO,
    float(np.nextafter(_Z, np.float32(1))),  # the float32 numbers next to the band
    float(np.nextafter(-_Z, np.float32(-1))),
    float(np.nextafter(ZERO, 1.0)),  # the float64 numbers next to the band
    float(np.nextafter(-ZERO, -1.0)),
    1e-36,
    -1e-36,
    1e-30,
    -1e-30,
    np.nan,
    0.5,
    -0.5,
    1.0,
    -1.0,
    3.0,
    -3.0,
)


def _data(seed: int, n_classes: int = 2, rows: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Three features, many zeros in the first two (the class depends on them being zero) and some
    NaN in the second."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, 3)).round(2)
    X[rng.random(rows) < 0.3, 0] = 0.0
    X[rng.random(rows) < 0.2, 1] = 0.0
    y = ((X[:, 0] == 0) ^ (X[:, 1] > 0.2)).astype(int)
    if n_classes == 3:
        y = np.where(X[:, 2] > 0.5, 2, y)
    X[rng.random(rows) < 0.1, 1] = np.nan
    return X, y


def _fit(X: np.ndarray, y: np.ndarray, rounds: int = 12, leaves: int = 15, **options: Any) -> Any:
    categorical = options.pop("categorical", False)
    model = lightgbm.LGBMClassifier(
        n_estimators=rounds, num_leaves=leaves, min_child_samples=3, verbose=-1, random_state=0, **options
    )
    return model.fit(X, y, **({"categorical_feature": [2]} if categorical else {}))


def _value_rows(X: np.ndarray, seed: int, n: int = 4000) -> np.ndarray:
    """Rows of ``X`` whose features are each, half of the time, one of :data:`VALUES`."""
    rng = np.random.default_rng(seed)
    rows = X[rng.integers(0, len(X), size=n)].copy()
    for f in range(X.shape[1]):
        rows[:, f] = np.where(rng.random(n) < 0.5, rng.choice(VALUES, size=n), rows[:, f])
    return rows


def _zero_splits(model: Any) -> int:
    """The number of splits of ``missing_type`` Zero in ``model``'s dump."""
    stack = [info["tree_structure"] for info in model.booster_.dump_model()["tree_info"]]
    count = 0
    while stack:
        node = stack.pop()
        if "leaf_value" not in node:
            count += node["missing_type"] == "Zero"
            stack.extend((node["left_child"], node["right_child"]))
    return count


@pytest.mark.parametrize("n_classes", [2, 3])
def test_zero_as_missing_decides_as_predict_on_every_value_class(n_classes: int) -> None:
    """``zero_as_missing=True`` (it was refused before): read by default, the zero band is read
    and NaN (which its splits read as 0) is not; read with ``missing="all"``, NaN is a state of
    every tested feature. Both decide every value class as ``predict``."""
    X, y = _data(seed=n_classes, n_classes=n_classes)
    model = _fit(X, y, zero_as_missing=True)
    assert _zero_splits(model) > 0
    rows = _value_rows(X, seed=n_classes)
    numbers = rows[~np.isnan(rows).any(axis=1)]
    forest = Forest.from_sklearn(model)
    assert not any(forest.accepts_missing(f) for f in forest.tested_features)
    _assert_decides_as_predict(forest, model, numbers)
    everywhere = Forest.from_sklearn(model, missing="all")
    assert all(everywhere.accepts_missing(f) for f in everywhere.tested_features)
    assert (everywhere.predict(X) == model.predict(X)).all()
    _assert_decides_as_predict(everywhere, model, rows)
    for read in (forest, everywhere):
        assert Forest.from_json(read.to_json()) == read


def _assert_decides_as_predict(forest: Forest, model: Any, rows: np.ndarray) -> None:
    """The forest decides ``rows`` as ``predict`` decides their float32 rounding (what is
    explained), and as ``predict`` decides the rows themselves but where a value is no float32
    number (the documented rounding: the float64 neighbours of the band's edges round onto them)."""
    rounded = rows.astype(np.float32).astype(np.float64)
    ours = forest.predict(rows)
    assert (ours == model.predict(rounded)).all()
    differ = ours != model.predict(rows)
    assert not (rows[differ] == rounded[differ]).all(axis=1).any()


def test_zero_band_is_a_state_where_the_model_needs_one() -> None:
    """A split whose zero band goes the other way than its neighbours makes the band a state of
    its own: ``-1e-35`` and ``1e-35`` (float32) are thresholds of the feature."""
    X, y = _data(seed=5)
    forest = Forest.from_sklearn(_fit(X, y, zero_as_missing=True))
    below = float(np.nextafter(-_Z, np.float32(-1)))
    assert {below, ZERO} <= set(forest.thresholds[0])


@pytest.mark.parametrize("options", [{"use_missing": False}, {"categorical": True}])
def test_zero_as_missing_with_use_missing_false_or_categorical_features(options: dict[str, Any]) -> None:
    """``use_missing=False`` turns the zero band off (``missing_type`` None: NaN read as 0, read
    with ``missing="all"``); a categorical feature beside features of ``missing_type`` Zero keeps
    its own routing (codes, NaN right)."""
    X, y = _data(seed=7, n_classes=3)
    X[:, 2] = np.floor(np.abs(X[:, 2]) * 2)  # codes 0 .. 6
    model = _fit(X, y, zero_as_missing=True, **options)
    forest = Forest.from_sklearn(model, missing="all")
    rows = _value_rows(X, seed=7)
    if options.get("categorical"):
        assert _zero_splits(model) > 0 and forest.categories[2] is not None
        rows[:, 2] = np.where(np.isnan(rows[:, 2]), rows[:, 2], np.trunc(rows[:, 2]))  # codes are integers
    _assert_decides_as_predict(forest, model, rows)


@pytest.mark.parametrize("missing", ["learned", "all"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sat_equals_oracle_with_the_zero_band(n_classes: int, missing: str) -> None:
    """The engine contract on small models reading zeros as missing, NaN read or not: every AXp,
    CXp and the robustness equal the oracle's and every reason verifies against LightGBM's
    ``predict`` (the witnesses' values in the band are read as zero by it)."""
    X, y = _data(seed=10 + n_classes, n_classes=n_classes)
    model = _fit(X, y, rounds=3, leaves=4, zero_as_missing=True)
    check_sat_equals_oracle(model, seed=n_classes, instances=5, missing=missing)


def test_reasons_on_zero_rows_verify() -> None:
    """Rows with zeros, -0.0, tiny numbers and NaN: decided as ``predict``, their reasons verified
    by it."""
    X, y = _data(seed=20)
    model = _fit(X, y, rounds=6, zero_as_missing=True)
    rows = np.asarray([[0.0, 0.4, 1.0], [-0.0, 0.0, -1.0], [1e-36, np.nan, 0.2], [1.5, -1e-36, 0.0]])
    with rx.Explainer(model, engine="sat", missing="all") as explainer:
        for row in rows:
            decision = explainer.explain(row)
            assert decision.prediction == model.predict(row[None, :])[0]
            for reason in (decision.sufficient_reason(), decision.necessary_reason()):
                assert rx.verify(reason, model).ok, str(reason)
