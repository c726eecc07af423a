"""The compiled loops of the clique search (:mod:`rfexplain.sat.cliques`), compiled by numba [Lam15]:
the leaf boxes' intersection graph as bitsets, its smallest-last order, and a resumable
branch and bound for a clique heavier than a goal, with greedy colouring bounds in the manner of
Tomita and Seki's MCQ (2003) [TS03] and its weighted form (Kumlander, 2004) [Kum04], on bitsets as
in San Segundo, Rodriguez-Losada and Jimenez's BBMC (2011) [SRJ11].

A vertex is a leaf, given by its index intervals ``first..last`` over the free features; two are
adjacent when their intervals meet on every free feature. The search keeps one level per vertex
added to the clique: the candidates (vertices adjacent to all of the clique) as a bitset, those
candidates in colour order with the bound each gives, and the position reached. Colouring: the
candidates are taken in vertex order and put in the first colour class none of whose vertices
they meet (one class at a time, on bitsets); a clique has at most one vertex per class, so the
sum of the classes' largest weights up to a candidate bounds every clique that adds it and
candidates before it. Candidates are branched on from the last; when a candidate's bound cannot
beat the goal, neither can those before it, and the level is done. With equal weights (the hard
vote's two classes) the classes that cannot beat the goal are kept as bitsets, and a later
candidate is moved into them when one vertex of such a class can make room (Re-NUMBER [TK10],
as BBMCR does on bitsets [SRJ13]): fewer candidates to branch on.

All the state lives in arrays the caller owns, so that the search runs in slices (``node_limit``
units of work per call) and a budget is polled between them.

[Lam15] Lam, Pitrou and Seibert, "Numba: a LLVM-based Python JIT compiler", LLVM-HPC 2015.
[TS03] Tomita and Seki, "An Efficient Branch-and-Bound Algorithm for Finding a Maximum Clique",
DMTCS 2003. [Kum04] Kumlander, "A new exact algorithm for the maximum-weight clique problem based
on a heuristic vertex-coloring and a backtrack search", 2004. [SRJ11] San Segundo,
Rodriguez-Losada and Jimenez, "An exact bit-parallel algorithm for the maximum clique problem",
Computers & Operations Research 38, 2011. [TK10] Tomita, Sutani, Higashi, Takahashi and Wakatsuki, "A
Simple and Faster Branch-and-Bound Algorithm for Finding a Maximum Clique" (MCS), WALCOM 2010. [SRJ13] San Segundo,
Matia, Rodriguez-Losada and Hernando, "An improved bit parallel exact maximum clique algorithm"
(BBMCR), Optimization Letters 7, 2013.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: no clique beats the goal
EXHAUSTED = 0
#: a clique beating the goal is on the levels' ``chosen`` vertices (``state[DEPTH]`` of them)
FOUND = 1
#: the node limit of this call was reached; the next call resumes
SLICED = 2

#: slots of the ``state`` array: the current level (-1: not started), the clique's size
LEVEL, DEPTH = range(2)

#: Words of bitsets a colouring sweeps per unit of work on top of its branching (:func:`search`).
#: A unit then takes 4-8 µs, as a box of the box search does: twonorm's default forest of 500
#: trees (2,685 vertices, 42 words a row) 4.1 µs, ring's of 100 trees (1,269-1,519 vertices)
#: 7.2-7.9 µs; counting branchings alone, twonorm's took 200 µs each and the race gave the
#: clique search most of an AXp that the box search settles in 0.55 s (it took 4.7 s).
WORK_UNIT = 16384

_ONE = np.uint64(1)


@njit(cache=True, nogil=True)
def _popcount(x):  # pragma: no cover - compiled
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, nogil=True)
def _lowest_bit(x):  # pragma: no cover - compiled
    """The index of the lowest set bit of ``x`` (``x`` != 0)."""
    n = 0
    if (x & np.uint64(0xFFFFFFFF)) == 0:
        x >>= np.uint64(32)
        n += 32
    if (x & np.uint64(0xFFFF)) == 0:
        x >>= np.uint64(16)
        n += 16
    if (x & np.uint64(0xFF)) == 0:
        x >>= np.uint64(8)
        n += 8
    while (x & _ONE) == 0:
        x >>= _ONE
        n += 1
    return n


@njit(cache=True, nogil=True)
def intersection_graph(first, last):  # pragma: no cover - compiled
    """The adjacency bitsets (one row of 64-bit words per vertex) of the boxes ``first..last``
    (one row per vertex, one column per feature, inclusive bounds): two vertices are adjacent when
    their intervals meet on every feature."""
    n, n_features = first.shape
    words = (n + 63) // 64
    adj = np.zeros((n, words), np.uint64)
    for a in range(n):
        for b in range(a + 1, n):
            meet = True
            for f in range(n_features):
                if first[a, f] > last[b, f] or first[b, f] > last[a, f]:
                    meet = False
                    break
            if meet:
                adj[a, b >> 6] |= _ONE << np.uint64(b & 63)
                adj[b, a >> 6] |= _ONE << np.uint64(a & 63)
    return adj


@njit(cache=True, nogil=True)
def smallest_last(adj):  # pragma: no cover - compiled
    """The smallest-last (degeneracy) order of the graph ``adj``, reversed: vertices removed last,
    the core of the graph, come first (Matula and Beck, 1983), the initial order of MCQ-style
    searches, whose colourings it makes small."""
    n, words = adj.shape
    degree = np.zeros(n, np.int64)
    for v in range(n):
        for w in range(words):
            degree[v] += _popcount(adj[v, w])
    alive = np.ones(n, np.bool_)
    order = np.empty(n, np.int64)
    for k in range(n):
        v = -1
        for u in range(n):
            if alive[u] and (v < 0 or degree[u] < degree[v]):
                v = u
        alive[v] = False
        order[n - 1 - k] = v
        for w in range(words):
            bits = adj[v, w]
            while bits != 0:
                b = _lowest_bit(bits)
                bits &= bits - _ONE
                u = w * 64 + b
                if alive[u]:
                    degree[u] -= 1
    return order


@njit(cache=True, nogil=True)
def permute(adj, order):  # pragma: no cover - compiled
    """The graph ``adj`` with its vertices renumbered: vertex ``i`` of the result is ``order[i]``."""
    n, words = adj.shape
    position = np.empty(n, np.int64)
    for i in range(n):
        position[order[i]] = i
    out = np.zeros((n, words), np.uint64)
    for i in range(n):
        v = order[i]
        for w in range(words):
            bits = adj[v, w]
            while bits != 0:
                b = _lowest_bit(bits)
                bits &= bits - _ONE
                j = position[w * 64 + b]
                out[i, j >> 6] |= _ONE << np.uint64(j & 63)
    return out


@njit(cache=True, nogil=True)
def _renumber(v, adj, classes, settled, spent):  # pragma: no cover - compiled
    """Re-NUMBER (Tomita et al.'s MCS, 2010 [TK10], on bitsets as in BBMCR [SRJ13]): put ``v``
    into one of the first ``settled`` colour classes (bitsets ``classes``) instead of a new one,
    either directly (it meets none of the class) or by moving the one vertex ``u`` of a class it
    meets into a later one of those classes that ``u`` does not meet. True when it did; the words
    of bitsets it read are added to ``spent[0]``."""
    words = adj.shape[1]
    for c1 in range(settled):
        spent[0] += words
        count = 0
        u = -1
        for w in range(words):
            meet = adj[v, w] & classes[c1, w]
            if meet != 0:
                count += _popcount(meet)
                if count > 1:
                    break
                u = w * 64 + _lowest_bit(meet)
        if count == 0:
            classes[c1, v >> 6] |= _ONE << np.uint64(v & 63)
            return True
        if count > 1:
            continue
        for c2 in range(c1 + 1, settled):
            spent[0] += words
            free = True
            for w in range(words):
                if (adj[u, w] & classes[c2, w]) != 0:
                    free = False
                    break
            if free:
                classes[c1, u >> 6] &= ~(_ONE << np.uint64(u & 63))
                classes[c1, v >> 6] |= _ONE << np.uint64(v & 63)
                classes[c2, u >> 6] |= _ONE << np.uint64(u & 63)
                return True
    return False


@njit(cache=True, nogil=True)
def _colour(  # pragma: no cover - compiled
    candidates, adj, weights, uniform, need, verts, bounds, left, queue, classes, spent
):
    """Colour the bitset ``candidates`` greedily (vertex order, one class at a time) and list, in
    class order into ``verts``, the candidates a clique needing more than ``need`` must still
    branch on, each with the sum of the largest weights of the classes up to its own into
    ``bounds``; their number. When all weights are equal (``uniform``), the classes whose sums stay
    within ``need`` are kept as bitsets in ``classes`` and their vertices not listed (no clique
    among them can beat ``need``), and a vertex of a later class is moved into them when
    :func:`_renumber` can. ``left``, ``queue``: scratch bitsets; the words of bitsets swept are
    added to ``spent[0]``."""
    words = candidates.shape[0]
    left[:] = candidates
    m = 0
    total = 0.0
    remaining = 0
    for w in range(words):
        remaining += _popcount(left[w])
    settled = 0  # classes kept as bitsets (uniform weights only)
    while remaining > 0:
        queue[:] = left
        keep = False
        if uniform:
            unit = 0.0
            for w in range(words):
                if left[w] != 0:
                    unit = weights[w * 64 + _lowest_bit(left[w])]
                    break
            keep = total + unit <= need and settled < classes.shape[0]
        start = m
        heaviest = 0.0
        if keep:
            classes[settled, :] = 0
        for w in range(words):
            while queue[w] != 0:
                b = _lowest_bit(queue[w])
                bit = _ONE << np.uint64(b)
                v = w * 64 + b
                queue[w] &= ~bit
                left[w] &= ~bit
                remaining -= 1
                if not keep and settled > 0 and _renumber(v, adj, classes, settled, spent):
                    continue
                for x in range(w, words):
                    queue[x] &= ~adj[v, x]
                spent[0] += words - w
                if weights[v] > heaviest:
                    heaviest = weights[v]
                if keep:
                    classes[settled, w] |= bit
                else:
                    verts[m] = v
                    m += 1
        if keep:
            settled += 1
            total += heaviest
        elif m > start:
            total += heaviest
            for i in range(start, m):
                bounds[i] = total
    return m


@njit(cache=True, nogil=True)
def search(  # pragma: no cover - compiled
    adj, weights, goal, candidates, verts, bounds, position, gained, chosen, state, node_limit
):
    """Run the search for a clique of ``adj`` whose ``weights`` sum to more than ``goal``, for at
    about ``node_limit`` units of work; ``(status, units)``. A unit is a branching, plus one per
    :data:`WORK_UNIT` words of bitsets its colouring sweeps (Re-NUMBER's included), so that a
    slice of units takes about as long on a large graph as on a small one, and as a slice of the
    box search's boxes.

    Per level ``k`` (the clique's first ``k`` vertices chosen): ``candidates[k]`` (bitset),
    ``verts[k]``/``bounds[k]`` (the candidates in colour order with their bounds),
    ``position[k]`` (the candidates not yet branched on are ``verts[k, :position[k]]``),
    ``gained[k]`` (the clique's weight) and ``chosen[k]`` (its ``k + 1``-th vertex, once
    branched). ``state[LEVEL]`` is -1 before the first call."""
    n, words = adj.shape
    left = np.empty(words, np.uint64)
    queue = np.empty(words, np.uint64)
    classes = np.empty((candidates.shape[0], words), np.uint64)
    spent = np.zeros(1, np.int64)
    uniform = True  # every vertex of positive weight (the others are never candidates) weighs the same
    unit = 0.0
    for v in range(n):
        if weights[v] > 0.0:
            if unit == 0.0:
                unit = weights[v]
            elif weights[v] != unit:
                uniform = False
    if state[LEVEL] < 0:
        candidates[0, :] = 0
        for v in range(n):
            if weights[v] > 0.0:
                candidates[0, v >> 6] |= _ONE << np.uint64(v & 63)
        position[0] = _colour(
            candidates[0], adj, weights, uniform, goal, verts[0], bounds[0], left, queue, classes, spent
        )
        gained[0] = 0.0
        state[LEVEL] = 0
        examined = 1 + spent[0] // WORK_UNIT
        if goal < 0.0:  # the empty clique beats it: any point
            state[DEPTH] = 0
            return FOUND, examined
    else:
        examined = 0
    level = state[LEVEL]
    while level >= 0:
        if examined >= node_limit:
            state[LEVEL] = level
            return SLICED, examined
        i = position[level] - 1
        if i < 0 or gained[level] + bounds[level, i] <= goal:
            level -= 1
            continue
        position[level] = i
        v = verts[level, i]
        candidates[level, v >> 6] &= ~(_ONE << np.uint64(v & 63))
        chosen[level] = v
        examined += 1
        weight = gained[level] + weights[v]
        if weight > goal:
            state[LEVEL] = level
            state[DEPTH] = level + 1
            return FOUND, examined
        if level + 1 >= candidates.shape[0]:
            continue  # no room for a larger clique (the caller sized the levels to the trees)
        count = 0
        for w in range(words):
            candidates[level + 1, w] = candidates[level, w] & adj[v, w]
            count += _popcount(candidates[level + 1, w])
        if count == 0:
            continue
        level += 1
        gained[level] = weight
        spent[0] = 0
        position[level] = _colour(
            candidates[level],
            adj,
            weights,
            uniform,
            goal - weight,
            verts[level],
            bounds[level],
            left,
            queue,
            classes,
            spent,
        )
        examined += spent[0] // WORK_UNIT
    state[LEVEL] = -2
    return EXHAUSTED, examined


def warm_up() -> None:
    """Load (or compile, on a machine's first run) the kernels on a two-vertex graph, so that the
    load does not land inside the first query that needs them."""
    first = np.zeros((2, 1), dtype=np.int64)
    adj = intersection_graph(first, first)
    order = smallest_last(adj)
    adj = permute(adj, order)
    levels = 3
    search(
        adj,
        np.ones(2),
        5.0,
        np.zeros((levels, 1), np.uint64),
        np.zeros((levels, 2), np.int64),
        np.zeros((levels, 2)),
        np.zeros(levels, np.int64),
        np.zeros(levels),
        np.zeros(levels, np.int64),
        np.asarray([-1, 0], dtype=np.int64),
        100,
    )
