"""The branch and bound's compiled helpers (:mod:`rfexplain.sat.box_kernels`) against their
definitions: the one-pass split and bounds, the children's interval counts derived from the
parent's, the in-place selection and sort. A wrong count or split would not change an answer
(the search stays exact), only its boxes, so these are checked directly."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfexplain.sat import box_kernels as kernels
from rfexplain.sat import stack_kernels
from tests.hypothesis_budget import examples


@st.composite
def leaf_boxes(draw: Any) -> dict[str, Any]:
    """Leaf boxes grouped by tree, a box of the free features' states they all meet, and a split."""
    n_free = draw(st.integers(1, 4))
    top = draw(st.lists(st.integers(1, 6), min_size=n_free, max_size=n_free))
    n_other = draw(st.integers(0, 3))
    n_rows = draw(st.integers(1, 30))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    trees = np.sort(rng.integers(0, max(1, n_rows // 3), size=n_rows)).astype(np.int64)
    a = rng.integers(0, np.asarray(top) + 1, size=(n_rows, n_free))
    b = rng.integers(0, np.asarray(top) + 1, size=(n_rows, n_free))
    low, high = np.minimum(a, b).astype(np.int32), np.maximum(a, b).astype(np.int32)
    lo = np.asarray([draw(st.integers(0, t - 1)) for t in top], dtype=np.int64)
    hi = np.asarray([draw(st.integers(int(lo[j]) + 1, t)) for j, t in enumerate(top)], dtype=np.int64)
    meets = np.all((low <= hi) & (high >= lo), axis=1)
    rows = np.flatnonzero(meets).astype(np.int64)
    j = draw(st.integers(0, n_free - 1))
    split = draw(st.integers(int(lo[j]), int(hi[j]) - 1))
    margins = np.round(rng.uniform(-1, 1, size=(n_rows, n_other)), 2)
    penalty = rng.choice([0.0, 0.5], size=n_other)
    return dict(
        low=low,
        high=high,
        trees=trees,
        rows=rows,
        lo=lo,
        hi=hi,
        j=j,
        split=split,
        margins=margins,
        penalty=penalty,
        not_kind=draw(st.booleans()),
    )


def _ending_inside(high: np.ndarray, rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per feature, the leaf intervals of ``rows`` that end inside ``lo..hi`` (before ``hi``)."""
    ends = high[rows].astype(np.int64)
    return ((ends >= lo) & (ends < hi)).sum(axis=0)


@settings(max_examples=examples(300), deadline=None)
@given(leaf_boxes())
def test_one_pass_split_gives_the_halves_and_their_bounds(case: dict[str, Any]) -> None:
    low, high, trees, rows = case["low"], case["high"], case["trees"], case["rows"]
    margins, penalty, not_kind, j, split = case["margins"], case["penalty"], case["not_kind"], case["j"], case["split"]
    n = len(rows)
    left, right = np.zeros(len(low), np.int64), np.zeros(len(low), np.int64)
    n_left, n_right, left_bound, right_bound = kernels._split_bounds(
        rows, n, low, high, trees, margins, penalty, not_kind, j, split, left, right, np.zeros((4, margins.shape[1]))
    )
    expected_left = rows[low[rows, j] <= split]
    expected_right = rows[high[rows, j] > split]
    assert left[:n_left].tolist() == expected_left.tolist()
    assert right[:n_right].tolist() == expected_right.tolist()
    for half, got in ((expected_left, left_bound), (expected_right, right_bound)):
        want = kernels.bound(half, len(half), trees, margins, penalty, not_kind)
        assert got == want
        if margins.shape[1] and len(half):  # the definition: per class, the sum of each tree's best margin
            totals = [
                sum(max(margins[r, d] for r in half if trees[r] == t) for t in dict.fromkeys(trees[half].tolist()))
                - penalty[d]
                for d in range(margins.shape[1])
            ]
            assert np.isclose(got, max(totals) if not_kind else min(totals))


@settings(max_examples=examples(300), deadline=None)
@given(leaf_boxes())
def test_childrens_interval_counts_follow_from_the_parents(case: dict[str, Any]) -> None:
    low, high, rows, lo, hi, j, split = (case[k] for k in ("low", "high", "rows", "lo", "hi", "j", "split"))
    counts = _ending_inside(high, rows, lo, hi)
    left, right = rows[low[rows, j] <= split], rows[high[rows, j] > split]
    for is_right, child, sibling in ((False, left, right), (True, right, left)):
        child_lo, child_hi = lo.copy(), hi.copy()
        if is_right:
            child_lo[j] = split + 1
        else:
            child_hi[j] = split
        out = np.full(len(lo) + 1, -7, np.int64)
        kernels._child_counts(
            counts, low, high, j, split, is_right, lo, hi, sibling, len(sibling), child, len(child), out
        )
        assert out[:-1].tolist() == _ending_inside(high, child, child_lo, child_hi).tolist()
        assert out[-1] == 1


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.integers(-5, 40), min_size=1, max_size=120), st.data())
def test_select_and_small_sort_agree_with_numpy(values: list[int], data: Any) -> None:
    k = data.draw(st.integers(1, len(values)))
    kth = data.draw(st.integers(0, k - 1))
    array = np.asarray(values, dtype=np.int64)
    assert kernels._select(array.copy(), k, kth) == np.sort(array[:k])[kth]
    head = array.copy()
    kernels._sort_head(head, k)
    assert head[:k].tolist() == sorted(values[:k])
    assert head[k:].tolist() == values[k:]


@pytest.mark.slow
def test_the_engine_compiles_no_kernel_after_its_leaf_table_is_built() -> None:
    """Every kernel the deciders call from Python is loaded when its leaf table is built
    (:func:`~rfexplain.sat.box_kernels.warm_up`), so numba's one-off load (about 10 ms per kernel
    from its cache) never lands inside a timed query. Checked in a fresh interpreter: the
    signatures of every kernel after a forest's leaf table is built are all those that AXps, CXps
    and the paired search then use, under both votes."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import numpy as np
        from numba.core.registry import CPUDispatcher
        from sklearn.datasets import load_wine
        from sklearn.ensemble import RandomForestClassifier
        from rfexplain import Forest
        from rfexplain.engines.base import Instance
        from rfexplain.sat import box_kernels
        from rfexplain.sat.engine import SatEngine

        def signatures():
            return {name: len(k.signatures) for name, k in vars(box_kernels).items() if isinstance(k, CPUDispatcher)}

        X, y = load_wine(return_X_y=True)
        model = RandomForestClassifier(n_estimators=15, max_depth=3, random_state=0).fit(X, y)
        for vote in ("hard", "soft"):
            forest = Forest.from_sklearn(model, vote=vote)
            # the paired search's kernels are called too
            with SatEngine(forest, tuning={"pair_growth": 100.0}) as engine:
                instance = Instance.of(forest, X[0])
                engine.oracle("not", instance.prediction)  # builds the leaf table
                before = signatures()
                for x in X[:8]:
                    instance = Instance.of(forest, x)
                    engine.sufficient_reason(instance)
                    engine.necessary_reason(instance)
                after = signatures()
                assert after == before, (vote, before, after)
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


@settings(max_examples=examples(300), deadline=None)
@given(leaf_boxes(), st.integers(0, 2**32 - 1))
def test_pair_bound_is_the_best_consistent_pair_of_each_paired_tree(case: dict[str, Any], seed: int) -> None:
    """The pair bound against its definition (one other class, rows in decreasing margin within
    each tree, a random matching of trees): a tree alone or whose partner has no leaf in the box
    adds its best margin, a pair its best two leaves that share a point; never above the per-tree
    bound."""
    low, high, trees, rows = case["low"], case["high"], case["trees"], case["rows"]
    rng = np.random.default_rng(seed)
    margins = np.round(rng.uniform(-1, 1, size=(len(low), 1)), 1)  # rounded: equal margins, ties in the walk
    rows = rows[np.lexsort((-margins[rows, 0], trees[rows]))]
    n_trees = int(trees.max()) + 1
    ids = rng.permutation(n_trees)
    partner = np.full(n_trees, -1, np.int64)
    for a, b in zip(ids[0::2], ids[1::2]):
        if rng.random() < 0.8:
            partner[a], partner[b] = b, a
    present = set(trees[rows].tolist())
    expected = 0.0
    for t in sorted(present):
        mine = [r for r in rows if trees[r] == t]
        p = int(partner[t])
        if p == -1 or p not in present:
            expected += max(margins[r, 0] for r in mine)
        elif p > t:
            theirs = [r for r in rows if trees[r] == p]
            meets = [
                margins[a, 0] + margins[b, 0]
                for a in mine
                for b in theirs
                if np.all(np.maximum(low[a], low[b]) <= np.minimum(high[a], high[b]))
            ]
            expected += max(meets, default=-np.inf)
    stamp, tree_run = np.zeros(n_trees, np.int64), np.zeros(n_trees, np.int64)
    run_start = np.zeros(len(low) + 1, np.int64)
    for serial in (1, 2):  # a second call on the same scratch gives the same
        got = kernels.pair_bound(
            rows, len(rows), low, high, trees, margins, partner, stamp, tree_run, run_start, serial
        )
        assert np.isclose(got, expected) or got == expected == -np.inf
    if len(rows):
        per_tree = kernels.bound(rows, len(rows), trees, margins, np.zeros(1), True)
        assert got <= per_tree + 1e-12


def test_remaining_work_is_unknown_at_the_root_and_none_once_the_stack_is_empty() -> None:
    """A search's estimated remaining work (:meth:`BoxSearch.remaining_work`): ``inf`` while its
    stack still holds the whole root box, the boxes examined times the open share over the closed
    one after half the root box is closed, 0 once the stack is empty."""
    from rfexplain.sat.deciders.boxes import BoxSearch

    arguments = (np.zeros((4, 2), dtype=np.int64),)
    run = BoxSearch(arguments, [3, 1], 4, guided=False)
    assert run.remaining_work([0, 0], [3, 1]) == float("inf")
    run.stack_lo[0], run.stack_hi[0] = [0, 0], [3, 0]  # half the root box left open
    run.boxes = 10
    assert run.remaining_work([0, 0], [3, 1]) == 10 * 4 * 0.5 / 0.5
    run.state[:] = 0  # an empty stack
    assert run.remaining_work([0, 0], [3, 1]) == 0.0


def _clip_reference(
    low: np.ndarray, high: np.ndarray, j: int, bottom: int, top: int, toward: int, around: int, stack: dict[str, Any]
) -> dict[str, Any]:
    """:func:`~rfexplain.sat.stack_kernels.clip_stack` by its definition, in numpy: the boxes meeting
    ``bottom..top`` on ``j``, clipped, stably sorted by their key (the last on top), each keeping
    the rows of its pool range that meet it; the tie points inside."""
    size = int(stack["state"][kernels.STACK_SIZE])
    box_lo, box_hi = stack["lo"][:size].copy(), stack["hi"][:size].copy()
    box_lo[:, j] = np.maximum(box_lo[:, j], bottom)
    box_hi[:, j] = np.minimum(box_hi[:, j], top)
    kept = np.flatnonzero(box_lo[:, j] <= box_hi[:, j])
    if toward == 2:
        key = -(np.maximum(box_lo[kept, j] - around, 0) + np.maximum(around - box_hi[kept, j], 0))
    else:
        key = box_hi[kept, j] if toward == 1 else -box_lo[kept, j]
    kept = kept[np.argsort(key, kind="stable")]
    pool: list[int] = []
    rows = []
    for b in kept.tolist():
        start = len(pool)
        for r in stack["pool"][stack["rows"][b, 0] : stack["rows"][b, 1]].tolist():
            if low[r, j] <= box_hi[b, j] and high[r, j] >= box_lo[b, j]:
                pool.append(r)
        rows.append([start, len(pool)])
    ties = stack["ties"][: stack["state"][kernels.TIES]]
    ties = ties[(ties[:, j] >= bottom) & (ties[:, j] <= top)]
    return dict(
        lo=box_lo[kept].tolist(),
        hi=box_hi[kept].tolist(),
        rows=rows,
        gain=stack["gain"][kept].tolist(),
        pool=pool,
        ties=ties.tolist(),
    )


@settings(max_examples=examples(300), deadline=None)
@given(leaf_boxes(), st.integers(0, 2**32 - 1), st.sampled_from([-1, 1, 2]))
def test_clipping_the_stack_keeps_the_boxes_that_meet_the_range_and_their_rows(
    case: dict[str, Any], seed: int, toward: int
) -> None:
    """The compiled clipping of a search's stack (:func:`~rfexplain.sat.stack_kernels.clip_stack`)
    against its definition (:func:`_clip_reference`), on random stacks of sub-boxes of the case's
    box, each with a random subset of its rows in the pool, with tie points."""
    low, high, lo, hi, j = case["low"], case["high"], case["lo"], case["hi"], case["j"]
    rng = np.random.default_rng(seed)
    n_free, size = len(lo), int(rng.integers(0, 7))
    capacity = size + 2
    stack = dict(
        lo=np.zeros((capacity, n_free), dtype=np.int64),
        hi=np.zeros((capacity, n_free), dtype=np.int64),
        rows=np.zeros((capacity, 2), dtype=np.int64),
        counts=np.ones((capacity, n_free + 1), dtype=np.int64),
        gain=rng.uniform(0, 1, size=capacity),
        pool=np.zeros(size * len(low) + 1, dtype=np.int64),
        ties=rng.integers(lo, hi + 1, size=(5, n_free)).astype(np.int64),
        state=np.asarray([size, int(rng.integers(0, 6)), 0], dtype=np.int64),
    )
    position = 0
    for b in range(size):
        a, c = rng.integers(lo, hi + 1), rng.integers(lo, hi + 1)
        stack["lo"][b], stack["hi"][b] = np.minimum(a, c), np.maximum(a, c)
        rows = np.flatnonzero(rng.random(len(low)) < 0.6)
        stack["pool"][position : position + len(rows)] = rows
        stack["rows"][b] = position, position + len(rows)
        position += len(rows)
    bottom = int(rng.integers(lo[j], hi[j] + 1))
    top = int(rng.integers(bottom, hi[j] + 1))
    around = int(rng.integers(lo[j], hi[j] + 1))
    expected = _clip_reference(low, high, j, bottom, top, toward, around, stack)
    stack_kernels.clip_stack(
        low,
        high,
        j,
        bottom,
        top,
        toward,
        around,
        stack["lo"],
        stack["hi"],
        stack["rows"],
        stack["counts"],
        stack["gain"],
        stack["pool"],
        stack["ties"],
        stack["state"],
    )
    n = int(stack["state"][kernels.STACK_SIZE])
    assert n == len(expected["lo"])
    assert stack["lo"][:n].tolist() == expected["lo"] and stack["hi"][:n].tolist() == expected["hi"]
    assert stack["rows"][:n].tolist() == expected["rows"] and stack["gain"][:n].tolist() == expected["gain"]
    assert stack["pool"][: len(expected["pool"])].tolist() == expected["pool"]
    assert not stack["counts"][:n].any()
    assert stack["ties"][: stack["state"][kernels.TIES]].tolist() == expected["ties"]
