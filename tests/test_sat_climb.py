"""The SAT engine's counterexample search by coordinate ascent (:mod:`rfexplain.sat.climb`)
against brute force: every point it returns meets the condition, and with one feature free
(where one move searches every cell) it finds a point exactly when one exists."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfexplain.sat.deciders.base import Question
from rfexplain.sat.deciders.climb import Climb
from rfexplain.sat.deciders.leaves import InstanceLeaves, LeafTable
from rfexplain.sat.deciders.race import Race
from rfexplain.sat.encodings import ForestEncoding
from tests.hypothesis_budget import examples
from tests.strategies import forests


def _query(forest: Any, data: Any, fixed: list[int]) -> tuple[Any, ...]:
    """The climb of a random query with ``fixed`` features, and the query's brute-force truth."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    decisions = np.asarray([forest.decide(tuple(z)) for z in grid.tolist()])
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    kind = data.draw(st.sampled_from(["not", "predicts"]))
    cls = data.draw(st.integers(0, forest.n_classes - 1))
    screen = InstanceLeaves(LeafTable(ForestEncoding(forest)), states)
    rows = screen.reachable(fixed)
    free, lows, highs = screen.free_boxes(fixed, rows)
    cells = [screen.cells(f, lows[:, j], highs[:, j], 0, forest.states_per_feature[f] - 1) for j, f in enumerate(free)]
    climb = Climb.over_cells(screen, free, lows, highs, cells, rows, kind, cls).climb
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


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
        screen = InstanceLeaves(table, instance)
        fixed = list(range(10))
        rows = screen.reachable(fixed)
        free, lows, highs = screen.free_boxes(fixed, rows)
        cells = [
            screen.cells(f, lows[:, j], highs[:, j], 0, forest.states_per_feature[f] - 1) for j, f in enumerate(free)
        ]
        return Climb.over_cells(screen, free, lows, highs, cells, rows, "not", cls).climb.run(50)

    first, second = climbed(), climbed()
    assert first is not None and second is not None
    assert np.array_equal(first, second)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=6, max_classes=3, max_features=4, max_depth=4), st.data())
def test_the_compiled_cell_representatives_are_the_instances_cells(forest: Any, data: Any) -> None:
    """:func:`~rfexplain.sat.climb_kernels.representatives` (one allowed state per cell, for the
    climb of the branch and bound's race) gives each free feature the states :meth:`.InstanceLeaves.cells` gives."""
    from rfexplain.sat.climb_kernels import representatives

    fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    table = LeafTable(ForestEncoding(forest))
    screen = InstanceLeaves(table, grid[data.draw(st.integers(0, len(grid) - 1))])
    rows = screen.reachable(fixed)
    free, lows, highs = screen.free_boxes(fixed, rows)
    top = np.asarray([forest.states_per_feature[f] - 1 for f in free], dtype=np.int64)
    allowed = [table.allowed[f] for f in free]
    flat = np.concatenate(allowed) if allowed else np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum([len(a) for a in allowed]))).astype(np.int64)
    values = np.zeros(int((top + 1).sum()), dtype=np.int64)
    at = np.zeros(len(free) + 1, dtype=np.int64)
    representatives(lows, highs, top, flat, starts, np.zeros(2 * len(rows) + 1, np.int64), values, at)
    for j, f in enumerate(free):
        assert values[at[j] : at[j + 1]].tolist() == screen.cells(f, lows[:, j], highs[:, j], 0, int(top[j])).tolist()


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["hard", "soft"]).flatmap(
        lambda vote: forests(max_trees=6, max_classes=3, max_features=4, vote=vote)
    ),
    st.data(),
)
def test_the_races_climb_answers_only_with_true_witnesses(forest: Any, data: Any) -> None:
    """The climb the branch and bound's race runs at the end of its slices (on the free
    features' cell representatives, the tuning's ``slice_climbs``) answers only
    with a witness that agrees with the instance on the fixed features and meets the condition
    under the forest's exact vote, and always finds one with a single feature free."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    kind = data.draw(st.sampled_from(["not", "predicts"]))
    cls = data.draw(st.integers(0, forest.n_classes - 1))
    one_free = data.draw(st.booleans())
    if one_free:
        left = data.draw(st.sampled_from(range(forest.n_features)))
        fixed = [f for f in range(forest.n_features) if f != left]
    else:
        fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    screen = InstanceLeaves(LeafTable(ForestEncoding(forest)), states)
    rows = screen.reachable(fixed)
    free, lows, highs = screen.free_boxes(fixed, rows)
    if not free:
        return
    race = Race(screen, free, rows, (lows, highs), kind, cls)
    race.clique, race.turn = None, 1  # as at the end of the first slice, wherever the clique search is
    restarts = race.climb_restarts()
    assert restarts is not None
    climb = race.climber()
    settled = None
    for _ in range(20):
        settled = climb.decide(Question(tuple(fixed), kind, cls), restarts)
        if settled is not None or not climb.climbing:
            break
    decisions = forest.predict_states(grid)
    agree = np.all(grid[:, fixed] == states[fixed], axis=1)
    holds = (decisions != cls) if kind == "not" else (decisions == cls)
    exists = bool(np.any(agree & holds))
    if settled is not None:
        assert settled.sat and exists
        witness = np.asarray(settled.witness)
        assert np.array_equal(witness[fixed], states[fixed])
        decided = int(forest.predict_states(witness[None, :])[0])
        assert (decided != cls) if kind == "not" else (decided == cls)
    elif one_free and forest.vote == "hard":
        assert not exists  # one move searches every cell (soft: a near tie may stop the climb)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=7, max_classes=4, max_features=4, max_depth=4), st.data())
def test_a_climb_starts_from_the_latest_counterexamples(forest: Any, data: Any) -> None:
    """A filter's climbs start from the counterexamples it found last
    (:meth:`.InstanceLeaves.starts`): one that is still a counterexample of the query (it agrees
    with the instance on the query's fixed features) is found by the first restart, in its own
    cells."""
    fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    decisions = np.asarray([forest.decide(tuple(z)) for z in grid.tolist()])
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    kind = data.draw(st.sampled_from(["not", "predicts"]))
    cls = data.draw(st.integers(0, forest.n_classes - 1))
    holds = (decisions != cls) if kind == "not" else (decisions == cls)
    witnesses = np.flatnonzero(np.all(grid[:, fixed] == states[fixed], axis=1) & holds)
    screen = InstanceLeaves(LeafTable(ForestEncoding(forest)), states)
    rows = screen.reachable(fixed)
    free, lows, highs = screen.free_boxes(fixed, rows)
    if not free or not len(witnesses):
        return
    witness = grid[witnesses[data.draw(st.integers(0, len(witnesses) - 1))]]
    others = [grid[data.draw(st.integers(0, len(grid) - 1))] for _ in range(data.draw(st.integers(0, 2)))]
    for point in [*others, witness]:  # the latest first: the witness
        screen.witness(free, point[free])
    cells = [screen.cells(f, lows[:, j], highs[:, j], 0, forest.states_per_feature[f] - 1) for j, f in enumerate(free)]
    found = Climb.over_cells(screen, free, lows, highs, cells, rows, kind, cls).climb.run(1)
    assert found is not None
    assert _meets(forest, free, cells, states, found, kind, cls)
    # the start itself: the witness's cells (a point where the condition holds is not moved)
    assert found.tolist() == [int(np.searchsorted(reps, witness[f], side="right")) - 1 for f, reps in zip(free, cells)]


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 5), st.integers(0, 2**32 - 1), st.data())
def test_kicked_restarts_stay_on_the_allowed_positions(n_free: int, seed: int, data: Any) -> None:
    """The restarts after the first start from the best end point with random features moved
    (iterated local search); every point they reach, found or kept as the best, takes allowed
    positions only."""
    from rfexplain.sat.climb import MarginClimb

    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 7, size=n_free)
    allowed = [np.sort(rng.choice(int(m), size=int(rng.integers(1, m + 1)), replace=False)) for m in sizes]
    n_leaves = int(rng.integers(1, 30))
    a = np.stack([rng.integers(0, m, size=n_leaves) for m in sizes], axis=1)
    b = np.stack([rng.integers(0, m, size=n_leaves) for m in sizes], axis=1)
    first, last = np.minimum(a, b), np.maximum(a, b)
    margins = rng.normal(size=(n_leaves, 1))
    penalty = np.asarray([data.draw(st.floats(-2.0, 6.0))])
    climb = MarginClimb(
        first,
        last,
        margins,
        penalty,
        sizes,
        any_challenger=True,
        seed=seed,
        allowed=(np.concatenate(allowed).astype(np.int64), np.concatenate(([0], np.cumsum([len(x) for x in allowed])))),
    )
    for _ in range(10):
        found = climb.run(3)
        for point in ([] if found is None else [found]) + ([climb.best] if climb.memory[0] > -np.inf else []):
            assert all(int(p) in set(options.tolist()) for p, options in zip(point, allowed))
        if found is not None:
            inside = np.all((first <= found) & (found <= last), axis=1)
            assert margins[inside, 0].sum() - penalty[0] > -1e-9
            break
