"""Necessary and contrastive reasons read as actions (``Reason.changes``): moving each changed
feature anywhere into the cell its witness lies in gives the printed class, by scikit-learn's own
``predict``, under both votes and for every engine."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx
from tests.hypothesis_budget import examples


def _inside(interval: tuple[float, float], rng: np.random.Generator) -> list[float]:
    """Float32 values inside ``(low, high]``: its ends where finite, and one between."""
    low, high = interval
    lo = -1e6 if math.isinf(low) else float(np.nextafter(np.float32(low), np.float32(np.inf)))
    hi = (
        1e6
        if math.isinf(high)
        else float(np.float32(high))
        if np.float32(high) <= high
        else float(np.nextafter(np.float32(high), np.float32(-np.inf)))
    )
    points = [lo, hi, float(np.float32(rng.uniform(lo, hi)))]
    return [p for p in points if (math.isinf(low) or p > low) and (math.isinf(high) or p <= high)]


def _check_actions(explainer: rx.Explainer, model: RandomForestClassifier, reasons, x: np.ndarray, seed: int) -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for reason in reasons:
        changes = reason.changes
        assert changes, f"{reason} has a witness but no change"
        assert {c.feature for c in changes} <= reason.features
        text = reason.actions()
        assert text.startswith(f"to get {reason.changes_lead_to!r}: ")
        for change in changes:
            assert change.describe() in text
            assert change.direction == ("raise" if change.after > change.before else "lower")
        for _ in range(3):
            point = np.asarray(x, dtype=np.float64).copy()
            for change in changes:
                point[change.feature] = rng.choice(_inside(change.interval, rng))
            assert model.predict(point.reshape(1, -1))[0] == reason.changes_lead_to, (reason, text, point)
            checked += 1
        as_json = reason.to_dict()
        assert as_json["changes_lead_to"] == reason.changes_lead_to
        assert [c["feature"] for c in as_json["changes"]] == [c.feature for c in changes]
    return checked


@pytest.mark.parametrize("engine", ["sat", "circuit", "oracle"])
def test_each_action_applied_gives_the_printed_class_on_iris(engine):
    data = load_iris()
    model = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(
        data.data, data.target_names[data.target]
    )
    explainer = rx.Explainer(model, engine=engine, vote="hard" if engine == "circuit" else "auto")
    checked = 0
    for i in range(0, 150, 25):
        d = explainer.explain(data.data[i])
        reasons = list(d.necessary_reasons(limit=10))
        for target in d.forest.classes:
            if target != d.prediction:
                reasons += list(d.contrastive_reasons(target=target, limit=5))
        checked += _check_actions(explainer, model, reasons, data.data[i], i)
    assert checked > 0


def test_actions_on_wine_under_the_default_soft_vote():
    data = load_wine()
    model = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=1).fit(data.data, data.target)
    explainer = rx.Explainer(model, engine="sat", feature_names=data.feature_names)
    checked = 0
    for i in range(0, 178, 40):
        d = explainer.explain(data.data[i])
        checked += _check_actions(explainer, model, list(d.necessary_reasons(limit=5, timeout=30)), data.data[i], i)
    assert checked > 0


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 10_000), vote=st.sampled_from(["hard", "soft"]), n_classes=st.integers(2, 3))
def test_actions_on_random_forests_both_votes(seed, vote, n_classes):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3)).round(1)
    y = rng.integers(0, n_classes, size=60)
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=seed).fit(X, y)
    explainer = rx.Explainer(model, engine="sat", vote=vote)
    d = explainer.explain(X[0])
    reasons = list(d.necessary_reasons())
    if vote == "hard":
        # the hard vote is explained; scikit-learn's predict is the soft vote: check with the forest
        forest = explainer.forest

        class HardModel:
            def predict(self, rows):
                return forest.predict(rows)

        _check_actions(explainer, HardModel(), reasons, X[0], seed)  # type: ignore[arg-type]
    else:
        _check_actions(explainer, model, reasons, X[0], seed)


def test_sufficient_reasons_have_no_actions():
    data = load_iris()
    model = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(data.data, data.target)
    reason = rx.Explainer(model, engine="sat").explain(data.data[60]).sufficient_reason()
    assert reason.changes == () and reason.actions() == "" and "changes" not in reason.to_dict()
