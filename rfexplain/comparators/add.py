"""Algebraic decision diagrams of random forests (Gossen and Steffen (2021), Sections 2-7 [GS21]).

A hand-written ADD package: ordered, hash-consed nodes in one :class:`ADDManager`, with a unique
table and an ``Apply`` whose results are cached, and the paper's aggregation pipeline on top of it
(:func:`aggregate`): every tree becomes an ADD (Sect. 3, Def. 14-15), the trees' one-hot class
vectors are added into the **class-vector ADD** ``d_V`` (Sect. 5, Def. 18 and 20), and the
**majority-vote ADD** ``d_C`` is its image under the majority vote of docs/design.md, section 1 (hard
majority, ties to the lowest class index; Def. 12 and 22).

Under the soft vote (a forest with ``vote="soft"``) the trees' terminals are their leaves'
class-probability vectors instead of one-hot votes -- the class-vector aggregation the paper
describes for probability vectors -- kept exact as the forest's integer weights
(:meth:`Vote.integer_weights <rfexplain.core.vote.Vote.integer_weights>`, probabilities times a common ``2**E``), so
``d_V`` holds exact summed weights and ``d_C`` their argmax, ties to the lowest class index.

The ADD package itself (the predicate order, the infeasible-path reduction of Sect. 7, the ADD
of one tree) is :mod:`rfexplain.comparators.add_manager`.

ADDs are due to Bahar et al. (1993) [Bah93].

Everything is iterative (explicit stacks), so deep diagrams never meet Python's recursion limit.

Example
-------
>>> from rfexplain import Forest
>>> raw = {"feature": [0, -1, -1], "threshold": [0.5, 0, 0], "left": [1, -1, -1],
...        "right": [2, -1, -1], "label": [-1, 0, 1]}
>>> forest = Forest.from_raw_trees([raw, raw], n_features=1, classes=["a", "b"])
>>> agg = aggregate(forest)
>>> agg.stats()["majority_nodes"]
3
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rfexplain.comparators.add_manager import ADD_NODE_BYTES, TERMINAL, ADDManager, PredicateOrder, tree_add
from rfexplain.core.budget import Budget
from rfexplain.core.errors import ADDTooLargeError, InvalidOptionError
from rfexplain.core.forest import Forest
from rfexplain.core.vote import winning_class

__all__ = [
    "ADDManager",
    "ADDTooLargeError",
    "PredicateOrder",
    "AggregatedForest",
    "aggregate",
    "tree_add",
    "majority_index",
]

log = logging.getLogger(__name__)

#: Hard majority with ties to the lowest class index ([GS21], Def. 12): the package's one tie
#: rule, :func:`rfexplain.core.vote.winning_class`, under the name this module exports.
majority_index = winning_class


def _add_vectors(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b))


# ---------------------------------------------------------------------- the pipeline
@dataclass
class AggregatedForest:
    """The result of :func:`aggregate`: the class-vector and majority-vote ADDs of a forest.

    Attributes
    ----------
    forest, manager : the forest and the manager holding every diagram
    class_vector : root of ``d_V`` (terminals: vote counts per class), or ``None`` when it was
        dropped to save memory
    majority : root of ``d_C`` (terminals: class indices)
    timings : seconds per phase (``trees``, ``class_vector``, ``majority``)
    """

    forest: Forest
    manager: ADDManager
    class_vector: int | None
    majority: int
    timings: dict[str, float] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    _bdds: dict[int, int] = field(default_factory=dict, repr=False)

    def class_bdd(self, cls: int) -> int:
        """The class characterisation BDD ``Ξ_C(c)`` ([GS21], Def. 30-31): terminals True
        where the forest decides ``cls``."""
        if not 0 <= cls < self.forest.n_classes:
            raise InvalidOptionError(f"cls must be a class index in [0, {self.forest.n_classes}). Got {cls!r} instead.")
        if cls not in self._bdds:
            self._bdds[cls] = self.manager.map_terminals(lambda c: c == cls, self.majority, name=f"is{cls}")
        return self._bdds[cls]

    def counts(self) -> list[int]:
        """Number of state vectors decided as each class (exact; reduced diagrams only)."""
        if not self.manager.reduce:
            raise InvalidOptionError("state counts need the infeasible-path reduction (aggregate(..., reduce=True))")
        by_class = self.manager.count_states(self.majority, self.forest.states_per_feature)
        return [by_class.get(c, 0) for c in range(self.forest.n_classes)]

    def predict_states_one(self, states: Sequence[int]) -> int:
        """Decision for one state vector by walking the majority-vote ADD."""
        return int(self.manager.evaluate(self.majority, states))

    def stats(self) -> dict[str, Any]:
        """Node counts (terminals included) and depths of the diagrams, and the timings."""
        m = self.manager
        out: dict[str, Any] = dict(self.sizes)  # the compact core measured these already
        if "majority_nodes" not in out:
            out["majority_nodes"] = m.size(self.majority)
        if "majority_depth" not in out:
            out["majority_depth"] = m.depth(self.majority)
        if self.class_vector is not None and "class_vector_nodes" not in out:
            out["class_vector_nodes"] = m.size(self.class_vector)
        out["reduced"] = m.reduce
        out.update({f"time_{k}": v for k, v in self.timings.items()})
        return out


def compact_node_bytes(n_classes: int) -> int:
    """Bytes of one node of the compiled store (:class:`~.add_core.CompactADD`): its row, a
    terminal row at most, its unique-table slots (kept at most half full) and computed-table slots."""
    return 3 * 4 + 8 * (n_classes + 1) + 2 * 2 * 4 * 2 + 16


def nodes_within(budget: Budget, max_nodes: int, per_node: int, held: int = 0) -> int:
    """``max_nodes``, lowered to the nodes of ``per_node`` bytes that fit in the budget's memory
    (``max_memory``) beside ``held`` bytes: the ADD compilers' memory budget is a node budget
    (:class:`ADDTooLargeError`, a ``MemoryError``, when they would pass it)."""
    if budget.max_memory is None:
        return max_nodes
    return max(2, min(max_nodes, (budget.max_memory - held) // per_node))


def aggregate(
    forest: Forest,
    *,
    reduce: bool = True,
    feature_order: Sequence[int] | str = "frequency",
    strategy: str = "balanced",
    keep_class_vector: bool = True,
    max_nodes: int = 20_000_000,
    timeout: float | Budget | None = None,
    vote: str | None = None,
    core: str = "compact",
    decide_early: bool = False,
) -> AggregatedForest:
    """Aggregate a forest into its class-vector and majority-vote ADDs ([GS21], Sect. 6, Def. 24).

    Parameters
    ----------
    forest : Forest
    reduce : bool
        Infeasible-path reduction during aggregation (Sect. 7); ``False`` gives the symbolic
        (independent-predicate) diagrams ``d_V`` and ``d_C`` of Sect. 6.
    feature_order : see :meth:`PredicateOrder.for_forest`
    strategy : ``"balanced"`` or ``"sequential"``
        Add the trees' ADDs pairwise in a balanced tree, or one after another into an
        accumulator (the paper's left-to-right concatenation).
    keep_class_vector : bool
        Keep ``d_V`` alive (its size is always measured).
    max_nodes : int
        Node budget of the manager (:class:`ADDTooLargeError` beyond it); garbage collection
        runs when half of it is used.
    timeout : float or Budget, optional
        Seconds, or a :class:`~rfexplain.core.budget.Budget`;
        :class:`~rfexplain.core.budget.BudgetExpired` (a :class:`TimeoutError`) when aggregation
        takes longer (checked inside and between Applies).
    vote : {"hard", "soft", "additive"}, optional
        Aggregate one-hot votes, the leaves' exact class-probability weights or their exact
        signed scores (default: the forest's own vote mode; see the module docstring).
    core : {"compact", "python"}
        Run the sums and the majority map in the compiled array store of :mod:`.add_core`
        (the default; the result is written into an :class:`ADDManager`), or in the
        :class:`ADDManager` itself. Both build the same diagrams; soft-vote weights whose sums
        could pass int64 always run in Python.
    decide_early : bool
        With the compact core and ``keep_class_vector=False``: turn every partial sum whose
        winner the remaining trees cannot change into that class at once
        (:meth:`.add_core.CompactADD.add`). The majority-vote ADD is the same; the intermediate
        diagrams, and the time, shrink. ``stats()`` then reports ``decided_vector_nodes`` (the
        last sum, partly decided) instead of ``class_vector_nodes``.

    Examples
    --------
    >>> from rfexplain import Forest
    >>> raw = {"feature": [0, -1, -1], "threshold": [1.0, 0, 0], "left": [1, -1, -1],
    ...        "right": [2, -1, -1], "label": [-1, 1, 0]}
    >>> agg = aggregate(Forest.from_raw_trees([raw], n_features=1, classes=[0, 1]))
    >>> agg.predict_states_one([0]), agg.predict_states_one([1])
    (1, 0)
    """
    if strategy not in ("balanced", "sequential"):
        raise InvalidOptionError(f"strategy must be one of ['balanced', 'sequential']. Got {strategy!r} instead.")
    if core not in ("compact", "python"):
        raise InvalidOptionError(f"core must be one of ['compact', 'python']. Got {core!r} instead.")
    if decide_early and (keep_class_vector or core != "compact"):
        raise InvalidOptionError(
            "decide_early leaves no exact class-vector ADD: it needs core='compact' and keep_class_vector=False"
        )
    budget = Budget.of(timeout)
    max_nodes = nodes_within(budget, max_nodes, ADD_NODE_BYTES)
    start = time.perf_counter()

    def check_time() -> None:
        budget.check("aggregating ADDs")

    order = PredicateOrder.for_forest(forest, feature_order)
    m = ADDManager(order, reduce=reduce, max_nodes=max_nodes)
    k = forest.n_classes
    # the trees' terminals: each leaf's exact score vector under the vote (one-hot votes, or
    # probabilities as integer weights)
    rule = forest.aggregation if vote in (None, forest.vote) else forest.with_vote(vote).aggregation
    _, weights = rule.integer_weights()
    roots = [tree_add(m, tree, w.__getitem__, by_leaf=True) for tree, w in zip(forest.trees, weights)]
    leaf_vectors = [list(w.values()) for w in weights]
    m.clear_cache()
    t_trees = time.perf_counter()
    log.debug("built %d tree ADDs (%d nodes) in %.3f s", len(roots), len(m), t_trees - start)
    if core == "compact":
        from rfexplain.comparators.add_core import LARGEST_SUM

        largest_sum = sum(max((max(map(abs, v)) for v in leaves), default=0) for leaves in leaf_vectors)
        if largest_sum <= LARGEST_SUM:
            gains = _tree_gains(leaf_vectors, k) if decide_early else None
            return _aggregate_compact(forest, m, roots, strategy, keep_class_vector, budget, start, t_trees, gains)
        log.debug("soft-vote weights may pass int64: aggregating in Python")

    def add(a: int, b: int) -> int:
        return m.apply(_add_vectors, a, b, name="add", budget=budget)

    def maybe_collect(live: list[int]) -> list[int]:
        if len(m) > m.max_nodes // 2:
            live = m.collect(live)
            log.debug("garbage collected: %d nodes live", len(m))
        return live

    if strategy == "sequential":
        acc = roots[0]
        for i in range(1, len(roots)):
            acc = add(acc, roots[i])
            if i % 16 == 0:
                check_time()
                m.clear_cache()
                live = maybe_collect([acc] + roots[i + 1 :])
                acc, roots[i + 1 :] = live[0], live[1:]
    else:
        level = roots
        while len(level) > 1:
            nxt = [add(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
            check_time()
            m.clear_cache()
            level = maybe_collect(level)
        acc = level[0]
    t_vector = time.perf_counter()
    sizes = {"class_vector_nodes": m.size(acc)}
    majority = m.map_terminals(majority_index, acc, name="majority")
    t_major = time.perf_counter()
    class_vector: int | None = acc
    if not keep_class_vector:
        class_vector = None
        majority = m.collect([majority])[0]
    else:
        m.clear_cache()
    return AggregatedForest(
        forest=forest,
        manager=m,
        class_vector=class_vector,
        majority=majority,
        timings={"trees": t_trees - start, "class_vector": t_vector - t_trees, "majority": t_major - t_vector},
        sizes=sizes,
    )


def _tree_gains(leaf_vectors: list[list[tuple[int, ...]]], k: int) -> tuple[Any, Any]:
    """Prefix sums over the trees of the least and the most each tree adds to each class (its
    leaves' vectors): rows ``0..T`` of two ``(T + 1, k)`` int64 arrays."""
    import numpy as np

    low = np.zeros((len(leaf_vectors) + 1, k), dtype=np.int64)
    high = np.zeros((len(leaf_vectors) + 1, k), dtype=np.int64)
    for t, leaves in enumerate(leaf_vectors):
        vectors = np.array(leaves, dtype=np.int64).reshape(-1, k)
        low[t + 1] = low[t] + vectors.min(axis=0)
        high[t + 1] = high[t] + vectors.max(axis=0)
    return low, high


def _aggregate_compact(
    forest: Forest,
    trees: ADDManager,
    roots: list[int],
    strategy: str,
    keep_class_vector: bool,
    budget: Budget,
    start: float,
    t_trees: float,
    gains: tuple[Any, Any] | None,
) -> AggregatedForest:
    """:func:`aggregate`'s sums and majority map in the compiled store of :mod:`.add_core`, from
    the trees' ADDs in ``trees``; the results are written back into a new :class:`ADDManager`.
    With ``gains`` (:func:`_tree_gains`) every sum decides early."""
    from rfexplain.comparators.add_core import CompactADD

    level_feature = [f for f, _ in trees.order.variables]
    per_node = compact_node_bytes(forest.n_classes)
    store_nodes = nodes_within(budget, trees.max_nodes, per_node, held=ADD_NODE_BYTES * len(trees))
    store = CompactADD(level_feature, forest.n_classes, reduce=trees.reduce, max_nodes=store_nodes)
    store.load(trees.level, trees.hi, trees.lo, trees.value, TERMINAL)
    n = len(roots)

    def add(a: tuple[int, int, int], b: tuple[int, int, int]) -> tuple[int, int, int]:
        """Sum of two partial sums ``(root, first tree, end)`` over adjacent tree ranges."""
        first, end = a[1], b[2]
        others = None
        if gains is not None:
            low, high = gains
            outside = low[n] - low[end] + low[first], high[n] - high[end] + high[first]
            others = (outside[0], outside[1])
        return store.add(a[0], b[0], budget, others), first, end

    def collect(parts: list[tuple[int, int, int]], live: int) -> tuple[list[tuple[int, int, int]], int]:
        kept, live = store.maybe_collect([p[0] for p in parts], live)
        return [(r, p[1], p[2]) for r, p in zip(kept, parts)], live

    live = len(store)
    parts = [(r, t, t + 1) for t, r in enumerate(roots)]
    if strategy == "sequential":
        acc = parts[0]
        for i in range(1, n):
            acc = add(acc, parts[i])
            if i % 16 == 0:
                budget.check("aggregating ADDs")
                kept, live = collect([acc] + parts[i + 1 :], live)
                acc, parts[i + 1 :] = kept[0], kept[1:]
    else:
        while len(parts) > 1:
            nxt = [add(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
            if len(parts) % 2:
                nxt.append(parts[-1])
            budget.check("aggregating ADDs")
            parts, live = collect(nxt, live)
        acc = parts[0]
    t_vector = time.perf_counter()
    sizes = {("decided_vector_nodes" if gains is not None else "class_vector_nodes"): store.size(acc[0])}
    majority = store.to_class(acc[0])
    t_major = time.perf_counter()
    sizes["majority_nodes"] = store.size(majority)
    sizes["majority_depth"] = store.depth(majority)
    sizes["peak_store_nodes"] = store.peak_nodes
    sizes["store_bytes"] = store.nbytes()
    kept_roots = [acc[0], majority] if keep_class_vector else [majority]
    level, hi, lo, values, out = store.export(kept_roots, TERMINAL, release=True)
    manager = ADDManager(trees.order, reduce=trees.reduce, max_nodes=max(trees.max_nodes, 2 * len(values)))
    manager.adopt(level, hi, lo, values)
    log.debug(
        "compact ADD core: peak %d nodes, %d bytes of arrays; exported %d nodes",
        store.peak_nodes,
        sizes["store_bytes"],
        len(manager),
    )
    return AggregatedForest(
        forest=forest,
        manager=manager,
        class_vector=out[0] if keep_class_vector else None,
        majority=out[-1],
        timings={
            "trees": t_trees - start,
            "class_vector": t_vector - t_trees,
            "majority": t_major - t_vector,
            "export": time.perf_counter() - t_major,
        },
        sizes=sizes,
    )
