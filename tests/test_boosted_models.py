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
from tests.boosted_checks import check_only_documented_differ, check_sat_equals_oracle, reason_keys


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
    splits = [
        (node["feature_idx"], float(node["num_threshold"]))
        for iteration in model._predictors
        for predictor in iteration
        for node in predictor.nodes
        if not node["is_leaf"] and np.isfinite(float(node["num_threshold"]))
    ]
    check_only_documented_differ(forest, model, X, splits)


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
    with pytest.raises(UnsupportedModelError, match="HistGradientBoostingClassifier"):
        Forest.from_sklearn(LogisticRegression(max_iter=1000).fit(X, y))


def test_pipeline_of_a_boosted_model() -> None:
    model = _model("hgb", binary=False)
    X, _ = _iris(False)
    piped = Pipeline([("none", "passthrough"), ("model", model)])
    forest = Forest.from_sklearn(piped)
    assert forest == Forest.from_sklearn(model) and forest.agreement(X, piped).fraction == 1.0


@pytest.mark.parametrize("kind, binary", [("gb", True), ("gb", False), ("hgb", True), ("hgb", False)])
def test_sat_equals_oracle_on_small_boosted_models(kind: str, binary: bool) -> None:
    """Every query of the SAT engine equals the oracle's on a few inputs of a small boosted
    model, and every sufficient and necessary reason verifies against the model itself."""
    model = _model(kind, binary, rounds=4, depth=2)
    forest = check_sat_equals_oracle(model, seed=1)
    oracle = Oracle(forest)
    grid = np.asarray(oracle.grid)
    with SatEngine(forest) as engine:
        for k in np.random.default_rng(1).choice(len(grid), size=4, replace=False):
            instance = Instance.from_states(forest, grid[k])
            all_axps = oracle.sufficient_reasons(instance)
            fewest = min(len(r.literals) for r in all_axps)
            shortest = [r for r in all_axps if len(r.literals) == fewest]
            assert reason_keys(engine.shortest_sufficient_reasons(instance, Budget())) == reason_keys(shortest)
            flips = reason_keys(engine.shortest_flips(instance, Budget()))
            assert flips == reason_keys(oracle.shortest_flips(instance))
            for target in range(forest.n_classes):
                if target != instance.prediction:
                    got = reason_keys(engine.contrastive_reasons(instance, target, Budget()))
                    assert got == reason_keys(oracle.contrastive_reasons(instance, target))


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


@pytest.mark.parametrize("kind", ["gb", "hgb"])
def test_pipeline_with_preprocessing_explains_the_boosted_model_in_original_columns(kind: str) -> None:
    """A ColumnTransformer (one-hot categories, scaled numbers) before a binary boosted model:
    the forest over the original columns decides every row as ``pipeline.predict`` (the binary
    GradientBoostingClassifier's classes in reverse order included), and reasons verify."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from rfexplain.datasets import loans

    X, y = loans()
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    prep = ColumnTransformer(
        [("cat", OneHotEncoder(handle_unknown="ignore"), categorical), ("num", StandardScaler(), numeric)],
        sparse_threshold=0,
    )
    model = (
        GradientBoostingClassifier(n_estimators=15, max_depth=2, random_state=0)
        if kind == "gb"
        else HistGradientBoostingClassifier(max_iter=15, max_depth=2, random_state=0)
    )
    pipe = Pipeline([("prep", prep), ("model", model)]).fit(X, y)
    with rx.Explainer(pipe, engine="sat") as explainer:
        assert explainer.forest.vote == "additive" and explainer.pipeline is not None
        rows = X.iloc[:200]
        ours = explainer.forest.predict_index(explainer.pipeline.encode(rows))
        assert (explainer.pipeline.decides(rows) == ours).all()
        for i in range(40):
            decision = explainer.explain(X.iloc[i])
            assert decision.prediction == pipe.predict(X.iloc[[i]])[0]
        reason = decision.sufficient_reason()
        assert rx.verify(reason, explainer.forest).ok


def test_input_rounding_warning_names_the_documented_disagreement() -> None:
    """An input just above a float64 threshold of HistGradientBoosting that rounds onto it is
    decided otherwise by ``predict``: the explainer warns (and explains its float32 rounding);
    an ordinary row gives no warning."""
    import warnings

    X, y = load_breast_cancer(return_X_y=True)
    model = HistGradientBoostingClassifier(max_iter=20, max_depth=3, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model)
    found = None
    for iteration in model._predictors:
        for node in iteration[0].nodes:
            t = float(node["num_threshold"])
            if node["is_leaf"] or not np.isfinite(t) or np.float32(np.nextafter(t, np.inf)) != np.float32(t):
                continue
            for row in X[:60]:
                above = row.copy()
                above[node["feature_idx"]] = np.nextafter(t, np.inf)
                if forest.predict(above[None])[0] != model.predict(above[None])[0]:
                    found = above
                    break
            if found is not None:
                break
        if found is not None:
            break
    assert found is not None, "expected an input of the documented disagreement"
    with rx.Explainer(model, engine="sat") as explainer:
        with pytest.warns(rx.InputRoundingWarning, match="float32 rounding"):
            decision = explainer.explain(found)
        assert decision.prediction == forest.predict(found[None])[0]
        with warnings.catch_warnings():
            warnings.simplefilter("error", rx.InputRoundingWarning)
            explainer.explain(X[0])


def test_cli_explains_a_saved_boosted_model_and_its_json(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``rfexplain explain`` on a pickled HistGradientBoostingClassifier and on its forest JSON:
    the model's own prediction, the same reason; ``--vote hard`` is refused for it."""
    import json
    import pickle

    from rfexplain.cli import main

    model = _model("hgb", binary=False, rounds=10, depth=2)
    X, _ = _iris(False)
    pickled = tmp_path / "model.pkl"
    pickled.write_bytes(pickle.dumps(model))
    saved = tmp_path / "forest.json"
    saved.write_text(Forest.from_sklearn(model).to_json())
    values = ",".join(map(repr, X[100].tolist()))
    answers = []
    for path in (pickled, saved):
        assert main(["explain", str(path), "--values", values, "--json"]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0]["prediction"] == answers[1]["prediction"] == model.predict(X[100:101])[0]
    assert (
        answers[0]["reasons"] == answers[1]["reasons"] and answers[0]["sklearn_prediction"] == answers[0]["prediction"]
    )
    assert main(["explain", str(pickled), "--values", values, "--vote", "hard"]) != 0
    assert "summed scores" in capsys.readouterr().err
