"""The compiled chain bound of the box search (numba [Lam15]): the best margin of a chain of
leaves, one per tree of a box, in which consecutive leaves share a point
(:func:`chain_bound`).

A point of the box reaches one leaf of every tree, and any two of those leaves share that point;
asking it of consecutive trees of a chain only is a relaxation, solved exactly by dynamic
programming along the chain (as Viterbi's algorithm over a path of pairwise constraints), whose
value bounds the margin of every point of the box. With each tree's partner
(:func:`.pair_kernels.pair_partners`) next to it in the chain, it is at most the pair bound
(:func:`.box_kernels.pair_bound`), which asks consistency of the partners only, and at most the
per-tree bound (:func:`.bound_kernels.bound`), which asks none: the tree-merging bounds of Chen et
al. (2019) [Che19] and Devos et al. (2021) [DMD21] with every link of a path of trees where they
merge disjoint pairs.

[Lam15] Lam, Pitrou and Seibert, "Numba: a LLVM-based Python JIT compiler", LLVM-HPC 2015.
[Che19] Chen, Zhang, Si, Li, Boning and Hsieh, "Robustness Verification of Tree-based Models",
NeurIPS 2019. [DMD21] Devos, Meert and Davis, "Versatile Verification of Tree Ensembles", ICML 2021.
"""

from __future__ import annotations

import numpy as np

from rfexplain.core.jit import kernel
from rfexplain.sat.pair_kernels import _overlap


@kernel
def chain_bound(  # pragma: no cover - compiled
    rows, n, low, high, trees, margins, partner, floor, stamp, tree_run, run_start, serial, chain, tail, value, ranked
):
    """The best sum of margins (one other class: column 0 of ``margins``) over chains of the
    leaves ``rows[:n]``, one leaf per tree present, in which consecutive leaves share a point;
    ``-inf`` when no chain exists (then no point of the box reaches one leaf of every tree).
    Chains at most ``floor`` are not followed (a leaf is dropped once its best value so far plus
    a bound on what the links after it add, each tree's best margin or a pair's best two leaves
    that meet, is at most ``floor``): the answer is exact when above ``floor``, else some value at
    most ``floor``. Within each tree the rows must be in decreasing margin (the pairs' walk stops
    early).

    ``rows[:n]`` must be grouped by tree. The chain visits the trees in their order in ``rows``,
    each tree with a partner present (``partner[t]``, by tree id; -1: none) followed by it.
    ``stamp``/``tree_run`` (by tree id), ``run_start``, ``chain``, ``tail`` (a run each), ``value`` and
    ``ranked`` (a row each) are scratch; ``serial`` must differ from every earlier call's on the
    same ``stamp``. Two leaves that both meet the box and meet each other meet inside it
    (intervals have the Helly property), so their own boxes decide."""
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
    if runs == 0:
        return -np.inf
    links = 0
    for s in range(runs):
        t = trees[rows[run_start[s]]]
        p = partner[t] if partner.shape[0] > 0 else -1
        has_partner = p != -1 and stamp[p] == serial
        if has_partner and p < t:  # visited right after its partner
            continue
        chain[links] = s
        links += 1
        if has_partner:
            chain[links] = tree_run[p]
            links += 1
    # tail[k]: a bound on what the links after link k add: a tree's best margin, or a pair's
    # best two leaves that meet when both trees of the pair come after link k
    tail[links - 1] = 0.0
    k = links - 1
    while k > 0:
        s = chain[k]
        if k >= 2 and _partners(trees, rows, run_start, partner, chain[k - 1], s):
            best = _pair_best(rows, low, high, margins, run_start, chain[k - 1], s)
            tail[k - 1] = tail[k] + _top(rows, margins, run_start, s)
            tail[k - 2] = tail[k] + best
            k -= 2
        else:
            tail[k - 1] = tail[k] + _top(rows, margins, run_start, s)
            k -= 1
    # the first link: each leaf's own margin, ranked in decreasing value
    s = chain[0]
    held = 0
    for i in range(run_start[s], run_start[s + 1]):
        value[i] = margins[rows[i], 0]
        if value[i] + tail[0] > floor:
            ranked[held] = i
            held += 1
    if held == 0:
        return -np.inf
    _rank(ranked, 0, held, value)
    for k in range(1, links):
        # each leaf of the next link after the best leaf of the previous one it meets
        s = chain[k]
        kept = 0
        for i in range(run_start[s], run_start[s + 1]):
            a = rows[i]
            for q in range(held):
                b = ranked[q]
                if margins[a, 0] + value[b] + tail[k] <= floor:
                    break
                if _overlap(low, high, a, rows[b]):
                    value[i] = margins[a, 0] + value[b]
                    ranked[held + kept] = i
                    kept += 1
                    break
        if kept == 0:
            return -np.inf
        _rank(ranked, held, kept, value)
        # the previous link's ranks are no longer needed: this one's move down
        for q in range(kept):
            ranked[q] = ranked[held + q]
        held = kept
    return value[ranked[0]]


@kernel
def _rank(ranked, start, count, value):  # pragma: no cover - compiled
    """Sort ``ranked[start:start + count]`` (row positions) by decreasing ``value``, by insertion
    (a tree's few leaves in a box)."""
    for a in range(start + 1, start + count):
        key = ranked[a]
        b = a - 1
        while b >= start and value[ranked[b]] < value[key]:
            ranked[b + 1] = ranked[b]
            b -= 1
        ranked[b + 1] = key


@kernel
def _top(rows, margins, run_start, s):  # pragma: no cover - compiled
    """The best margin of run ``s``'s leaves."""
    best = -np.inf
    for i in range(run_start[s], run_start[s + 1]):
        best = max(best, margins[rows[i], 0])
    return best


@kernel
def _partners(trees, rows, run_start, partner, s, q):  # pragma: no cover - compiled
    """Whether the trees of runs ``s`` and ``q`` are partners."""
    return partner.shape[0] > 0 and partner[trees[rows[run_start[s]]]] == trees[rows[run_start[q]]]


@kernel
def _pair_best(rows, low, high, margins, run_start, s, q):  # pragma: no cover - compiled
    """The best sum of margins of a leaf of run ``s`` and one of run ``q`` that meet (``-inf``:
    none), walking both runs in their decreasing margins and stopping once no better sum is
    left (as :func:`.box_kernels.pair_bound` does)."""
    top_q = margins[rows[run_start[q]], 0]
    best = -np.inf
    for i in range(run_start[s], run_start[s + 1]):
        a = rows[i]
        if margins[a, 0] + top_q <= best:
            break
        for k in range(run_start[q], run_start[q + 1]):
            b = rows[k]
            v = margins[a, 0] + margins[b, 0]
            if v <= best:
                break
            if _overlap(low, high, a, b):
                best = v
                break
    return best
