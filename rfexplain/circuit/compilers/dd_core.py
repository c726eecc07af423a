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
- **product nodes** are sorted residual tuples interned in a flat pool (another open-addressing
  table); each carries a linked list of memo entries ``(lowest need, highest need, node)``;
- the depth-first walk keeps its frames and their pending children in two integer arrays.

Every array grows by doubling inside the compiled code. The walk stops after a number of product
nodes so that a :class:`~rfexplain.core.budget.Budget` is polled between slices; all its state
lives in the arrays, so the next slice resumes where the last one stopped.

The finished graph is written into the :class:`~.dgraph.DGManager` through
:meth:`~.dgraph.DGManager.node`, children first: ordered graphs are canonical, so the ids are
the ones :class:`~.votecount.VoteCounter` would have returned (a test builds both in one
manager and compares them).

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

from rfexplain.circuit.compilers.dgraph import DGManager
from rfexplain.circuit.compilers.votecount import VoteCounter
from rfexplain.core.budget import Budget, BudgetExpired
from rfexplain.core.errors import RFExplainError
from rfexplain.core.forest import Forest

__all__ = ["CompactCounter", "CoreUnavailableError", "available"]

log = logging.getLogger(__name__)

njit: Any
try:
    from numba import njit
except ImportError:  # pragma: no cover - exercised only without numba
    njit = None


class CoreUnavailableError(RFExplainError, ImportError):
    """The compact core needs numba (``pip install numba``)."""


def available() -> bool:
    """Whether numba is installed (the compact core's only extra dependency)."""
    return njit is not None


#: product nodes expanded per compiled slice, between two budget polls
SLICE = 1 << 16

# counters (one int64 array, so that a slice can resume)
_N_NODES, _N_EDGES, _N_TUPLES, _POOL, _N_MEMO, _DEPTH, _N_CHILD, _ROOT, _EXPANDED = range(9)
# columns of a frame: tuple, need, variable, lowest need, highest need, first child, children, done
_F_TUP, _F_NEED, _F_VAR, _F_LOW, _F_HIGH, _F_CH, _F_NCH, _F_DONE = range(8)
# columns of a pending child: last state, tuple (-1: decided), need, smallest sum, largest sum,
# result node
_C_END, _C_TUP, _C_NEED, _C_LO, _C_HI, _C_RES = range(6)
_UNBOUNDED = 1 << 60


def _compile(fn: Any) -> Any:
    return fn if njit is None else njit(cache=True, nogil=True)(fn)


@_compile
def _grow1(a, need):
    if a.shape[0] >= need:
        return a
    size = a.shape[0]
    while size < need:
        size *= 2
    b = np.empty(size, a.dtype)
    b[: a.shape[0]] = a
    return b


@_compile
def _grow2(a, need):
    if a.shape[0] >= need:
        return a
    size = a.shape[0]
    while size < need:
        size *= 2
    b = np.empty((size, a.shape[1]), a.dtype)
    b[: a.shape[0]] = a
    return b


@_compile
def _finish(h):
    """Spread the high bits of a product hash into the low bits the tables index by."""
    h ^= (h >> 31) & 0x1FFFFFFFF
    h *= -7046029254386353131
    h ^= (h >> 29) & 0x7FFFFFFFF
    return h


@_compile
def _node_hash(var, ends, kids, k):
    h = var * 1000003 + 7
    for i in range(k):
        h = (h ^ ends[i]) * 1099511628211
        h = (h ^ kids[i]) * 1099511628211
    return _finish(h)


@_compile
def _tuple_hash(items, k):
    h = k + 11
    for i in range(k):
        h = (h ^ items[i]) * 1099511628211
    return _finish(h)


@_compile
def _place(table, h, key_id):
    mask = table.shape[0] - 1
    i = h & mask
    while table[i] >= 0:
        i = (i + 1) & mask
    table[i] = key_id


@_compile
def _rehash_nodes(nodes, eend, echild, n):
    size = 64
    while size < 4 * n:
        size *= 2
    table = np.full(size, -1, np.int64)
    for k in range(2, n):
        s = nodes[k, 1]
        _place(table, _node_hash(nodes[k, 0], eend[s:], echild[s:], nodes[k, 2]), k)
    return table


@_compile
def _rehash_tuples(tups, pool, n):
    size = 64
    while size < 4 * n:
        size *= 2
    table = np.full(size, -1, np.int64)
    for k in range(n):
        _place(table, _tuple_hash(pool[tups[k, 0] :], tups[k, 1]), k)
    return table


@_compile
def _run(
    r_first,
    r_rank,
    r_weight,
    r_min,
    r_max,
    r_seg,
    seg_last,
    seg_child,
    n_states,
    max_states,
    ctr,
    nodes,
    eend,
    echild,
    ntab,
    tups,
    pool,
    ttab,
    memo_head,
    memo,
    frames,
    kids,
    budget_steps,
):
    """One slice of the walk (see the module docstring); returns the arrays, grown as needed,
    and whether the walk finished."""
    tmp_t = np.empty(tups[0, 1] + 1, np.int64)  # no tuple is wider than the root's
    tmp_b = np.empty(16, np.int64)
    m_ends = np.empty(max_states, np.int64)
    m_kids = np.empty(max_states, np.int64)
    steps = 0
    while True:
        depth = ctr[_DEPTH]
        if depth == 1 and frames[0, _F_DONE] == 1:  # the sentinel frame has its root
            ctr[_ROOT] = kids[0, _C_RES]
            return True, nodes, eend, echild, ntab, tups, pool, ttab, memo_head, memo, frames, kids
        top = depth - 1
        fr = frames[top]
        first_child = fr[_F_CH]
        n_children = fr[_F_NCH]
        push = -1
        while fr[_F_DONE] < n_children:
            c = kids[first_child + fr[_F_DONE]]
            cneed = c[_C_NEED]
            if c[_C_LO] >= cneed:
                c[_C_RES] = 1
                shifted = c[_C_LO] + fr[_F_NEED] - cneed
                if shifted < fr[_F_HIGH]:
                    fr[_F_HIGH] = shifted
                fr[_F_DONE] += 1
                continue
            if c[_C_HI] < cneed:
                c[_C_RES] = 0
                shifted = c[_C_HI] + 1 + fr[_F_NEED] - cneed
                if shifted > fr[_F_LOW]:
                    fr[_F_LOW] = shifted
                fr[_F_DONE] += 1
                continue
            e = memo_head[c[_C_TUP]]
            while e >= 0:
                if memo[e, 0] <= cneed <= memo[e, 1]:
                    break
                e = memo[e, 3]
            if e < 0:
                push = c[_C_TUP]
                break
            c[_C_RES] = memo[e, 2]
            shift = fr[_F_NEED] - cneed
            if memo[e, 0] + shift > fr[_F_LOW]:
                fr[_F_LOW] = memo[e, 0] + shift
            if memo[e, 1] + shift < fr[_F_HIGH]:
                fr[_F_HIGH] = memo[e, 1] + shift
            fr[_F_DONE] += 1
        if push < 0:
            # every child known: make the node (adjacent equal children merged)
            var = fr[_F_VAR]
            k = 0
            for q in range(n_children):
                c = kids[first_child + q]
                if k > 0 and m_kids[k - 1] == c[_C_RES]:
                    m_ends[k - 1] = c[_C_END]
                else:
                    m_ends[k] = c[_C_END]
                    m_kids[k] = c[_C_RES]
                    k += 1
            if k == 1:
                result = m_kids[0]
            else:
                h = _node_hash(var, m_ends, m_kids, k)
                mask = ntab.shape[0] - 1
                i = h & mask
                result = -1
                while ntab[i] >= 0:
                    cand = ntab[i]
                    if nodes[cand, 0] == var and nodes[cand, 2] == k:
                        s = nodes[cand, 1]
                        same = True
                        for q in range(k):
                            if eend[s + q] != m_ends[q] or echild[s + q] != m_kids[q]:
                                same = False
                                break
                        if same:
                            result = cand
                            break
                    i = (i + 1) & mask
                if result < 0:
                    result = ctr[_N_NODES]
                    nodes = _grow2(nodes, result + 1)
                    s = ctr[_N_EDGES]
                    eend = _grow1(eend, s + k)
                    echild = _grow1(echild, s + k)
                    for q in range(k):
                        eend[s + q] = m_ends[q]
                        echild[s + q] = m_kids[q]
                    nodes[result, 0] = var
                    nodes[result, 1] = s
                    nodes[result, 2] = k
                    ctr[_N_EDGES] = s + k
                    ctr[_N_NODES] = result + 1
                    ntab[i] = result
                    if 2 * ctr[_N_NODES] > ntab.shape[0]:
                        ntab = _rehash_nodes(nodes, eend, echild, ctr[_N_NODES])
            e = ctr[_N_MEMO]
            memo = _grow2(memo, e + 1)
            memo[e, 0] = fr[_F_LOW]
            memo[e, 1] = fr[_F_HIGH]
            memo[e, 2] = result
            memo[e, 3] = memo_head[fr[_F_TUP]]
            memo_head[fr[_F_TUP]] = e
            ctr[_N_MEMO] = e + 1
            ctr[_N_CHILD] = first_child
            ctr[_DEPTH] = top
            parent = frames[top - 1]
            c = kids[parent[_F_CH] + parent[_F_DONE]]
            c[_C_RES] = result
            shift = parent[_F_NEED] - fr[_F_NEED]
            if fr[_F_LOW] + shift > parent[_F_LOW]:
                parent[_F_LOW] = fr[_F_LOW] + shift
            if fr[_F_HIGH] + shift < parent[_F_HIGH]:
                parent[_F_HIGH] = fr[_F_HIGH] + shift
            parent[_F_DONE] += 1
            continue
        # expand the product node (push, need) into a new frame
        if steps == budget_steps:
            return False, nodes, eend, echild, ntab, tups, pool, ttab, memo_head, memo, frames, kids
        steps += 1
        ctr[_EXPANDED] += 1
        need = kids[first_child + fr[_F_DONE], _C_NEED]
        ts = tups[push, 0]
        tl = tups[push, 1]
        best = 1 << 60
        var = -1
        nb = 0
        for q in range(tl):
            r = pool[ts + q]
            if r_rank[r] < best:
                best = r_rank[r]
                var = r_first[r]
        for q in range(tl):
            r = pool[ts + q]
            if r_first[r] == var:
                tmp_b = _grow1(tmp_b, nb + r_seg[r + 1] - r_seg[r])
                for g in range(r_seg[r], r_seg[r + 1]):
                    tmp_b[nb] = seg_last[g]
                    nb += 1
        tmp_b[:nb].sort()
        n_new = 0
        for q in range(nb):
            if n_new == 0 or tmp_b[q] != tmp_b[n_new - 1]:
                tmp_b[n_new] = tmp_b[q]
                n_new += 1
        ends = tmp_b
        base = ctr[_N_CHILD]
        kids = _grow2(kids, base + n_new)
        frames = _grow2(frames, depth + 1)
        low = 0
        for x in range(n_new):
            leaf = 0
            m = 0
            lo = 0
            hi = 0
            for q in range(tl):
                r = pool[ts + q]
                if r_first[r] == var:
                    g = r_seg[r]
                    while seg_last[g] < low:
                        g += 1
                    r = seg_child[g]
                    if r_first[r] < 0:
                        leaf += r_weight[r]
                        continue
                tmp_t[m] = r
                m += 1
                lo += r_min[r]
                hi += r_max[r]
            cneed = need - leaf
            tid = -1
            if lo < cneed <= hi:
                tmp_t[:m].sort()
                h = _tuple_hash(tmp_t, m)
                mask = ttab.shape[0] - 1
                i = h & mask
                while ttab[i] >= 0:
                    cand = ttab[i]
                    if tups[cand, 1] == m:
                        s = tups[cand, 0]
                        same = True
                        for q in range(m):
                            if pool[s + q] != tmp_t[q]:
                                same = False
                                break
                        if same:
                            tid = cand
                            break
                    i = (i + 1) & mask
                if tid < 0:
                    tid = ctr[_N_TUPLES]
                    tups = _grow2(tups, tid + 1)
                    memo_head = _grow1(memo_head, tid + 1)
                    s = ctr[_POOL]
                    pool = _grow1(pool, s + m)
                    pool[s : s + m] = tmp_t[:m]
                    tups[tid, 0] = s
                    tups[tid, 1] = m
                    memo_head[tid] = -1
                    ctr[_POOL] = s + m
                    ctr[_N_TUPLES] = tid + 1
                    ttab[i] = tid
                    if 2 * ctr[_N_TUPLES] > ttab.shape[0]:
                        ttab = _rehash_tuples(tups, pool, ctr[_N_TUPLES])
            c = kids[base + x]
            c[_C_END] = ends[x]
            c[_C_TUP] = tid
            c[_C_NEED] = cneed
            c[_C_LO] = lo
            c[_C_HI] = hi
            c[_C_RES] = -1
            low = ends[x] + 1
        f = frames[depth]
        f[_F_TUP] = push
        f[_F_NEED] = need
        f[_F_VAR] = var
        f[_F_LOW] = -_UNBOUNDED
        f[_F_HIGH] = _UNBOUNDED
        f[_F_CH] = base
        f[_F_NCH] = n_new
        f[_F_DONE] = 0
        ctr[_N_CHILD] = base + n_new
        ctr[_DEPTH] = depth + 1


class CompactCounter:
    """Builds ``[sum over trees of weight(vote) >= need]`` as an ordered graph in ``dg``, like
    :class:`~.votecount.VoteCounter`, with the product construction compiled (module docstring).

    ``stats`` holds the figures of the last graph (product nodes expanded, graph nodes, interned
    residual tuples and their pool, the bytes the arrays took at their largest, CPU milliseconds
    of the product and of writing the graph out); ``history`` those of every graph."""

    def __init__(self, forest: Forest, dg: DGManager) -> None:
        if not available():
            raise CoreUnavailableError("the compact decision-diagram core needs numba: pip install numba")
        self.forest = forest
        self.dg = dg
        #: the weighted trees and their restrictions, hash-consed in Python (they are small)
        self.trees = VoteCounter(forest, dg)
        self.stats: dict[str, int] = {}
        self.history: list[dict[str, int]] = []

    def at_least(self, weights: Mapping[int, int], need: int, budget: Budget | None = None) -> int:
        """The graph of ``sum_t weights[vote of tree t] >= need`` (missing classes weigh 0).

        Raises :class:`~rfexplain.core.budget.BudgetExpired` when ``budget`` expires first."""
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
        return self._product(tables, sorted(open_), need, budget)

    def _tables(self, roots: list[int]) -> tuple[np.ndarray, ...]:
        """Every residual reachable from ``roots`` by restricting a residual on its first
        variable, as flat arrays: first variable (-1 for a leaf), its rank, leaf weight, smallest
        and largest sum, and the segments ``(last state, restricted residual)``."""
        trees = self.trees
        rank = self.dg.rank
        by_rank = trees._by_rank
        seen = set(roots)
        stack = list(roots)
        while stack:
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

    def _product(self, tables: tuple[np.ndarray, ...], root: list[int], need: int, budget: Budget | None) -> int:
        n_states = np.asarray(self.dg.n_states, np.int64)
        ctr = np.zeros(9, np.int64)
        nodes = np.zeros((1024, 3), np.int64)
        nodes[:2, 0] = -1
        ctr[_N_NODES] = 2
        eend = np.zeros(2048, np.int32)
        echild = np.zeros(2048, np.int32)
        ntab = np.full(2048, -1, np.int64)
        tups = np.zeros((1024, 2), np.int64)
        pool = np.zeros(max(4096, 2 * len(root)), np.int32)
        ttab = np.full(2048, -1, np.int64)
        memo_head = np.full(1024, -1, np.int64)
        memo = np.zeros((1024, 4), np.int64)
        frames = np.zeros((64, 8), np.int64)
        kids = np.zeros((256, 6), np.int64)
        # the root as the single pending child of a sentinel frame
        pool[: len(root)] = root
        tups[0] = (0, len(root))
        ctr[_N_TUPLES] = 1
        ctr[_POOL] = len(root)
        ttab = _rehash_tuples(tups, pool, 1)
        frames[0] = (-1, need, -1, -_UNBOUNDED, _UNBOUNDED, 0, 1, 0)
        kids[0] = (0, 0, need, -_UNBOUNDED, _UNBOUNDED, -1)
        ctr[_DEPTH] = 1
        ctr[_N_CHILD] = 1
        arrays = (nodes, eend, echild, ntab, tups, pool, ttab, memo_head, memo, frames, kids)
        peak = 0
        start = time.process_time()
        while True:
            finished, *grown = _run(*tables, n_states, int(n_states.max()), ctr, *arrays, SLICE)
            arrays = tuple(grown)
            peak = max(peak, sum(a.nbytes for a in arrays))
            if finished:
                break
            if budget is not None and budget.expired():
                raise BudgetExpired(f"compiling a vote graph: {int(ctr[_EXPANDED])} product nodes expanded")
        nodes, eend, echild = arrays[0], arrays[1], arrays[2]
        del arrays, grown  # the product's tables go before the graph is written out
        n_nodes = int(ctr[_N_NODES])
        self.stats = {
            "product_nodes": int(ctr[_EXPANDED]),
            "graph_nodes": n_nodes - 2,
            "tuples": int(ctr[_N_TUPLES]),
            "pool": int(ctr[_POOL]),
            "peak_bytes": peak,
            "product_ms": int(1000 * (time.process_time() - start)),
        }
        n_edges = int(ctr[_N_EDGES])
        start = time.process_time()
        graph = self._export(nodes[:n_nodes], eend[:n_edges], echild[:n_edges], int(ctr[_ROOT]))
        self.stats["export_ms"] = int(1000 * (time.process_time() - start))
        self.history.append(self.stats)
        return graph

    def _export(self, nodes: np.ndarray, eend: np.ndarray, echild: np.ndarray, root: int) -> int:
        """Write the compact graph into the manager, children first (ids increase upwards)."""
        dg = self.dg
        ids = [dg.false, dg.true]
        var_col = nodes[:, 0].tolist()
        start_col = nodes[:, 1].tolist()
        count_col = nodes[:, 2].tolist()
        ends = eend.tolist()
        children = echild.tolist()
        make, canonical = dg.node, dg.canonical_node
        for k in range(2, len(var_col)):
            s = start_col[k]
            low = 0
            edges = []
            for q in range(s, s + count_col[k]):
                end = ends[q]
                edges.append(((1 << (end + 1)) - (1 << low), ids[children[q]]))
                low = end + 1
            if len({c for _, c in edges}) == len(edges):
                # intervals in increasing order have increasing masks: already canonical
                ids.append(canonical(var_col[k], tuple(edges)))
            else:
                ids.append(make(var_col[k], edges))
        return ids[root]
