"""The compiled loop of the verifier's branch and bound (:class:`rfexplain.verify.BoxSearch`),
compiled by numba (Lam, Pitrou and Seibert, "Numba: a LLVM-based Python JIT compiler", LLVM-HPC
2015). It is the verifier's own code: it shares nothing with the engines' searches.

A box gives each feature a run ``a[f]..b[f]-1`` of the feature's sorted cells (``cells[offset[f]:
offset[f + 1]]``, the cells the caller allows, contiguous or not); its leaves are those of the
trees whose cell boxes (``lo``/``hi``) meet the span of that run on every feature, rows grouped by
tree. Depth-first: a box's leaves lie in one range of the row pool, its children's overwrite it.
The search stops at a box where every tree has one leaf left, for the caller to decide with the
vote rule (:data:`DECIDED`): the rule stays in one Python function, exact under the soft vote.

All state (the box stack, the row pool) lives in arrays the caller owns, so the search runs in
slices between which the caller polls its budget; when they are full the loop returns
:data:`GROW` before touching anything.
"""

from __future__ import annotations

import numpy as np

from rfexplain.core.jit import kernel

#: the stack is empty: no box holds an input of the classes sought
#: The verifier's own near-tie distance: two float64 sums of class probabilities closer than this
#: are compared again in exact rationals (:func:`rfexplain.verify.decide`), and a soft-vote
#: challenger's margin counts as a sure win only above it.
CLOSE = 1e-9

EXHAUSTED = 0
#: a box where every tree has one leaf left was popped: its first point is in ``point``, its
#: leaves in ``pool[state[ROWS_START]:state[ROWS_END]]``
DECIDED = 1
#: the node limit of this call was reached
SLICED = 2
#: the stack or the row pool is too small for the next box: grow them and call again
GROW = 3

#: slots of the ``state`` array
STACK_SIZE, ROWS_START, ROWS_END = range(3)

#: slots of a ``stack_rows`` row: the box's leaves are ``pool[start:end]``; whether it is decided
START, END, ONE_LEAF_EACH = range(3)


@kernel
def chances(rows, n, tree, scores, soft, wanted):  # pragma: no cover - compiled
    """``(chance, one_leaf_each)`` of the leaves ``rows[:n]``: ``-inf`` when every class of
    ``wanted`` loses to a challenger on every input (the sum over trees of the least
    ``scores[e] - scores[c]`` among a tree's leaves is above :data:`CLOSE` under the soft vote; under
    the hard vote, where scores are votes, above 0, or 0 with ``e`` first, which wins the tie),
    else how far the best of them is from that; then whether every tree has one leaf."""
    n_classes = scores.shape[1]
    # the challengers: the two classes whose least scores, summed over trees, are largest
    lows = np.zeros(n_classes)
    least_here = np.full(n_classes, np.inf)
    runs = 0
    previous = -1
    for i in range(n):
        r = rows[i]
        if tree[r] != previous:
            if previous != -1:
                lows += least_here
                least_here[:] = np.inf
            previous = tree[r]
            runs += 1
        for e in range(n_classes):
            least_here[e] = min(least_here[e], scores[r, e])
    if previous != -1:
        lows += least_here
    first = 0
    for e in range(1, n_classes):
        if lows[e] > lows[first]:
            first = e
    second = -1
    for e in range(n_classes):
        if e != first and (second == -1 or lows[e] > lows[second]):
            second = e
    rivals = np.array([first, second]) if second != -1 else np.array([first])
    n_rivals = rivals.shape[0]
    n_wanted = wanted.shape[0]
    least = np.zeros((n_wanted, n_rivals))
    margin_here = np.full((n_wanted, n_rivals), np.inf)
    previous = -1
    for i in range(n):
        r = rows[i]
        if tree[r] != previous:
            if previous != -1:
                least += margin_here
                margin_here[:] = np.inf
            previous = tree[r]
        for w in range(n_wanted):
            for k in range(n_rivals):
                margin = scores[r, rivals[k]] - scores[r, wanted[w]]
                if margin < margin_here[w, k]:
                    margin_here[w, k] = margin
    if previous != -1:
        least += margin_here
    best = -np.inf
    for w in range(n_wanted):
        c = wanted[w]
        worst = -np.inf
        alive = True
        for k in range(n_rivals):
            e = rivals[k]
            if e == c:
                continue
            value = least[w, k]
            if (value > CLOSE) if soft else (value > 0 or (value == 0 and e < c)):
                alive = False
            worst = max(worst, value)
        if alive:
            best = max(best, -worst)
    return best, runs == n


@kernel
def _meeting(rows, n, lo, hi, f, first, last, out):  # pragma: no cover - compiled
    """The leaves of ``rows[:n]`` whose boxes meet cells ``first..last`` of feature ``f``,
    written into ``out``; their number."""
    k = 0
    for i in range(n):
        r = rows[i]
        if lo[r, f] <= last and hi[r, f] >= first:
            out[k] = r
            k += 1
    return k


@kernel
def search(
    lo, hi, tree, scores, soft, wanted, cells, offset, stack_a, stack_b, stack_rows, pool, state, point, node_limit
):  # pragma: no cover - compiled
    """Run the search for at most ``node_limit`` boxes; ``(status, boxes popped)``."""
    n_features = lo.shape[1]
    rows = np.empty(lo.shape[0], np.int64)
    left = np.empty(lo.shape[0], np.int64)
    right = np.empty(lo.shape[0], np.int64)
    ends = np.empty(lo.shape[0], np.int64)
    inside = np.zeros(n_features, np.int64)
    a = np.empty(n_features, np.int64)
    b = np.empty(n_features, np.int64)
    examined = 0
    while examined < node_limit:
        size = state[STACK_SIZE]
        if size == 0:
            return EXHAUSTED, examined
        top = size - 1
        start = stack_rows[top, START]
        n = stack_rows[top, END] - start
        if start + 2 * n > pool.shape[0] or size + 1 > stack_a.shape[0]:
            return GROW, examined
        state[STACK_SIZE] = top
        examined += 1
        a[:] = stack_a[top]
        b[:] = stack_b[top]
        if stack_rows[top, ONE_LEAF_EACH] == 1:
            for f in range(n_features):
                point[f] = cells[offset[f] + a[f]]
            state[ROWS_START] = start
            state[ROWS_END] = start + n
            return DECIDED, examined
        rows[:n] = pool[start : start + n]
        # the feature most leaves end inside (first on ties), split at the median of those ends
        inside[:] = 0
        for i in range(n):
            r = rows[i]
            for f in range(n_features):
                if b[f] - a[f] > 1 and cells[offset[f] + a[f]] <= hi[r, f] < cells[offset[f] + b[f] - 1]:
                    inside[f] += 1
        j = 0
        for f in range(1, n_features):
            if inside[f] > inside[j]:
                j = f
        base = offset[j]
        k = 0
        for i in range(n):
            e = hi[rows[i], j]
            if cells[base + a[j]] <= e < cells[base + b[j] - 1]:
                ends[k] = e
                k += 1
        ends[:k].sort()
        cut = ends[k // 2]
        middle = a[j]
        while middle < b[j] and cells[base + middle] <= cut:
            middle += 1
        n_left = _meeting(rows, n, lo, hi, j, cells[base + a[j]], cells[base + middle - 1], left)
        n_right = _meeting(rows, n, lo, hi, j, cells[base + middle], cells[base + b[j] - 1], right)
        left_chance, left_decided = chances(left, n_left, tree, scores, soft, wanted)
        right_chance, right_decided = chances(right, n_right, tree, scores, soft, wanted)
        # the more promising child on top (the right one on equal chances)
        position = start
        for side in range(2):
            is_right = (side == 1) == (right_chance >= left_chance)
            chance = right_chance if is_right else left_chance
            if chance == -np.inf:
                continue
            count = n_right if is_right else n_left
            pool[position : position + count] = right[:count] if is_right else left[:count]
            s = state[STACK_SIZE]
            stack_a[s] = a
            stack_b[s] = b
            if is_right:
                stack_a[s, j] = middle
            else:
                stack_b[s, j] = middle
            stack_rows[s, START] = position
            stack_rows[s, END] = position + count
            stack_rows[s, ONE_LEAF_EACH] = 1 if (right_decided if is_right else left_decided) else 0
            state[STACK_SIZE] = s + 1
            position += count
    return SLICED, examined
