"""The box search's stack clipped on one feature (:meth:`.BoxSearch.clip`), compiled by numba:
the nearest and around searches of an inflated reason's bounds
(:meth:`~rfexplain.sat.engine.SatEngine.box_around`) narrow every search's boxes after each
witness and go on from them."""

from __future__ import annotations

import numpy as np

from rfexplain.core.jit import kernel
from rfexplain.sat.whole_kernels import STACK_SIZE, TIES

__all__ = ["clip_stack", "warm_up"]


@kernel
def clip_stack(  # pragma: no cover - compiled
    low,
    high,
    j,
    bottom,
    top,
    toward,
    around,
    stack_lo,
    stack_hi,
    stack_rows,
    stack_counts,
    stack_gain,
    pool,
    ties,
    state,
):
    """Narrow every box on the stack of a :func:`.box_kernels.search` to ``bottom..top`` on free feature ``j``
    (leaf boxes ``low..high``): a box outside it is dropped, the others keep, in their order, only
    the rows of the pool that meet it, and their counts of leaf ends are to be taken again. The
    boxes kept are restacked in a stable order by a key on ``j``, the last searched first:
    ``toward`` 2, the distance to the state ``around`` decreasing (the nearest on top); 1, the
    upper end increasing; -1, the lower end decreasing. The tie points outside are dropped."""
    size = state[STACK_SIZE]
    n_free = stack_lo.shape[1]
    kept = np.empty(size, dtype=np.int64)
    keys = np.empty(size, dtype=np.int64)
    n = 0
    for b in range(size):
        lo = max(stack_lo[b, j], bottom)
        hi = min(stack_hi[b, j], top)
        if lo <= hi:
            kept[n] = b
            if toward == 2:
                keys[n] = -(max(lo - around, 0) + max(around - hi, 0))
            elif toward == 1:
                keys[n] = hi
            else:
                keys[n] = -lo
            n += 1
    order = np.argsort(keys[:n], kind="mergesort")
    total = 0
    for k in range(n):
        b = kept[order[k]]
        total += stack_rows[b, 1] - stack_rows[b, 0]
    rows = np.empty(total, dtype=np.int64)
    new_lo = np.empty((n, n_free), dtype=np.int64)
    new_hi = np.empty((n, n_free), dtype=np.int64)
    new_rows = np.empty((n, 2), dtype=np.int64)
    new_gain = np.empty(n)
    position = 0
    for k in range(n):
        b = kept[order[k]]
        lo = max(stack_lo[b, j], bottom)
        hi = min(stack_hi[b, j], top)
        new_rows[k, 0] = position
        for p in range(stack_rows[b, 0], stack_rows[b, 1]):
            r = pool[p]
            if low[r, j] <= hi and high[r, j] >= lo:
                rows[position] = r
                position += 1
        new_rows[k, 1] = position
        new_lo[k] = stack_lo[b]
        new_hi[k] = stack_hi[b]
        new_lo[k, j] = lo
        new_hi[k, j] = hi
        new_gain[k] = stack_gain[b]
    pool[:position] = rows[:position]
    stack_lo[:n] = new_lo
    stack_hi[:n] = new_hi
    stack_rows[:n] = new_rows
    stack_gain[:n] = new_gain
    stack_counts[:n] = 0
    state[STACK_SIZE] = n
    t = 0
    for i in range(state[TIES]):
        if bottom <= ties[i, j] <= top:
            ties[t] = ties[i]
            t += 1
    state[TIES] = t


def warm_up(box_dtype: np.dtype) -> None:
    """Load (or compile) :func:`clip_stack` for leaf boxes of ``box_dtype``, on a one-box stack."""
    one = np.zeros((1, 1), dtype=box_dtype)
    clip_stack(
        one,
        one,
        0,
        0,
        0,
        2,
        0,
        np.zeros((2, 1), dtype=np.int64),
        np.zeros((2, 1), dtype=np.int64),
        np.asarray([[0, 1], [0, 0]], dtype=np.int64),
        np.zeros((2, 2), dtype=np.int64),
        np.full(2, np.inf),
        np.zeros(3, dtype=np.int64),
        np.zeros((1, 1), dtype=np.int64),
        np.asarray([1, 0, 0], dtype=np.int64),
    )
