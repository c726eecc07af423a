"""The SAT engine's counterexample search by coordinate ascent (:mod:`rfexplain.sat.climb`)
against brute force: every point it returns meets the condition, and with one feature free
(where one move searches every cell) it finds a point exactly when one exists."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfexplain.sat.encodings import ForestEncoding
from rfexplain.sat.prefilter import InstanceFilter, LeafTable
from tests.strategies import forests


def _query(forest: Any, data: Any, fixed: list[int]) -> tuple[Any, ...]:
    """The climb of a random query with ``fixed`` features, and the query's brute-force truth."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    decisions = np.asarray([forest.decide(tuple(z)) for z in grid.tolist()])
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    kind = data.draw(st.sampled_from(["not", "predicts"]))
    cls = data.draw(st.integers(0, forest.n_classes - 1))
    screen = InstanceFilter(LeafTable(ForestEncoding(forest)), states)
    rows = screen._reachable(fixed)
    free, lows, highs = screen._free_boxes(fixed, rows)
    cells = [screen._cells(f, lows[:, j], highs[:, j], 0, forest.states_per_feature[f] - 1) for j, f in enumerate(free)]
    climb = screen._climber(lows, highs, cells, rows, kind, cls)
    agree = np.all(grid[:, fixed] == states[fixed], axis=1)
    holds = (decisions != cls) if kind == "not" else (decisions == cls)
    return climb, free, cells, states, kind, cls, bool(np.any(agree & holds))


def _meets(
    forest: Any, free: list[int], cells: list[np.ndarray], states: np.ndarray, found: np.ndarray, kind: str, cls: int
) -> bool:
    point = states.copy()
    point[free] = [reps[i] for reps, i in zip(cells, found.tolist())]
    decided = forest.decide(tuple(int(s) for s in point))
    return (decided != cls) if kind == "not" else (decided == cls)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=7, max_classes=4, max_features=4, max_depth=4), st.data())
def test_every_point_the_climb_finds_meets_the_condition(forest: Any, data: Any) -> None:
    fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    climb, free, cells, states, kind, cls, exists = _query(forest, data, fixed)
    if not free:
        return
    found = climb.run(20)
    if found is not None:
        assert exists
        assert _meets(forest, free, cells, states, found, kind, cls)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=7, max_classes=4, max_features=4, max_depth=4), st.data())
def test_with_one_feature_free_the_climb_finds_a_point_iff_one_exists(forest: Any, data: Any) -> None:
    candidates = [f for f in range(forest.n_features) if forest.states_per_feature[f] > 1]
    if not candidates:
        return
    left = data.draw(st.sampled_from(candidates))
    climb, free, cells, states, kind, cls, exists = _query(
        forest, data, [f for f in range(forest.n_features) if f != left]
    )
    found = climb.run(1)
    assert (found is not None) == exists
    if found is not None:
        assert _meets(forest, free, cells, states, found, kind, cls)


def test_the_climb_is_seeded_per_query() -> None:
    """The same query climbs alike on every run (the same witness, whatever ran before)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain import Forest

    X, y = load_breast_cancer(return_X_y=True)
    forest = Forest.from_sklearn(RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y))
    table = LeafTable(ForestEncoding(forest))
    instance = forest.states(X[:1])[0]
    cls = forest.decide(tuple(int(s) for s in instance))

    def climbed() -> np.ndarray | None:
        screen = InstanceFilter(table, instance)
        fixed = list(range(10))
        rows = screen._reachable(fixed)
        free, lows, highs = screen._free_boxes(fixed, rows)
        cells = [
            screen._cells(f, lows[:, j], highs[:, j], 0, forest.states_per_feature[f] - 1) for j, f in enumerate(free)
        ]
        return screen._climber(lows, highs, cells, rows, "not", cls).run(50)

    first, second = climbed(), climbed()
    assert first is not None and second is not None
    assert np.array_equal(first, second)
