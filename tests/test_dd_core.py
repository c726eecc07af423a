"""The compact decision-diagram core: its vote graphs and their negations are the Python core's
nodes, id for id (ordered graphs are canonical in one manager), on random forests and on real
ones, also when the walk is cut into many slices and every array has to grow."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfexplain import Forest
from rfexplain.circuit.compilers import dd_core
from rfexplain.circuit.compilers.classformula import ClassFormulas, vote_thresholds
from rfexplain.circuit.compilers.dgraph import DGManager
from rfexplain.circuit.compilers.votecount import VoteCounter
from rfexplain.core.budget import Budget, BudgetExpired
from tests.hypothesis_budget import examples
from tests.strategies import forests


def python_negation(dg: DGManager, root: int) -> int:
    """The negation by definition, one node at a time through the manager's Python path: the
    same variable and masks, the children negated, the leaves swapped."""
    memo = {0: 1, 1: 0}
    for n in dg.reachable([root]):
        if n not in memo:
            memo[n] = dg.node(dg.var[n], [(m, memo[c]) for m, c in dg.edges[n]])
    return memo[root]


def same_vote_graphs(forest: Forest, *, compact_first: bool = False) -> tuple[int, int]:
    """Every vote threshold of every class pair, built by both cores in one manager (the Python
    core's first, or the compact core's), and its negation by compiled code and by definition;
    returns the most product nodes and graph nodes one graph took in the compact core."""
    cf = ClassFormulas(forest)
    python, compact = VoteCounter(forest, cf.dg), dd_core.CompactCounter(forest, cf.dg)
    n, k = forest.n_trees, forest.n_classes
    product = graph = 0
    for i in range(k):
        for j, out in vote_thresholds(n, k, i):
            weights = {i: 1} if j is None else {i: 1, j: -1}
            need = out if j is None else out - n
            if compact_first:
                got = compact.at_least(weights, need)
                negation = compact.negate(got)
                assert python.at_least(weights, need) == got, (i, j)
                assert python_negation(cf.dg, got) == negation, (i, j)
            else:
                want = python.at_least(weights, need)
                negation = python_negation(cf.dg, want)
                assert compact.at_least(weights, need) == want, (i, j)
                assert compact.negate(want) == negation, (i, j)
            product = max(product, compact.stats.get("product_nodes", 0))
            graph = max(graph, compact.stats.get("graph_nodes", 0))
    return product, graph


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forest=forests(), compact_first=st.booleans())
def test_compact_core_builds_the_python_cores_nodes(forest: Forest, compact_first: bool) -> None:
    same_vote_graphs(forest, compact_first=compact_first)


@pytest.mark.parametrize("pool", [None, np.int32])
@pytest.mark.parametrize("loader,trees,depth,grows", [("load_iris", 30, 4, False), ("load_wine", 7, 4, True)])
def test_compact_core_on_sklearn_forests_in_small_slices(
    loader: str, trees: int, depth: int, grows: bool, pool: type | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also with the residual tuples' pool forced to ``int32`` (the type of forests with more than
    65,536 residuals) and the export's intervals to ``int64`` (graphs of 2^31 intervals or more):
    the types change no node."""
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier

    X, y = getattr(datasets, loader)(return_X_y=True)
    model = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0).fit(X, y)
    monkeypatch.setattr(dd_core, "SLICE", 7)  # resume the walk thousands of times
    if pool is not None:
        monkeypatch.setattr(dd_core, "pool_dtype", lambda n_residuals: pool)
        monkeypatch.setattr(dd_core, "interval_dtype", lambda n_intervals, width: np.int64)
    product, graph = same_vote_graphs(Forest.from_sklearn(model), compact_first=grows)
    if grows:  # past the initial 1024 rows of the node, tuple and memo arrays
        assert product > 2048 and graph > 2048


@pytest.mark.slow
def test_every_interned_tuple_is_distinct(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child tuple's hash is derived from its parent's: were it ever not the hash of the tuple
    itself, a tuple met again would miss its entry and be interned twice (the graphs would still
    be right, only slower), so the finished pools are checked for repeats."""
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain.circuit.compilers import dd_kernels

    finished: list[list[tuple[int, ...]]] = []
    run = dd_kernels.run

    def recording_run(*args: object) -> tuple:
        out = run(*args)
        if out[0] == dd_kernels.FINISHED:
            ctr, tups, pool = args[10], out[5], out[6]
            rows = tups[: ctr[dd_kernels.N_TUPLES]].astype(np.int64)
            starts, lengths = rows[:, 0] & 0xFFFFFFFF, rows[:, 1]  # a row keeps 32 bits of its start
            finished.append([tuple(pool[s : s + n]) for s, n in zip(starts, lengths)])
        return out

    monkeypatch.setattr(dd_kernels, "run", recording_run)
    X, y = datasets.load_wine(return_X_y=True)
    forest = Forest.from_sklearn(RandomForestClassifier(n_estimators=12, max_depth=4, random_state=0).fit(X, y))
    same_vote_graphs(forest, compact_first=True)
    assert finished and max(len(t) for t in finished) > 1000
    for tuples in finished:
        assert len(set(tuples)) == len(tuples)


def test_the_interval_type_holds_every_interval() -> None:
    assert dd_core.interval_dtype(10**6, 46_340) is np.int32  # 46,340^2 < 2^31
    assert dd_core.interval_dtype(10**6, 46_341) is np.int64
    assert dd_core.interval_dtype(2**31 - 1, 100) is np.int32
    assert dd_core.interval_dtype(2**31, 100) is np.int64


@pytest.mark.parametrize("n_residuals", [1, 255, 256, 257, 65_535, 65_536, 65_537, 2**31 - 1])
def test_the_pool_type_holds_every_residual_id(n_residuals: int) -> None:
    dtype = dd_core.pool_dtype(n_residuals)
    assert np.iinfo(dtype).max >= n_residuals - 1
    assert np.dtype(dtype).itemsize == (2 if n_residuals <= 65_536 else 4)


@pytest.mark.slow
def test_compact_core_stops_at_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier

    X, y = datasets.load_wine(return_X_y=True)
    forest = Forest.from_sklearn(RandomForestClassifier(n_estimators=12, max_depth=4, random_state=0).fit(X, y))
    monkeypatch.setattr(dd_core, "SLICE", 1)  # the budget is polled between slices
    cf = ClassFormulas(forest, core="compact")
    with pytest.raises(BudgetExpired):
        cf.vote_graph(0, 1, Budget(timeout=0))
    # nothing half-built is kept: the next call compiles the whole graph
    assert cf.vote_graph(0, 1) == VoteCounter(forest, cf.dg).at_least({0: 1, 1: -1}, 0)


def test_compact_core_stops_at_the_size_budget_while_counting(monkeypatch: pytest.MonkeyPatch) -> None:
    """``max_nodes`` bounds the product itself, not only the graph written out after it."""
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain.core.errors import CompilationTooLargeError

    X, y = datasets.load_wine(return_X_y=True)
    forest = Forest.from_sklearn(RandomForestClassifier(n_estimators=12, max_depth=4, random_state=0).fit(X, y))
    monkeypatch.setattr(dd_core, "SLICE", 1)
    cf = ClassFormulas(forest, core="compact")
    cf.dg.max_nodes = 100
    with pytest.raises(CompilationTooLargeError, match="counting votes reached"):
        cf.vote_graph(0, 1)
    assert len(cf.dg) == 2  # nothing was written into the manager


def test_unknown_core_is_a_value_error() -> None:
    forest = Forest.from_raw_trees(
        [{"feature": [-1], "threshold": [0], "left": [-1], "right": [-1], "label": [0]}], n_features=1, classes=[0, 1]
    )
    with pytest.raises(ValueError, match="core must be one of"):
        ClassFormulas(forest, core="cudd")


@settings(max_examples=examples(50), deadline=None)
@given(values=st.lists(st.integers(0, 2**25), min_size=1, max_size=200), small=st.booleans())
def test_distinct_values_are_numpys_unique(values: list[int], small: bool) -> None:
    """Both ways of ``_distinct`` (a table below 2**24 values, sorting above) are np.unique."""
    import numpy as np

    array = np.array(values, np.int64) % (1000 if small else 2**25)
    bound = 1000 if small else 2**25
    got, inverse = dd_core._distinct(array, bound)
    want, want_inverse = np.unique(array, return_inverse=True)
    assert got.tolist() == want.tolist() and inverse.tolist() == want_inverse.tolist()


@settings(max_examples=examples(300), deadline=None)
@given(low=st.integers(-(2**40), 2**40), width=st.integers(0, 2**41))
def test_packed_memo_bounds_only_narrow(low: int, width: int) -> None:
    """A memo entry's need bounds, packed as two int16 halves of an int32, answer for the needs
    of the exact interval within the int16 range, and for none when the interval lies outside it."""
    from rfexplain.circuit.compilers import dd_kernels as k

    high = low + width
    packed = int(k._packed_bounds(low, high))
    assert -(2**31) <= packed < 2**31
    lo, hi = int(k._low_bound(packed)), int(k._high_bound(packed))
    inside = (max(low, -k.MEMO_LIMIT), min(high, k.MEMO_LIMIT))
    if inside[0] <= inside[1]:
        assert (lo, hi) == inside
    else:
        assert lo > hi
