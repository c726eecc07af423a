"""The compiled loops of the compact ADD core (:mod:`.add_core`): hash-consing, Apply of vector
addition, terminal maps, reachability and mark-and-compact garbage collection over flat integer
arrays, compiled by numba [Lam15] (Gossen and Steffen (2021), Sect. 6-7 [GS21]; ADDs after Bahar
et al. (1993) [Bah93], the computed table after Brace, Rudell and Bryant (1990) [BRB90]).

The store (see :class:`~.add_core.CompactADD` for its invariants):

- ``nd[n] = (level, hi, lo)`` (int32): an internal node tests predicate ``level`` and goes to
  ``hi`` when it holds; a terminal has level :data:`TERM`, ``hi`` its row of ``vals`` and
  ``lo = -1``. Children have smaller ids than their parents.
- ``vals[r]`` (int64): a terminal's vector in columns ``0..k-1`` and its kind in column ``k``
  (:data:`VECTOR` for a class vector, :data:`CLASS` for a class index in column 0).
- ``utab`` / ``ttab``: open-addressing unique tables of the internal nodes and the terminals
  (node ids, ``-1`` empty), kept at most half full.
- ``cnt``: the counters (:data:`N_NODES`, :data:`N_VALS`, :data:`CAP`).

No kernel returns an array: every array is allocated by the caller and filled in place (a
kernel loaded from numba's cache that returns a new array can fail in numba's array conversion,
``RuntimeError: In 'NRT_adapt_ndarray_to_python', 'descr' is NULL``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfexplain.core.hash_kernels import place, spread
from rfexplain.core.jit import kernel

#: level of the terminals: after every predicate
TERM = np.int32(2**31 - 1)
#: counters
N_NODES, N_VALS, CAP = range(3)
#: terminal kinds (last column of ``vals``)
VECTOR, CLASS = 0, 1
#: how a kernel call ends: finished, out of steps (call again), at the node budget, or waiting
#: for larger unique tables (:func:`rehash` into new ones, then call again)
DONE, RUNNING, FULL, GROW = range(4)
#: columns of an Apply frame: operands, level, phase, low cofactors, results
_X, _Y, _V, _PH, _X0, _Y0, _R1, _R0 = range(8)
#: phases of a frame: new, waiting for the high result, high known, waiting for the low result,
#: both known
_NEW, _WAIT_HI, _HAS_HI, _WAIT_LO, _HAS_BOTH = range(5)


def _compile(fn: Any) -> Any:
    return kernel(fn)


@_compile
def _node_hash(level, hi, lo):
    return spread(((level * 1000003 + hi) * 1099511628211) ^ lo)


@_compile
def _vals_hash(vals, row):
    h = 17
    for c in range(vals.shape[1]):
        h = (h ^ vals[row, c]) * 1099511628211
    return spread(h)


@_compile
def rehash(nd, vals, n_nodes, utab, ttab):
    """Fill the empty unique tables ``utab`` and ``ttab`` (all ``-1``, sizes powers of two) with
    nodes ``0..n_nodes-1``."""
    for n in range(n_nodes):
        if nd[n, 0] == TERM:
            place(ttab, _vals_hash(vals, nd[n, 1]), n)
        else:
            place(utab, _node_hash(nd[n, 0], nd[n, 1], nd[n, 2]), n)


@_compile
def _room(cnt, utab):
    """Whether one more node fits: :data:`DONE` when it does, :data:`FULL` at the node budget,
    :data:`GROW` when it would fill the unique tables past half."""
    n = cnt[N_NODES]
    if n >= cnt[CAP]:
        return FULL
    if 2 * (n + 1) > utab.shape[0]:
        return GROW
    return DONE


@_compile
def _terminal(nd, vals, cnt, ttab, row):
    """The terminal holding ``vals[row]``, written in the next free row (which a new terminal
    takes and an existing one leaves free); room checked."""
    h = _vals_hash(vals, row)
    mask = ttab.shape[0] - 1
    i = h & mask
    width = vals.shape[1]
    while ttab[i] >= 0:
        m = ttab[i]
        r = nd[m, 1]
        same = True
        for c in range(width):
            if vals[r, c] != vals[row, c]:
                same = False
                break
        if same:
            return m
        i = (i + 1) & mask
    n = cnt[N_NODES]
    nd[n, 0] = TERM
    nd[n, 1] = row
    nd[n, 2] = -1
    cnt[N_NODES] = n + 1
    cnt[N_VALS] = row + 1
    ttab[i] = n
    return n


@_compile
def _mk(nd, cnt, utab, vfeat, reduce, level, hi, lo):
    """The reduced node testing ``level`` (the rules of :meth:`.add.ADDManager.mk`); room checked."""
    if reduce:
        f = vfeat[level]
        hl = nd[hi, 0]
        if hl != TERM and vfeat[hl] == f:
            hi = nd[hi, 1]
        ll = nd[lo, 0]
        if ll != TERM and vfeat[ll] == f and nd[lo, 1] == hi:
            return lo
    if hi == lo:
        return hi
    mask = utab.shape[0] - 1
    i = _node_hash(level, hi, lo) & mask
    while utab[i] >= 0:
        m = utab[i]
        if nd[m, 0] == level and nd[m, 1] == hi and nd[m, 2] == lo:
            return m
        i = (i + 1) & mask
    n = cnt[N_NODES]
    nd[n, 0] = level
    nd[n, 1] = hi
    nd[n, 2] = lo
    cnt[N_NODES] = n + 1
    utab[i] = n
    return n


@_compile
def _cofactors(nd, vfeat, reduce, node, level):
    nl = nd[node, 0]
    if nl == level:
        return nd[node, 1], nd[node, 2]
    if reduce and nl != TERM and vfeat[nl] == vfeat[level]:
        # state <= j implies state <= k for the later test k > j of the same feature
        return nd[node, 1], node
    return node, node


@_compile
def _decided(vals, row, gain_lo, gain_hi):
    """The class that wins whatever the other trees add to the partial sum ``vals[row]`` (each
    class ``c`` gains between ``gain_lo[c]`` and ``gain_hi[c]``, ties to the lowest index), or
    ``-1`` when that is not yet known."""
    width = vals.shape[1] - 1
    best = 0
    for c in range(1, width):
        if vals[row, c] + gain_lo[c] > vals[row, best] + gain_lo[best]:
            best = c
    low = vals[row, best] + gain_lo[best]
    for d in range(width):
        if d != best:
            high = vals[row, d] + gain_hi[d]
            if high > low or (high == low and d < best):
                return -1
    return best


@_compile
def _is_class(nd, vals, n):
    return nd[n, 0] == TERM and vals[nd[n, 1], vals.shape[1] - 1] == CLASS


@_compile
def apply_add(
    nd, vals, cnt, utab, ttab, vfeat, reduce, cache, frames, depth, max_steps, early, gain_lo, gain_hi, epoch
):
    """Resume (or start: one frame pushed, phase new) the Apply of vector addition on the frames.

    Returns ``(status, result, depth)``: :data:`DONE` with the result, or :data:`RUNNING` after
    ``max_steps`` steps, :data:`GROW` or :data:`FULL` (see :func:`_room`); after the last three,
    calling again with the returned depth resumes where it stopped. ``cache`` rows ``(x, y,
    result, epoch)`` form a direct-mapped computed table (lossy; results travel up the frames,
    never through it); a row answers only in its own ``epoch``.

    With ``early``, a sum that already decides the vote (:func:`_decided`, given the bounds on
    what the trees outside the sum add) becomes that class's terminal, which absorbs every later
    addition.
    """
    cmask = cache.shape[0] - 1
    width = vals.shape[1] - 1
    steps = 0
    result = -1
    while depth > 0:
        if steps >= max_steps:
            return RUNNING, -1, depth
        steps += 1
        i = depth - 1
        phase = frames[i, _PH]
        r = -1
        if phase == _NEW:
            x = frames[i, _X]
            y = frames[i, _Y]
            if x > y:
                x, y = y, x
                frames[i, _X] = x
                frames[i, _Y] = y
            slot = _node_hash(0, x, y) & cmask
            lx = nd[x, 0]
            ly = nd[y, 0]
            if early and _is_class(nd, vals, x):
                r = x
            elif early and _is_class(nd, vals, y):
                r = y
            elif cache[slot, 0] == x and cache[slot, 1] == y and cache[slot, 3] == epoch:
                r = cache[slot, 2]
            elif lx == TERM and ly == TERM:
                room = _room(cnt, utab)
                if room != DONE:
                    return room, -1, depth
                row = cnt[N_VALS]
                rx = nd[x, 1]
                ry = nd[y, 1]
                for c in range(width):
                    vals[row, c] = vals[rx, c] + vals[ry, c]
                vals[row, width] = VECTOR
                if early:
                    winner = _decided(vals, row, gain_lo, gain_hi)
                    if winner >= 0:
                        vals[row, :] = 0
                        vals[row, 0] = winner
                        vals[row, width] = CLASS
                r = _terminal(nd, vals, cnt, ttab, row)
                cache[slot, 0] = x
                cache[slot, 1] = y
                cache[slot, 2] = r
                cache[slot, 3] = epoch
            else:
                v = lx if lx < ly else ly
                x1, x0 = _cofactors(nd, vfeat, reduce, x, v)
                y1, y0 = _cofactors(nd, vfeat, reduce, y, v)
                frames[i, _V] = v
                frames[i, _X0] = x0
                frames[i, _Y0] = y0
                frames[i, _PH] = _WAIT_HI
                frames[depth, _X] = x1
                frames[depth, _Y] = y1
                frames[depth, _PH] = _NEW
                depth += 1
                continue
        elif phase == _HAS_HI:
            frames[i, _PH] = _WAIT_LO
            frames[depth, _X] = frames[i, _X0]
            frames[depth, _Y] = frames[i, _Y0]
            frames[depth, _PH] = _NEW
            depth += 1
            continue
        else:  # _HAS_BOTH
            room = _room(cnt, utab)
            if room != DONE:
                return room, -1, depth
            r = _mk(nd, cnt, utab, vfeat, reduce, frames[i, _V], frames[i, _R1], frames[i, _R0])
            x = frames[i, _X]
            y = frames[i, _Y]
            slot = _node_hash(0, x, y) & cmask
            cache[slot, 0] = x
            cache[slot, 1] = y
            cache[slot, 2] = r
            cache[slot, 3] = epoch
        # the frame is done with result r: hand it to its parent
        depth -= 1
        if depth == 0:
            result = r
        else:
            p = depth - 1
            if frames[p, _PH] == _WAIT_HI:
                frames[p, _R1] = r
                frames[p, _PH] = _HAS_HI
            else:
                frames[p, _R0] = r
                frames[p, _PH] = _HAS_BOTH
    return DONE, result, 0


@_compile
def reachable(nd, roots, seen, stack):
    """Mark in ``seen`` (all ``False``, one entry per node) every node reachable from ``roots``;
    ``stack`` has room for every node."""
    top = 0
    for r in roots:
        if not seen[r]:
            seen[r] = True
            stack[top] = r
            top += 1
    while top > 0:
        top -= 1
        n = stack[top]
        if nd[n, 0] != TERM:
            for c in (nd[n, 1], nd[n, 2]):
                if not seen[c]:
                    seen[c] = True
                    stack[top] = c
                    top += 1


@_compile
def map_to_class(nd, vals, cnt, utab, ttab, vfeat, reduce, seen, image, start):
    """The winning class (most votes or weight, ties to the lowest index; [GS21] Def. 22, ``Δ_C``)
    of every class-vector terminal marked in ``seen``, as class terminals (a class terminal stays), and the diagrams
    above them rebuilt on those (reduced on the way), written into ``image`` from node ``start``
    on. Returns ``(status, next node)``: :data:`DONE`, or :data:`GROW` / :data:`FULL`, after which
    calling again from the returned node resumes."""
    width = vals.shape[1] - 1
    for n in range(start, seen.shape[0]):  # children have smaller ids: children first
        if not seen[n]:
            continue
        room = _room(cnt, utab)
        if room != DONE:
            return room, n
        if _is_class(nd, vals, n):  # decided early
            image[n] = n
        elif nd[n, 0] == TERM:
            src = nd[n, 1]
            best = 0
            for c in range(1, width):
                if vals[src, c] > vals[src, best]:
                    best = c
            row = cnt[N_VALS]
            vals[row, :] = 0
            vals[row, 0] = best
            vals[row, width] = CLASS
            image[n] = _terminal(nd, vals, cnt, ttab, row)
        else:
            image[n] = _mk(nd, cnt, utab, vfeat, reduce, nd[n, 0], image[nd[n, 1]], image[nd[n, 2]])
    return DONE, seen.shape[0]


@_compile
def compact(nd, vals, cnt, seen, new):
    """Mark and compact: keep the nodes marked in ``seen`` (in id order, so children stay below
    parents) and their terminal rows, writing each kept node's new id into ``new``. The unique
    tables must be rebuilt afterwards (:func:`rehash`)."""
    w = 0
    rows = 0
    for n in range(seen.shape[0]):
        if not seen[n]:
            continue
        if nd[n, 0] == TERM:
            vals[rows, :] = vals[nd[n, 1], :]
            nd[w, 0] = TERM
            nd[w, 1] = rows
            nd[w, 2] = -1
            rows += 1
        else:
            nd[w, 0] = nd[n, 0]
            nd[w, 1] = new[nd[n, 1]]
            nd[w, 2] = new[nd[n, 2]]
        new[n] = w
        w += 1
    cnt[N_NODES] = w
    cnt[N_VALS] = rows


@_compile
def depth(nd, seen, root):
    """Largest number of tests on a path from ``root`` down, over the nodes marked in ``seen``
    (those reachable from it)."""
    longest = np.zeros(seen.shape[0], np.int64)
    for n in range(seen.shape[0]):  # children first
        if seen[n] and nd[n, 0] != TERM:
            longest[n] = 1 + max(longest[nd[n, 1]], longest[nd[n, 2]])
    return longest[root]
