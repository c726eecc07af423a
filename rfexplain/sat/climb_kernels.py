"""The compiled loop of the counterexample search by coordinate ascent (:mod:`rfexplain.sat.climb`),
compiled by numba [Lam15].

One call runs up to ``restarts`` climbs. A climb starts from a random cell per free feature and
moves one feature at a time (in a random order per sweep) to the cell that maximises the
condition's margin with the other features held, found for all cells of the feature at once by
a difference array over the leaves that agree with the point on every other feature; moves to an
equally good cell are taken half the time; a sweep that improves nothing ends the climb. The
random numbers come from a xorshift64* generator [Vig16] whose state the caller owns (one
``uint64``), so that a query climbs alike on every run, whatever ran before it.

[Lam15] Lam, Pitrou and Seibert, "Numba: a LLVM-based Python JIT compiler", LLVM-HPC 2015.
[Vig16] Vigna, "An experimental exploration of Marsaglia's xorshift generators, scrambled", ACM
Transactions on Mathematical Software 42(4), 2016.
"""

from __future__ import annotations

import numpy as np

from rfexplain.core.jit import kernel
from rfexplain.core.vote import NEAR_TIE
from rfexplain.sat.box_kernels import _cell_options, _cell_starts

_MULTIPLIER = np.uint64(0x2545F4914F6CDD1D)


@kernel
def _next(rng):  # pragma: no cover - compiled
    """The next 64 random bits of the xorshift64* state ``rng[0]`` (never zero)."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * _MULTIPLIER


@kernel
def _below(rng, n):  # pragma: no cover - compiled
    """A random integer in ``0..n-1`` (``n`` >= 1)."""
    return np.int64((_next(rng) >> np.uint64(11)) % np.uint64(n))


@kernel
def _score(sums, penalty, any_challenger):  # pragma: no cover - compiled
    """The condition's margin for one vector of per-challenger sums."""
    best = sums[0] - penalty[0]
    for d in range(1, sums.shape[0]):
        value = sums[d] - penalty[d]
        if (value > best) if any_challenger else (value < best):
            best = value
    return best


@kernel
def _pick(rng, scores, options, threshold, strict):  # pragma: no cover - compiled
    """A random position among ``options`` whose score is above ``threshold`` (``strict``) or
    equal to it (the caller knows one is)."""
    count = 0
    for c in options:
        if (scores[c] > threshold) if strict else (scores[c] == threshold):
            count += 1
    k = _below(rng, count)
    for c in options:
        if (scores[c] > threshold) if strict else (scores[c] == threshold):
            if k == 0:
                return c
            k -= 1
    return -1  # not reached


@kernel
def climb(
    first,
    last,
    margins,
    penalty,
    allowed,
    allowed_at,
    size,
    any_challenger,
    slack,
    restarts,
    rng,
    point,
    starts,
    kick,
    patience,
    best_point,
    memory,
):  # pragma: no cover - compiled
    """Run up to ``restarts`` climbs; True when one reached a point where the condition holds (up
    to ``slack``), written into ``point``, else False. The first climbs start from the rows of
    ``starts`` (positions, one row per climb; allowed ones); each later one from the best end
    point so far (``best_point``, its margin ``memory[0]``, ``-inf`` before the first) with
    ``kick`` random features moved to random positions, or from a random point after
    ``patience`` such kicks in a row that did not improve on it (``memory[1]``).

    A point gives each free feature ``j`` a position in ``0..size[j]-1`` (a cell index or a state)
    among ``allowed[allowed_at[j]:allowed_at[j + 1]]`` (sorted; none empty). ``first``/``last``:
    each leaf's box as inclusive position ranges per free feature (first > last: no position);
    ``margins``: per leaf, its contribution to each challenger's margin; ``penalty``: what each
    challenger's summed margin must exceed besides; ``any_challenger``: the condition holds when
    some challenger's margin is reached, else when every one is; ``rng``: the generator's state
    (one nonzero ``uint64``)."""
    n_leaves, n_free = first.shape
    n_dims = margins.shape[1]
    largest = 1
    for j in range(n_free):
        largest = max(largest, size[j])
    inside = np.empty((n_leaves, n_free), np.bool_)
    missed = np.empty(n_leaves, np.int64)
    sums = np.empty(n_dims)
    delta = np.empty((largest + 1, n_dims))
    scores = np.empty(largest)
    order = np.empty(n_free, np.int64)
    for restart in range(restarts):
        kicked = False
        if restart < starts.shape[0]:
            point[:] = starts[restart]
        elif memory[0] > -np.inf and memory[1] < patience and kick < n_free:
            kicked = True
            point[:] = best_point
            for j in range(n_free):
                order[j] = j
            for q in range(kick):  # kick distinct features, by a partial Fisher-Yates shuffle
                k = q + _below(rng, n_free - q)
                order[q], order[k] = order[k], order[q]
                j = order[q]
                begin = allowed_at[j]
                point[j] = allowed[begin + _below(rng, allowed_at[j + 1] - begin)]
        else:
            for j in range(n_free):
                begin = allowed_at[j]
                point[j] = allowed[begin + _below(rng, allowed_at[j + 1] - begin)]
        sums[:] = 0.0
        for i in range(n_leaves):
            miss = 0
            for j in range(n_free):
                hit = first[i, j] <= point[j] <= last[i, j]
                inside[i, j] = hit
                if not hit:
                    miss += 1
            missed[i] = miss
            if miss == 0:
                sums += margins[i]
        current = _score(sums, penalty, any_challenger)
        if current > -slack:
            return True
        improved = True
        while improved:
            improved = False
            for j in range(n_free):  # a random order (Fisher-Yates)
                order[j] = j
            for j in range(n_free - 1, 0, -1):
                k = _below(rng, j + 1)
                order[j], order[k] = order[k], order[j]
            for j in order:
                m = size[j]
                options = allowed[allowed_at[j] : allowed_at[j + 1]]
                delta[: m + 1] = 0.0
                for i in range(n_leaves):  # the leaves the point reaches once j is set to any position
                    if (missed[i] == 0 or (missed[i] == 1 and not inside[i, j])) and first[i, j] <= last[i, j]:
                        delta[first[i, j]] += margins[i]
                        delta[last[i, j] + 1] -= margins[i]
                sums[:] = 0.0
                at = 0
                best = -np.inf
                for c in options:
                    while at <= c:
                        sums += delta[at]
                        at += 1
                    scores[c] = _score(sums, penalty, any_challenger)
                    best = max(best, scores[c])
                if best > -slack:
                    point[j] = _pick(rng, scores, options, -slack, True)
                    return True
                if best > current or (best == current and _below(rng, 2) == 0):
                    improved = improved or best > current
                    current = best
                    point[j] = _pick(rng, scores, options, best, False)
                    for i in range(n_leaves):
                        hit = first[i, j] <= point[j] <= last[i, j]
                        if hit != inside[i, j]:
                            missed[i] += -1 if hit else 1
                            inside[i, j] = hit
        # the end point: the next kicks start from it when it is at least as good as the best
        if not kicked or current > memory[0]:
            memory[1] = 0.0
        else:
            memory[1] += 1.0
        if not kicked or current >= memory[0]:
            best_point[:] = point
            memory[0] = current
    return False


@kernel
def representatives(low, high, top, allowed, allowed_at, buffer, values, at):  # pragma: no cover - compiled
    """Per free feature ``j``, one state per cell of ``0..top[j]`` that the leaf boxes
    ``low..high`` cut it into (states no leaf tells apart): the cell's first state among
    ``allowed[allowed_at[j]:allowed_at[j + 1]]``, none for a cell without one. Written into
    ``values[at[j]:at[j + 1]]``, sorted (``buffer``: room for ``2 * leaves + 1`` states;
    ``values``: for every feature's cells)."""
    n = low.shape[0]
    rows = np.arange(n)
    taken = 0
    at[0] = 0
    for j in range(low.shape[1]):
        k = _cell_starts(rows, n, low, high, j, 0, top[j], buffer)
        taken = _cell_options(buffer, k, top[j], allowed, allowed_at[j], allowed_at[j + 1], values, taken)
        at[j + 1] = taken


def warm_up(box_dtype: np.dtype) -> None:
    """Load (or compile, on a machine's first run) the kernels on a one-leaf query, for the leaf
    boxes of the branch and bound (``box_dtype``) and the cell indices of the reduced formula's
    queries (int64), so that the load does not land inside the first query that needs them."""
    at = np.asarray([0, 1], dtype=np.int64)
    states = np.zeros(1, dtype=np.int64)
    for dtype in {np.dtype(np.int64), np.dtype(box_dtype)}:
        one = np.zeros((1, 1), dtype=dtype)
        climb(
            one,
            one,
            np.ones((1, 1)),
            np.full(1, 2.0),
            states,
            at,
            np.ones(1, np.int64),
            True,
            NEAR_TIE,
            1,
            np.ones(1, np.uint64),
            np.zeros(1, np.int64),
            np.zeros((1, 1), np.int64),
            1,
            1,
            np.zeros(1, np.int64),
            np.asarray([-np.inf, 0.0]),
        )
    boxes = np.zeros((1, 1), dtype=box_dtype)
    representatives(
        boxes, boxes, states, states, at, np.zeros(3, np.int64), np.zeros(1, np.int64), np.zeros(2, np.int64)
    )
