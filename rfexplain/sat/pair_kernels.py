"""The compiled merging of trees in pairs (numba [Lam15]) for the box search's bounds: which
trees to pair (:func:`pair_partners`: those whose best leaves disagree, matched greedily by how
much merging lowers their bound) and the merged leaf table (:func:`merged_rows`,
:func:`merge_pairs`: a merged tree's leaves are the pairs of leaves whose boxes meet,
:func:`_overlap`, so its best leaf is a consistent pair), the tree-merging bounds of Chen et al.
(2019) [Che19] and Devos et al. (2021) [DMD21].

[Lam15] Lam, Pitrou and Seibert, "Numba: a LLVM-based Python JIT compiler", LLVM-HPC 2015.
[Che19] Chen, Zhang, Si, Li, Boning and Hsieh, "Robustness Verification of Tree-based Models",
NeurIPS 2019. [DMD21] Devos, Meert and Davis, "Versatile Verification of Tree Ensembles", ICML 2021.
"""

from __future__ import annotations

import numpy as np

from rfexplain.core.jit import kernel
from rfexplain.sat.bound_kernels import _binding_class


@kernel
def _overlap(low, high, a, b):  # pragma: no cover - compiled
    """Whether the boxes of rows ``a`` and ``b`` share a point."""
    for j in range(low.shape[1]):
        if low[a, j] > high[b, j] or low[b, j] > high[a, j]:
            return False
    return True


@kernel
def _segments(trees):  # pragma: no cover - compiled
    """The first row of every tree's run in ``trees`` (rows grouped by tree), then the row count."""
    n = trees.shape[0]
    if n == 0:
        return np.zeros(1, np.int64)
    changes = np.flatnonzero(trees[1:] != trees[:-1]) + 1
    return np.concatenate((np.zeros(1, np.int64), changes.astype(np.int64), np.full(1, n, np.int64)))


@kernel
def pair_partners(low, high, trees, margins, penalty, not_kind):  # pragma: no cover - compiled
    """Which trees to merge in pairs (:func:`merge_pairs`): ``(partner, starts)``, ``partner[k]``
    the tree paired with the ``k``-th tree run of ``trees`` (-1: none) and ``starts`` the runs'
    first rows.

    For the class whose bound binds (as in :func:`_guided_split`), a pair's *gain* is what
    merging takes off the bound: its two best leaves' margins less the best margin of two leaves
    that share a point. Pairs are matched greedily, largest gain first; pairs without gain are
    left apart. The best compatible pair is found by walking both trees' leaves in decreasing
    margin and stopping as soon as no better sum is left. Among pairs of equal gain, those whose
    trees have fewer pairs with a gain go first: over the 11 slowest steps of two ionosphere AXps
    (soft vote) the paired search then took 27,068 boxes, against 45,768 with ties taken in tree
    order."""
    starts = _segments(trees)
    m = starts.shape[0] - 1
    partner = np.full(m, -1, np.int64)
    if margins.shape[1] == 0 or m < 2:
        return partner, starts
    d = _binding_class(np.arange(trees.shape[0]), trees.shape[0], trees, margins, penalty, not_kind)
    order = np.empty(trees.shape[0], np.int64)
    top = np.empty(m)
    for k in range(m):
        a = starts[k]
        by_margin = np.argsort(-margins[a : starts[k + 1], d], kind="mergesort")
        for i in range(by_margin.shape[0]):
            order[a + i] = a + by_margin[i]
        top[k] = margins[order[a], d]
    n_pairs = m * (m - 1) // 2
    gains = np.empty(n_pairs)
    firsts = np.empty(n_pairs, np.int64)
    seconds = np.empty(n_pairs, np.int64)
    found = 0
    for k in range(m):
        if starts[k + 1] - starts[k] < 2:
            continue
        for q in range(k + 1, m):
            if starts[q + 1] - starts[q] < 2:
                continue
            best = -np.inf
            for i in range(starts[k], starts[k + 1]):
                a = order[i]
                if margins[a, d] + top[q] <= best:
                    break
                for i2 in range(starts[q], starts[q + 1]):
                    b = order[i2]
                    if margins[a, d] + margins[b, d] <= best:
                        break
                    if _overlap(low, high, a, b):
                        best = margins[a, d] + margins[b, d]
                        break
            gain = top[k] + top[q] - best
            if gain > 0.0:
                gains[found] = -gain
                firsts[found] = k
                seconds[found] = q
                found += 1
    # largest gain first; among equal gains, the pair whose trees have the fewest other pairs
    # with a gain first (a greedy matching's usual tie rule: it leaves more pairs to match)
    degree = np.zeros(m, np.int64)
    for t in range(found):
        degree[firsts[t]] += 1
        degree[seconds[t]] += 1
    by_degree = np.argsort(degree[firsts[:found]] + degree[seconds[:found]], kind="mergesort")
    order_of_pairs = by_degree[np.argsort(gains[:found][by_degree], kind="mergesort")]
    for t in order_of_pairs:
        k = firsts[t]
        q = seconds[t]
        if partner[k] == -1 and partner[q] == -1:
            partner[k] = q
            partner[q] = k
    return partner, starts


@kernel
def merged_rows(low, high, partner, starts):  # pragma: no cover - compiled
    """How many rows :func:`merge_pairs` makes."""
    total = 0
    for k in range(starts.shape[0] - 1):
        q = partner[k]
        if q == -1:
            total += starts[k + 1] - starts[k]
        elif q > k:
            for a in range(starts[k], starts[k + 1]):
                for b in range(starts[q], starts[q + 1]):
                    if _overlap(low, high, a, b):
                        total += 1
    return total


@kernel
def merge_pairs(low, high, margins, scores, partner, starts, total):  # pragma: no cover - compiled
    """The leaf table with the paired trees merged: one row per pair of their leaves whose boxes
    share a point (the intersection box, the sums of margins and of scores), a tree on its own
    copied; ``(low, high, trees, margins, scores)`` with ``total`` rows (:func:`merged_rows`),
    grouped by merged tree. Every point lies in exactly one row of each merged tree, as it did in
    one leaf of each tree, so the bounds, cells and point sums of :func:`search` mean the same on
    the merged table; only the bounds are tighter (a pair's best leaves can no longer disagree)."""
    n_free = low.shape[1]
    new_low = np.empty((total, n_free), low.dtype)
    new_high = np.empty((total, n_free), low.dtype)
    new_margins = np.empty((total, margins.shape[1]))
    new_scores = np.empty((total, scores.shape[1]))
    new_trees = np.empty(total, np.int64)
    r = 0
    g = 0
    for k in range(starts.shape[0] - 1):
        q = partner[k]
        if q == -1:
            for a in range(starts[k], starts[k + 1]):
                new_low[r] = low[a]
                new_high[r] = high[a]
                new_margins[r] = margins[a]
                new_scores[r] = scores[a]
                new_trees[r] = g
                r += 1
            g += 1
        elif q > k:
            for a in range(starts[k], starts[k + 1]):
                for b in range(starts[q], starts[q + 1]):
                    if _overlap(low, high, a, b):
                        for j in range(n_free):
                            new_low[r, j] = max(low[a, j], low[b, j])
                            new_high[r, j] = min(high[a, j], high[b, j])
                        new_margins[r] = margins[a] + margins[b]
                        new_scores[r] = scores[a] + scores[b]
                        new_trees[r] = g
                        r += 1
            g += 1
    return new_low, new_high, new_trees, new_margins, new_scores
