"""Compilation: NNF manager, sorting networks (exhaustive), decision graphs and Apply, and the
class formulas of Algorithms 3, 3A and 3B against the forest's own decision."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfexplain import Forest
from rfexplain.circuit.compilers import ClassFormulas, DGManager, NNFManager, sortnet, threshold
from rfexplain.circuit.compilers.classformula import dg_to_nnf, vote_thresholds
from rfexplain.circuit.compilers.votecount import VoteCounter
from tests.hypothesis_budget import examples
from tests.strategies import forests


class Bits:
    def or_(self, a: bool, b: bool) -> bool:
        return a or b

    def and_(self, a: bool, b: bool) -> bool:
        return a and b


def grid(forest: Forest) -> np.ndarray:
    return np.indices(forest.states_per_feature).reshape(forest.n_features, -1).T


# ---------------------------------------------------------------------- sorting networks
@pytest.mark.parametrize("n", [1, 2, 4, 8, 16])
def test_sortnet_sorts_every_bit_vector(n: int) -> None:
    for bits in itertools.product([False, True], repeat=n):
        assert sortnet(list(bits), Bits()) == sorted(bits, reverse=True)


@pytest.mark.parametrize("n", range(1, 11))
def test_threshold_counts_every_bit_vector(n: int) -> None:
    for bits in itertools.product([False, True], repeat=n):
        for k in range(1, n + 2):
            assert threshold(list(bits), k, Bits(), False) == (sum(bits) >= k), (bits, k)


def test_sortnet_rejects_non_power_of_two() -> None:
    with pytest.raises(ValueError):
        sortnet([True, False, True], Bits())


def test_sortnet_on_nnf_counts() -> None:
    m = NNFManager((2,) * 5)
    xs = [m.state(i, 1) for i in range(5)]
    for k in range(1, 6):
        root = threshold(xs, k, m, m.false)
        for z in itertools.product([0, 1], repeat=5):
            assert m.evaluate(root, z) == (sum(z) >= k)


# ---------------------------------------------------------------------- NNF manager
def test_nnf_unique_table_and_constants() -> None:
    m = NNFManager((3, 3))
    a, b = m.literal(0, 0b011), m.literal(1, 0b100)
    assert m.literal(0, 0b011) == a
    assert m.conj(a, b) == m.conj(b, a) == m.conj(a, b, m.true)
    assert m.conj(a, m.false) == m.false and m.disj(a, m.true) == m.true
    assert m.literal(0, 0b111) == m.true and m.literal(0, 0) == m.false
    assert m.disj(a) == a and m.conj() == m.true and m.disj() == m.false
    f = m.disj(m.conj(a, b), m.literal(0, 0b100))
    assert m.size(f) == (5, 4)
    assert m.evaluate(f, (0, 2)) and not m.evaluate(f, (1, 1)) and m.evaluate(f, (2, 0))
    assert "x0" in m.render(f) and m.to_dot(f).startswith("digraph")


# ---------------------------------------------------------------------- decision graphs
def _check_feasible_labels(dg: DGManager, root: int) -> None:
    """Weak test-once with feasible labels: every node's edges partition exactly the states of
    its variable still feasible on every path reaching it."""
    stack = [(root, dg.full)]
    seen = set()
    while stack:
        n, p = stack.pop()
        if n <= 1 or (n, p) in seen:
            continue
        seen.add((n, p))
        x = dg.var[n]
        union = 0
        for s, c in dg.edges[n]:
            assert union & s == 0, "edge labels overlap"
            union |= s
            stack.append((c, p[:x] + (s,) + p[x + 1 :]))
        assert union == p[x], f"node {n} on x{x}: edges cover {union:b}, feasible {p[x]:b}"


@pytest.mark.parametrize("ordered", [True, False])
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forest=forests(), data=st.data())
def test_apply_and_negation_are_exact(ordered: bool, forest: Forest, data: Any) -> None:
    cf = ClassFormulas(forest, ordered=ordered, method="count" if ordered else "sortnet")
    dg = cf.dg
    n = forest.n_trees
    a = cf.tree_dg(data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, forest.n_classes - 1)))
    b = cf.tree_dg(data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, forest.n_classes - 1)), True)
    conj, disj, neg = dg.apply("and", a, b), dg.apply("or", a, b), dg.negate(a)
    for root in (a, b, conj, disj, neg):
        _check_feasible_labels(dg, root)
    for z in grid(forest):
        va, vb = dg.evaluate(a, z), dg.evaluate(b, z)
        assert dg.evaluate(conj, z) == (va and vb)
        assert dg.evaluate(disj, z) == (va or vb)
        assert dg.evaluate(neg, z) == (not va)


# ---------------------------------------------------------------------- class formulas
@pytest.mark.parametrize(
    "ordered,method,core",
    [
        (True, "count", "python"),
        (True, "count", "compact"),
        (True, "sortnet", "python"),
        (False, "sortnet", "python"),
    ],
)
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forest=forests())
def test_algorithms_3_3a_3b_equal_the_forest(ordered: bool, method: str, core: str, forest: Forest) -> None:
    """``ordered``: trees first turned into ordered graphs (the default); otherwise the trees'
    own weak test-once graphs go through the general, path-carrying Apply. ``method``: 3B's vote
    graphs by direct counting (default) or by the paper's sorting network."""
    states = grid(forest)
    labels = forest.predict_states(states)
    cf = ClassFormulas(forest, ordered=ordered, method=method, core=core)
    m, roots = cf.nnf()
    for c in range(forest.n_classes):
        conjuncts, single = cf.dg_3b(c), cf.dg_3a(c)
        for root in conjuncts + (single,):
            _check_feasible_labels(cf.dg, root)
        for z, label in zip(states, labels):
            want = label == c
            assert m.evaluate(roots[c], z) == want, ("3", c, tuple(z))
            assert all(cf.dg.evaluate(r, z) for r in conjuncts) == want, ("3B", c, tuple(z))
            assert cf.dg.evaluate(single, z) == want, ("3A", c, tuple(z))
    # mutually exclusive and exhaustive
    for z in states:
        assert sum(m.evaluate(roots[c], z) for c in range(forest.n_classes)) == 1


def _same_graphs_both_ways(forest: Forest) -> None:
    """Every vote graph built by counting is *the same node* as the sorting network's (ordered
    graphs are canonical in one manager), for both sides of every comparison."""
    cf = ClassFormulas(forest, method="count")
    counter = VoteCounter(forest, cf.dg)
    n, k = forest.n_trees, forest.n_classes
    for i in range(k):
        for j, out in vote_thresholds(n, k, i):
            wires = []
            for t in range(n):
                if j is not None:
                    wires.append(cf.tree_dg(t, j, True))
                wires.append(cf.tree_dg(t, i))
            by_network = threshold(wires, out, cf.dg, cf.dg.false)
            weights = {i: 1} if j is None else {i: 1, j: -1}
            need = out if j is None else out - n
            assert counter.at_least(weights, need) == by_network, (i, j)
            assert cf.vote_graph(i, j) == by_network, (i, j)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forest=forests())
def test_counting_builds_the_sorting_networks_graph(forest: Forest) -> None:
    _same_graphs_both_ways(forest)


def test_tie_rule_thresholds() -> None:
    # binary: class 0 wins ties, class 1 needs a strict majority
    assert vote_thresholds(4, 2, 0) == [(None, 2)] and vote_thresholds(4, 2, 1) == [(None, 3)]
    assert vote_thresholds(5, 2, 0) == [(None, 3)] and vote_thresholds(5, 2, 1) == [(None, 3)]
    # multi-class: strict against lower classes, non-strict against higher ones
    assert vote_thresholds(3, 3, 1) == [(0, 4), (2, 3)]


def test_tied_forest_goes_to_lowest_class() -> None:
    raw = [
        {
            "feature": [0, -1, -1],
            "threshold": [0.5, 0, 0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [-1, 2, 1],
        },
        {
            "feature": [0, -1, -1],
            "threshold": [0.5, 0, 0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [-1, 1, 2],
        },
    ]
    forest = Forest.from_raw_trees(raw, n_features=1, classes=[0, 1, 2])
    cf = ClassFormulas(forest)
    m, roots = cf.nnf()
    for z in ([0], [1]):
        assert [m.evaluate(roots[c], z) for c in range(3)] == [False, True, False]


def test_dg_to_nnf_is_definition_3() -> None:
    forest = Forest.from_raw_trees(
        [
            {
                "feature": [0, 0, -1, -1, -1],
                "threshold": [1.5, 0.5, 0, 0, 0],
                "left": [1, 3, -1, -1, -1],
                "right": [2, 4, -1, -1, -1],
                "label": [-1, -1, 1, 0, 1],
            }
        ],
        n_features=1,
        classes=[0, 1],
    )
    cf = ClassFormulas(forest)
    nnf = NNFManager(forest.states_per_feature)
    root = dg_to_nnf(cf.dg, cf.tree_dg(0, 0), nnf)
    assert [nnf.evaluate(root, [s]) for s in range(3)] == [True, False, False]


# ---------------------------------------------------------------------- real forests
sklearn = pytest.importorskip("sklearn")


@pytest.mark.parametrize(
    "loader,trees,depth",
    [
        ("load_iris", 25, 4),
        pytest.param("load_wine", 10, 3, marks=pytest.mark.slow),
        pytest.param("load_breast_cancer", 8, 3, marks=pytest.mark.slow),
    ],
)
def test_class_formulas_on_sklearn_forests(loader: str, trees: int, depth: int) -> None:
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier

    X, y = getattr(datasets, loader)(return_X_y=True)
    model = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model, vote="hard")  # the class formulas count votes
    S = forest.states(X)
    labels = forest.predict_states(S)
    _same_graphs_both_ways(forest)
    cf = ClassFormulas(forest)
    m, roots = cf.nnf()
    for c in range(forest.n_classes):
        conjuncts, single = cf.dg_3b(c), cf.dg_3a(c)
        for z, label in zip(S, labels):
            want = label == c
            assert m.evaluate(roots[c], z) == want
            assert all(cf.dg.evaluate(r, z) for r in conjuncts) == want
            assert cf.dg.evaluate(single, z) == want
