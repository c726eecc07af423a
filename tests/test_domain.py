"""Domain constraints (bounds, immutable features), checked against brute force on the
*unrestricted* forest: sufficient reasons hold on every input within the bounds, necessary
reasons never change an immutable feature, and both are subset-minimal there."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx
from rfexplain import Forest
from rfexplain.core.domain import restrict
from rfexplain.core.errors import InvalidInstanceError, UnsupportedQueryError
from tests.hypothesis_budget import examples
from tests.strategies import forests

ENGINES = ("oracle", "sat", "circuit")


def _points(forest: Forest, f: int, bound: tuple[float, float] | None) -> list[float]:
    """One value in every state of feature ``f`` that meets the bounds."""
    out = []
    lo, hi = bound if bound is not None else (-np.inf, np.inf)
    for s in range(forest.n_states(f)):
        low, high = forest.state_interval(f, s)
        for value in (high, hi, lo, low + 1.0, 0.0):
            if np.isfinite(value) and low < value <= high and lo <= value <= hi:
                out.append(float(value))
                break
    return out


def _minimal_sets(features: list[int], good: callable) -> set[frozenset[int]]:  # type: ignore[valid-type]
    sets = [frozenset(c) for k in range(len(features) + 1) for c in itertools.combinations(features, k) if good(c)]
    return {s for s in sets if not any(t < s for t in sets)}


@st.composite
def constrained(draw: st.DrawFn) -> tuple[Forest, list[float], dict[int, tuple[float, float]], list[int]]:
    forest = draw(forests(max_trees=5, vote=draw(st.sampled_from(["hard", "soft"]))))
    x = [float(draw(st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.0]))) for _ in range(forest.n_features)]
    bounds = {}
    for f in range(forest.n_features):
        if draw(st.booleans()):
            a, b = sorted(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.0]), min_size=2, max_size=2)))
            bounds[f] = (min(a, x[f]), max(b, x[f]))
    immutable = [f for f in range(forest.n_features) if draw(st.booleans())]
    return forest, x, bounds, immutable


@settings(max_examples=examples(60), deadline=None)
@given(case=constrained(), engine=st.sampled_from(ENGINES))
def test_bounds_and_immutable_against_brute_force(
    case: tuple[Forest, list[float], dict[int, tuple[float, float]], list[int]], engine: str
) -> None:
    forest, x, bounds, immutable = case
    names = forest.feature_names
    given = {"bounds": {names[f]: b for f, b in bounds.items()}, "immutable": [names[f] for f in immutable]}
    try:
        explainer = rx.Explainer(forest, engine=engine, **given)
    except UnsupportedQueryError:  # the circuit engine counts votes: it refuses this soft vote
        assert engine == "circuit" and not forest.aggregation.is_majority
        return
    assert explainer.forest.vote == forest.vote
    decision = explainer.explain(x)
    expected = int(forest.predict_index([x])[0])
    assert decision.prediction_index == expected
    points = [_points(forest, f, bounds.get(f)) for f in range(forest.n_features)]
    grid = np.asarray(list(itertools.product(*points)))
    predicted = forest.predict_index(grid)
    features = list(range(forest.n_features))

    def sufficient(fixed: tuple[int, ...]) -> bool:
        same = np.all([forest.states(grid)[:, f] == forest.states([x])[0, f] for f in fixed], axis=0)
        return bool(np.all(predicted[same] == expected)) if fixed else bool(np.all(predicted == expected))

    mutable = [f for f in features if f not in immutable]

    def flips(changed: tuple[int, ...]) -> bool:
        kept = [f for f in features if f not in changed]
        same = np.all([forest.states(grid)[:, f] == forest.states([x])[0, f] for f in kept], axis=0)
        return bool(np.any(predicted[same] != expected)) if kept else bool(np.any(predicted != expected))

    axps = {r.features for r in decision.sufficient_reasons()}
    assert axps == _minimal_sets(features, sufficient)
    cxps = list(decision.necessary_reasons())
    assert {r.features for r in cxps} == _minimal_sets(mutable, flips)
    shortest = min((len(c) for c in _minimal_sets(mutable, flips)), default=None)
    assert decision.robustness() == (np.inf if shortest is None else shortest)
    for reason in cxps:
        for witness in reason.witnesses:
            values = np.asarray(witness.values)
            assert forest.predict_index([values])[0] != expected
            for f in immutable:
                assert forest.states([values])[0, f] == forest.states([x])[0, f]
            for f, (lo, hi) in bounds.items():
                assert lo <= values[f] <= hi
    for reason in decision.sufficient_reasons():
        if bounds:
            assert "given" in str(reason) and "domain" in reason.to_dict()


def test_bounds_from_data_and_refusals() -> None:
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    explainer = rx.Explainer(model, engine="oracle", bounds="data", data=X)
    assert explainer.forest.bounds[0] == (float(np.float32(X[:, 0].min())), float(np.float32(X[:, 0].max())))
    with pytest.raises(InvalidInstanceError, match="outside"):
        explainer.explain([100.0, 3.0, 1.0, 0.2])
    with pytest.raises(InvalidInstanceError, match="unknown feature"):
        rx.Explainer(model, immutable=["height"])
    with pytest.raises(InvalidInstanceError, match="string"):
        rx.Explainer(model, immutable="x0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rx.SoftVoteWarning)
        held = rx.Explainer(model, engine="oracle", immutable=["x2", "x3"]).explain(X[60])
    assert all(not ({2, 3} & r.features) for r in held.necessary_reasons())


@pytest.mark.parametrize("vote", ["soft", "hard"])
def test_restriction_keeps_the_vote_and_the_leaf_vectors(vote: str) -> None:
    """Bounds and fixed features rebuild the trees: the vote mode and every leaf's
    class-probability vector survive, so the restricted forest decides as the original on every
    input it allows (a depth-limited forest, whose impure leaves make the two votes differ)."""
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=7, max_depth=2, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model, vote=vote)
    assert not forest.with_vote("soft").aggregation.is_majority
    low, high = X.min(axis=0), X.max(axis=0)
    bounded = restrict(forest, bounds={f: (float(low[f]), float(high[f])) for f in range(4)})
    states = forest.states(X)
    for restricted, rows in [
        (bounded, np.arange(len(X))),
        *[
            (restrict(forest, fixed={2: int(states[k, 2])}), np.flatnonzero(states[:, 2] == states[k, 2]))
            for k in (0, 75)
        ],
    ]:
        assert restricted.vote == vote and restricted.has_proba
        assert restricted.predict(X[rows]).tolist() == forest.predict(X[rows]).tolist()
    assert bounded.with_vote("hard").bounds == bounded.bounds


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_explain_many_holds_the_immutable_features(n_jobs: int) -> None:
    """``explain_many`` answers the queries about changes with the immutable features held, as
    ``explain`` does (it refused them before), in this process and in worker processes."""
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    explainer = rx.Explainer(model, engine="sat", immutable=["x2", "x3"])
    rows = X[::30]
    for query in ("necessary_reasons", "robustness", "sufficient_reason"):
        records = explainer.explain_many(rows, query, n_jobs=n_jobs, progress=False)
        assert all(r.error is None for r in records)
        for record, x in zip(records, rows):
            decision = explainer.explain(x)
            expected = decision.ask(query)
            if query == "necessary_reasons":
                got = {frozenset(r["features"]) for r in record.result}
                assert got == {r.features for r in expected} and not any({2, 3} & f for f in got)
            elif query == "robustness":
                assert record.result == expected
            else:
                assert record.result[0]["features"] == sorted(expected.features)
