"""Bad input gets clear errors (issue 2's list), through the Python API."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import AdaBoostClassifier, RandomForestClassifier, RandomForestRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import rfexplain as rx


@pytest.fixture(scope="module")
def iris_model() -> RandomForestClassifier:
    X, y = load_iris(return_X_y=True)
    return RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)


def test_unfitted_model() -> None:
    with pytest.raises(rx.NotFittedError, match="not fitted"):
        rx.Forest.from_sklearn(RandomForestClassifier())
    with pytest.raises(ValueError):  # also a ValueError, like sklearn's own
        rx.Explainer(RandomForestClassifier(), engine="oracle")


@pytest.mark.parametrize(
    "model", [RandomForestRegressor(n_estimators=2), AdaBoostClassifier(n_estimators=2), "a string"]
)
def test_unsupported_estimators(model: object) -> None:
    X, y = load_iris(return_X_y=True)
    if hasattr(model, "fit"):
        model.fit(X, y)  # type: ignore[union-attr]
    with pytest.raises(rx.UnsupportedModelError, match="model must be one of"):
        rx.Forest.from_sklearn(model)
    with pytest.raises(TypeError):
        rx.Forest.from_sklearn(model)


def test_pipeline_with_transformer_is_refused() -> None:
    X, y = load_iris(return_X_y=True)
    pipe = Pipeline([("scale", StandardScaler()), ("rf", RandomForestClassifier(n_estimators=2))]).fit(X, y)
    with pytest.raises(rx.UnsupportedModelError, match="transformed features"):
        rx.Forest.from_sklearn(pipe)


def test_wrong_number_of_features(iris_model: RandomForestClassifier) -> None:
    explainer = rx.Explainer(iris_model, engine="oracle")
    with pytest.raises(rx.InvalidInstanceError, match="expected 4 features, got 3"):
        explainer.explain([1.0, 2.0, 3.0])


def test_nan_names_the_feature(iris_model: RandomForestClassifier) -> None:
    explainer = rx.Explainer(iris_model, engine="oracle", feature_names=["sl", "sw", "pl", "pw"])
    with pytest.raises(rx.InvalidInstanceError, match="NaN in feature 2 .'pl'."):
        explainer.explain([1.0, 2.0, np.nan, 3.0])


@pytest.mark.parametrize(("value", "shown"), [(np.inf, "inf"), (-np.inf, "-inf"), (1e300, "1e+300")])
def test_infinite_value_is_named_as_a_number(iris_model: RandomForestClassifier, value: float, shown: str) -> None:
    """The message shows the value as the user wrote it (``inf``), not numpy's repr."""
    explainer = rx.Explainer(iris_model, engine="oracle", feature_names=["sl", "sw", "pl", "pw"])
    with pytest.raises(rx.InvalidInstanceError) as caught:
        explainer.explain([1.0, value, 3.0, 4.0])
    assert f"has {shown} in feature 1 ('sw')" in str(caught.value)
    assert "np.float64" not in str(caught.value)


def test_non_numeric_values(iris_model: RandomForestClassifier) -> None:
    explainer = rx.Explainer(iris_model, engine="oracle")
    with pytest.raises(rx.InvalidInstanceError, match="numeric"):
        explainer.explain([1.0, "two", 3.0, 4.0])


def test_unknown_engine_lists_known_ones(iris_model: RandomForestClassifier) -> None:
    with pytest.raises(rx.UnknownEngineError, match=r"engine must be one of \[.*'oracle'.*\]. Got 'smt' instead"):
        rx.Explainer(iris_model, engine="smt")


def test_unknown_class_label(iris_model: RandomForestClassifier) -> None:
    decision = rx.Explainer(iris_model, engine="oracle").explain([5.1, 3.5, 1.4, 0.2])
    with pytest.raises(rx.UnknownClassError, match=r"class must be one of \[0, 1, 2\]. Got 7 instead"):
        decision.contrastive_reasons(7)
    with pytest.raises(ValueError, match="must differ from the prediction"):
        decision.contrastive_reasons(decision.prediction)


def test_budget_arguments_are_validated(iris_model: RandomForestClassifier) -> None:
    decision = rx.Explainer(iris_model, engine="oracle").explain([5.1, 3.5, 1.4, 0.2])
    with pytest.raises(ValueError, match="limit must be"):
        decision.sufficient_reasons(limit=-1)
    with pytest.raises(ValueError, match="timeout must be"):
        decision.sufficient_reasons(timeout="soon")  # type: ignore[arg-type]


def test_oracle_refuses_large_forests_with_the_count() -> None:
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=50, max_depth=8, random_state=0).fit(X, y)
    with pytest.raises(rx.OracleTooLargeError, match=r"state vectors \(\d+ x \d+ x \d+ x \d+\)"):
        rx.Explainer(model, engine="oracle", max_state_vectors=1000)


def test_engine_options_are_checked(iris_model: RandomForestClassifier) -> None:
    with pytest.raises(TypeError, match="unexpected keyword|takes no options"):
        rx.Explainer(iris_model, engine="oracle", colour="blue")


def test_soft_vote_disagreement_warns() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X.sum(axis=1) + rng.normal(size=300) > 0).astype(int)
    model = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    forest = rx.Forest.from_sklearn(model, vote="hard")
    differ = forest.agreement(X, model).disagreeing_rows
    assert len(differ), "this seed is chosen so that hard and soft votes differ on some rows"
    explainer = rx.Explainer(model, engine="oracle", vote="hard")
    with pytest.warns(rx.SoftVoteWarning, match="soft vote"):
        decision = explainer.explain(X[differ[0]])
    assert decision.sklearn_prediction != decision.prediction


def test_deliberate_errors_are_rfexplain_errors(iris_model: RandomForestClassifier) -> None:
    """The error policy: every error raised on purpose is an RFExplainError and the usual builtin."""
    from rfexplain.batch import explain_many
    from rfexplain.engines.base import Instance

    forest = rx.Forest.from_sklearn(iris_model)
    with pytest.raises(rx.InvalidForestError, match="at least one tree"):
        rx.Forest(thresholds=forest.thresholds, trees=[], classes=forest.classes)
    with pytest.raises(ValueError, match="class labels must be distinct"):
        rx.Forest(thresholds=forest.thresholds, trees=forest.trees, classes=[0, 0, 1])
    with pytest.raises(rx.InvalidInstanceError, match="expected one instance, got 2"):
        Instance.of(forest, [[1.0, 2.0, 3.0, 4.0]] * 2)
    explainer = rx.Explainer(iris_model, engine="oracle")
    with pytest.raises(rx.UnknownQueryError, match="query must be one of"):
        explain_many(explainer, [[1.0, 2.0, 3.0, 4.0]], "best_reason")
    with pytest.raises(rx.QueryArgumentError, match="takes no limit"):
        explain_many(explainer, [[1.0, 2.0, 3.0, 4.0]], "sufficient_reason", limit=2)
    with pytest.raises(TypeError):
        explain_many(explainer, [[1.0, 2.0, 3.0, 4.0]], "robustness", limit=2)
    with pytest.raises(rx.InvalidTargetError):
        explainer.explain([5.1, 3.5, 1.4, 0.2]).contrastive_reasons(0)


def test_bad_engine_options_are_rfexplain_errors() -> None:
    """An option value an engine does not accept is the user's error (status 2 in the CLI), not an
    internal one: it is an RFExplainError as well as the ValueError it always was."""
    import pytest
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    import rfexplain as rx

    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)
    for options in ({"card": "ladder"}, {"solver": "nosuchsolver"}, {"multiclass": "both"}):
        with pytest.raises(rx.InvalidOptionError):
            rx.Explainer(model, engine="sat", **options).explain(X[0]).sufficient_reason()


def test_verify_refuses_what_is_not_a_reason_or_a_model(iris_model: RandomForestClassifier) -> None:
    """``verify(reason, "not a model")`` and ``verify("a string", model)`` name what was expected
    (typed errors that are also TypeErrors) instead of an AttributeError from inside."""
    reason = rx.Explainer(iris_model, engine="oracle").explain([5.1, 3.5, 1.4, 0.2]).sufficient_reason()
    with pytest.raises(
        rx.UnsupportedModelError,
        match=r"verify needs a Forest or a fitted model among \['RandomForestClassifier'.*Got str instead",
    ):
        rx.verify(reason, "not a model")
    with pytest.raises(rx.InvalidArgumentError, match="verify checks a Reason.* got str"):
        rx.verify("a string", iris_model)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rx.verify(None, iris_model)  # type: ignore[arg-type]
    with pytest.raises(rx.NotFittedError, match="not fitted"):
        rx.verify(reason, RandomForestClassifier())
    assert rx.verify(reason, iris_model).ok


@pytest.mark.parametrize(
    "bounds, data, match",
    [
        ({"x0": (1, 2, 3)}, None, r"bounds of 'x0' must be a pair \(low, high\), got \(1, 2, 3\)"),
        ({"x1": ("low", "high")}, None, r"bounds of 'x1' must be numbers, got \('low', 'high'\)"),
        ({"x2": 5.0}, None, r"bounds of 'x2' must be a pair \(low, high\), got 5.0"),
        ([("x0", (1, 2))], None, r"bounds must be a dict \{feature: \(low, high\)\} or \"data\""),
        ("data", np.ones((5, 2)), r"bounds=\"data\" needs rows of the model's 4 features; data has 2 columns"),
        ("data", np.ones((0, 4)), r"bounds=\"data\" needs at least one row of data"),
    ],
)
def test_bad_bounds_name_the_feature_or_the_width(
    iris_model: RandomForestClassifier, bounds: object, data: object, match: str
) -> None:
    with pytest.raises(rx.InvalidInstanceError, match=match):
        rx.Explainer(iris_model, engine="oracle", bounds=bounds, data=data)  # type: ignore[arg-type]
