"""A compact, compiled core for the vote graphs of Algorithm 3B (Ji and Darwiche (2026),
Algorithm 3B [JD26]).

:class:`~.votecount.VoteCounter` builds a vote-threshold graph by a product construction over
the forest's *residuals* (trees restricted by the states read so far), one Python tuple and one
dict entry per product node and per graph node. :class:`CompactCounter` runs the same
construction, with the same interval memo (Abio et al., "BDDs for pseudo-Boolean constraints --
revisited", SAT 2011), inside one function compiled by numba [Lam15] over flat integer arrays:

- **graph nodes** are rows ``(variable, first edge, number of edges)`` of one array, their edges
  ``(last state of the interval, child)`` pairs in two more; an edge covers the states from the
  previous edge's last state plus one. Adjacent intervals with the same child are merged, so a
  node's interval list is canonical and an open-addressing table on it gives one id per node;
- **product nodes** are residual tuples interned in a flat pool (another open-addressing
  table) of the narrowest integer type that holds every residual id (:func:`pool_dtype`). A
  tuple's row (32 bytes) holds where it starts in the pool, its length and its memo bucket: its
  two latest entries ``(need bounds, node)`` (the bounds as two int16 halves of an int32), older
  entries in more buckets linked from it. The row a lookup reads to compare a tuple thus also
  answers most memo lookups, where a linked list of single entries took 3.9 memory accesses per
  lookup on ann-thyroid's 60-tree vote graph. A tuple lists the
  open trees' residuals in tree order, which restricting keeps, so no tuple is ever sorted
  (sorting them cost 9% of glass2's 50-tree product; the order only loses sharing where two
  trees have the same residual, +1.7% product nodes there);
- the depth-first walk keeps its frames and their pending children in two integer arrays.

The arrays that grow with the graph (nodes, edges, tuples, pool, memo) live in anonymous memory
maps that double in place (:class:`~.growable.GrowableArray`): before a step that may need more
rows than they have, the compiled walk returns and they grow, so a growing multi-gigabyte array is
never resident twice; the smaller ones grow by doubling inside the compiled code. The walk stops
after a number of units of work (:data:`SLICE`, counted in the residuals each step reads and
writes, :func:`~.dd_kernels.run`) so that the time of a :class:`~rfexplain.core.budget.Budget`
and the manager's size budget (``max_nodes``) are polled between slices; all its state lives in
the arrays, so the next slice resumes where the last one stopped. The memory budget
(:meth:`~rfexplain.core.budget.Budget.require`) is checked before every growth: the bytes
accounted are the manager's store (:meth:`~.dgraph.DGManager.accounted_bytes`), the residual trees
(:meth:`~.votecount.VoteCounter.accounted_bytes`) and their tables, and the product's arrays at
their full capacity (mapped rows not yet written count too), including a hash table's new copy
while it is rehashed; near the budget an array grows by less than doubling, so the stop comes
only when the rows the next step needs do not fit.

The finished graph is written into the :class:`~.dgraph.DGManager`'s array store by compiled
code (:meth:`~.dgraph.DGManager.intern_graph`), children first, each node's canonical edges
(intervals to the same child merged) computed by compiled code too; its negation is the store's
compiled :meth:`~.dgraph.DGManager.negate`. Ordered graphs are canonical, so the ids are the ones
:class:`~.votecount.VoteCounter` would have returned (a test builds both in one manager and
compares them).

Example
-------
>>> from rfexplain.core.forest import Forest
>>> from rfexplain.circuit.compilers.dgraph import DGManager
>>> def stump(t):  # x0 <= t votes class 0, else class 1
...     return {"feature": [0, -1, -1], "threshold": [t, 0, 0], "left": [1, -1, -1],
...             "right": [2, -1, -1], "label": [0, 0, 1]}
>>> forest = Forest.from_raw_trees([stump(1.0), stump(2.0), stump(3.0)], n_features=1, classes=[0, 1])
>>> dg = DGManager(forest.states_per_feature)
>>> root = CompactCounter(forest, dg).at_least({0: 1}, 2)     # at least 2 votes for class 0
>>> [dg.evaluate(root, (s,)) for s in range(4)]              # x0 <= 2.0
[True, True, False, False]
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from rfexplain.circuit.compilers import dgraph
from rfexplain.circuit.compilers.dgraph import DGManager
from rfexplain.circuit.compilers.gcpause import collect_young
from rfexplain.circuit.compilers.growable import GrowableArray
from rfexplain.circuit.compilers.votecount import VoteCounter
from rfexplain.core.budget import Budget, active_or
from rfexplain.core.errors import CompilationTooLargeError
from rfexplain.core.forest import Forest

__all__ = ["CompactCounter", "interval_dtype", "pool_dtype", "warm_up"]

log = logging.getLogger(__name__)


#: units of work (:func:`~.dd_kernels.run`) per compiled slice, between two budget polls:
#: slices of tens of milliseconds (experiments/README.md, "Time and memory budgets")
SLICE = 1 << 21
#: Python steps between two budget polls in the loops that build the residual tables (a step may
#: restrict whole trees)
_POLL = 32
#: the arrays of :func:`~.dd_kernels.run`, in its order
_RUN_ARRAYS = ("nodes", "eend", "echild", "ntab", "tups", "pool", "ttab", "memo", "frames", "kids")


def _distinct(values: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` for values in ``range(bound)``: by a table of
    ``bound`` entries when that is small (linear time), by sorting otherwise."""
    if bound > 1 << 24:
        return np.unique(values, return_inverse=True)
    present = np.zeros(bound, np.bool_)
    present[values] = True
    distinct = np.flatnonzero(present)
    del present
    index = np.empty(bound, np.int32)
    index[distinct] = np.arange(len(distinct))
    return distinct, index[values]


def pool_dtype(n_residuals: int) -> type:
    """The narrowest integer type of the tuple pool's entries (residual ids below
    ``n_residuals``): ``uint16`` where every id fits, else ``int32``.

    The pool holds most of a product's memory. A depth-4 forest of 100 trees has a few thousand
    residuals, so two bytes per entry suffice; ann-thyroid's first vote graph interned 24.0M
    tuples of 44 residuals on average (1.06G entries: 4.2 GB as ``int32``)."""
    return np.uint16 if n_residuals <= 1 << 16 else np.int32


def interval_dtype(n_intervals: int, width: int) -> type:
    """The type of the export's interval ids (``first * width + last``) and interval offsets:
    ``int32`` where they fit, else ``int64``. They are the export's largest arrays: ann-thyroid's
    38M-node vote graph has 133M intervals, 1 GB less as ``int32``."""
    return np.int32 if n_intervals < 1 << 31 and width * width < 1 << 31 else np.int64


def warm_up() -> None:
    """Load (or, on a fresh install, compile) the core's compiled loops now, by counting the votes
    of a two-stump forest and writing out the graph and its negation, so that no later compile
    pays for it (a one-off cost per process). It loads the loops of the ``uint16``
    pool; a forest with more than 65,536 residuals loads (or compiles, once per install) the
    ``int32`` ones on its first graph."""
    stumps: list[dict[str, list[Any]]] = [
        {
            "feature": [0, -1, -1],
            "threshold": [t, 0.0, 0.0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [0, 0, 1],
        }
        for t in (1.0, 2.0)
    ]
    forest = Forest.from_raw_trees(stumps, n_features=1, classes=[0, 1])
    counter = CompactCounter(forest, DGManager(forest.states_per_feature))
    counter.negate(counter.at_least({0: 1, 1: -1}, 0))
    dgraph.warm_up()


class CompactCounter:
    """Builds ``[sum over trees of weight(vote) >= need]`` as an ordered graph in ``dg``, like
    :class:`~.votecount.VoteCounter`, with the product construction compiled (module docstring).

    ``stats`` holds the figures of the last graph (product nodes expanded, graph nodes, interned
    residual tuples and their pool, the bytes the arrays took at their largest, CPU milliseconds
    of the product and of writing the graph out); ``history`` those of every graph."""

    def __init__(self, forest: Forest, dg: DGManager) -> None:
        from rfexplain.circuit.compilers import dd_kernels

        self._kernels = dd_kernels
        self.forest = forest
        self.dg = dg
        #: the weighted trees and their restrictions, hash-consed in Python (they are small)
        self.trees = VoteCounter(forest, dg)
        self.stats: dict[str, int] = {}
        self.history: list[dict[str, int]] = []
        #: the budget of the graph being counted (time and memory)
        self._budget = Budget()

    def at_least(self, weights: Mapping[int, int], need: int, budget: Budget | None = None) -> int:
        """The graph of ``sum_t weights[vote of tree t] >= need`` (missing classes weigh 0).

        Raises :class:`~rfexplain.core.budget.BudgetExpired` when ``budget`` (or else the active
        one) expires first, :class:`~rfexplain.core.errors.CompilationTooLargeError` before its
        memory budget would be passed."""
        budget = active_or(budget)
        self._budget = budget if budget is not None else Budget()
        trees = self.trees
        roots = [trees.weighted_tree(t, weights) for t in range(self.forest.n_trees)]
        key_of, mins, maxs = trees._key, trees._min, trees._max
        open_ = []
        for r in roots:
            if key_of[r][0] < 0:
                need -= key_of[r][1]
            else:
                open_.append(r)
        if sum(mins[r] for r in open_) >= need:
            return self.dg.true
        if sum(maxs[r] for r in open_) < need:
            return self.dg.false
        tables = self._tables(open_)
        return self._product(tables, open_, need, self._budget)

    def _held(self) -> int:
        """Bytes accounted outside the product's arrays: the manager's store and the residuals."""
        return self.dg.accounted_bytes() + self.trees.accounted_bytes()

    def _poll(self, steps: int, doing: str) -> None:
        """Every :data:`_POLL` steps: the time and the memory budget."""
        if steps % _POLL == 0:
            collect_young()
            self._budget.check(doing)
            self._budget.require(self._held(), doing)

    def _tables(self, roots: list[int]) -> tuple[np.ndarray, ...]:
        """Every residual reachable from ``roots`` by restricting a residual on its first
        variable, as flat arrays: first variable (-1 for a leaf), its rank, leaf weight, smallest
        and largest sum, and the segments ``(last state, restricted residual)``."""
        trees = self.trees
        rank = self.dg.rank
        by_rank = trees._by_rank
        seen = set(roots)
        stack = list(roots)
        steps = 0
        while stack:
            steps += 1
            self._poll(steps, "the residual trees of a vote graph")
            r = stack.pop()
            if trees._key[r][0] < 0:
                continue
            var = by_rank[trees._first_rank[r]]
            for _, child in trees._segments(r, var):
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        n = len(trees._key)
        first = np.full(n, -1, np.int64)
        first_rank = np.full(n, len(rank), np.int64)
        weight = np.zeros(n, np.int64)
        seg = np.zeros(n + 1, np.int64)
        last: list[int] = []
        child_of: list[int] = []
        for r in range(n):
            self._poll(r + 1, "the residual trees' table")
            seg[r] = len(last)
            v = trees._key[r][0]
            if v < 0:
                weight[r] = trees._key[r][1]
            elif r in seen:
                var = by_rank[trees._first_rank[r]]
                first[r] = var
                first_rank[r] = rank[var]
                for end, child in trees._segments(r, var):
                    last.append(end)
                    child_of.append(child)
        seg[n] = len(last)
        return (
            first,
            first_rank,
            weight,
            np.asarray(trees._min, np.int64),
            np.asarray(trees._max, np.int64),
            seg,
            np.asarray(last, np.int64),
            np.asarray(child_of, np.int64),
        )

    def _product(self, tables: tuple[np.ndarray, ...], root: list[int], need: int, budget: Budget) -> int:
        k = self._kernels
        n_states = np.asarray(self.dg.n_states, np.int64)
        max_states, widest = int(n_states.max()), len(root) + 1
        ctr = np.zeros(9, np.int64)
        # the arrays that grow with the graph, in memory maps grown in place (module growable);
        # the kernel asks for room before a step may need it (dd_kernels.rows_needed)
        grown = {
            "nodes": GrowableArray(np.int32, 1024, 3),
            # an edge's last state is below max_states: two bytes where that fits
            "eend": GrowableArray(np.int16 if max_states <= 1 << 15 else np.int32, 2048),
            "echild": GrowableArray(np.int32, 2048),
            "tups": GrowableArray(np.int32, 1024, k.ROW_WIDTH),
            "pool": GrowableArray(pool_dtype(len(tables[0])), max(4096, 2 * len(root))),
            "memo": GrowableArray(np.int32, 1024, k.ROW_WIDTH),
        }
        nodes, tups, pool = (grown[name].view() for name in ("nodes", "tups", "pool"))
        nodes[:2, 0] = -1
        ctr[k.N_NODES] = 2
        # the root as the single pending child of a sentinel frame
        pool[: len(root)] = root
        tups[0, :4] = (0, len(root), -1, 0)  # pool start, length, no more memo bucket, no entry
        ctr[k.N_TUPLES] = 1
        ctr[k.POOL] = len(root)
        ttab = k.rehash_tuples(tups, pool, 1, max_states)
        del nodes, tups, pool
        frames = np.zeros((64, 8), np.int64)
        kids = np.zeros((256, 6), np.int64)
        frames[0] = (-1, need, -1, -k.UNBOUNDED, k.UNBOUNDED, 0, 1, 0)
        kids[0] = (0, 0, need, -k.UNBOUNDED, k.UNBOUNDED, -1)
        ctr[k.DEPTH] = 1
        ctr[k.N_CHILD] = 1
        others = {"ntab": np.full(2048, -1, np.int32), "ttab": ttab, "frames": frames, "kids": kids}
        del ttab, frames, kids
        arrays = [grown[name].view() if name in grown else others.pop(name) for name in _RUN_ARRAYS]
        peak = 0
        start = time.process_time()
        held = self._held() + sum(t.nbytes for t in tables)
        while True:
            status, *arrays = k.run(*tables, n_states, max_states, ctr, *arrays, SLICE)
            peak = max(peak, sum(a.nbytes for a in arrays))
            if status == k.FINISHED:
                break
            if status == k.NEEDS_ROOM:
                for i, name in enumerate(_RUN_ARRAYS):
                    if name in grown:
                        arrays[i] = None  # no view may outlive the map's growth
                self._make_room(grown, arrays, ctr, max_states, widest, held, budget)
                arrays = [grown[name].view() if name in grown else a for name, a in zip(_RUN_ARRAYS, arrays)]
                continue
            limit = self.dg.max_nodes
            if limit is not None and len(self.dg) + int(ctr[k.N_NODES]) - 2 >= limit:
                raise CompilationTooLargeError(
                    f"counting votes reached {int(ctr[k.N_NODES]) - 2:,} decision-graph nodes, past the size "
                    f"budget of {limit:,} nodes (max_nodes=); use a smaller forest, a larger max_nodes or the "
                    "sat engine"
                )
            budget.check(f"compiling a vote graph ({int(ctr[k.EXPANDED])} product nodes expanded)")
        nodes, eend, echild = arrays[0], arrays[1], arrays[2]
        kept = sum(grown[name].nbytes for name in ("nodes", "eend", "echild"))
        del arrays, grown  # the product's tables go before the graph is written out
        n_nodes = int(ctr[k.N_NODES])
        n_edges = int(ctr[k.N_EDGES])
        budget.check("writing a vote graph out")
        # the graph's copies beside the product's three arrays, then writing it out
        copies = n_nodes * nodes.itemsize * 3 + n_edges * (eend.itemsize + echild.itemsize)
        budget.require(self._held() + kept + copies, f"a vote graph of {n_nodes - 2:,} nodes")
        budget.require(self._held() + copies + self._export_bytes(n_nodes, n_edges), "writing a vote graph out")
        self.stats = {
            "product_nodes": int(ctr[k.EXPANDED]),
            "graph_nodes": n_nodes - 2,
            "tuples": int(ctr[k.N_TUPLES]),
            "memo_buckets": int(ctr[k.N_TUPLES] + ctr[k.N_MEMO]),
            "pool": int(ctr[k.POOL]),
            "peak_bytes": peak,
            "product_ms": int(1000 * (time.process_time() - start)),
        }
        graph = [nodes[:n_nodes].copy(), eend[:n_edges].copy(), echild[:n_edges].copy(), int(ctr[k.ROOT])]
        del nodes, eend, echild
        start = time.process_time()
        top = self._export(graph)
        self.stats["export_ms"] = int(1000 * (time.process_time() - start))
        self.history.append(self.stats)
        return top

    def _make_room(
        self,
        grown: dict[str, GrowableArray],
        arrays: list[Any],
        ctr: np.ndarray,
        max_states: int,
        widest: int,
        held: int,
        budget: Budget,
    ) -> None:
        """Grow the product's arrays and rehash its tables for the walk's next step (what
        :func:`~.dd_kernels.run` asked room for), after checking the memory budget: the bytes
        held (``held``: the store and the residual tables), the arrays at their capacity and a
        rehashed table's new copy beside the old one. Near the budget the arrays grow by what
        still fits rather than doubling; :class:`~rfexplain.core.errors.CompilationTooLargeError`
        when even the next step's rows do not fit."""
        k = self._kernels
        wanted = {name: int(k.rows_needed(ctr, max_states, widest, which)) for which, name in enumerate(k.GROWN)}
        if wanted["pool"] > k.POOL_LIMIT:
            raise CompilationTooLargeError(
                f"counting votes interned {int(ctr[k.N_TUPLES]):,} residual tuples, past the "
                f"{k.POOL_LIMIT:,} residuals their pool can index; use a smaller forest or the sat engine"
            )
        at = {name: i for i, name in enumerate(_RUN_ARRAYS)}
        rehash = {
            "ntab": (int(ctr[k.N_NODES]), 1),
            "ttab": (int(ctr[k.N_TUPLES]), max_states),
        }
        rehash = {name: nr for name, nr in rehash.items() if len(arrays[at[name]]) < k.table_size(*nr)}
        current = held + sum(g.nbytes for g in grown.values())
        current += sum(arrays[at[name]].nbytes for name in ("ntab", "ttab", "frames", "kids"))
        extra_tables = sum(int(k.table_bytes(*nr)) for nr in rehash.values())
        growing = {name: g for name, g in grown.items() if g.rows < wanted[name]}
        least = current + extra_tables + sum((wanted[n] - g.rows) * g.row_bytes for n, g in growing.items())
        budget.require(least, f"a vote graph ({int(ctr[k.N_NODES]) - 2:,} nodes, {int(ctr[k.EXPANDED]):,} expanded)")
        spare = (budget.max_memory - least) // max(len(growing), 1) if budget.max_memory is not None else None
        for name, g in growing.items():
            g.grow(wanted[name], at_most=None if spare is None else wanted[name] + spare // g.row_bytes)
        if "ntab" in rehash:
            nodes, eend, echild = (grown[name].view() for name in ("nodes", "eend", "echild"))
            arrays[at["ntab"]] = None
            arrays[at["ntab"]] = k.rehash_nodes(nodes, eend, echild, *rehash["ntab"])
            del nodes, eend, echild
        if "ttab" in rehash:
            tups, pool = grown["tups"].view(), grown["pool"].view()
            arrays[at["ttab"]] = None
            arrays[at["ttab"]] = k.rehash_tuples(tups, pool, *rehash["ttab"])
            del tups, pool

    def negate(self, root: int) -> int:
        """The negation of a graph (the manager's compiled :meth:`~.dgraph.DGManager.negate`)."""
        return self.dg.negate(root)

    def _export_bytes(self, n_nodes: int, n_edges: int) -> int:
        """An upper bound of the bytes :meth:`_export` allocates for a graph of ``n_nodes``
        nodes and ``n_edges`` edges (its temporaries all counted as if held together, and the
        store's growth, :meth:`~.dgraph.DGManager.growth_bytes`)."""
        width = max(self.dg.n_states)
        index = np.dtype(interval_dtype(n_edges, width)).itemsize
        bound = width * width
        distinct = 5 * bound + 4 * n_edges if bound <= 1 << 24 else 24 * n_edges
        temporaries = n_nodes * (8 + 4 + 8) + n_edges * (2 * index + 4 + 4 + 8) + distinct
        return temporaries + self.dg.growth_bytes(n_nodes, n_edges)

    def _export(self, graph: list) -> int:
        """Write the compact graph ``[nodes, edge ends, edge children, root]`` into the manager's
        store, children first (ids increase upwards), by compiled code
        (:meth:`~.dgraph.DGManager.intern_graph`); the list is emptied, so that its arrays go as
        soon as they are used.

        The compiled :func:`~.dd_kernels.merged_edges` gives every node's canonical edges as
        lists of intervals; an edge's mask is the union of its intervals, registered once per
        distinct interval (or list of intervals) in the manager's table of masks."""
        nodes, eend, echild, root = graph
        graph.clear()  # the product's edge arrays go once merged (their only other holder)
        dg = self.dg
        width = max(dg.n_states)
        index_type = interval_dtype(len(eend), width)
        start: np.ndarray = np.empty(len(eend) + 1, index_type)
        interval: np.ndarray = np.empty(len(eend), index_type)
        first, count, child, start, interval = self._kernels.merged_edges(nodes, eend, echild, width, start, interval)
        del eend, echild
        self._budget.check("writing a vote graph out")
        pairs, which = _distinct(interval, width * width)
        self._budget.check("writing a vote graph out")
        pair_mid = np.empty(len(pairs), np.int64)
        pair_mask = []
        for q, pair in enumerate(pairs.tolist()):
            low, end = divmod(pair, width)
            pair_mask.append((1 << (end + 1)) - (1 << low))
            pair_mid[q] = dg.mask_id(pair_mask[q])
        mids = pair_mid[which[start[:-1]]].astype(np.int32)
        several = np.flatnonzero(np.diff(start) > 1)
        if len(several):  # edges of several intervals: one mask per distinct run of intervals
            rep = self._kernels.first_of_equal_runs(start, which, several)
            run_mid = np.empty(len(several), np.int64)
            for i in np.flatnonzero(rep == np.arange(len(several))).tolist():
                e = int(several[i])
                run = which[start[e] : start[e + 1]].tolist()
                run_mid[i] = dg.mask_id(sum(pair_mask[q] for q in run))
            mids[several] = run_mid[rep]
        self._budget.check("writing a vote graph out")
        ids = dg.intern_graph(nodes[:, 0], first, count, mids, child, (dg.false, dg.true))
        return int(ids[root])
