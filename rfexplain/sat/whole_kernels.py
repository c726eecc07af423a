"""The compiled search of a small box whole (numba [Lam15]), the box search's leaves
(:mod:`rfexplain.sat.box_kernels`, :mod:`rfexplain.sat.deciders.boxes`): a box whose reachable
leaves cut it into few *cells* (states no leaf tells apart) is walked depth first over its free
features (:func:`_search_whole`), one allowed state per cell (:func:`_cell_starts`,
:func:`_cell_options`), each point summing only its own leaves, and a prefix whose leaves' bound
(:func:`.bound_kernels.bound`) rules the condition out is skipped. Soft-vote points at a near tie
go to the caller's tie buffer (slots of the search's ``state`` array: :data:`STACK_SIZE`,
:data:`TIES`, :data:`TIE_OVERFLOW`).

[Lam15] Lam, Pitrou and Seibert, "Numba: a LLVM-based Python JIT compiler", LLVM-HPC 2015.
"""

from __future__ import annotations

import numpy as np

from rfexplain.core.jit import kernel
from rfexplain.sat.bound_kernels import _outcome, bound

#: slots of the ``state`` array: boxes on the stack, tie points stored, tie buffer overflowed
STACK_SIZE, TIES, TIE_OVERFLOW = range(3)


@kernel
def _cell_starts(rows, n, low, high, j, lo, hi, buffer):  # pragma: no cover - compiled
    """The first states of the cells that the leaves ``rows[:n]`` cut ``lo..hi`` of column ``j``
    into, sorted and distinct, written into ``buffer``; their number."""
    k = 0
    buffer[k] = lo
    k += 1
    for i in range(n):
        r = rows[i]
        a = low[r, j]
        if lo < a <= hi:
            buffer[k] = a
            k += 1
        b = high[r, j] + 1
        if lo < b <= hi:
            buffer[k] = b
            k += 1
    buffer[:k].sort()
    distinct = 1
    for i in range(1, k):
        if buffer[i] != buffer[distinct - 1]:
            buffer[distinct] = buffer[i]
            distinct += 1
    return distinct


@kernel
def _cell_options(starts, k, hi, allowed, begin, stop, out, taken):  # pragma: no cover - compiled
    """One state per cell of a feature (cells starting at ``starts[:k]``, sorted, the last ending
    at ``hi``): the cell's first state among ``allowed[begin:stop]`` (sorted), none for a cell
    without one, written into ``out`` from ``taken`` on; the new ``taken``."""
    for c in range(k):
        end = starts[c + 1] - 1 if c + 1 < k else hi
        at = begin + np.searchsorted(allowed[begin:stop], starts[c])
        if at < stop and allowed[at] <= end:
            out[taken] = allowed[at]
            taken += 1
    return taken


@kernel
def _cell_options_down(starts, k, hi, allowed, begin, stop, out, taken):  # pragma: no cover - compiled
    """As :func:`_cell_options`, but each cell's *last* state among ``allowed[begin:stop]``, the
    cells from the last one down: the upper states first, each cell's furthest up."""
    for c in range(k - 1, -1, -1):
        end = starts[c + 1] - 1 if c + 1 < k else hi
        at = begin + np.searchsorted(allowed[begin:stop], end, side="right") - 1
        if at >= begin and allowed[at] >= starts[c]:
            out[taken] = allowed[at]
            taken += 1
    return taken


@kernel
def _cell_options_around(starts, k, hi, allowed, begin, stop, out, taken, at_state):  # pragma: no cover - compiled
    """As :func:`_cell_options`, but nearest to the state ``at_state`` first: the allowed state
    of the cell holding it (or of the first or last cell, when it lies outside them) nearest to
    it, then each cell below by its last allowed state, from the nearest down, then each cell
    above by its first allowed state, from the nearest up."""
    held = 0
    while held + 1 < k and starts[held + 1] <= at_state:
        held += 1
    end = starts[held + 1] - 1 if held + 1 < k else hi
    first = begin + np.searchsorted(allowed[begin:stop], max(starts[held], at_state))
    below = begin + np.searchsorted(allowed[begin:stop], min(end, at_state), side="right") - 1
    if first < stop and allowed[first] <= end:
        out[taken] = allowed[first]
        taken += 1
    elif below >= begin and allowed[below] >= starts[held]:
        out[taken] = allowed[below]
        taken += 1
    taken = _cell_options_down(starts, held, starts[held] - 1, allowed, begin, stop, out, taken)
    return _cell_options(starts[held + 1 :], k - held - 1, hi, allowed, begin, stop, out, taken)


@kernel
def _search_whole(
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
    buffer,
    level_start,
    level_count,
    choice,
    ties,
    state,
    witness,
):  # pragma: no cover - compiled
    """Search a small box whole: every combination of the free features' options
    (``option_values[option_at[j]:option_at[j + 1]]``, in order, the last feature fastest), True
    with the first point where the condition holds written into ``witness``, else False (soft-vote
    near ties stored in ``ties``). Depth first over the features, each level keeping the leaves of
    ``rows[:n]`` that hold the options chosen so far (a feature ``whole`` on the box, which no leaf
    cuts, keeps them all), so a point's sums add its own leaves only; a level whose leaves' bound
    (:func:`bound`) rules the condition out is skipped with every point below it."""
    n_free = point.shape[0]
    buffer[:n] = rows[:n]
    level_start[0] = 0
    level_count[0] = n
    choice[0] = 0
    d = 0
    while True:
        if d == n_free:
            sums[:] = 0.0
            at = level_start[d]
            for i in range(level_count[d]):
                sums += scores[buffer[at + i]]
            outcome = _outcome(sums, cls, not_kind, soft, near_tie)
            if outcome == 1:
                witness[:] = point
                return True
            if outcome == -1:
                if state[TIES] < ties.shape[0]:
                    ties[state[TIES]] = point
                    state[TIES] += 1
                else:
                    state[TIE_OVERFLOW] = 1
            d -= 1
            if d < 0:
                return False
            choice[d] += 1
            continue
        if choice[d] >= option_at[d + 1] - option_at[d]:
            d -= 1
            if d < 0:
                return False
            choice[d] += 1
            continue
        v = option_values[option_at[d] + choice[d]]
        point[d] = v
        at = level_start[d]
        count = level_count[d]
        if whole[d]:
            level_start[d + 1] = at
            level_count[d + 1] = count
        else:
            to = at + count
            kept = 0
            for i in range(count):
                r = buffer[at + i]
                if low[r, d] <= v <= high[r, d]:
                    buffer[to + kept] = r
                    kept += 1
            level_start[d + 1] = to
            level_count[d + 1] = kept
            if kept < count and bound(buffer[to:], kept, trees, margins, penalty, not_kind) <= -near_tie:
                choice[d] += 1
                continue
        d += 1
        choice[d] = 0
