"""The compiled loops of the decision-graph store (:class:`~.dgraph.DGManager`), numba [Lam15].

The store keeps every node as rows of flat integer arrays: its variable, the offset of its first
edge, and per edge a *mask id* (an index into the manager's table of distinct state masks) and a
child id; a node's edges are ordered by mask id, which makes the rows canonical, so one
open-addressing unique table (linear probing, ``-1`` in empty slots) gives one id per node. The
hash below is also computed in Python by :func:`node_hash` for the nodes Python code makes one at
a time; a test keeps the two equal.

Kernels: interning a batch of new nodes (a compact vote graph written into the store), the
negation of a graph (the same nodes with the leaves swapped), reachability, and the table's
rehash. Each works on arrays the caller reserved, so the store's Python side stays the only
owner of its memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rfexplain.core.hash_kernels import spread
from rfexplain.core.jit import kernel

__all__ = ["node_hash", "intern_graph", "negate_graph", "reachable", "rehash"]


def _compile(fn: Any) -> Any:
    return kernel(fn)


_M64 = (1 << 64) - 1
_FNV = 1099511628211
_SPREAD = -7046029254386353131 & _M64


def node_hash(var: int, mids: Sequence[int], kids: Sequence[int]) -> int:
    """The store's hash of a node, in Python (the same value as the compiled ``_hash``, as an
    unsigned 64-bit pattern); ``mids`` in increasing order."""
    h = (var * 1000003 + 7) & _M64
    for m, c in zip(mids, kids):
        h = ((h ^ m) * _FNV) & _M64
        h = ((h ^ c) * _FNV) & _M64
    h ^= (h >> 31) & 0x1FFFFFFFF
    h = (h * _SPREAD) & _M64
    h ^= (h >> 29) & 0x7FFFFFFFF
    return h


@_compile
def _hash(var, mids, kids, k):
    h = np.int64(var) * 1000003 + 7
    for i in range(k):
        h = (h ^ mids[i]) * 1099511628211
        h = (h ^ kids[i]) * 1099511628211
    return spread(h)


@_compile
def _intern(var, first, mid, kid, table, counts, v, mids, kids, k):
    """The id of the node ``(v, mids[:k], kids[:k])`` (edges sorted by mask id, distinct
    children, ``k >= 2``), appended to the store when new. ``counts`` holds the store's number
    of nodes and of edges, updated in place."""
    tmask = table.shape[0] - 1
    i = _hash(v, mids, kids, k) & tmask
    while True:
        n = table[i]
        if n < 0:
            break
        a = first[n]
        if var[n] == v and first[n + 1] - a == k:
            same = True
            for q in range(k):
                if mid[a + q] != mids[q] or kid[a + q] != kids[q]:
                    same = False
                    break
            if same:
                return n
        i = (i + 1) & tmask
    n = counts[0]
    e = counts[1]
    var[n] = v
    for q in range(k):
        mid[e + q] = mids[q]
        kid[e + q] = kids[q]
    first[n + 1] = e + k
    table[i] = n
    counts[0] = n + 1
    counts[1] = e + k
    return n


@_compile
def _sort_edges(mids, kids, k):
    """Insertion sort of a node's edges by mask id (a node has few edges)."""
    for i in range(1, k):
        m = mids[i]
        c = kids[i]
        j = i - 1
        while j >= 0 and mids[j] > m:
            mids[j + 1] = mids[j]
            kids[j + 1] = kids[j]
            j -= 1
        mids[j + 1] = m
        kids[j + 1] = c


@_compile
def intern_graph(var, first, mid, kid, table, counts, gvar, gfirst, gcount, gmid, gchild, ids):
    """Intern the nodes ``2..`` of a graph given children first (``gvar``; edges ``gfirst[x] ..
    gfirst[x] + gcount[x]`` with mask ids ``gmid`` and children ``gchild`` as the graph's own
    ids), writing each one's store id into ``ids`` (``ids[0]``, ``ids[1]``: the leaves).

    Returns 0, or ``-1 - x`` when node ``x`` is not a reduced node once its children are mapped
    (two edges to one child, or fewer than two edges): the caller's graph was not canonical."""
    width = 2
    for x in range(gcount.shape[0]):
        width = max(width, gcount[x])
    mids = np.empty(width, np.int64)
    kids = np.empty(width, np.int64)
    for x in range(2, gvar.shape[0]):
        k = gcount[x]
        a = gfirst[x]
        for q in range(k):
            mids[q] = gmid[a + q]
            kids[q] = ids[gchild[a + q]]
        _sort_edges(mids, kids, k)
        if k < 2:
            return -1 - x
        for q in range(k):
            for r in range(q):
                if kids[r] == kids[q]:
                    return -1 - x
        ids[x] = _intern(var, first, mid, kid, table, counts, gvar[x], mids, kids, k)
    return 0


@_compile
def negate_graph(var, first, mid, kid, table, counts, neg, nodes):
    """Negate the graph of ``nodes`` (reachable nodes in increasing id order): every node not yet
    negated gets the node with the same variable and masks and negated children; ``neg`` maps a
    node to its negation both ways (``-1``: unknown; leaves preset)."""
    width = 2
    for n in nodes:
        width = max(width, first[n + 1] - first[n])
    mids = np.empty(width, np.int64)
    kids = np.empty(width, np.int64)
    for n in nodes:
        if neg[n] >= 0:
            continue
        a = first[n]
        k = first[n + 1] - a
        for q in range(k):
            mids[q] = mid[a + q]
            kids[q] = neg[kid[a + q]]
        m = _intern(var, first, mid, kid, table, counts, var[n], mids, kids, k)
        neg[n] = m
        neg[m] = n


@_compile
def reachable(first, kid, roots):
    """The nodes reachable from ``roots``, in increasing id order (children have smaller ids):
    a depth-first walk, then a sort of the nodes it met (its cost follows the graph walked, not
    the store)."""
    top = 1
    for r in roots:
        top = max(top, r)
    seen = np.zeros(top + 1, np.bool_)
    out = np.empty(max(16, 2 * roots.shape[0]), np.int64)
    size = 0
    for r in roots:
        if not seen[r]:
            seen[r] = True
            out[size] = r
            size += 1
    done = 0  # out[:done] expanded, out[done:size] waiting
    while done < size:
        n = out[done]
        done += 1
        for e in range(first[n], first[n + 1]):
            c = kid[e]
            if not seen[c]:
                seen[c] = True
                if size == out.shape[0]:
                    grown = np.empty(2 * size, np.int64)
                    grown[:size] = out
                    out = grown
                out[size] = c
                size += 1
    return np.sort(out[:size])


@_compile
def rehash(var, first, mid, kid, n_nodes, size):
    """A unique table of ``size`` slots (a power of two) holding nodes ``2 .. n_nodes - 1``."""
    table = np.full(size, -1, np.int32)
    tmask = size - 1
    for n in range(2, n_nodes):
        a = first[n]
        i = _hash(var[n], mid[a:], kid[a:], first[n + 1] - a) & tmask
        while table[i] >= 0:
            i = (i + 1) & tmask
        table[i] = n
    return table
