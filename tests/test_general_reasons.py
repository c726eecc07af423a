"""General sufficient and necessary reasons and shortest flips from box questions
(:mod:`rfexplain.engines.general`): the SAT engine under both votes and the generic algorithm over
the oracle's own box questions, against the oracle's brute force, on random small forests with
categorical features and domain bounds; the SAT engine against the circuit engine on a real forest
under the hard vote; budgets that end the enumerations cleanly."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rfexplain as rx
from rfexplain.core.budget import Budget, Enumeration
from rfexplain.core.domain import restrict
from rfexplain.core.forest import Forest
from rfexplain.engines import engine_class
from rfexplain.engines.base import Instance
from rfexplain.engines.general import by_runs, general_necessary, general_sufficient, minimum_flip_sets
from rfexplain.oracle import Oracle
from rfexplain.oracle.engine import OracleEngine
from tests.engine_contract import _keys
from tests.hypothesis_budget import examples
from tests.strategies import forests

QUERIES = ("general_sufficient_reasons", "general_necessary_reasons", "shortest_flips")


@st.composite
def cases(draw: Any, vote: str) -> tuple[Forest, Instance]:
    """A random small forest whose features with the thresholds 0.5, 1.5, ... may be categorical
    and whose numeric features may be bounded (:func:`rfexplain.core.domain.restrict`), and one of
    its state vectors."""
    forest = draw(forests(vote=vote))
    categories = []
    for f, ts in enumerate(forest.thresholds):
        coded = bool(ts) and ts == tuple(k + 0.5 for k in range(len(ts)))
        categories.append([f"v{f}_{k}" for k in range(len(ts) + 1)] if coded and draw(st.booleans()) else None)
    forest = Forest(
        thresholds=forest.thresholds,
        trees=forest.trees,
        classes=forest.classes,
        categories=categories if any(c is not None for c in categories) else None,
        vote=vote,
    )
    numeric = [f for f, c in enumerate(categories) if c is None and forest.thresholds[f]]
    if numeric and draw(st.booleans()):
        f = draw(st.sampled_from(numeric))
        low, high = sorted(draw(st.lists(st.sampled_from((0.0, 1.0, 2.0, 3.0, 4.0)), min_size=2, max_size=2)))
        forest = restrict(forest, bounds={f: (low, high)})
    states = [draw(st.integers(0, n - 1)) for n in forest.states_per_feature]
    return forest, Instance.from_states(forest, states)


def _check(forest: Forest, reasons: list[Any]) -> None:
    for reason in reasons:
        verification = rx.verify(reason, forest)
        assert verification.ok, (reason, verification.problems)


@pytest.mark.parametrize("vote", ["hard", "soft"])
def test_sat_engine_equals_the_oracle_with_categories_and_bounds(vote: str) -> None:
    @settings(
        max_examples=examples(60),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(cases(vote))
    def property_test(case: tuple[Forest, Instance]) -> None:
        forest, instance = case
        oracle = Oracle(forest)
        expected = {
            "general_sufficient_reasons": oracle.general_sufficient_reasons(instance),
            "general_necessary_reasons": oracle.general_necessary_reasons(instance),
            "shortest_flips": oracle.shortest_flips(instance),
        }
        with engine_class("sat")(forest, prefilter=True) as engine:
            for query in QUERIES:
                got = list(getattr(engine, query)(instance, Budget()))
                assert _keys(got) == _keys(expected[query]), query
                _check(forest, got)

    property_test()


@pytest.mark.parametrize("grid_points", [0, 1 << 14])
@pytest.mark.parametrize("vote", ["hard", "soft"])
def test_the_generic_algorithm_over_the_oracles_box_questions(vote: str, grid_points: int) -> None:
    """fed the oracle's AXps and CXps (sorted) and its box questions, the generic algorithm gives
    the oracle's general reasons (the necessary ones in the oracle's order), with the inputs to avoid widened on the
    grid of blocks or (``grid_points=0``) by inflation over the oracle's box questions; the
    minimum hitting sets of the oracle's canonical AXps give its minimum CXps, each once"""

    @settings(
        max_examples=examples(100),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(cases(vote))
    def property_test(case: tuple[Forest, Instance]) -> None:
        forest, instance = case
        engine = OracleEngine(forest)
        oracle = engine.oracle
        budget = Budget()

        def counterexample(box: Any) -> Any:
            return engine.box_counterexample(instance, box)

        def example(box: Any) -> Any:
            return engine.box_example(instance, box)

        gsr = list(general_sufficient(forest, instance, oracle.sufficient_reasons(instance), counterexample, budget))
        assert _keys(gsr) == _keys(oracle.general_sufficient_reasons(instance))
        cxps = [r.features for r in oracle.necessary_reasons(instance)]
        gnr = general_necessary(forest, instance, cxps, example, counterexample, budget, grid_points=grid_points)
        assert list(gnr) == oracle.general_necessary_reasons(instance)
        minimum = [w for w in cxps if len(w) == min(map(len, cxps))]
        flips = general_necessary(forest, instance, minimum, example, counterexample, budget, grid_points=grid_points)
        assert list(flips) == oracle.shortest_flips(instance)
        found = list(
            minimum_flip_sets(
                instance, forest.states_per_feature, counterexample, partial(engine.sufficient_reason, instance), budget
            )
        )
        assert len(found) == len(set(found)) and set(found) == set(minimum)

    property_test()


@pytest.fixture(scope="module")
def iris_forest() -> Forest:
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    data = load_iris()
    model = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(data.data, data.target)
    return Forest.from_sklearn(model, vote="hard")


@pytest.fixture(scope="module")
def wine_forest() -> tuple[Forest, Any]:
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier

    data = load_wine()
    model = RandomForestClassifier(n_estimators=12, max_depth=4, random_state=0).fit(data.data, data.target)
    return Forest.from_sklearn(model, vote="hard"), data.data


def _same_as_the_circuit_engine(forest: Forest, rows: Any, queries: tuple[str, ...]) -> None:
    with engine_class("sat")(forest) as sat, engine_class("circuit")(forest) as circuit:
        for row in rows:
            instance = Instance.of(forest, row)
            for query in queries:
                got = list(getattr(sat, query)(instance, Budget()))
                assert got, query
                assert _keys(got) == _keys(getattr(circuit, query)(instance, Budget())), (query, row)
                _check(forest, got)


@pytest.mark.slow
def test_sat_engine_equals_the_circuit_engine_on_real_forests(iris_forest: Forest, wine_forest: Any) -> None:
    """every query on iris (8 trees of depth 3); the general necessary reasons and shortest flips
    on wine (12 trees of depth 4: the circuit engine's general sufficient reasons take minutes)"""
    from sklearn.datasets import load_iris

    _same_as_the_circuit_engine(iris_forest, load_iris().data[::15], QUERIES)
    forest, X = wine_forest
    _same_as_the_circuit_engine(forest, X[::20], ("general_necessary_reasons", "shortest_flips"))


@pytest.mark.parametrize("query", QUERIES)
def test_limit_and_timeout_end_the_enumerations_cleanly(iris_forest: Forest, query: str) -> None:
    decision = rx.Explainer(iris_forest, engine="sat").explain([6.0, 2.9, 4.5, 1.5])
    everything = list(getattr(decision, query)())
    assert len(everything) >= 2
    limited = getattr(decision, query)(limit=1)
    assert len(list(limited)) == 1
    assert limited.complete is False and limited.stopped_by == "limit"
    stopped = getattr(decision, query)(timeout=0)
    assert list(stopped) == [] and stopped.complete is False and stopped.stopped_by == "timeout"


def _ticking() -> tuple[Any, list[int]]:
    """A clock that moves one second each time it is read, and the count of its readings."""
    readings = [0]

    def clock() -> float:
        readings[0] += 1
        return float(readings[0])

    return clock, readings


@pytest.mark.parametrize("query", QUERIES)
def test_a_deadline_in_the_middle_ends_the_enumeration_cleanly(iris_forest: Forest, query: str) -> None:
    """Budgets on a clock that ticks once per reading (a unit of work): the enumeration stops at
    points all through its work, each time with distinct reasons of the whole answer, and says it
    timed out; with enough ticks it completes."""
    instance = Instance.of(iris_forest, [6.0, 2.9, 4.5, 1.5])
    with engine_class("sat")(iris_forest) as engine:
        clock, readings = _ticking()
        everything = list(Enumeration(partial(getattr(engine, query), instance), Budget(timeout=1e9, clock=clock)))
        total = readings[0]
        assert total > 4 and len(everything) >= 2
        cut_short = 0
        for ticks in sorted({1, 2, *range(3, total + 2, max(1, total // 12))}):
            clock, _ = _ticking()
            result = Enumeration(partial(getattr(engine, query), instance), Budget(timeout=ticks, clock=clock))
            got = list(result)
            assert _keys(got) <= _keys(everything)
            if result.complete:
                assert _keys(got) == _keys(everything)
            else:
                cut_short += 1
                assert result.stopped_by == "timeout"
        assert cut_short >= 2


def test_box_questions_go_run_by_run_up_to_the_cap() -> None:
    """Numeric state sets are asked as boxes of intervals, in order, while that makes at most
    RUN_BOXES parts; categorical ones whole; past the cap the box is asked whole."""
    asked: list[dict[int, frozenset[int]]] = []

    def question(box: dict[int, frozenset[int]]) -> tuple[int, ...] | None:
        asked.append(box)
        return None

    ask = by_runs(question, lambda f: f == 2)
    assert ask({0: frozenset({0, 1, 3}), 1: frozenset({2}), 2: frozenset({0, 2})}) is None
    assert asked == [
        {0: frozenset({0, 1}), 1: frozenset({2}), 2: frozenset({0, 2})},
        {0: frozenset({3}), 1: frozenset({2}), 2: frozenset({0, 2})},
    ]
    asked.clear()
    wide = {f: frozenset({0, 2, 4}) for f in range(4)}  # 27 parts (feature 2 is categorical)
    assert ask(wide) is None and asked == [wide]


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases("soft"), st.data())
def test_a_box_asked_run_by_run_holds_an_input_iff_it_does_whole(case: tuple[Forest, Instance], data: Any) -> None:
    forest, instance = case
    engine = OracleEngine(forest)
    box = {
        f: frozenset(data.draw(st.sets(st.integers(0, n - 1), min_size=1)))
        for f, n in enumerate(forest.states_per_feature)
    }
    whole = engine.box_counterexample(instance, box)
    parts = by_runs(partial(engine.box_counterexample, instance), lambda f: False)(box)
    assert (whole is None) == (parts is None)
    if parts is not None:
        assert all(parts[f] in states for f, states in box.items())
        assert forest.decide(parts) != instance.prediction


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["hard", "soft"]).flatmap(cases), st.data())
def test_the_sat_engine_asks_a_box_with_gaps_run_by_run_as_the_oracle_answers_it(
    case: tuple[Forest, Instance], data: Any
) -> None:
    """The SAT engine's box question on sets of states with gaps, split into boxes of intervals
    for its box searches (the tuning's ``box_runs``) or sent whole to its full formula
    (``box_runs=1``): a point decided otherwise, inside the box, iff the oracle finds one."""
    from rfexplain.sat.engine import SatEngine

    forest, instance = case
    box = {
        f: frozenset(data.draw(st.sets(st.integers(0, n - 1), min_size=1)))
        for f, n in enumerate(forest.states_per_feature)
    }
    expected = OracleEngine(forest).box_counterexample(instance, box)
    for runs in (4096, 1):
        with SatEngine(forest, tuning={"box_runs": runs}) as engine:
            found = engine.box_counterexample(instance, box)
        assert (found is None) == (expected is None), runs
        if found is not None:
            assert all(found[f] in states for f, states in box.items())
            assert forest.decide(found) != instance.prediction


def test_a_general_sufficient_reason_with_a_gap() -> None:
    """x <= 0.5 or x > 1.5 gives class a: at x = 0 the general sufficient reason is x in {0, 2},
    a set with a gap that inflation (intervals) alone would stop at {0}."""
    tree = {
        "feature": [0, -1, 0, -1, -1],
        "threshold": [0.5, 0.0, 1.5, 0.0, 0.0],
        "left": [1, -1, 3, -1, -1],
        "right": [2, -1, 4, -1, -1],
        "label": [-1, 0, -1, 1, 0],
    }
    forest = Forest.from_raw_trees([tree], n_features=1, classes=["a", "b"])
    instance = Instance.from_states(forest, [0])
    with engine_class("sat")(forest) as engine:
        got = list(engine.general_sufficient_reasons(instance, Budget()))
    assert [r.literals for r in got] == [{0: frozenset({0, 2})}]
    assert _keys(got) == _keys(Oracle(forest).general_sufficient_reasons(instance))
