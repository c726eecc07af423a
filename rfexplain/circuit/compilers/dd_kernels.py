"""The compiled loops of the compact core (:mod:`.dd_core`): the product construction of a vote
graph over flat integer arrays (Ji and Darwiche (2026), Algorithm 3B [JD26], with the interval
memo of Abio et al., SAT 2011), compiled by numba [Lam15]. Imported only when the compact core
is used, so that numba loads only then."""

from __future__ import annotations

from typing import Any

import numpy as np

from rfexplain.core.hash_kernels import place, spread
from rfexplain.core.jit import kernel

# counters (one int64 array, so that a slice can resume)
N_NODES, N_EDGES, N_TUPLES, POOL, N_MEMO, DEPTH, N_CHILD, ROOT, EXPANDED = range(9)
# columns of a frame: tuple, need, variable, lowest need, highest need, first child, children, done
_F_TUP, _F_NEED, _F_VAR, _F_LOW, _F_HIGH, _F_CH, _F_NCH, _F_DONE = range(8)
# columns of a pending child: last state, tuple (-1: decided), need, smallest sum, largest sum,
# result node
_C_END, _C_TUP, _C_NEED, _C_LO, _C_HI, _C_RES = range(6)
UNBOUNDED = 1 << 60
# what a slice of the walk returns
SLICE_DONE, FINISHED, NEEDS_ROOM = range(3)
# the arrays the caller grows (:func:`rows_needed`), by their place among run's arguments
GROWN = ("nodes", "eend", "echild", "tups", "pool", "memo")
# a tuple's row (``tups``, 8 int32, one 32-byte block): where its residuals start in the pool
# (the low 32 bits), how many they are, then its memo bucket: the next bucket (-1: none), the
# number of entries here, and BUCKET entries, each its need bounds packed in one int32 (lowest
# in the high half, highest in the low half) and its node. Older entries move to more buckets
# (rows of ``memo``, the same columns) linked from the tuple's row, so that the row a lookup
# reads to compare a tuple also answers most memo lookups.
_T_START, _T_LEN, _B_NEXT, _B_COUNT, _B_FIRST = range(5)
BUCKET = 2
ROW_WIDTH = _B_FIRST + 2 * BUCKET
#: tuples start below this pool offset (their rows keep 32 bits of it)
POOL_LIMIT = 1 << 32
#: the memo's need bounds are int16 halves of one int32 (a bound past them is clamped); the
#: needs of a vote graph stay within the number of trees, so up to 32,767 trees nothing is clamped
MEMO_LIMIT = (1 << 15) - 1


def _compile(fn: Any) -> Any:
    return kernel(fn)


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
def rows_needed(ctr, max_states, widest, which):
    """Rows the array ``GROWN[which]`` must have before the walk's next step: one step creates
    at most one graph node, its memo entry and ``max_states`` edges, or ``max_states`` child
    tuples of fewer than ``widest`` residuals each."""
    if which == 0:
        return ctr[N_NODES] + 1
    if which <= 2:
        return ctr[N_EDGES] + max_states
    if which == 3:
        return ctr[N_TUPLES] + max_states
    if which == 4:
        return ctr[POOL] + max_states * widest
    return ctr[N_MEMO] + 1


@_compile
def _packed_bounds(low, high):
    """A memo entry's need bounds in one int32, each clamped to the int16 range: clamping only
    narrows the needs the entry answers for (sound: a narrower memo entry is still exact), and an
    interval wholly outside the range becomes an empty one."""
    lo = max(low, -MEMO_LIMIT)
    hi = min(high, MEMO_LIMIT)
    if lo > hi:
        lo = MEMO_LIMIT
        hi = -MEMO_LIMIT
    return (lo << 16) | (hi & 0xFFFF)


@_compile
def _low_bound(packed):
    return packed >> 16


@_compile
def _high_bound(packed):
    return ((packed & 0xFFFF) ^ 0x8000) - 0x8000


@_compile
def _node_hash(var, ends, kids, k):
    h = var * 1000003 + 7
    for i in range(k):
        h = (h ^ ends[i]) * 1099511628211
        h = (h ^ kids[i]) * 1099511628211
    return spread(h)


@_compile
def _item_hash(r):
    return spread((r + 40503) * -7046029254386353131)


@_compile
def _tuple_hash_of_sum(total, k):
    return spread(total + k * 7809847782465536322)


@_compile
def _tuple_hash(items, k):
    """A sum of the items' own hashes, so that a child tuple's hash is its parent's with the
    restricted residuals' terms exchanged (the walk never hashes a whole tuple)."""
    total = 0
    for i in range(k):
        total += _item_hash(items[i])
    return _tuple_hash_of_sum(total, k)


@_compile
def first_of_equal_runs(start, ids, edges):
    """For each edge ``edges[i]``, the smallest ``j`` such that ``edges[j]`` has the same run of
    ids ``ids[start[e] : start[e + 1]]`` (an open-addressing table over the runs)."""
    m = edges.shape[0]
    size = 1
    while size < 2 * m:
        size *= 2
    table = np.full(size, -1, np.int64)
    rep = np.empty(m, np.int64)
    for i in range(m):
        e = edges[i]
        a = start[e]
        b = start[e + 1]
        h = _tuple_hash(ids[a:b], b - a) & (size - 1)
        while True:
            j = table[h]
            if j < 0:
                table[h] = i
                rep[i] = i
                break
            f = edges[j]
            fa = start[f]
            if start[f + 1] - fa == b - a:
                same = True
                for q in range(b - a):
                    if ids[fa + q] != ids[a + q]:
                        same = False
                        break
                if same:
                    rep[i] = j
                    break
            h = (h + 1) & (size - 1)
    return rep


@_compile
def merged_edges(nodes, eend, echild, max_states, start, interval):
    """The manager's canonical edges of every node of a compact graph: intervals leading to the
    same child merged into one edge, edges ordered by their highest state (the order of their
    masks as integers, the masks being disjoint).

    Returns, per node, its first merged edge and their number; per merged edge, its child and
    its first interval; per interval, the id of its ``(first state, last state)`` pair (``first *
    max_states + last``). ``start`` and ``interval`` are the caller's (one row per edge of the
    compact graph, one more in ``start``), of the narrowest type that holds their values."""
    n = nodes.shape[0]
    n_edges = eend.shape[0]
    first = np.zeros(n, np.int64)
    count = np.zeros(n, np.int32)
    child = np.empty(n_edges, np.int32)
    group = np.empty(max_states, np.int64)  # a node's edges: merged edge of each interval
    top = np.empty(max_states, np.int64)  # highest state of each merged edge of the node
    kid = np.empty(max_states, np.int64)
    order = np.empty(max_states, np.int64)
    m = 0  # merged edges written
    w = 0  # intervals written
    for k in range(2, n):
        s = nodes[k, 1]
        c = nodes[k, 2]
        g = 0
        for a in range(c):
            group[a] = -1
            for b in range(g):
                if kid[b] == echild[s + a]:
                    group[a] = b
                    break
            if group[a] < 0:
                group[a] = g
                kid[g] = echild[s + a]
                g += 1
            top[group[a]] = eend[s + a]  # intervals come in increasing order
        # insertion sort of the merged edges by highest state
        for b in range(g):
            order[b] = b
        for b in range(1, g):
            x = order[b]
            y = b
            while y > 0 and top[order[y - 1]] > top[x]:
                order[y] = order[y - 1]
                y -= 1
            order[y] = x
        first[k] = m
        count[k] = g
        for b in range(g):
            grp = order[b]
            child[m] = kid[grp]
            start[m] = w
            low = 0
            for a in range(c):
                end = eend[s + a]
                if group[a] == grp:
                    interval[w] = low * max_states + end
                    w += 1
                low = end + 1
            m += 1
    start[m] = w
    return first, count, child[:m], start[: m + 1], interval[:w]


@_compile
def table_size(n, room):
    """The slots a hash table must have before a step that may add ``room`` entries to its
    ``n``: it is kept at most half full (a table of :func:`_rehash_nodes` or
    :func:`rehash_tuples` for ``n + room`` entries has them)."""
    return 2 * (n + room)


@_compile
def _rehash_nodes(nodes, eend, echild, n, room=0):
    size = 64
    while size < 4 * (n + room):
        size *= 2
    table = np.full(size, -1, np.int32)
    for k in range(2, n):
        s = nodes[k, 1]
        place(table, _node_hash(nodes[k, 0], eend[s:], echild[s:], nodes[k, 2]), k)
    return table


@_compile
def rehash_tuples(tups, pool, n, room=0):
    size = 64
    while size < 4 * (n + room):
        size *= 2
    table = np.full(size, -1, np.int32)
    for k in range(n):
        place(table, _tuple_hash(pool[_start(tups[k]) :], tups[k, _T_LEN]), k)
    return table


def rehash_nodes(nodes, eend, echild, n, room):
    """The unique table of the compact graph's ``n`` nodes, with room for ``room`` more."""
    return _rehash_nodes(nodes, eend, echild, n, room)


def table_bytes(n, room):
    """Bytes of a table of :func:`_rehash_nodes` or :func:`rehash_tuples` for ``n + room``
    entries (int32 slots)."""
    size = 64
    while size < 4 * (n + room):
        size *= 2
    return 4 * size


@_compile
def _start(row):
    """The pool offset of a tuple's residuals (kept as the low 32 bits of an int32)."""
    return np.int64(row[_T_START]) & 0xFFFFFFFF


@_compile
def run(
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
    memo,
    frames,
    kids,
    budget_steps,
):
    """One slice of the walk (see the module docstring): ``SLICE_DONE`` once ``budget_steps``
    units of work are done (an expansion of a tuple of ``m`` residuals into ``k`` children counts
    ``m * (k + 1)``, the residuals it reads and writes, and finishing a node its ``k`` children:
    the units follow the slice's time within a small factor, where a count of expansions varied
    by 30x between forests), ``FINISHED``, or ``NEEDS_ROOM`` before a step that the arrays of
    ``GROWN`` may not have the rows for or that may fill a hash table past half (the caller grows
    them, see :func:`rows_needed` and :func:`table_size`, after checking its memory budget); then
    the arrays (``frames`` and ``kids`` replaced here when they grow)."""
    widest = tups[0, _T_LEN] + 1  # no tuple is wider than the root's
    tmp_t = np.empty(widest, np.int64)
    on_var = np.empty(widest, np.int64)
    cursor = np.empty(widest, np.int64)
    moved = np.empty(widest, np.int64)
    tmp_b = np.empty(16, np.int64)
    m_ends = np.empty(max_states, np.int64)
    m_kids = np.empty(max_states, np.int64)
    steps = 0
    while True:
        if (
            nodes.shape[0] < rows_needed(ctr, max_states, widest, 0)
            or eend.shape[0] < rows_needed(ctr, max_states, widest, 1)
            or echild.shape[0] < rows_needed(ctr, max_states, widest, 2)
            or tups.shape[0] < rows_needed(ctr, max_states, widest, 3)
            or pool.shape[0] < rows_needed(ctr, max_states, widest, 4)
            or memo.shape[0] < rows_needed(ctr, max_states, widest, 5)
            or ntab.shape[0] < table_size(ctr[N_NODES], 1)
            or ttab.shape[0] < table_size(ctr[N_TUPLES], max_states)
        ):
            return NEEDS_ROOM, nodes, eend, echild, ntab, tups, pool, ttab, memo, frames, kids
        depth = ctr[DEPTH]
        if depth == 1 and frames[0, _F_DONE] == 1:  # the sentinel frame has its root
            ctr[ROOT] = kids[0, _C_RES]
            return FINISHED, nodes, eend, echild, ntab, tups, pool, ttab, memo, frames, kids
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
            bucket = tups[c[_C_TUP]]
            found = -1
            while True:
                for q in range(bucket[_B_COUNT] - 1, -1, -1):  # newest first
                    packed = bucket[_B_FIRST + 2 * q]
                    if _low_bound(packed) <= cneed <= _high_bound(packed):
                        found = q
                        break
                if found >= 0 or bucket[_B_NEXT] < 0:
                    break
                bucket = memo[bucket[_B_NEXT]]
            if found < 0:
                push = c[_C_TUP]
                break
            c[_C_RES] = bucket[_B_FIRST + 1 + 2 * found]
            packed = bucket[_B_FIRST + 2 * found]
            shift = fr[_F_NEED] - cneed
            if _low_bound(packed) + shift > fr[_F_LOW]:
                fr[_F_LOW] = _low_bound(packed) + shift
            if _high_bound(packed) + shift < fr[_F_HIGH]:
                fr[_F_HIGH] = _high_bound(packed) + shift
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
                    result = ctr[N_NODES]
                    s = ctr[N_EDGES]
                    for q in range(k):
                        eend[s + q] = m_ends[q]
                        echild[s + q] = m_kids[q]
                    nodes[result, 0] = var
                    nodes[result, 1] = s
                    nodes[result, 2] = k
                    ctr[N_EDGES] = s + k
                    ctr[N_NODES] = result + 1
                    ntab[i] = result
                    if 2 * ctr[N_NODES] > ntab.shape[0]:
                        ntab = _rehash_nodes(nodes, eend, echild, ctr[N_NODES])
            # the entry goes into the tuple's own bucket; a full one moves to a new bucket first
            bucket = tups[fr[_F_TUP]]
            if bucket[_B_COUNT] == BUCKET:
                e = ctr[N_MEMO]
                memo[e, _B_NEXT:] = bucket[_B_NEXT:]
                bucket[_B_NEXT] = e
                bucket[_B_COUNT] = 0
                ctr[N_MEMO] = e + 1
            q = bucket[_B_COUNT]
            bucket[_B_FIRST + 2 * q] = _packed_bounds(fr[_F_LOW], fr[_F_HIGH])
            bucket[_B_FIRST + 1 + 2 * q] = result
            bucket[_B_COUNT] = q + 1
            ctr[N_CHILD] = first_child
            ctr[DEPTH] = top
            parent = frames[top - 1]
            c = kids[parent[_F_CH] + parent[_F_DONE]]
            c[_C_RES] = result
            shift = parent[_F_NEED] - fr[_F_NEED]
            if fr[_F_LOW] + shift > parent[_F_LOW]:
                parent[_F_LOW] = fr[_F_LOW] + shift
            if fr[_F_HIGH] + shift < parent[_F_HIGH]:
                parent[_F_HIGH] = fr[_F_HIGH] + shift
            parent[_F_DONE] += 1
            steps += n_children
            continue
        # expand the product node (push, need) into a new frame
        if steps >= budget_steps:
            return SLICE_DONE, nodes, eend, echild, ntab, tups, pool, ttab, memo, frames, kids
        ctr[EXPANDED] += 1
        need = kids[first_child + fr[_F_DONE], _C_NEED]
        ts = _start(tups[push])
        tl = tups[push, _T_LEN]
        # one pass over the tuple: its first variable (lowest rank), the positions of the
        # residuals that read it, and the sums and hash of the others, which every child keeps
        best = 1 << 60
        nv = 0
        base_lo = 0
        base_hi = 0
        base_h = 0
        for q in range(tl):
            r = pool[ts + q]
            rk = r_rank[r]
            if rk < best:
                best = rk
                nv = 0
            if rk == best:
                on_var[nv] = q
                nv += 1
            base_lo += r_min[r]
            base_hi += r_max[r]
            base_h += _item_hash(r)
        var = r_first[pool[ts + on_var[0]]]
        nb = 0
        for p in range(nv):
            r = pool[ts + on_var[p]]
            base_lo -= r_min[r]
            base_hi -= r_max[r]
            base_h -= _item_hash(r)
            cursor[p] = r_seg[r]
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
        steps += tl * (n_new + 1)
        base = ctr[N_CHILD]
        kids = _grow2(kids, base + n_new)
        frames = _grow2(frames, depth + 1)
        low = 0
        for x in range(n_new):
            # the restricted residuals of the positions on the variable (-1: a leaf)
            leaf = 0
            m = tl
            lo = base_lo
            hi = base_hi
            h = base_h
            for p in range(nv):
                g = cursor[p]
                while seg_last[g] < low:
                    g += 1
                cursor[p] = g
                r = seg_child[g]
                if r_first[r] < 0:
                    leaf += r_weight[r]
                    moved[p] = -1
                    m -= 1
                else:
                    moved[p] = r
                    lo += r_min[r]
                    hi += r_max[r]
                    h += _item_hash(r)
            cneed = need - leaf
            tid = -1
            if lo < cneed <= hi:
                # the child tuple: the parent's, restricted residuals exchanged, leaves dropped
                w = 0
                u = 0
                for p in range(nv):
                    q = on_var[p]
                    while u < q:
                        tmp_t[w] = pool[ts + u]
                        w += 1
                        u += 1
                    u += 1
                    if moved[p] >= 0:
                        tmp_t[w] = moved[p]
                        w += 1
                while u < tl:
                    tmp_t[w] = pool[ts + u]
                    w += 1
                    u += 1
                h = _tuple_hash_of_sum(h, m)
                mask = ttab.shape[0] - 1
                i = h & mask
                while ttab[i] >= 0:
                    cand = ttab[i]
                    if tups[cand, _T_LEN] == m:
                        s = _start(tups[cand])
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
                    tid = ctr[N_TUPLES]
                    s = ctr[POOL]
                    pool[s : s + m] = tmp_t[:m]
                    tups[tid, _T_START] = s  # its low 32 bits
                    tups[tid, _T_LEN] = m
                    tups[tid, _B_NEXT] = -1
                    tups[tid, _B_COUNT] = 0
                    ctr[POOL] = s + m
                    ctr[N_TUPLES] = tid + 1
                    ttab[i] = tid
                    if 2 * ctr[N_TUPLES] > ttab.shape[0]:
                        ttab = rehash_tuples(tups, pool, ctr[N_TUPLES])
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
        f[_F_LOW] = -UNBOUNDED
        f[_F_HIGH] = UNBOUNDED
        f[_F_CH] = base
        f[_F_NCH] = n_new
        f[_F_DONE] = 0
        ctr[N_CHILD] = base + n_new
        ctr[DEPTH] = depth + 1
