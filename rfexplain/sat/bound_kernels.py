"""The compiled per-tree bounds of the SAT engine's deciders over leaf boxes, compiled by numba
[Lam15]: the sum over trees of the best margin a reachable leaf gives (:func:`bound`, the bound
of Kantchelian, Tygar and Joseph (2016) [KTJ16] and Chen et al. (2019) [Che19] over the leaves
an instance can still reach), deletion against it (:func:`bound_core`, the bounds decider's
core, :mod:`rfexplain.sat.deciders.bounds`), and the decision of a point's class sums
(:func:`_outcome`), which leaves a soft-vote near tie to the caller's exact arithmetic.

[Lam15] Lam, Pitrou and Seibert, "Numba: a LLVM-based Python JIT compiler", LLVM-HPC 2015.
[KTJ16] Kantchelian, Tygar and Joseph, "Evasion and Hardening of Tree Ensemble Classifiers",
ICML 2016. [Che19] Chen, Zhang, Si, Li, Boning and Hsieh, "Robustness Verification of Tree-based
Models", NeurIPS 2019.
"""

from __future__ import annotations

import numpy as np

from rfexplain.core.jit import kernel


@kernel
def _class_totals(positions, count, trees, margins):  # pragma: no cover - compiled
    """Per other class (column of ``margins``), the sum over trees of the best margin a leaf of
    ``positions[:count]`` (rows grouped by tree) gives."""
    n_other = margins.shape[1]
    total = np.zeros(n_other)
    best = np.full(n_other, -np.inf)
    previous = -1
    for i in range(count):
        r = positions[i]
        if trees[r] != previous:
            if previous != -1:
                total += best
                best[:] = -np.inf
            previous = trees[r]
        for d in range(n_other):
            if margins[r, d] > best[d]:
                best[d] = margins[r, d]
    if previous != -1:
        total += best
    return total


@kernel
def bound(positions, count, trees, margins, penalty, not_kind):  # pragma: no cover - compiled
    """An upper bound on the margin by which the condition can hold with the leaves
    ``positions[:count]`` (rows of ``margins``/``trees``, grouped by tree): per other class, the
    sum over trees of the best margin a leaf gives (:meth:`~rfexplain.sat.deciders.leaves.LeafTable.margins`),
    less its ``penalty``; "not" (``not_kind``) needs one class, "predicts" beats them all."""
    if margins.shape[1] == 0:
        return -np.inf if not_kind else np.inf
    total = _class_totals(positions, count, trees, margins) - penalty
    return total.max() if not_kind else total.min()


@kernel
def _binding_class(positions, count, trees, margins, penalty, not_kind):  # pragma: no cover - compiled
    """The column of :func:`bound`'s binding class among the leaves ``positions[:count]``: the
    one whose bound is largest ("not", ``not_kind``) or smallest ("predicts")."""
    total = _class_totals(positions, count, trees, margins) - penalty
    d = 0
    for e in range(1, total.shape[0]):
        if (total[e] > total[d]) if not_kind else (total[e] < total[d]):
            d = e
    return d


@kernel
def bound_core(outside, fixed, trees, margins, penalty, not_kind, near_tie, kept):  # pragma: no cover - compiled
    """Deletion against the bounds (:meth:`~rfexplain.sat.deciders.bounds.Bounds.core`):
    for each feature ``fixed[i]`` in turn, ``kept[i]`` is cleared when the leaves the instance
    reaches without it (and without the features dropped before it) still bound the margin below
    ``-near_tie``; ``outside[leaf, f]`` says the instance's state of ``f`` is outside the leaf's
    box. One call instead of a bound and a numpy pass per feature."""
    n = outside.shape[0]
    misses = np.zeros(n, np.int64)
    for r in range(n):
        for i in range(fixed.shape[0]):
            if outside[r, fixed[i]]:
                misses[r] += 1
    positions = np.empty(n, np.int64)
    for i in range(fixed.shape[0]):
        f = fixed[i]
        count = 0
        for r in range(n):
            if misses[r] == (1 if outside[r, f] else 0):
                positions[count] = r
                count += 1
        kept[i] = bound(positions, count, trees, margins, penalty, not_kind) > -near_tie
        if not kept[i]:
            for r in range(n):
                if outside[r, f]:
                    misses[r] -= 1


@kernel
def _outcome(sums, cls, not_kind, soft, near_tie):  # pragma: no cover - compiled
    """1 when the condition holds for the class sums ``sums``, 0 when it does not, -1 when a
    soft-vote near tie leaves it to exact arithmetic."""
    winner = 0
    for c in range(1, sums.shape[0]):
        if sums[c] > sums[winner]:
            winner = c
    if soft:
        for c in range(sums.shape[0]):
            if c != winner and sums[winner] - sums[c] <= near_tie:
                return -1
    holds = winner != cls if not_kind else winner == cls
    return 1 if holds else 0
