"""The compact ADD core (:mod:`rfexplain.comparators.add_core`) builds the same diagrams as the
Python :class:`~rfexplain.comparators.add.ADDManager`: same sizes, same class vectors on every
state vector, same decisions as the oracle, through slices, a lossy computed table, garbage
collection and the node budget."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfexplain import Forest, datasets
from rfexplain.comparators import add_core
from rfexplain.comparators.add import TERMINAL, ADDTooLargeError, AggregatedForest, aggregate
from rfexplain.core.budget import BudgetExpired
from rfexplain.oracle import Oracle
from tests.hypothesis_budget import examples
from tests.strategies import forests


def _same(a: AggregatedForest, b: AggregatedForest, grid: np.ndarray) -> None:
    """Two aggregations hold the same diagrams: sizes (canonical forms) and values everywhere."""
    ma, mb = a.manager, b.manager
    assert ma.size(a.majority) == mb.size(b.majority)
    assert ma.depth(a.majority) == mb.depth(b.majority)
    assert a.sizes["class_vector_nodes"] == b.sizes["class_vector_nodes"]
    for key in ("majority_nodes", "majority_depth"):  # measured in the store, and in Python
        assert a.stats()[key] == b.stats()[key]
    for z in grid:
        assert ma.evaluate(a.majority, z) == mb.evaluate(b.majority, z)
        if a.class_vector is not None and b.class_vector is not None:
            assert ma.evaluate(a.class_vector, z) == mb.evaluate(b.class_vector, z)
    if ma.reduce:
        assert a.counts() == b.counts()


@pytest.fixture
def tiny_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corner of the store at once: one-step slices, a two-row computed table that evicts
    all the time, garbage collection after every round."""
    monkeypatch.setattr(add_core, "SLICE", 1)
    monkeypatch.setattr(add_core, "CACHE_MIN", 2)
    monkeypatch.setattr(add_core, "CACHE_MAX", 2)
    monkeypatch.setattr(add_core, "GC_MIN", 0)


@settings(max_examples=examples(80), deadline=None)
@given(
    forests(max_trees=8),
    st.booleans(),
    st.sampled_from(["frequency", "index"]),
    st.sampled_from(["balanced", "sequential"]),
    st.booleans(),
)
def test_compact_core_builds_the_python_cores_diagrams(
    forest: Forest, reduce: bool, order: str, strategy: str, keep: bool
) -> None:
    oracle = Oracle(forest)
    options: dict[str, Any] = dict(reduce=reduce, feature_order=order, strategy=strategy, keep_class_vector=keep)
    compact = aggregate(forest, core="compact", **options)
    python = aggregate(forest, core="python", **options)
    _same(compact, python, oracle.grid)
    walked = np.array([compact.predict_states_one(z) for z in oracle.grid])
    assert (walked == oracle.labels).all()
    assert (compact.class_vector is None) == (not keep)


@settings(max_examples=examples(80), deadline=None)
@given(
    st.one_of(forests(max_trees=8), forests(max_trees=8, vote="soft")),
    st.booleans(),
    st.sampled_from(["balanced", "sequential"]),
    st.booleans(),
)
def test_early_decision_gives_the_same_majority_add(forest: Forest, reduce: bool, strategy: str, tiny: bool) -> None:
    """Deciding partial sums early changes the intermediate diagrams, never the majority ADD
    (canonical: same size and depth) nor any decision, under either vote."""
    oracle = Oracle(forest)
    exact = aggregate(forest, reduce=reduce, strategy=strategy, core="python", keep_class_vector=False)
    with pytest.MonkeyPatch.context() as mp:
        if tiny:
            mp.setattr(add_core, "CACHE_MIN", 2)
            mp.setattr(add_core, "CACHE_MAX", 2)
            mp.setattr(add_core, "GC_MIN", 0)
        early = aggregate(forest, reduce=reduce, strategy=strategy, keep_class_vector=False, decide_early=True)
    assert early.manager.size(early.majority) == exact.manager.size(exact.majority)
    assert early.manager.depth(early.majority) == exact.manager.depth(exact.majority)
    assert [early.predict_states_one(z) for z in oracle.grid] == list(oracle.labels)
    assert "decided_vector_nodes" in early.sizes and early.class_vector is None


def test_early_decision_needs_the_compact_core_and_no_class_vector() -> None:
    forest = datasets.train_forest("iris", trees=2, seed=0, depth=2).forest
    with pytest.raises(ValueError, match="decide_early"):
        aggregate(forest, decide_early=True)
    with pytest.raises(ValueError, match="decide_early"):
        aggregate(forest, core="python", keep_class_vector=False, decide_early=True)


@settings(max_examples=examples(40), deadline=None)
@given(forests(max_trees=8, vote="soft"), st.booleans())
def test_compact_core_sums_exact_soft_weights(forest: Forest, reduce: bool) -> None:
    oracle = Oracle(forest)
    compact = aggregate(forest, reduce=reduce, core="compact")
    _same(compact, aggregate(forest, reduce=reduce, core="python"), oracle.grid)
    assert [compact.predict_states_one(z) for z in oracle.grid] == list(oracle.labels)


@settings(max_examples=examples(40), deadline=None)
@given(forests(min_trees=3, max_trees=9), st.booleans(), st.sampled_from(["balanced", "sequential"]))
def test_slices_evictions_and_collections_change_nothing(forest: Forest, reduce: bool, strategy: str) -> None:
    oracle = Oracle(forest)
    python = aggregate(forest, reduce=reduce, strategy=strategy, core="python")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(add_core, "SLICE", 1)
        mp.setattr(add_core, "CACHE_MIN", 2)
        mp.setattr(add_core, "CACHE_MAX", 2)
        mp.setattr(add_core, "GC_MIN", 0)
        compact = aggregate(forest, reduce=reduce, strategy=strategy, core="compact")
    _same(compact, python, oracle.grid)


def test_garbage_collection_runs_and_keeps_the_result(tiny_store: None) -> None:
    forest = datasets.train_forest("iris", trees=12, seed=0, depth=3, vote="hard").forest
    trees, roots = _tree_adds(forest)
    store = add_core.CompactADD(
        [f for f, _ in trees.order.variables], forest.n_classes, reduce=trees.reduce, max_nodes=10_000
    )
    store.load(trees.level, trees.hi, trees.lo, trees.value, TERMINAL)
    acc = store.add(roots[0], roots[1])
    before = store.size(acc)
    held = len(store)
    kept = store.collect([acc])
    assert len(store) == before < held  # the trees' dead nodes are gone, the sum is whole
    assert store.size(kept) == before


def _tree_adds(forest: Forest) -> tuple[Any, list[int]]:
    from rfexplain.comparators.add import ADDManager, PredicateOrder, tree_add

    m = ADDManager(PredicateOrder.for_forest(forest))
    one_hot = [tuple(int(c == i) for i in range(forest.n_classes)) for c in range(forest.n_classes)]
    return m, [tree_add(m, t, lambda c: one_hot[c]) for t in forest.trees]


def test_the_node_budget_and_the_time_limit_stop_the_compact_core(tiny_store: None) -> None:
    forest = datasets.train_forest("iris", trees=20, seed=0, depth=4, vote="hard").forest
    with pytest.raises(ADDTooLargeError):
        aggregate(forest, core="compact", max_nodes=600)
    with pytest.raises(BudgetExpired):  # polled between one-step slices, inside the first sum
        aggregate(forest, core="compact", timeout=0.0)


def test_soft_weights_past_int64_fall_back_to_python(monkeypatch: pytest.MonkeyPatch) -> None:
    forest = datasets.train_forest("iris", trees=4, seed=0, depth=2).forest.with_vote("soft")
    monkeypatch.setattr(add_core, "LARGEST_SUM", 0)
    agg = aggregate(forest, core="compact")
    assert "peak_store_nodes" not in agg.sizes  # aggregated by the Python manager
    assert agg.predict_states_one([0] * forest.n_features) == forest.predict_states([[0] * forest.n_features])[0]


def test_unknown_core_is_refused() -> None:
    forest = datasets.train_forest("iris", trees=2, seed=0, depth=2).forest
    with pytest.raises(ValueError, match="core must be one of"):
        aggregate(forest, core="cudd")
