"""The clique decider's search (:mod:`rfexplain.sat.cliques`, :mod:`rfexplain.sat.clique_kernels`)
against brute force: the kernel decides "is there a clique heavier than the goal?" on random
weighted graphs, resumed in slices; on random forests the search over the reachable leaves'
boxes answers every hard-vote query it takes as the forest does, with witnesses that are
counterexamples; and it never meets leaves on states no float32 value takes."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfexplain.sat import clique_kernels as kernels
from rfexplain.sat.cliques import CliqueSearch, search_levels
from rfexplain.sat.deciders.cliques import Cliques
from rfexplain.sat.deciders.leaves import LeafTable
from rfexplain.sat.encodings import ForestEncoding
from rfexplain.sat.tuning import DEFAULT_TUNING
from tests.hypothesis_budget import examples
from tests.sat_deciders import race_of, screen_of, settle
from tests.strategies import forests


def _adjacency(bits: np.ndarray, v: int, u: int) -> bool:
    return bool((int(bits[v, u >> 6]) >> (u & 63)) & 1)


@settings(max_examples=examples(400), deadline=None)
@given(st.data())
def test_kernel_finds_a_clique_heavier_than_the_goal_iff_one_exists(data: Any) -> None:
    """Random intervals (one or two features) as vertices, random weights (some zero), random
    goals; the search resumed every few units of work: FOUND exactly when brute force finds a clique
    heavier than the goal, and the clique it reports is one and is heavier."""
    n = data.draw(st.integers(1, 10))
    n_features = data.draw(st.integers(1, 2))
    row = st.lists(st.integers(0, 5), min_size=n_features, max_size=n_features)
    first = np.asarray(data.draw(st.lists(row, min_size=n, max_size=n)))  # short intervals: many edges
    widths = st.lists(st.integers(0, 3), min_size=n_features, max_size=n_features)
    width = np.asarray(data.draw(st.lists(widths, min_size=n, max_size=n)))
    last = first + width
    mixed = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0])
    equal = st.sampled_from([0.0, 2.0])  # the hard vote's two classes: Re-NUMBER's case
    weights = np.asarray(data.draw(st.lists(data.draw(st.sampled_from([mixed, equal])), min_size=n, max_size=n)))
    goal = data.draw(st.sampled_from([-1.0, 0.0, 0.75, 1.0, 2.5, 3.5, 4.0, 5.5, 6.0, 7.5]))

    def meet(a: int, b: int) -> bool:
        return bool(np.all(first[a] <= last[b]) and np.all(first[b] <= last[a]))

    adj = kernels.intersection_graph(first, last)
    assert all(_adjacency(adj, a, b) == (a != b and meet(a, b)) for a in range(n) for b in range(n))
    # a cube's graph: the subgraph induced by some vertices, in their smallest-last order
    subset = np.asarray(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))), dtype=np.int64)
    in_order = subset[kernels.smallest_last(kernels.permute(adj, subset))]
    left, removed = subset.tolist(), []  # smallest last: remove the first of the least degree
    while left:
        degrees = [sum(meet(a, b) for b in left if b != a) for a in left]
        removed.append(left.pop(degrees.index(min(degrees))))
    assert in_order.tolist() == removed[::-1]
    induced = kernels.permute(adj, in_order)
    assert induced.shape == (len(subset), (len(subset) + 63) // 64)
    assert all(
        _adjacency(induced, i, k) == (a != b and meet(a, b))
        for i, a in enumerate(in_order.tolist())
        for k, b in enumerate(in_order.tolist())
    )
    order = kernels.smallest_last(adj)
    assert sorted(order.tolist()) == list(range(n))
    adj = kernels.permute(adj, order)
    weights = weights[order]
    first, last = first[order], last[order]
    cliques = [
        c
        for k in range(1, n + 1)
        for c in itertools.combinations(range(n), k)
        if all(meet(a, b) for a, b in itertools.combinations(c, 2))
    ]
    best = max([0.0] + [float(sum(weights[list(c)])) for c in cliques])  # 0.0: the empty clique
    levels = search_levels(n, adj.shape[1], n + 1)
    failed = data.draw(st.sampled_from([0, 1, DEFAULT_TUNING.clique_failed_literals]))  # MaxCLQ's failed literals
    unit = data.draw(st.sampled_from([1, DEFAULT_TUNING.clique_work_unit]))  # words swept per unit of work
    status = kernels.SLICED
    while status == kernels.SLICED:
        status, _ = kernels.search(adj, weights, goal, *levels, unit, failed, data.draw(st.integers(1, 4)))
    assert status == (kernels.FOUND if best > goal else kernels.EXHAUSTED)
    if status == kernels.FOUND:
        chosen = levels[5][: levels[6][kernels.DEPTH]].tolist()
        assert all(meet(a, b) for a, b in itertools.combinations(chosen, 2))
        assert sum(weights[chosen]) > goal and all(weights[v] > 0 for v in chosen)


def _race_arguments(forest: Any, data: Any) -> tuple[Any, ...] | None:
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    kind = "not" if forest.n_classes > 2 else data.draw(st.sampled_from(["not", "predicts"]))
    cls = data.draw(st.integers(0, forest.n_classes - 1))
    screen = screen_of(LeafTable(ForestEncoding(forest)), states)
    assert screen.leaves is not None
    free = screen.leaves.free_boxes(fixed, screen.leaves.reachable(fixed))[0]
    if not free:
        return None
    race = race_of(screen, fixed, kind, cls)
    agree = np.all(grid[:, fixed] == states[fixed], axis=1)
    labels = forest.predict_states(grid)
    truth = bool(np.any(agree & ((labels != cls) if kind == "not" else (labels == cls))))
    return race.boxes.arguments, truth, states, free, kind, cls


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=7, max_classes=4, max_features=4), st.data())
def test_clique_search_decides_hard_vote_queries_as_the_forest_does(forest: Any, data: Any) -> None:
    """Every hard-vote query the clique search can decide ("not" any class; "predicts" with two
    classes; the race uses it with two classes only), in slices of 1-3 units of work, the box
    whole or split into cubes (up to three times, down to cubes of one leaf; past that while a
    cube has more than 1 or 4 leaves, when the whole graph is not built): EXHAUSTED exactly
    when no counterexample exists, and a found clique's point is a counterexample."""
    drawn = _race_arguments(forest, data)
    if drawn is None:
        return
    arguments, truth, states, free, kind, cls = drawn
    assert CliqueSearch.applies(arguments) == (forest.n_classes == 2)  # exact either way; used on two
    cube_depth = data.draw(st.sampled_from([0, 1, 3]))
    cube_vertices = data.draw(st.sampled_from([1, 3]))
    # small max_vertices: cubes build their own graphs
    max_vertices = data.draw(st.sampled_from([DEFAULT_TUNING.max_vertices, 1, 4]))
    failed = data.draw(st.sampled_from([0, 1, DEFAULT_TUNING.clique_failed_literals]))
    tuning = DEFAULT_TUNING.replace(
        cube_depth=cube_depth, cube_vertices=cube_vertices, max_vertices=max_vertices, clique_failed_literals=failed
    )
    search = CliqueSearch(arguments, tuning=tuning)
    status = kernels.SLICED
    while status == kernels.SLICED:
        status = search.step(data.draw(st.integers(1, 3)))
    assert status == (kernels.FOUND if truth else kernels.EXHAUSTED)
    if status == kernels.FOUND:
        witness = states.copy()
        witness[free] = search.witness
        got = forest.decide(tuple(int(s) for s in witness))
        assert (got != cls) if kind == "not" else (got == cls)


def _one_feature_arguments(allowed: list[int]) -> tuple[Any, ...]:
    """Two trees over one free feature of three states: each has a leaf for class 1 (tree 0 on
    states 0-1, tree 1 on states 1-2) and one for class 0; the query asks whether class 1 can
    take both votes ("not 0" with a tie going to 0)."""
    low = np.asarray([[0], [2], [1], [0]], dtype=np.int64)
    high = np.asarray([[1], [2], [2], [0]], dtype=np.int64)
    trees = np.asarray([0, 0, 1, 1], dtype=np.int64)
    margins = np.asarray([[1.0], [-1.0], [1.0], [-1.0]])
    scores = np.asarray([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    return (
        low,
        high,
        trees,
        margins,
        np.asarray([0.5]),
        scores,
        np.asarray(allowed, dtype=np.int64),
        np.asarray([0, len(allowed)], dtype=np.int64),
        0,
        True,
        False,
        1e-9,
        256,
    )


@pytest.mark.parametrize(("allowed", "found"), [([0, 1, 2], True), ([0, 2], False)])
def test_leaves_meet_only_on_states_a_float32_value_takes(allowed: list[int], found: bool) -> None:
    """The two class-1 leaves share only state 1: when no float32 value lies in it (the encoding
    excludes it), they never meet and no point gives class 1 both votes."""
    search = CliqueSearch(_one_feature_arguments(allowed))
    status = search.step(100)
    assert status == (kernels.FOUND if found else kernels.EXHAUSTED)
    if found:
        assert search.witness.tolist() == [1]


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=7, max_classes=2, max_features=4), st.data())
def test_the_hard_vote_race_with_the_clique_search_settles_right(forest: Any, data: Any) -> None:
    """Boxes searched one at a time and never whole, so that the clique search joins after the
    first box and then takes every slice: every query of the race is answered exactly (witnesses
    counterexamples; that the clique search does answer queries is the next test's)."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    labels = forest.predict_states(grid)
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    tuning = {"bnb_slice": 1, "first_slice": 1, "box_points": 0, "hard_bnb_nodes": 10**6, "clique_turns": 10**9}
    screen = screen_of(LeafTable(ForestEncoding(forest)), states, **tuning)
    for kind in ("not", "predicts"):
        for c in range(forest.n_classes):
            decided = settle(screen, fixed, kind, c)
            if decided is None:
                continue
            agree = np.all(grid[:, fixed] == states[fixed], axis=1)
            truth = bool(np.any(agree & ((labels != c) if kind == "not" else (labels == c))))
            assert decided.sat == truth
            if decided.sat:
                got = forest.decide(decided.witness)
                assert (got != c) if kind == "not" else (got == c)


def test_the_clique_search_answers_queries_of_a_real_forest(monkeypatch: Any) -> None:
    """On a real hard-vote forest of two classes, with one-box slices, the clique search joins the race and
    answers queries (as the exact answers of the test above require)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain import Forest
    from rfexplain.engines.base import Instance

    X, y = load_breast_cancer(return_X_y=True)
    model = RandomForestClassifier(n_estimators=15, max_depth=4, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model, vote="hard")
    # no climb takes its answers
    tuning = {"bnb_slice": 1, "first_slice": 1, "box_points": 0, "clique_race_climb_after": 10**9}
    answers: list[Any] = []
    original = Cliques.decide

    def decide(self: Any, question: Any, work: int | None) -> Any:
        settled = original(self, question, work)
        if settled is not None:
            answers.append(settled)
        return settled

    monkeypatch.setattr(Cliques, "decide", decide)
    table = LeafTable(ForestEncoding(forest))
    for row in X[:5]:
        instance = Instance.of(forest, row)
        screen = screen_of(table, instance.states, **tuning)
        for k in range(forest.n_features):
            for fixed in (list(range(k)), list(range(k, forest.n_features))):
                settle(screen, fixed, "not", instance.prediction)
    assert any(not a.sat for a in answers) and any(a.sat for a in answers)


def _random_graph(rng: np.random.Generator, n: int, density: float) -> tuple[np.ndarray, list[set[int]]]:
    """A random graph as the kernels' bitsets and as neighbour sets."""
    neighbours: list[set[int]] = [set() for _ in range(n)]
    adj = np.zeros((n, (n + 63) // 64), np.uint64)
    for a, b in itertools.combinations(range(n), 2):
        if rng.random() < density:
            neighbours[a].add(b)
            neighbours[b].add(a)
            adj[a, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
            adj[b, a >> 6] |= np.uint64(1) << np.uint64(a & 63)
    return adj, neighbours


def test_maxclq_inconsistent_sets_admit_no_clique_through_every_class() -> None:
    """MaxCLQ's bound (unit propagation and failed literals over colour classes): on random graphs
    coloured greedily, every set of classes the kernel calls inconsistent is one — brute force
    finds no clique taking a vertex of each of its classes — and the kernel does find such sets
    (so the bound is not silently idle)."""
    rng = np.random.default_rng(7)
    found = failed_literals = 0
    for _ in range(400):
        n = int(rng.integers(4, 15))
        adj, neighbours = _random_graph(rng, n, float(rng.uniform(0.3, 0.8)))
        colour_classes: list[list[int]] = []
        for v in rng.permutation(n).tolist():
            for members in colour_classes:
                if not any(u in neighbours[v] for u in members):
                    members.append(v)
                    break
            else:
                colour_classes.append([v])
        depth = len(colour_classes)
        classes = np.zeros((depth, adj.shape[1]), np.uint64)
        for c, members in enumerate(colour_classes):
            for v in members:
                classes[c, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        scratch = kernels.propagation_scratch(depth, adj.shape[1])
        used = scratch[0]
        scratch[6][:] = [len(members) for members in colour_classes]
        for j in range(depth):
            before = used.copy()
            propagated = kernels._propagate(adj, classes, j + 1, used, -1, -1, scratch, np.zeros(1, np.int64)) >= 0
            failed = DEFAULT_TUNING.clique_failed_literals
            if not kernels._inconsistent(adj, classes, j, used, failed, scratch, np.zeros(1, np.int64)):
                assert np.array_equal(used, before) and not propagated
                continue
            subset = np.flatnonzero(used & ~before).tolist()
            assert subset and not before[subset].any()
            found += 1
            failed_literals += not propagated
            picks = itertools.product(*[colour_classes[c] for c in subset])
            assert not any(all(b in neighbours[a] for a, b in itertools.combinations(p, 2)) for p in picks)
    assert found > 50 and failed_literals > 5


def _max_clique_size(neighbours: list[set[int]]) -> int:
    best = 0

    def grow(size: int, candidates: set[int]) -> None:
        nonlocal best
        best = max(best, size)
        if size + len(candidates) <= best:
            return
        for v in sorted(candidates):
            grow(size + 1, candidates & neighbours[v])
            candidates = candidates - {v}

    grow(0, set(range(len(neighbours))))
    return best


@pytest.mark.parametrize("graphs", [15, pytest.param(60, marks=pytest.mark.slow)])
def test_kernel_decides_equal_weight_cliques_on_larger_graphs(graphs: int) -> None:
    """Equal weights (the hard vote's case, where Re-NUMBER and MaxCLQ's bound settle classes) on
    random graphs of 20-60 vertices, goals around the largest clique, resumed in small slices: the
    search finds a clique exactly when one beats the goal (the first 15 graphs in every run, all 60
    in the slow one)."""
    rng = np.random.default_rng(11)
    for _ in range(graphs):
        n = int(rng.integers(20, 61))
        adj, neighbours = _random_graph(rng, n, float(rng.uniform(0.4, 0.9)))
        best = _max_clique_size(neighbours)
        order = kernels.smallest_last(adj)
        adj = kernels.permute(adj, order)
        neighbours = [{int(np.flatnonzero(order == u)[0]) for u in neighbours[v]} for v in order.tolist()]
        weights = np.full(n, 2.0)
        failed = int(rng.choice([0, DEFAULT_TUNING.clique_failed_literals, n]))  # MaxCLQ's failed literals
        for size in (best - 1, best, best + 1):
            goal = 2.0 * size - 1.0  # a clique of `size` vertices beats it
            levels = search_levels(n, adj.shape[1], n + 1)
            status = kernels.SLICED
            while status == kernels.SLICED:
                unit = DEFAULT_TUNING.clique_work_unit
                status, _ = kernels.search(adj, weights, goal, *levels, unit, failed, int(rng.integers(1, 50)))
            assert status == (kernels.FOUND if size <= best else kernels.EXHAUSTED)
            if status == kernels.FOUND:
                chosen = levels[5][: levels[6][kernels.DEPTH]].tolist()
                assert len(chosen) >= size
                assert all(b in neighbours[a] for a, b in itertools.combinations(chosen, 2))
