"""Inflated sufficient reasons (Izza et al., AAAI 2024): the canonical AXp widened bound by bound.

Checked by brute force over every state vector of random small forests (sufficient over the whole
widened box, maximal: no bound moves one state further), under both votes; the three engines give
the same reason; the verifier proves each one independently, and refuses a reason that claims to
be inflated and is not."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rfexplain as rx
from rfexplain.engines import engine_class
from tests.hypothesis_budget import examples
from tests.strategies import forests_and_instances


def _flips(forest, instance) -> np.ndarray:
    grid = np.indices(forest.states_per_feature).reshape(forest.n_features, -1).T
    return grid[forest.predict_states(grid) != instance.prediction]


def _sufficient(flips: np.ndarray, box: dict[int, frozenset[int]]) -> bool:
    inside = np.ones(len(flips), dtype=bool)
    for f, states in box.items():
        inside &= np.isin(flips[:, f], sorted(states))
    return not bool(inside.any())


def _check_by_brute_force(forest, instance, reason) -> None:
    flips = _flips(forest, instance)
    box = reason.literals
    axp = {f: frozenset({instance.states[f]}) for f in box}
    assert all(axp[f] <= box[f] for f in box), "the inflated reason must contain the instance's cells"
    assert _sufficient(flips, box), f"{reason} is not sufficient"
    for f, states in box.items():
        n = forest.states_per_feature[f]
        assert len(states) < n, f"the literal on {f} covers the whole domain"
        assert max(states) - min(states) + 1 == len(states), "a numeric literal is an interval"
        for s in (min(states) - 1, max(states) + 1):
            if 0 <= s < n:
                assert not _sufficient(flips, {**box, f: states | {s}}), f"feature {f} can take state {s} too"
        others = {g: st_ for g, st_ in box.items() if g != f}
        assert not _sufficient(flips, others), f"the literal on {f} is not needed"


@settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(case=st.one_of(forests_and_instances(vote="hard"), forests_and_instances(vote="soft")))
def test_inflated_reasons_are_sufficient_maximal_and_the_same_in_every_engine(case):
    forest, instance = case
    answers = {}
    for name in ("oracle", "sat", "circuit"):
        if name == "circuit" and not forest.aggregation.is_majority:
            continue
        with engine_class(name)(forest) as engine:
            reason = engine.inflated_sufficient_reason(instance)
        assert reason.inflated and reason.kind == "sufficient"
        answers[name] = reason
        assert rx.verify(reason, forest).ok, rx.verify(reason, forest)
    oracle = answers["oracle"]
    _check_by_brute_force(forest, instance, oracle)
    for name, reason in answers.items():
        assert reason == oracle, f"{name} gave {reason}, the oracle {oracle}"
        assert reason.features == engine_class("oracle")(forest).sufficient_reason(instance).features


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=forests_and_instances(vote="soft"), data=st.data())
def test_inflation_follows_the_order(case, data):
    forest, instance = case
    order = data.draw(st.permutations(range(forest.n_features)))
    with engine_class("sat")(forest) as sat, engine_class("oracle")(forest) as oracle:
        reason = sat.inflated_sufficient_reason(instance, order)
        assert reason == oracle.inflated_sufficient_reason(instance, order)
    assert reason.features == oracle.sufficient_reason(instance, order).features
    _check_by_brute_force(forest, instance, reason)


def test_the_verifier_refuses_a_reason_claiming_to_be_inflated_that_is_not():
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    data = load_iris()
    model = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(data.data, data.target)
    decision = rx.Explainer(model, engine="sat").explain(data.data[60])
    inflated = decision.inflated_sufficient_reason()
    assert rx.verify(inflated, model).ok
    cell_tight = dataclasses.replace(decision.sufficient_reason(), inflated=True)
    assert cell_tight != inflated
    checks = rx.verify(cell_tight, model).checks
    assert any(c.name == "maximal" and not c.proven for c in checks)


def test_inflated_reason_on_a_pipeline_with_categories():
    from rfexplain.pipeline_demo import loans_pipeline

    pipe, X_test, _ = loans_pipeline()
    explainer = rx.Explainer(pipe, engine="sat")
    for i in range(3):
        decision = explainer.explain(X_test.iloc[i])
        reason = decision.inflated_sufficient_reason()
        assert reason.literals.keys() == decision.sufficient_reason().literals.keys()
        verification = rx.verify(reason, explainer.forest)
        assert verification.ok, verification
        assert "inflated" in reason.to_dict()


@pytest.mark.parametrize("engine", ["sat", "oracle"])
def test_inflated_reason_budget(engine):
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    data = load_iris()
    model = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(data.data, data.target)
    decision = rx.Explainer(model, engine=engine).explain(data.data[60])
    with pytest.raises(rx.BudgetExpired):
        decision.inflated_sufficient_reason(timeout=0)


def _box_and_feature(n_states: list[int], data) -> tuple[dict[int, frozenset[int]], int]:
    """A random box of intervals (some features free) and a feature with more than one state."""
    box = {}
    for g, n in enumerate(n_states):
        if data.draw(st.booleans()):
            low = data.draw(st.integers(0, n - 1))
            box[g] = frozenset(range(low, data.draw(st.integers(low, n - 1)) + 1))
    return box, data.draw(st.sampled_from([g for g, n in enumerate(n_states) if n > 1] or [0]))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.one_of(forests_and_instances(vote="hard"), forests_and_instances(vote="soft")), data=st.data())
def test_box_nearest_finds_the_counterexample_nearest_on_its_feature(case, data):
    forest, instance = case
    box, f = _box_and_feature(forest.states_per_feature, data)
    upward = data.draw(st.booleans())
    with engine_class("sat")(forest, prefilter=True) as sat:
        z, proven = sat.box_nearest(instance, box, f, upward)
    flips = _flips(forest, instance)
    inside = np.ones(len(flips), dtype=bool)
    for g, states in box.items():
        inside &= np.isin(flips[:, g], sorted(states))
    flips = flips[inside]
    if z is not None:
        assert any(np.array_equal(z, p) for p in flips), f"{z} is not a counterexample inside {box}"
    if proven:
        if not len(flips):
            assert z is None
        else:
            assert z is not None and z[f] == (flips[:, f].max() if upward else flips[:, f].min())


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.one_of(forests_and_instances(vote="hard"), forests_and_instances(vote="soft")), data=st.data())
def test_box_around_finds_the_counterexamples_nearest_the_instance_on_its_feature(case, data):
    """Both sides at once (:meth:`SatEngine.box_around`): the nearest counterexample below the
    instance's state on ``f`` and the nearest above, in a box whose slice at that state is
    sufficient (else a counterexample on it is refused, or the search gives up)."""
    forest, instance = case
    box, f = _box_and_feature(forest.states_per_feature, data)
    state = instance.states[f]
    flips = _flips(forest, instance)
    inside = np.ones(len(flips), dtype=bool)
    for g, states in box.items():
        inside &= np.isin(flips[:, g], sorted(states))
    flips = flips[inside]
    with engine_class("sat")(forest, prefilter=True) as sat:
        try:
            below, above, proven = sat.box_around(instance, box, f)
        except RuntimeError as refused:
            assert "instance's state" in str(refused) and np.any(flips[:, f] == state)
            return
    if np.any(flips[:, f] == state):
        assert not proven, "a box whose slice at the instance's state is not sufficient, proven"
        return
    for z in (below, above):
        if z is not None:
            assert any(np.array_equal(z, p) for p in flips), f"{z} is not a counterexample inside {box}"
    if proven:
        lower, upper = flips[flips[:, f] < state], flips[flips[:, f] > state]
        assert (below is None) == (not len(lower)) and (above is None) == (not len(upper))
        if below is not None:
            assert below[f] == lower[:, f].max()
        if above is not None:
            assert above[f] == upper[:, f].min()


def _bisected(
    bad: np.ndarray,
    n_states: list[int],
    states: list[int],
    nearest_kind: str,
    seed: int,
    with_known: bool,
    around_kind: str = "none",
):
    """The inflation of the AXp of every feature of a synthetic decision (``bad``: its
    counterexamples) with ``nearest`` exact, giving up with some counterexample, or absent, with
    or without known counterexamples (``with_known``), and with ``around`` exact, giving up with
    some counterexamples, or absent (``around_kind``)."""
    rng = np.random.default_rng(seed)

    def inside(box):
        mask = np.ones(len(bad), dtype=bool)
        for g, states in box.items():
            mask &= np.isin(bad[:, g], sorted(states))
        return bad[mask]

    def counterexample(box):
        found = inside(box)
        return tuple(int(s) for s in found[0]) if len(found) else None

    def nearest(box, f, upward):
        found = inside(box)
        if not len(found):
            return None, nearest_kind == "exact"
        if nearest_kind == "exact":
            pick = found[np.argmax(found[:, f]) if upward else np.argmin(found[:, f])]
            return tuple(int(s) for s in pick), True
        return (tuple(int(s) for s in found[rng.integers(len(found))]) if nearest_kind == "partial" else None), False

    def around(box, f):
        found = inside(box)
        lower, upper = found[found[:, f] < states[f]], found[found[:, f] > states[f]]
        assert not np.any(found[:, f] == states[f]), "asked about a box whose slice at the state is not sufficient"
        if around_kind == "exact":
            below = tuple(int(s) for s in lower[np.argmax(lower[:, f])]) if len(lower) else None
            above = tuple(int(s) for s in upper[np.argmin(upper[:, f])]) if len(upper) else None
            return below, above, True
        pick = [tuple(int(s) for s in side[rng.integers(len(side))]) if len(side) else None for side in (lower, upper)]
        return pick[0], pick[1], False

    from rfexplain.engines.inflation import inflate

    known = {}
    if with_known:  # an AXp's witnesses: decided otherwise, the instance's states on the other features
        for f in range(len(n_states)):
            others = np.delete(np.arange(len(n_states)), f)
            agree = bad[np.all(bad[:, others] == np.asarray(states)[others], axis=1)]
            if len(agree):
                known[f] = tuple(int(s) for s in agree[rng.integers(len(agree))])
    return inflate(
        range(len(n_states)),
        states,
        n_states,
        lambda f: False,
        counterexample,
        nearest=None if nearest_kind == "none" else nearest,
        known=known,
        around=None if around_kind == "none" else around,
    )


@settings(max_examples=examples(100), deadline=None)
@given(
    n_states=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    data=st.data(),
)
def test_inflation_with_a_nearest_search_gives_the_bisection_bounds(n_states, data):
    """However much ``nearest`` and ``around`` settle (each bound exactly, a counterexample only,
    nothing) and whatever counterexamples are known, the inflated box is the one bisection alone
    finds, and every refused bound keeps a counterexample just beyond it."""
    grid = np.indices(n_states).reshape(len(n_states), -1).T
    states = [data.draw(st.integers(0, n - 1)) for n in n_states]
    flags = data.draw(st.lists(st.booleans(), min_size=len(grid), max_size=len(grid)))
    bad = grid[np.asarray(flags, dtype=bool) & np.any(grid != states, axis=1)]  # the instance is decided
    seed = data.draw(st.integers(0, 1000))
    box, witnesses = _bisected(bad, n_states, states, "none", seed, False)
    kinds = itertools.product(("none", "exact", "partial", "giving up"), (False, True), ("none", "exact", "giving up"))
    for kind, with_known, around_kind in kinds:
        other, refused = _bisected(bad, n_states, states, kind, seed, with_known, around_kind)
        kind = f"{kind}, {around_kind}"
        assert other == box, kind
        assert [f for f, _ in refused] == [f for f, _ in witnesses], kind
        for f, z in refused:
            assert z[f] in (min(box[f]) - 1, max(box[f]) + 1), (kind, f, z)


@pytest.mark.parametrize("vote", ["hard", "soft"])
def test_nearest_searches_give_the_bisection_reasons_on_a_real_forest(vote, monkeypatch):
    """The SAT engine's bounds by nearest-counterexample searches (:meth:`SatEngine.box_around`,
    both bounds of a feature at once, and :meth:`SatEngine.box_nearest`, one bound; many boxes on
    their stacks, clipped and restacked after each witness) against bisection with box questions
    alone, on a forest of real size."""
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain.engines.base import EngineBase
    from rfexplain.sat.engine import SatEngine

    data = load_wine()
    model = RandomForestClassifier(n_estimators=25, max_depth=6, random_state=0).fit(data.data, data.target)
    explainer = rx.Explainer(model, engine="sat", vote=vote)
    for row in data.data[::30]:
        decision = explainer.explain(row)
        nearest = decision.inflated_sufficient_reason()
        with monkeypatch.context() as patched:
            patched.setattr(SatEngine, "box_around", EngineBase.box_around)
            one_side = explainer.explain(row).inflated_sufficient_reason()
            patched.setattr(SatEngine, "box_nearest", EngineBase.box_nearest)
            bisected = explainer.explain(row).inflated_sufficient_reason()
        assert nearest == one_side == bisected
        assert rx.verify(nearest, model).ok
