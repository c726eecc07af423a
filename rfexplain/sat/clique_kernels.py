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
as BBMCR does on bitsets [SRJ13]): fewer candidates to branch on. Then the classes listed for
branching are added to the kept ones one at a time while Li and Quan's MaxSAT reading of the
colouring (MaxCLQ, 2010 [LQ10]: unit propagation, then failed literals on the added class) finds
a new set of classes no clique meets all of, each such disjoint set lowering the bound by one
(:func:`_drop_inconsistent`; a class's row is copied for propagation only once narrowed).

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
(BBMCR), Optimization Letters 7, 2013. [LQ10] Li and Quan, "An Efficient Branch-and-Bound Algorithm
Based on MaxSAT for the Maximum Clique Problem" (MaxCLQ), AAAI 2010.
"""

from __future__ import annotations

import numpy as np

from rfexplain.core.jit import kernel

#: no clique beats the goal
EXHAUSTED = 0
#: a clique beating the goal is on the levels' ``chosen`` vertices (``state[DEPTH]`` of them)
FOUND = 1
#: the node limit of this call was reached; the next call resumes
SLICED = 2

#: slots of the ``state`` array: the current level (-1: not started), the clique's size
LEVEL, DEPTH = range(2)

_ONE = np.uint64(1)


@kernel
def _popcount(x):  # pragma: no cover - compiled
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@kernel
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


@kernel
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


@kernel
def _member_bits(n, members):  # pragma: no cover - compiled
    """The bitset of the vertices ``members`` of a graph of ``n`` vertices."""
    bits = np.zeros((n + 63) // 64, np.uint64)
    for v in members:
        bits[v >> 6] |= _ONE << np.uint64(v & 63)
    return bits


@kernel
def smallest_last(adj):  # pragma: no cover - compiled
    """The smallest-last (degeneracy) order of the vertices of ``adj``, reversed: vertices removed
    last, the core of the graph, come first (Matula and Beck, 1983), the initial order of
    MCQ-style searches, whose colourings it makes small. Ties go to the lowest vertex. A removed
    vertex's neighbours still in the graph are a word-wise ``and``; a subgraph's order is that
    of its :func:`permute`."""
    m, slots = adj.shape
    degree = np.zeros(m, np.int64)
    for i in range(m):
        for s in range(slots):
            degree[i] += _popcount(adj[i, s])
    alive = _member_bits(m, np.arange(m))
    order = np.empty(m, np.int64)
    for k in range(m):
        i = int(np.argmin(degree))  # the first of the least
        degree[i] = m  # above every degree: removed
        alive[i >> 6] &= ~(_ONE << np.uint64(i & 63))
        order[m - 1 - k] = i
        for s in range(slots):
            bits = adj[i, s] & alive[s]
            while bits != 0:
                degree[s * 64 + _lowest_bit(bits)] -= 1
                bits &= bits - _ONE
    return order


@kernel
def permute(adj, order):  # pragma: no cover - compiled
    """The subgraph of ``adj`` induced by the vertices ``order`` (all of them: the graph
    renumbered), vertex ``i`` of the result being ``order[i]``: each word of a row gathers the
    bits of 64 of ``order``'s vertices, with no branch (the leaf graphs have about half their
    pairs adjacent: walking the set bits of each row cost twice as much)."""
    m = order.shape[0]
    out_words = (m + 63) // 64
    out = np.zeros((m, out_words), np.uint64)
    word_of = order >> 6
    shift = (order & 63).astype(np.uint64)
    for i in range(m):
        v = order[i]
        for jw in range(out_words):
            word = np.uint64(0)
            top = min(64, m - jw * 64)
            for b in range(top):
                j = jw * 64 + b
                word |= ((adj[v, word_of[j]] >> shift[j]) & _ONE) << np.uint64(b)
            out[i, jw] = word
    return out


@kernel
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


@kernel
def propagation_scratch(depth, words):  # pragma: no cover - compiled
    """The arrays MaxCLQ's bound works in, for up to ``depth`` colour classes of ``words`` words:
    the classes in inconsistent sets (``used``), the classes narrowed by propagation, their
    reasons (bitsets of class indices), sizes while propagating, the propagated ones, a reasons
    accumulator, the classes' own sizes and which narrowed rows hold copies."""
    return (
        np.zeros(depth, np.bool_),
        np.empty((depth, words), np.uint64),
        np.empty((depth, (depth + 63) // 64), np.uint64),
        np.empty(depth, np.int64),
        np.empty(depth, np.bool_),
        np.empty((depth + 63) // 64, np.uint64),
        np.empty(depth, np.int64),
        np.empty(depth, np.bool_),
    )


@kernel
def _propagate(adj, classes, n_classes, used, forced, vertex, scratch, spent):  # pragma: no cover - compiled
    """Unit propagation over colour classes read as clauses, the bound of Li and Quan's MaxCLQ
    (2010) [LQ10]: each of the first ``n_classes`` classes not ``used`` says "the clique takes one
    of my vertices", and two vertices that do not meet cannot both be taken. A class left with one
    vertex takes it, which removes that vertex's non-neighbours from the other classes. Class
    ``forced`` (if not -1) starts with its vertex ``vertex`` only. Returns a class that was
    emptied (its *reasons* row of ``scratch``, a bitset of class indices, then holds the classes
    its emptying came from: no clique takes a vertex of each, ``forced``'s choice aside), or -1
    when propagation stops without emptying one. The words read are added to ``spent[0]``."""
    alive, reasons, counts, done, sizes, copied = scratch[1], scratch[2], scratch[3], scratch[4], scratch[6], scratch[7]
    words = adj.shape[1]
    for c in range(n_classes):  # a class's row of ``alive`` is copied when first narrowed
        if used[c]:
            continue
        counts[c] = sizes[c]
        copied[c] = False
        reasons[c, :] = 0
        reasons[c, c >> 6] |= _ONE << np.uint64(c & 63)
        done[c] = False
    spent[0] += 1 + n_classes // 64
    if forced >= 0:
        alive[forced, :] = 0
        alive[forced, vertex >> 6] = _ONE << np.uint64(vertex & 63)
        counts[forced] = 1
        copied[forced] = True
    while True:
        u = -1
        for c in range(n_classes):
            if not used[c] and not done[c] and counts[c] == 1:
                u = c
                break
        if u < 0:
            return -1
        done[u] = True
        members = alive[u] if copied[u] else classes[u]
        v = -1
        for w in range(words):
            if members[w] != 0:
                v = w * 64 + _lowest_bit(members[w])
                break
        for c in range(n_classes):
            if used[c] or c == u or counts[c] == 0:
                continue
            spent[0] += words
            members = alive[c] if copied[c] else classes[c]
            k = 0
            changed = False
            for w in range(words):
                was = members[w]
                kept = was & adj[v, w]
                alive[c, w] = kept
                if kept != was:
                    changed = True
                k += _popcount(kept)
            copied[c] = True
            if not changed:
                continue
            counts[c] = k
            for w in range(reasons.shape[1]):
                reasons[c, w] |= reasons[u, w]
            if k == 0:
                return c


@kernel
def _inconsistent(adj, classes, j, used, failed, scratch, spent):  # pragma: no cover - compiled
    """Whether the classes ``0..j`` not ``used`` hold a set no clique takes a vertex of each of,
    found by :func:`_propagate`, or else by trying each vertex of class ``j`` (when it has at most
    ``failed``) and propagating to a conflict every time (MaxCLQ's failed literals [LQ10]); the
    classes of the set found are marked ``used``."""
    reasons = scratch[2]
    gathered = scratch[5]
    rw = reasons.shape[1]
    hit = _propagate(adj, classes, j + 1, used, -1, -1, scratch, spent)
    if hit >= 0:
        gathered[:] = reasons[hit]
    else:
        size = scratch[6][j]
        if size > failed or size < 2:
            return False
        gathered[:] = 0
        for w in range(adj.shape[1]):
            bits = classes[j, w]
            while bits != 0:
                x = w * 64 + _lowest_bit(bits)
                bits &= bits - _ONE
                hit = _propagate(adj, classes, j + 1, used, j, x, scratch, spent)
                if hit < 0:
                    return False
                for y in range(rw):
                    gathered[y] |= reasons[hit, y]
        gathered[j >> 6] |= _ONE << np.uint64(j & 63)
    for x in range(j + 1):
        if (gathered[x >> 6] >> np.uint64(x & 63)) & _ONE:
            used[x] = True
    return True


@kernel
def _drop_inconsistent(  # pragma: no cover - compiled
    adj, classes, settled, verts, bounds, m, starts, n_listed, unit, need, failed, scratch, spent
):
    """Settle more colour classes with MaxCLQ's bound [LQ10]: the listed classes (``n_listed``
    of them, their vertices ``verts[starts[k]:starts[k + 1]]``) are added one at a time after
    the ``settled`` ones, and each time :func:`_inconsistent` finds a new inconsistent set among
    the classes not yet in one, the bound of every clique within these classes drops by ``unit``
    (disjoint inconsistent sets each lose a class). While the bound stays within ``need`` the
    added class is settled too; the listed vertices left move to the front of ``verts`` with
    their bounds lowered, and their number is returned (``failed``: :func:`_inconsistent`'s)."""
    used, sizes = scratch[0], scratch[6]
    depth = classes.shape[0]
    words = adj.shape[1]
    for c in range(settled):
        used[c] = False
        k = 0
        for w in range(words):
            k += _popcount(classes[c, w])
        sizes[c] = k
    spent[0] += settled * words
    found = 0
    dropped = 0
    for k in range(n_listed):
        j = settled + k
        if j >= depth:
            break
        classes[j, :] = 0
        for i in range(starts[k], starts[k + 1]):
            v = verts[i]
            classes[j, v >> 6] |= _ONE << np.uint64(v & 63)
        sizes[j] = starts[k + 1] - starts[k]
        used[j] = False
        spent[0] += words
        if _inconsistent(adj, classes, j, used, failed, scratch, spent):
            found += 1
        if (j + 1 - found) * unit <= need:
            dropped = k + 1
        else:
            break
    if found == 0:
        return m
    gone = starts[dropped]
    for i in range(gone, m):
        verts[i - gone] = verts[i]
        bounds[i - gone] = bounds[i] - found * unit
    return m - gone


@kernel
def _colour(  # pragma: no cover - compiled
    candidates, adj, weights, uniform, need, verts, bounds, left, queue, classes, starts, failed, scratch, spent
):
    """Colour the bitset ``candidates`` greedily (vertex order, one class at a time) and list, in
    class order into ``verts``, the candidates a clique needing more than ``need`` must still
    branch on, each with the sum of the largest weights of the classes up to its own into
    ``bounds``; their number. When all weights are equal (``uniform``), the classes whose sums stay
    within ``need`` are kept as bitsets in ``classes`` and their vertices not listed (no clique
    among them can beat ``need``), and a vertex of a later class is moved into them when
    :func:`_renumber` can; then :func:`_drop_inconsistent` keeps more classes by MaxCLQ's bound.
    ``left``, ``queue``: scratch bitsets; ``starts``: scratch for the listed classes' first
    positions; ``failed``: :func:`_inconsistent`'s; ``scratch``: :func:`_propagate`'s arrays (made
    by :func:`search`); the words of bitsets swept are added to ``spent[0]``."""
    words = candidates.shape[0]
    left[:] = candidates
    m = 0
    total = 0.0
    remaining = 0
    for w in range(words):
        remaining += _popcount(left[w])
    settled = 0  # classes kept as bitsets (uniform weights only)
    n_listed = 0
    unit = 0.0
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
            starts[n_listed] = start
            n_listed += 1
            unit = heaviest
    if uniform and n_listed > 0:
        starts[n_listed] = m
        return _drop_inconsistent(
            adj, classes, settled, verts, bounds, m, starts, n_listed, unit, need, failed, scratch, spent
        )
    return m


@kernel
def search(  # pragma: no cover - compiled
    adj, weights, goal, candidates, verts, bounds, position, gained, chosen, state, work_unit, failed, node_limit
):
    """Run the search for a clique of ``adj`` whose ``weights`` sum to more than ``goal``, for at
    about ``node_limit`` units of work; ``(status, units)``. A unit is a branching, plus one per
    ``work_unit`` words of bitsets its colouring sweeps (Re-NUMBER's included), so that a slice
    of units takes about as long on a large graph as on a small one, and as a slice of the box
    search's boxes. ``failed``: the largest colour class MaxCLQ's bound tries vertex by vertex
    (:func:`_inconsistent`).

    Per level ``k`` (the clique's first ``k`` vertices chosen): ``candidates[k]`` (bitset),
    ``verts[k]``/``bounds[k]`` (the candidates in colour order with their bounds),
    ``position[k]`` (the candidates not yet branched on are ``verts[k, :position[k]]``),
    ``gained[k]`` (the clique's weight) and ``chosen[k]`` (its ``k + 1``-th vertex, once
    branched). ``state[LEVEL]`` is -1 before the first call."""
    n, words = adj.shape
    left = np.empty(words, np.uint64)
    queue = np.empty(words, np.uint64)
    depth = candidates.shape[0]
    classes = np.empty((depth, words), np.uint64)
    starts = np.empty(n + 1, np.int64)
    scratch = propagation_scratch(depth, words)
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
            candidates[0],
            adj,
            weights,
            uniform,
            goal,
            verts[0],
            bounds[0],
            left,
            queue,
            classes,
            starts,
            failed,
            scratch,
            spent,
        )
        gained[0] = 0.0
        state[LEVEL] = 0
        examined = 1 + spent[0] // work_unit
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
            starts,
            failed,
            scratch,
            spent,
        )
        examined += spent[0] // work_unit
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
        1,
        1,
        100,
    )
