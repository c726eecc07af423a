"""The compiled loop of the box search's branch and bound over leaf boxes
(:class:`rfexplain.sat.deciders.boxes.Boxes`), compiled by numba [Lam15].

The search is the one the box decider's docstring describes: a box of the free features' state
intervals is dropped when the per-tree leaf bound (:func:`.bound_kernels.bound`) rules
the condition out, searched whole when its leaves cut it into at most ``box_points`` cell
combinations, else split in two, the more promising half searched first. Depth-first, so the
stack's boxes hold their leaves in increasing, disjoint ranges of one row pool: a box's children
overwrite its own range. Two split rules:

- **leaf ends**: at the median leaf end inside the box, on the feature that the most leaf
  intervals end in (it cuts boxes down to few cells quickly);
- **guided** (:func:`_guided_split`): where the most trees' *best* leaves (those that make the
  bound) leave both halves, so that both children's bounds drop (it proves bounds below zero
  sooner).

Neither wins everywhere, so the box decider races them
(:class:`~rfexplain.sat.deciders.boxes.Boxes`).

The bounds can be tightened by merging trees in pairs (:mod:`.pair_kernels`,
:func:`.pair_kernels.merge_pairs`): a merged tree's leaves are the pairs of leaves whose boxes meet, so its
best leaf is a consistent pair, the tree-merging idea of Chen et al. (2019) [Che19] (cliques of
trees, level by level) and Devos et al. (2021) [DMD21]; the search runs unchanged on the merged
table. With two classes the pairs also judge the children the per-tree bound keeps without a
merged table (:func:`pair_bound`): each pair's best two leaves among the box's own that meet.

Per box the work is a few passes over its leaves: a split writes both halves and computes both
bounds in one pass (:func:`_split_bounds`), and a child's count of leaf intervals ending inside it
per feature comes from its parent's, less the leaves only its sibling holds
(:func:`_child_counts`), instead of a pass over every leaf and feature; the median is found by
selection, not a sort, and the guided split's cuts are packed and sorted by insertion. A box
searched whole is walked depth first over its features (:mod:`.whole_kernels`), each point
summing only its own leaves, and a prefix whose leaves' bound rules the condition out is
skipped.

All the state (the box stack, the row pool, the tie buffer, the counters) lives in arrays the
caller owns, so that the search runs in slices and a :class:`~rfexplain.core.budget.Budget` is
polled between them; when the stack or the pool is full the kernel returns :data:`GROW` before
touching anything, and the caller grows them and calls again.

Points are decided in float64: hard-vote sums are vote counts (exact); a soft-vote point whose
two best classes are within ``near_tie`` is not decided here but stored in the tie buffer, for
the caller to decide in exact arithmetic (:data:`~rfexplain.core.vote.NEAR_TIE`).

[Lam15] Lam, Pitrou and Seibert, "Numba: a LLVM-based Python JIT compiler", LLVM-HPC 2015.
[Che19] Chen, Zhang, Si, Li, Boning and Hsieh, "Robustness Verification of Tree-based Models",
NeurIPS 2019. [DMD21] Devos, Meert and Davis, "Versatile Verification of Tree Ensembles", ICML 2021.
"""

from __future__ import annotations

import numpy as np

from rfexplain.core.jit import kernel
from rfexplain.core.vote import NEAR_TIE
from rfexplain.sat import stack_kernels
from rfexplain.sat.bound_kernels import _binding_class, bound, bound_core
from rfexplain.sat.pair_kernels import _overlap, merge_pairs, merged_rows, pair_partners
from rfexplain.sat.point_kernels import hard_winner, reduce_hard_point, reduce_soft_point
from rfexplain.sat.whole_kernels import (
    STACK_SIZE,
    _cell_options,
    _cell_options_around,
    _cell_options_down,
    _cell_starts,
    _search_whole,
)
from rfexplain.sat.whole_kernels import TIE_OVERFLOW as TIE_OVERFLOW
from rfexplain.sat.whole_kernels import TIES as TIES

#: the stack is empty: no box holds a strict witness (near ties may wait in the tie buffer)
EXHAUSTED = 0
#: a witness was written into ``witness``
FOUND = 1
#: the node limit of this call was reached; the next call resumes
SLICED = 2
#: the stack or the row pool is too small for the next node: grow it and call again
GROW = 3

#: Longest array :func:`_sort_head` sorts by insertion: a fixed part of that hybrid sort (as
#: introsort's cut-off to insertion sort), not a setting of the search, whose boxes and answers
#: are the same whichever sort orders the cuts.
_SMALL_SORT = 48


@kernel
def _sort_head(values, k):  # pragma: no cover - compiled
    """Sort ``values[:k]`` in place: by insertion when ``k`` is small (the guided split's few cuts
    per feature: numba's sort call cost more than the sweep itself), else by numpy's sort."""
    if k > _SMALL_SORT:
        values[:k].sort()
        return
    for a in range(1, k):
        key = values[a]
        b = a - 1
        while b >= 0 and values[b] > key:
            values[b + 1] = values[b]
            b -= 1
        values[b + 1] = key


@kernel
def _select(values, k, kth):  # pragma: no cover - compiled
    """The ``kth`` smallest of ``values[:k]`` (as ``np.sort(values[:k])[kth]``), by quickselect
    in place: ``values[:k]`` is left permuted, nothing is allocated."""
    first = 0
    last = k - 1
    while first < last:
        middle = (first + last) // 2
        a, b, c = values[first], values[middle], values[last]
        pivot = max(min(a, b), min(max(a, b), c))  # the median of the three
        i = first
        j = last
        while i <= j:
            while values[i] < pivot:
                i += 1
            while values[j] > pivot:
                j -= 1
            if i <= j:
                values[i], values[j] = values[j], values[i]
                i += 1
                j -= 1
        if kth <= j:
            last = j
        elif kth >= i:
            first = i
        else:
            return values[kth]
    return values[kth]


@kernel
def _guided_split(  # pragma: no cover - compiled
    rows, n, low, high, trees, margins, penalty, not_kind, lo, hi, best_row, cuts
):
    """The guided split ``(feature, last state of the left half)``, or ``(-1, 0)`` when there is
    none: for the class whose bound is the binding one (the largest for "not", the smallest for
    "predicts"), each tree's best leaf among ``rows[:n]``; a split drops the best leaves that end
    at or before it from the right half and those that start after it from the left half; the
    split taken maximises the smaller of the two numbers (at least one each), then their sum."""
    n_other = margins.shape[1]
    if n_other == 0:
        return -1, 0
    d = 0 if n_other == 1 else _binding_class(rows, n, trees, margins, penalty, not_kind)
    # each tree's best leaf for that class
    m = 0
    previous = -1
    for i in range(n):
        r = rows[i]
        if trees[r] != previous:
            previous = trees[r]
            best_row[m] = r
            m += 1
        elif margins[r, d] > margins[best_row[m - 1], d]:
            best_row[m - 1] = r
    best_j = -1
    best_score = 0
    best_split = 0
    for j in range(low.shape[1]):
        # each best leaf's cut on j as 2 * state + flag: flag 0, the leaf ends at the state
        # (excluded from a right half starting after it); flag 1, it starts right after the
        # state (excluded from a left half ending at it)
        k = 0
        starts_after = 0
        for q in range(m):
            r = best_row[q]
            if lo[j] <= high[r, j] < hi[j]:
                cuts[k] = 2 * high[r, j]
                k += 1
            if lo[j] < low[r, j] <= hi[j]:
                cuts[k] = 2 * (low[r, j] - 1) + 1
                k += 1
                starts_after += 1
        if k == 0:
            continue
        _sort_head(cuts, k)
        # sweep the splits in increasing order: ends at or before the split leave the right
        # half, starts after it leave the left half
        ends_before = 0
        q = 0
        while q < k:
            sp = cuts[q] >> 1
            while q < k and cuts[q] >> 1 == sp:
                if cuts[q] & 1 == 0:
                    ends_before += 1
                else:
                    starts_after -= 1
                q += 1
            score = min(ends_before, starts_after) * 1024 + ends_before + starts_after
            if min(ends_before, starts_after) >= 1 and score > best_score:
                best_score = score
                best_j = j
                best_split = sp
    return best_j, best_split


@kernel
def _halves(rows, n, low, high, j, split, left, right):  # pragma: no cover - compiled
    """The leaves of ``rows[:n]`` in the halves ``<= split`` and ``> split`` of feature ``j``,
    written into ``left`` and ``right``; their numbers."""
    n_left = 0
    n_right = 0
    for i in range(n):
        r = rows[i]
        if low[r, j] <= split:
            left[n_left] = r
            n_left += 1
        if high[r, j] >= split + 1:
            right[n_right] = r
            n_right += 1
    return n_left, n_right


@kernel
def _split_bounds(  # pragma: no cover - compiled
    rows, n, low, high, trees, margins, penalty, not_kind, j, split, left, right, work
):
    """The halves of ``rows[:n]`` at ``split`` on column ``j`` (as :func:`_halves`) and the
    :func:`bound` of each, in one pass over the rows: ``(n_left, n_right, left_bound,
    right_bound)``. ``work`` is scratch of shape ``(4, classes - 1)``."""
    n_other = margins.shape[1]
    if n_other == 0:
        n_left, n_right = _halves(rows, n, low, high, j, split, left, right)
        empty = -np.inf if not_kind else np.inf
        return n_left, n_right, empty, empty
    if n_other == 1:
        return _split_bounds_one(rows, n, low, high, trees, margins, penalty[0], j, split, left, right)
    left_total, right_total, left_best, right_best = work[0], work[1], work[2], work[3]
    left_total[:] = 0.0
    right_total[:] = 0.0
    left_best[:] = -np.inf
    right_best[:] = -np.inf
    n_left = 0
    n_right = 0
    left_seen = False
    right_seen = False
    previous = -1
    for i in range(n):
        r = rows[i]
        if trees[r] != previous:
            if left_seen:
                for d in range(n_other):
                    left_total[d] += left_best[d]
                    left_best[d] = -np.inf
            if right_seen:
                for d in range(n_other):
                    right_total[d] += right_best[d]
                    right_best[d] = -np.inf
            left_seen = False
            right_seen = False
            previous = trees[r]
        if low[r, j] <= split:
            left[n_left] = r
            n_left += 1
            left_seen = True
            for d in range(n_other):
                if margins[r, d] > left_best[d]:
                    left_best[d] = margins[r, d]
        if high[r, j] >= split + 1:
            right[n_right] = r
            n_right += 1
            right_seen = True
            for d in range(n_other):
                if margins[r, d] > right_best[d]:
                    right_best[d] = margins[r, d]
    if left_seen:
        for d in range(n_other):
            left_total[d] += left_best[d]
    if right_seen:
        for d in range(n_other):
            right_total[d] += right_best[d]
    left_bound = left_total[0] - penalty[0]
    right_bound = right_total[0] - penalty[0]
    for d in range(1, n_other):
        a = left_total[d] - penalty[d]
        b = right_total[d] - penalty[d]
        if not_kind:
            left_bound = max(left_bound, a)
            right_bound = max(right_bound, b)
        else:
            left_bound = min(left_bound, a)
            right_bound = min(right_bound, b)
    return n_left, n_right, left_bound, right_bound


@kernel
def _split_bounds_one(  # pragma: no cover - compiled
    rows, n, low, high, trees, margins, penalty, j, split, left, right
):
    """:func:`_split_bounds` for one other class (two classes: the margin in scalars, not rows of
    a scratch array)."""
    left_total = 0.0
    right_total = 0.0
    left_best = -np.inf
    right_best = -np.inf
    n_left = 0
    n_right = 0
    previous = -1
    for i in range(n):
        r = rows[i]
        if trees[r] != previous:
            if left_best > -np.inf:
                left_total += left_best
                left_best = -np.inf
            if right_best > -np.inf:
                right_total += right_best
                right_best = -np.inf
            previous = trees[r]
        m = margins[r, 0]
        if low[r, j] <= split:
            left[n_left] = r
            n_left += 1
            if m > left_best:
                left_best = m
        if high[r, j] > split:
            right[n_right] = r
            n_right += 1
            if m > right_best:
                right_best = m
    if left_best > -np.inf:
        left_total += left_best
    if right_best > -np.inf:
        right_total += right_best
    return n_left, n_right, left_total - penalty, right_total - penalty


@kernel
def _child_counts(
    counts, low, high, j, split, is_right, lo, hi, sibling, n_sibling, child, n_child, out
):  # pragma: no cover - compiled
    """The leaf intervals ending inside a child box, per feature, from its parent's ``counts``
    (box ``lo..hi``, split at ``split`` on column ``j``; the right half when ``is_right``):
    on the other columns the child loses the intervals of the leaves only its ``sibling`` holds,
    column ``j`` is counted again over the ``child``'s leaves. Written into ``out[:-1]``,
    ``out[-1]`` set to 1 (known)."""
    n_free = counts.shape[0]
    out[:n_free] = counts
    for i in range(n_sibling):
        r = sibling[i]
        if (high[r, j] <= split) if is_right else (low[r, j] > split):
            for f in range(n_free):
                e = high[r, f]
                if f != j and lo[f] <= e < hi[f]:
                    out[f] -= 1
    first = split + 1 if is_right else lo[j]
    last = hi[j] if is_right else split
    inside = 0
    for i in range(n_child):
        e = high[child[i], j]
        if first <= e < last:
            inside += 1
    out[j] = inside
    out[n_free] = 1


@kernel
def pair_bound(  # pragma: no cover - compiled
    rows, n, low, high, trees, margins, partner, stamp, tree_run, run_start, serial
):
    """The sum over trees of the best margin (one other class: column 0 of ``margins``) the
    leaves ``rows[:n]`` give, where each tree paired with another (``partner[t]``, by tree id;
    -1: none) takes instead the best *consistent* pair of their two leaves, two leaves whose boxes
    share a point: an upper bound on the margin in a box those leaves reach, at most the per-tree
    sum that :func:`bound` adds up, since a point reaches two leaves that meet.

    ``rows[:n]`` must be grouped by tree and, within a tree, in decreasing margin (the prefilter
    orders them so): a pair's best is then found by walking both trees' leaves from the top and
    stopping as soon as no better sum is left (as :func:`pair_partners` does). Two leaves that
    both meet the box and meet each other meet inside it (intervals have the Helly property), so
    their own boxes decide. ``stamp``/``tree_run`` (by tree id) and ``run_start`` are scratch;
    ``serial`` must differ from every earlier call's on the same ``stamp``."""
    runs = 0
    previous = -1
    for i in range(n):
        t = trees[rows[i]]
        if t != previous:
            run_start[runs] = i
            tree_run[t] = runs
            stamp[t] = serial
            previous = t
            runs += 1
    run_start[runs] = n
    total = 0.0
    for s in range(runs):
        t = trees[rows[run_start[s]]]
        top_a = margins[rows[run_start[s]], 0]
        p = partner[t]
        if p == -1 or stamp[p] != serial:
            total += top_a
            continue
        if p < t:  # added with its partner
            continue
        q = tree_run[p]
        top_b = margins[rows[run_start[q]], 0]
        best = -np.inf
        for i in range(run_start[s], run_start[s + 1]):
            a = rows[i]
            if margins[a, 0] + top_b <= best:
                break
            for k in range(run_start[q], run_start[q + 1]):
                b = rows[k]
                v = margins[a, 0] + margins[b, 0]
                if v <= best:
                    break
                if _overlap(low, high, a, b):
                    best = v
                    break
        total += best
    return total


@kernel
def search(
    low,
    high,
    trees,
    margins,
    penalty,
    scores,
    allowed,
    allowed_at,
    cls,
    not_kind,
    soft,
    near_tie,
    box_points,
    guided,
    partner,
    pair_gate,
    stack_lo,
    stack_hi,
    stack_rows,
    stack_counts,
    stack_gain,
    pool,
    ties,
    state,
    witness,
    node_limit,
    toward,
):  # pragma: no cover - compiled
    """Run the branch and bound for at most ``node_limit`` boxes; ``(status, boxes examined)``.

    ``low``/``high``: the reachable leaves' boxes on the free features (one row per leaf, grouped
    by tree, ``trees`` their trees); ``margins``/``penalty``: their bound inputs
    (:meth:`~rfexplain.sat.deciders.leaves.LeafTable.margins`); ``scores``: their class score vectors;
    ``allowed[allowed_at[j]:allowed_at[j + 1]]``: the states of free feature ``j`` a witness may
    use; ``guided``: split by :func:`_guided_split` where it finds a split, else by the leaf-end
    rule; ``partner``: with one other class, the trees paired for :func:`pair_bound` (by tree
    id, -1: none), which then also judges every child the per-tree bound keeps (an empty array:
    none; else the rows must be in decreasing margin within each tree) whose margin of the
    per-tree bound (plus ``near_tie``) is at most ``pair_gate`` times what its parent's pairs
    took off their parent's bound (``+inf`` at the root). The stack
    (``stack_lo``/``stack_hi`` intervals, ``stack_rows`` pool ranges), ``pool``, ``ties`` and
    ``state`` carry the search from one call to the next. ``toward``: ``(j, 1)`` searches the
    upper child of a box split on free feature ``j`` first and, in a box searched whole, the cells
    of ``j`` from the last down, each by its last allowed state
    (:func:`.whole_kernels._cell_options_down`); ``(j, -1)`` the lower child first (a box searched
    whole takes each cell's first state, from the first cell up, anyway); ``(j, 2, s)`` the child
    nearer the state ``s`` first (the upper one when ``s`` lies above the split) and, in a box
    searched whole, the cells nearest ``s`` first, each by its state nearest ``s``
    (:func:`.whole_kernels._cell_options_around`); ``(j, 0)`` neither (the more promising child
    first, as on the other features)."""
    n_free = low.shape[1]
    starts_buffer = np.empty(2 * low.shape[0] + 1, np.int64)
    # a box searched whole has at most box_points cell combinations, hence at most
    # n_free + box_points cells in all (grown below should that ever not hold)
    option_values = np.empty(n_free + box_points + 1, np.int64)
    option_at = np.zeros(n_free + 1, np.int64)
    whole = np.zeros(n_free, np.bool_)
    level_rows = np.empty(0, np.int64)  # grown for the largest box searched whole
    level_start = np.zeros(n_free + 1, np.int64)
    level_count = np.zeros(n_free + 1, np.int64)
    choice = np.zeros(n_free + 1, np.int64)
    point = np.zeros(n_free, np.int64)
    sums = np.zeros(scores.shape[1])
    counts = np.zeros(n_free, np.int64)
    ends = np.empty(low.shape[0], np.int64)
    left = np.empty(low.shape[0], np.int64)
    right = np.empty(low.shape[0], np.int64)
    lo = np.empty(n_free, np.int64)
    hi = np.empty(n_free, np.int64)
    best_row = np.empty(low.shape[0], np.int64)
    cuts = np.empty(2 * low.shape[0], np.int64)
    rows = np.empty(low.shape[0], np.int64)
    work = np.empty((4, margins.shape[1]))
    paired = partner.shape[0] > 0 and margins.shape[1] == 1
    stamp = np.zeros(partner.shape[0], np.int64)
    tree_run = np.zeros(partner.shape[0], np.int64)
    run_start = np.empty(low.shape[0] + 1, np.int64)
    serial = 0
    examined = 0
    while examined < node_limit:
        size = state[STACK_SIZE]
        if size == 0:
            return EXHAUSTED, examined
        top = size - 1
        start = stack_rows[top, 0]
        n = stack_rows[top, 1] - start
        if start + 2 * n > pool.shape[0] or size + 1 > stack_lo.shape[0]:
            return GROW, examined
        lo[:] = stack_lo[top]
        hi[:] = stack_hi[top]
        gain = stack_gain[top]
        rows[:n] = pool[start : start + n]
        state[STACK_SIZE] = top
        examined += 1

        # leaf intervals ending inside the box, per feature (a child's were derived from its parent's)
        if stack_counts[top, n_free] == 1:
            counts[:] = stack_counts[top, :n_free]
        else:
            counts[:] = 0
            for i in range(n):
                r = rows[i]
                for j in range(n_free):
                    e = high[r, j]
                    if lo[j] <= e < hi[j]:
                        counts[j] += 1
        product = 1
        nonzero = 0
        for j in range(n_free):
            if counts[j] > 0:
                nonzero += 1
            if product <= box_points:
                product *= 1 + counts[j]
        few = product <= box_points
        if not few and nonzero < 63 and (1 << nonzero) <= box_points:
            product = 1
            for j in range(n_free):
                product *= _cell_starts(rows, n, low, high, j, lo[j], hi[j], starts_buffer)
                if product > box_points:
                    break
            few = product <= box_points

        if few:
            # one allowed state per cell and feature; every combination, the last feature fastest
            empty = False
            for j in range(n_free):
                k = _cell_starts(rows, n, low, high, j, lo[j], hi[j], starts_buffer)
                taken = option_at[j]
                if taken + k > option_values.shape[0]:
                    grown = np.empty(2 * (taken + k), np.int64)
                    grown[:taken] = option_values[:taken]
                    option_values = grown
                if j == toward[0] and toward[1] == 2:  # the states nearest toward[2] first
                    taken = _cell_options_around(
                        starts_buffer,
                        k,
                        hi[j],
                        allowed,
                        allowed_at[j],
                        allowed_at[j + 1],
                        option_values,
                        taken,
                        toward[2],
                    )
                elif j == toward[0] and toward[1] > 0:  # the upper states first
                    taken = _cell_options_down(
                        starts_buffer, k, hi[j], allowed, allowed_at[j], allowed_at[j + 1], option_values, taken
                    )
                else:
                    taken = _cell_options(
                        starts_buffer, k, hi[j], allowed, allowed_at[j], allowed_at[j + 1], option_values, taken
                    )
                option_at[j + 1] = taken
                whole[j] = k == 1
                if taken == option_at[j]:
                    empty = True
            if empty:
                continue
            if level_rows.shape[0] < (n_free + 1) * n:
                level_rows = np.empty(2 * (n_free + 1) * n, np.int64)
            if _search_whole(
                rows,
                n,
                low,
                high,
                trees,
                margins,
                penalty,
                scores,
                cls,
                not_kind,
                soft,
                near_tie,
                option_values,
                option_at,
                whole,
                point,
                sums,
                level_rows,
                level_start,
                level_count,
                choice,
                ties,
                state,
                witness,
            ):
                return FOUND, examined
            continue

        j = -1
        split = 0
        if guided:
            j, split = _guided_split(rows, n, low, high, trees, margins, penalty, not_kind, lo, hi, best_row, cuts)
        if j < 0:
            # split at the median leaf end inside the box, on the feature most leaf intervals end in
            j = 0
            for f in range(1, n_free):
                if counts[f] > counts[j]:
                    j = f
            k = 0
            for i in range(n):
                e = high[rows[i], j]
                if lo[j] <= e < hi[j]:
                    ends[k] = e
                    k += 1
            split = _select(ends, k, k // 2)
        n_left, n_right, left_slack, right_slack = _split_bounds(
            rows, n, low, high, trees, margins, penalty, not_kind, j, split, left, right, work
        )
        # pushed in increasing slack (left first on equal ones): the more promising child on top;
        # a child whose bound rules the condition out is dropped
        right_first = right_slack < left_slack
        if j == toward[0] and toward[1] == 2:  # the child nearer toward[2] on top
            right_first = toward[2] <= split
        elif j == toward[0] and toward[1] != 0:
            right_first = toward[1] < 0
        position = start
        for side in range(2):
            is_right = (side == 0) == right_first
            slack = right_slack if is_right else left_slack
            if slack <= -near_tie:
                continue
            count = n_right if is_right else n_left
            child_gain = gain
            if paired and slack + near_tie <= pair_gate * gain:
                serial += 1
                kept = right if is_right else left
                total = pair_bound(kept, count, low, high, trees, margins, partner, stamp, tree_run, run_start, serial)
                if total - penalty[0] <= -near_tie:
                    continue
                child_gain = slack - (total - penalty[0])
            pool[position : position + count] = right[:count] if is_right else left[:count]
            b = state[STACK_SIZE]
            stack_lo[b] = lo
            stack_hi[b] = hi
            if is_right:
                stack_lo[b, j] = split + 1
            else:
                stack_hi[b, j] = split
            stack_rows[b, 0] = position
            stack_rows[b, 1] = position + count
            _child_counts(
                counts,
                low,
                high,
                j,
                split,
                is_right,
                lo,
                hi,
                left if is_right else right,
                n_left if is_right else n_right,
                right if is_right else left,
                count,
                stack_counts[b],
            )
            stack_gain[b] = child_gain
            state[STACK_SIZE] = b + 1
            position += count
    return SLICED, examined


def warm_up(box_dtype: np.dtype) -> None:
    """Load (or compile, on a machine's first run) :func:`search` for the argument types the
    box decider passes (leaf boxes of ``box_dtype``), on a one-leaf box, and the other kernels
    (:mod:`.bound_kernels`, :mod:`.point_kernels`, :mod:`.pair_kernels`, :mod:`.stack_kernels`) on
    one-node inputs: numba does it on a function's first call, which would otherwise land inside the first
    query that needs it."""
    one = np.zeros((1, 1), dtype=box_dtype)
    bound(np.zeros(1, dtype=np.int64), 1, np.zeros(1, dtype=np.int64), np.zeros((1, 1)), np.zeros(1), True)
    bound_core(
        np.zeros((1, 1), dtype=np.bool_),
        np.zeros(1, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
        np.zeros((1, 1)),
        np.zeros(1),
        True,
        NEAR_TIE,
        np.zeros(1, dtype=np.bool_),
    )
    # one stump (a root splitting feature 0 at 0, two leaves) and one-feature points
    stump = (
        np.asarray([0, -1, -1], dtype=np.int64),
        np.zeros(3, dtype=np.int64),
        np.asarray([1, 0, 0], dtype=np.int64),
        np.asarray([2, 0, 0], dtype=np.int64),
    )
    point, roots = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    label = np.asarray([0, 0, 1], dtype=np.int64)
    reduce_hard_point(point, point.copy(), point.copy(), *stump, label, roots, 0, True, np.zeros(2, dtype=np.int64))
    proba = np.asarray([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    reduce_soft_point(point, point.copy(), point.copy(), 0, *stump, proba, roots, 0, True, NEAR_TIE, np.zeros(2))
    hard_winner(point, *stump, label, roots, np.zeros(2, dtype=np.int64))
    two = np.zeros((2, 1), dtype=box_dtype)
    partner, starts = pair_partners(two, two, np.asarray([0, 1], dtype=np.int64), np.zeros((2, 1)), np.zeros(1), True)
    total = merged_rows(two, two, partner, starts)
    merge_pairs(two, two, np.zeros((2, 1)), np.zeros((2, 2)), partner, starts, total)
    for soft in (False, True):
        search(
            one,
            one,
            np.zeros(1, dtype=np.int64),
            np.zeros((1, 1)),
            np.zeros(1),
            np.zeros((1, 2)),
            np.zeros(1, dtype=np.int64),
            np.asarray([0, 1], dtype=np.int64),
            0,
            True,
            soft,
            NEAR_TIE,
            1,
            soft,
            np.full(1, -1, dtype=np.int64),
            1.0,
            np.zeros((2, 1), dtype=np.int64),
            np.zeros((2, 1), dtype=np.int64),
            np.asarray([[0, 1], [0, 0]], dtype=np.int64),
            np.zeros((2, 2), dtype=np.int64),
            np.full(2, np.inf),
            np.zeros(3, dtype=np.int64),
            np.zeros((1, 1), dtype=np.int64),
            np.asarray([1, 0, 0], dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            1,
            np.zeros(2, dtype=np.int64),
        )
    stack_kernels.warm_up(box_dtype)
