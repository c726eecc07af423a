"""The compiled walks of one point down every tree (numba [Lam15]): the hard vote's winner
(:func:`hard_winner`) and the greedy reduction of a counterexample toward the instance
(:func:`reduce_hard_point`, :func:`reduce_soft_point`: each feature where the point differs set
back to the instance's state while the condition still holds), which the SAT engine's search
uses to turn a counterexample into a correction set (:meth:`.Search.correction_set`).

[Lam15] Lam, Pitrou and Seibert, "Numba: a LLVM-based Python JIT compiler", LLVM-HPC 2015.
"""

from __future__ import annotations

from rfexplain.core.jit import kernel
from rfexplain.sat.bound_kernels import _outcome


@kernel
def hard_winner(point, feature, split, left, right, label, roots, counts):  # pragma: no cover - compiled
    """The hard majority vote on ``point`` (ties to the lowest class index), over the trees laid
    end to end (:attr:`~rfexplain.core.forest.Forest.flat`)."""
    counts[:] = 0
    for k in range(roots.shape[0]):
        node = roots[k]
        while feature[node] >= 0:
            node = left[node] if point[feature[node]] <= split[node] else right[node]
        counts[label[node]] += 1
    best = 0
    for c in range(1, counts.shape[0]):
        if counts[c] > counts[best]:
            best = c
    return best


@kernel
def reduce_hard_point(
    point, target, order, feature, split, left, right, label, roots, cls, not_kind, counts
):  # pragma: no cover - compiled
    """:meth:`~rfexplain.sat.search.Search.correction_set` under the hard vote: each feature of
    ``order`` where ``point`` differs from ``target`` is set to ``target``'s state when the
    forest's decision still meets the condition ("not ``cls``" or "``cls``"); in place. False
    (and ``point`` untouched) when ``point`` itself does not meet it."""
    winner = hard_winner(point, feature, split, left, right, label, roots, counts)
    if (winner == cls) if not_kind else (winner != cls):
        return False
    for i in range(order.shape[0]):
        f = order[i]
        if point[f] != target[f]:
            changed = point[f]
            point[f] = target[f]
            winner = hard_winner(point, feature, split, left, right, label, roots, counts)
            if (winner == cls) if not_kind else (winner != cls):
                point[f] = changed
    return True


@kernel
def _soft_sums(point, feature, split, left, right, proba, roots, sums):  # pragma: no cover - compiled
    """The leaves' probability vectors (``proba``, by node over the trees laid end to end) that
    ``point`` reaches, summed into ``sums`` in float64."""
    sums[:] = 0.0
    for k in range(roots.shape[0]):
        node = roots[k]
        while feature[node] >= 0:
            node = left[node] if point[feature[node]] <= split[node] else right[node]
        for c in range(sums.shape[0]):
            sums[c] += proba[node, c]


@kernel
def reduce_soft_point(
    point, target, order, start, feature, split, left, right, proba, roots, cls, not_kind, near_tie, sums
):  # pragma: no cover - compiled
    """:func:`reduce_hard_point` under the soft vote, from position ``start`` of ``order`` (the
    caller has checked that ``point`` meets the condition): in place, and the position of
    ``order`` at which a float64 near tie left a decision to exact arithmetic (``point`` then
    holds that feature at ``target``'s state, to be undone by the caller if the condition fails),
    or ``order``'s length when done."""
    for i in range(start, order.shape[0]):
        f = order[i]
        if point[f] != target[f]:
            changed = point[f]
            point[f] = target[f]
            _soft_sums(point, feature, split, left, right, proba, roots, sums)
            outcome = _outcome(sums, cls, not_kind, True, near_tie)
            if outcome < 0:
                return i
            if outcome == 0:
                point[f] = changed
    return order.shape[0]
