"""Native categorical splits of boosted models (docs/design.md, section 1;
:mod:`rfexplain.core.boosted_nodes`): HistGradientBoosting's ``categorical_features``, XGBoost's
``enable_categorical``, LightGBM's ``categorical_feature``. A categorical feature is one feature
whose states are the category codes, ``"(other)"`` (every other integer code) and, when it may be
missing, NaN; the decision equals the library's ``predict`` on every code, unknown and negative
codes and NaN; the SAT engine equals the oracle on small models and every reason verifies
against the library's ``predict``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

import rfexplain as rx
from rfexplain import Forest
from rfexplain.core.errors import InvalidInstanceError, UnsupportedModelError
from tests.boosted_checks import check_sat_equals_oracle

KINDS = ("hgb", "xgb", "lgbm")
#: The category codes of the data: code 3 is never seen in training.
CODES = (0, 1, 2, 4, 5)


def _data(seed: int, n_classes: int = 2, nan: float = 0.15, rows: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """A numeric feature and two categorical ones (codes :data:`CODES`, and 0 to 2), a share
    ``nan`` of the first categorical one missing; the class depends on sets of categories."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows).round(2)
    a = rng.choice(CODES, size=rows).astype(float)
    b = rng.integers(0, 3, size=rows).astype(float)
    y = (np.isin(a, (1, 4)) ^ (x > 0.3)).astype(int)
    if n_classes == 3:
        y = np.where((b == 2) & (x > 0), 2, y)
    a[rng.random(rows) < nan] = np.nan
    y = np.where(np.isnan(a) & (rng.random(rows) < 0.8), (y + 1) % n_classes, y)
    return np.stack([x, a, b], axis=1), y


def _fit(kind: str, X: np.ndarray, y: np.ndarray, rounds: int = 8, depth: int = 3, **options: Any) -> Any:
    if kind == "hgb":
        model = HistGradientBoostingClassifier(
            max_iter=rounds, max_depth=depth, categorical_features=[1, 2], random_state=0, **options
        )
        return model.fit(X, y)
    if kind == "xgb":
        xgboost = pytest.importorskip("xgboost")
        options = {"max_cat_to_onehot": 1, **options}
        model = xgboost.XGBClassifier(
            n_estimators=rounds,
            max_depth=depth,
            enable_categorical=True,
            feature_types=["q", "c", "c"],
            random_state=0,
            **options,
        )
        return model.fit(X, y)
    lightgbm = pytest.importorskip("lightgbm")
    model = lightgbm.LGBMClassifier(
        n_estimators=rounds,
        max_depth=depth,
        min_child_samples=3,
        min_data_per_group=3,
        cat_smooth=1.0,
        verbose=-1,
        random_state=0,
        **options,
    )
    return model.fit(X, y, categorical_feature=[1, 2])


def _code_rows(X: np.ndarray) -> np.ndarray:
    """Rows of ``X`` with each categorical feature set in turn to every code from -2 to 8, to
    large codes and to NaN."""
    values = [*range(-2, 9), 31, 32, 255, 256, 1000, 2.0**24, 2.0**31, np.nan]
    rows = []
    for f in (1, 2):
        for v in values:
            for row in X[:25]:
                row = row.copy()
                row[f] = v
                rows.append(row)
    return np.asarray(rows)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_decides_as_predict_on_every_code_unknown_negative_and_nan(kind: str, n_classes: int) -> None:
    X, y = _data(seed=n_classes, n_classes=n_classes)
    model = _fit(kind, X, y)
    forest = Forest.from_sklearn(model)
    labels = forest.categories[1]
    assert forest.categories[0] is None and labels is not None
    assert labels[-2:] == ("(other)", "(missing)") and labels[:3] == ("0", "1", "2")
    assert forest.accepts_missing(1)
    assert Forest.from_json(forest.to_json()) == forest
    rows = _code_rows(X)
    assert (forest.predict(X) == model.predict(X)).all()
    assert (forest.predict(rows) == model.predict(rows)).all()


@pytest.mark.parametrize("kind", KINDS)
def test_trained_without_missing_values_reads_nan_as_predict_with_all(kind: str) -> None:
    """Without NaN in training, the default reading has no missing state (NaN refused), unknown
    codes still have theirs; ``missing="all"`` routes NaN as ``predict`` (LightGBM: right at every
    categorical split)."""
    X, y = _data(seed=4, nan=0.0)
    model = _fit(kind, X, y)
    forest = Forest.from_sklearn(model)
    assert not forest.accepts_missing(1) and forest.categories[1][-1] == "(other)"
    numbers = _code_rows(X)
    numbers = numbers[~np.isnan(numbers).any(axis=1)]
    assert (forest.predict(numbers) == model.predict(numbers)).all()
    with pytest.raises(InvalidInstanceError, match="NaN"):
        forest.predict(np.asarray([[0.0, np.nan, 0.0]]))
    everywhere = Forest.from_sklearn(model, missing="all")
    rows = _code_rows(X)
    assert (everywhere.predict(rows) == model.predict(rows)).all()


@pytest.mark.parametrize("kind", KINDS)
def test_xgboost_one_hot_splits_and_a_non_integer_code_refused(kind: str) -> None:
    """XGBoost's one-hot categorical splits (``max_cat_to_onehot`` above the categories) read as
    its partition splits; a code that is not an integer is refused (every library truncates it,
    which its float32 state would not)."""
    X, y = _data(seed=6)
    model = _fit(kind, X, y, **({"max_cat_to_onehot": 8} if kind == "xgb" else {}))
    forest = Forest.from_sklearn(model)
    rows = _code_rows(X)
    assert (forest.predict(rows) == model.predict(rows)).all()
    with pytest.raises(InvalidInstanceError, match="integer"):
        forest.predict(np.asarray([[0.0, 1.5, 0.0]]))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sat_equals_oracle_with_categorical_features(kind: str, n_classes: int) -> None:
    """The engine contract on small boosted models with categorical features (unknown and
    missing states included): every AXp, CXp and the robustness equal the oracle's, and every
    reason verifies against the library's ``predict`` (witnesses use the codes)."""
    X, y = _data(seed=20 + n_classes, n_classes=n_classes)
    model = _fit(kind, X, y, rounds=3, depth=2)
    forest = check_sat_equals_oracle(model, seed=n_classes, instances=4)
    assert forest.categories[1] is not None


@pytest.mark.parametrize("kind", KINDS)
def test_explanations_name_categories_and_verify(kind: str) -> None:
    X, y = _data(seed=8)
    model = _fit(kind, X, y, rounds=4)
    rows = np.asarray([[0.5, 4.0, 1.0], [0.1, -1.0, 0.0], [0.9, np.nan, 1.0], [0.2, 99.0, 7.0]])
    texts = []
    with rx.Explainer(model, engine="sat") as explainer:
        for row in rows:
            decision = explainer.explain(row)
            assert decision.prediction == model.predict(row[None, :])[0]
            for reason in (decision.sufficient_reason(), decision.necessary_reason()):
                assert rx.verify(reason, model).ok
                texts.append(str(reason))
    assert any(" in {" in text for text in texts)


@pytest.mark.parametrize("kind", ["xgb", "lgbm"])
def test_states_named_by_the_pandas_categories_the_library_keeps(kind: str) -> None:
    """A model fitted on a DataFrame of ``category`` dtype: its categorical feature's states are
    labelled by the categories LightGBM (``pandas_categorical``) or XGBoost (``get_categories``)
    keeps; its values are the codes, decided as ``predict`` decides the DataFrame."""
    pd = pytest.importorskip("pandas")
    X, y = _data(seed=9, nan=0.0)
    colours = np.asarray(["red", "green", "blue", "cyan", "pink", "gold"])
    frame = pd.DataFrame({"x": X[:, 0], "a": colours[X[:, 1].astype(int)], "b": X[:, 2].astype(int)})
    frame["a"] = frame["a"].astype("category")
    if kind == "lgbm":
        lightgbm = pytest.importorskip("lightgbm")
        model = lightgbm.LGBMClassifier(
            n_estimators=5, max_depth=3, min_child_samples=3, min_data_per_group=3, verbose=-1
        )
        model.fit(frame, y, categorical_feature=["a"])
    else:
        pytest.importorskip("pyarrow")
        xgboost = pytest.importorskip("xgboost")
        model = xgboost.XGBClassifier(n_estimators=5, max_depth=3, enable_categorical=True, max_cat_to_onehot=1)
        model.fit(frame, y)
    forest = Forest.from_sklearn(model)
    categories = list(frame["a"].cat.categories)
    labels = forest.categories[1]
    assert labels is not None and labels[: len(labels) - 1] == tuple(categories[: len(labels) - 1])
    codes = np.c_[X[:, 0], frame["a"].cat.codes.to_numpy(), X[:, 2]]
    assert (forest.predict(codes) == model.predict(frame)).all()


def test_hist_gradient_boosting_refuses_categories_neither_integer_codes_nor_strings() -> None:
    """Categories such as ``0.5`` (numbers that are no codes) stay refused, naming the remedies;
    string categories are read (``tests/test_boosted_string_categories.py``)."""
    pd = pytest.importorskip("pandas")
    X, y = _data(seed=10, nan=0.0)
    frame = pd.DataFrame({"x": X[:, 0], "a": X[:, 1] + 0.5})
    model = HistGradientBoostingClassifier(max_iter=3, categorical_features="from_dtype", random_state=0)
    model.fit(frame.astype({"a": "category"}), y)
    with pytest.raises(UnsupportedModelError, match="cat.codes"):
        Forest.from_sklearn(model)
    strings = frame.assign(a=np.asarray(["r", "g", "b", "c", "p", "o"])[X[:, 1].astype(int)])
    model.fit(strings.astype({"a": "category"}), y)
    assert Forest.from_sklearn(model).categories[1] == ("b", "g", "o", "p", "r", "(other)")
