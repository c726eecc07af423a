"""Regression forests (docs/design.md, section 1): band decisions against the exact mean of the
leaf values and ``model.predict``, the SAT engine against the oracle on band questions, the
range query against brute force, and the guarantees of reasons read through the range query."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_diabetes
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

import rfexplain as rx
from rfexplain import Budget
from rfexplain.core.errors import QueryArgumentError, UnsupportedModelError, UnsupportedQueryError
from rfexplain.engines.base import Instance
from rfexplain.oracle import Oracle
from rfexplain.regression import Band, RegressionForest
from rfexplain.regression.range_search import LeafBoxes, prediction_range
from rfexplain.sat.engine import SatEngine
from tests.boosted_checks import reason_keys
from tests.hypothesis_budget import examples

KINDS = (RandomForestRegressor, ExtraTreesRegressor, DecisionTreeRegressor)


def _model(kind: Any, seed: int, depth: int, trees: int, holes: float = 0.0, n_features: int = 3) -> Any:
    X, y = load_diabetes(return_X_y=True)
    X = X[:, :n_features].copy()
    if holes:
        X[np.random.default_rng(seed).random(X.shape) < holes] = np.nan
    options: dict[str, Any] = {"max_depth": depth, "random_state": seed}
    if kind is not DecisionTreeRegressor:
        options["n_estimators"] = trees
    return kind(**options).fit(X, y), X


def _exact_means(regression: RegressionForest, grid: np.ndarray) -> list[Fraction]:
    return [regression.exact_prediction(row) for row in grid]


BANDS = st.sampled_from(["within", "at_least", "at_most"])


def _band(kind: str, centre: float, width: float) -> Band:
    if kind == "within":
        return Band(centre - width, centre + width)
    return Band(low=centre) if kind == "at_least" else Band(high=centre)


# ---------------------------------------------------------------------------------- decisions
@settings(max_examples=examples(40), deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 10_000),
    depth=st.integers(1, 3),
    band_kind=BANDS,
    quantile=st.floats(0.0, 1.0),
)
def test_band_forest_decides_the_exact_mean(kind: Any, seed: int, depth: int, band_kind: str, quantile: float) -> None:
    """On every state vector, the band's classifier says ``inside`` exactly when the exact mean of
    the leaf values is in the band, ``below``/``above`` for the bound crossed; bounds taken at
    reachable means make the boundary ties happen."""
    model, _ = _model(kind, seed, depth, trees=3)
    regression = RegressionForest.from_sklearn(model)
    grid = np.asarray(Oracle(regression.base).grid)
    means = _exact_means(regression, grid)
    centre = float(sorted(means)[int(quantile * (len(means) - 1))])
    band = _band(band_kind, centre, width=abs(centre) * 0.05)
    forest = regression.band_forest(band)
    decided = forest.predict_states(grid)
    for mean, index in zip(means, decided):
        label = forest.classes[index]
        if band.holds(mean):
            assert label == "inside"
        else:
            assert label == ("below" if band.low is not None and mean < Fraction(band.low) else "above")


@pytest.mark.parametrize("kind", KINDS)
def test_predictions_equal_predict_at_every_threshold_and_with_nan(kind: Any) -> None:
    """The exact mean agrees with ``model.predict`` up to float64 summation, at every threshold,
    one float32 step either side, and with NaN (a model trained with missing values)."""
    model, X = _model(kind, seed=0, depth=None, trees=10, holes=0.2)
    regression = RegressionForest.from_sklearn(model)
    rows = []
    for f, ts in enumerate(regression.base.thresholds):
        for t in filter(math.isfinite, ts):
            t32 = np.float32(t)
            for v in (np.nextafter(t32, np.float32(-np.inf)), t32, np.nextafter(t32, np.float32(np.inf)), np.nan):
                row = X[len(rows) % len(X)].copy()
                row[f] = v
                rows.append(row)
    probes = np.vstack([np.asarray(rows), X])
    ours, theirs = regression.predict(probes), model.predict(probes.astype(np.float32))
    scale = float(np.abs(model.predict(X)).max())
    assert np.all(np.abs(ours - theirs) <= 64 * 2.0**-52 * scale)


def test_band_decisions_agree_with_predict_away_from_the_bounds() -> None:
    """Where ``model.predict`` is further from a bound than float64 summation can err, the band
    decision is what ``predict`` says; rows closer than that are none here (and would be decided
    on the exact mean, docs/design.md)."""
    model, X = _model(RandomForestRegressor, seed=1, depth=6, trees=30)
    explainer = rx.RegressionExplainer(model, "oracle", delta=5.0)
    low, high = 140.0, 160.0
    forest = explainer.regression.band_forest(Band(low, high))
    labels = forest.predict(X)
    predicted = model.predict(X.astype(np.float32))
    expected = np.where(predicted < low, "below", np.where(predicted > high, "above", "inside"))
    assert labels.tolist() == expected.tolist()


# ---------------------------------------------------------------------------------- engines
@settings(max_examples=examples(40, fast=8), deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 10_000),
    depth=st.integers(1, 3),
    band_kind=BANDS,
    holes=st.sampled_from([0.0, 0.3]),
    row=st.integers(0, 441),
    width=st.sampled_from([0.02, 0.1, 0.3]),
)
def test_sat_equals_oracle_on_band_questions(
    kind: Any, seed: int, depth: int, band_kind: str, holes: float, row: int, width: float
) -> None:
    """Sufficient and necessary reasons and robustness of "is the prediction in the band" under the
    SAT engine equal the oracle's, on models with and without missing values."""
    model, X = _model(kind, seed, depth, trees=3, holes=holes)
    regression = RegressionForest.from_sklearn(model, missing="all" if holes else "learned")
    instance = Instance.of(regression.base, X[row])
    centre = float(regression.exact_prediction(instance.states))
    forest = regression.band_forest(_band(band_kind, centre, abs(centre) * width))
    instance = Instance.of(forest, X[row])
    oracle = Oracle(forest)
    with SatEngine(forest) as engine:
        sufficient = list(engine.sufficient_reasons(instance, Budget()))
        necessary = list(engine.necessary_reasons(instance, Budget()))
        assert reason_keys(sufficient) == reason_keys(oracle.sufficient_reasons(instance))
        assert reason_keys(necessary) == reason_keys(oracle.necessary_reasons(instance))
        assert engine.robustness(instance) == oracle.robustness(instance)
        for target in range(forest.n_classes):
            if target != instance.prediction:
                got = reason_keys(engine.contrastive_reasons(instance, target, Budget()))
                assert got == reason_keys(oracle.contrastive_reasons(instance, target))
    for reason in [*sufficient, *necessary]:  # each reason's witnesses against the band forest
        result = rx.verify(reason, forest)
        assert result.ok, (str(reason), result.problems)


@settings(max_examples=examples(40), deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 10_000),
    depth=st.integers(1, 4),
    holes=st.sampled_from([0.0, 0.3]),
    row=st.integers(0, 441),
    free=st.sets(st.integers(0, 2)),
)
def test_range_query_equals_brute_force(
    kind: Any, seed: int, depth: int, holes: float, row: int, free: set[int]
) -> None:
    """The range of the prediction over the free features is exactly the least and largest exact
    mean over the state vectors agreeing with the instance elsewhere, and each end is reached at
    the state vector and raw input it names (``model.predict`` there, up to summation)."""
    model, X = _model(kind, seed, depth, trees=4, holes=holes)
    regression = RegressionForest.from_sklearn(model, missing="all" if holes else "learned")
    instance = Instance.of(regression.base, X[row])
    answer = prediction_range(regression, LeafBoxes(regression), instance.states, instance.values, free)
    grid = np.asarray(Oracle(regression.base).grid)
    fixed = [f for f in range(grid.shape[1]) if f not in free]
    agreeing = grid[np.all(grid[:, fixed] == np.asarray(instance.states)[fixed], axis=1)]
    means = _exact_means(regression, agreeing)
    assert (answer.low, answer.high) == (min(means), max(means))
    assert regression.exact_prediction(answer.low_states) == answer.low
    assert regression.exact_prediction(answer.high_states) == answer.high
    for values, exact in ((answer.low_values, answer.low), (answer.high_values, answer.high)):
        got = float(model.predict(np.asarray([values], dtype=np.float32))[0])
        assert abs(got - float(exact)) <= 64 * 2.0**-52 * max(1.0, abs(got))


@settings(max_examples=examples(30, fast=6), deadline=None)
@given(
    seed=st.integers(0, 10_000),
    row=st.integers(0, 441),
    free=st.sets(st.integers(0, 2)),
    step=st.sampled_from([0, 10, 50]),
)
def test_best_leaf_per_tree_is_each_trees_first_best_meeting_leaf(
    seed: int, row: int, free: set[int], step: int
) -> None:
    """Per tree, the range search's bound takes the first of its leaves meeting the box with the
    largest value (``argmax`` over the tree's rows, leaves not meeting it left out), ties
    included (values rounded to ``step``)."""
    from rfexplain.regression.range_search import _best_per_tree, _meeting

    model, X = _model(RandomForestRegressor, seed, depth=3, trees=5)
    regression = RegressionForest.from_sklearn(model)
    boxes = LeafBoxes(regression)
    values = np.round(boxes.value / step) * step if step else boxes.value
    lo = np.asarray(Instance.of(regression.base, X[row]).states, dtype=np.int64)
    hi = lo.copy()
    for f in free:
        lo[f], hi[f] = 0, regression.base.states_per_feature[f] - 1
    meets = np.all((boxes.lo <= hi) & (boxes.hi >= lo), axis=1)
    ends = np.append(boxes.starts[1:], len(values))
    expected = [a + int(np.argmax(np.where(meets[a:b], values[a:b], -np.inf))) for a, b in zip(boxes.starts, ends)]
    assert _best_per_tree(boxes, values, _meeting(boxes, lo, hi)).tolist() == expected


def test_reasons_keep_or_leave_the_band_as_the_range_query_measures() -> None:
    """A sufficient reason's free features cannot move the prediction out of the band; the
    features of a necessary reason can; on a model trained with missing values, an instance with
    NaN."""
    model, X = _model(RandomForestRegressor, seed=3, depth=4, trees=8, holes=0.2, n_features=4)
    explainer = rx.RegressionExplainer(model, "sat", missing="all")
    row = X[np.flatnonzero(np.isnan(X).any(axis=1))[0]]
    for band in ({}, {"at_least": 120.0}, {"within": (100.0, 250.0)}):
        decision = explainer.explain(row, **band)
        assert decision.value == explainer.regression.exact_prediction(decision.states)
        everything = set(range(4))
        for reason in decision.sufficient_reasons():
            moved = decision.prediction_range(free=everything - reason.features)
            inside = decision.band.holds(moved.low) and decision.band.holds(moved.high)
            assert inside == (decision.prediction == "inside")
        for reason in decision.necessary_reasons():
            moved = decision.prediction_range(free=reason.features)
            if decision.prediction == "inside":
                assert not (decision.band.holds(moved.low) and decision.band.holds(moved.high))
            for witness in reason.witnesses:  # the witness's class is its exact mean's, model.predict's too
                exact = explainer.regression.exact_prediction(Instance.of(explainer.forest, witness.values).states)
                band = decision.band
                label = (
                    "inside"
                    if band.holds(exact)
                    else ("below" if band.low is not None and exact < band.low else "above")
                )
                assert label == decision.forest.classes[witness.prediction] != decision.prediction
                got = float(model.predict(np.asarray([witness.values], dtype=np.float32))[0])
                assert abs(got - float(exact)) <= 64 * 2.0**-52 * max(1.0, abs(got))


def test_default_band_and_refusals() -> None:
    model, X = _model(RandomForestRegressor, seed=0, depth=3, trees=4)
    explainer = rx.RegressionExplainer(model, "oracle")
    low, high = explainer.regression.value_range()
    assert explainer.delta == pytest.approx(0.1 * (high - low))
    decision = explainer.explain(X[0])
    assert decision.prediction == "inside"
    assert decision.band.low == pytest.approx(float(decision.value) - explainer.delta)
    assert decision.sklearn_value == pytest.approx(float(decision.value))
    with pytest.raises(QueryArgumentError, match="not both"):
        explainer.explain(X[0], within=(1.0, 2.0), at_least=1.0)
    with pytest.raises(QueryArgumentError, match="above its upper bound"):
        explainer.explain(X[0], within=(2.0, 1.0))
    with pytest.raises(UnsupportedModelError, match="RegressionExplainer"):
        rx.Explainer(model)
    with pytest.raises(UnsupportedQueryError, match="sat"):
        rx.RegressionExplainer(model, "circuit").explain(X[0])


def test_cli_explains_a_regressor(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import joblib

    from rfexplain.cli import main

    model, X = _model(RandomForestRegressor, seed=0, depth=3, trees=4, n_features=4)
    path = tmp_path / "model.joblib"
    joblib.dump(model, path)
    values = "--values=" + ",".join(repr(float(v)) for v in X[0])
    assert main(["explain", str(path), values, "--at-least", "100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["band"] == [100.0, None] and out["decision"] == "inside" and out["reasons"]
    explainer = rx.RegressionExplainer(model)
    assert out["reasons"][0]["text"] == str(explainer.explain(X[0], at_least=100.0).sufficient_reason())
    assert main(["explain", str(path), values, "--within", "0", "1", "--range", "x0,1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = explainer.prediction_range(X[0], ["x0", "x1"])
    assert out["decision"] == "above" and (out["low"], out["high"]) == (float(expected.low), float(expected.high))
    assert main(["explain", str(path), values, "--within", "0", "1", "--at-most", "3"]) == 2
    assert "not both" in capsys.readouterr().err


def test_band_offsets_are_exact_in_one_tree_or_spread_over_the_trees() -> None:
    assert Band(150.0, 200.0).offsets(100) == [(0.0, 15000.0, -20000.0)]
    assert Band(low=0.1).offsets(3) == [(0.0, 0.1)] * 3  # 3 * 0.1 is no float64 number
    assert Band(high=0.1).offsets(4) == [(0.0, -0.4)]  # a power of two times: exact
    assert Band(low=1.0).classes == ("inside", "below") and Band(high=1.0).classes == ("inside", "above")


def test_a_batch_of_default_bands_keeps_a_bounded_number_of_engines() -> None:
    """The default band moves with each row's prediction: explaining many rows keeps at most
    ``KEPT_BANDS`` band explainers, and a decision made earlier still answers."""
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import RandomForestRegressor

    from rfexplain.regression.explainer import KEPT_BANDS, RegressionExplainer

    X, y = load_diabetes(return_X_y=True)
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    explainer = RegressionExplainer(model, engine="oracle")
    first = explainer.explain(X[0])
    decisions = [explainer.explain(x) for x in X[1 : 3 * KEPT_BANDS]]
    assert len({d.band for d in decisions}) > KEPT_BANDS
    assert len(explainer._explainers) == KEPT_BANDS
    reason = first.sufficient_reason()
    assert first.prediction_range(free=[f for f in range(X.shape[1]) if f not in reason.features]).low >= first.band.low
