"""A compact, compiled core for the ADD aggregation of a forest (Gossen and Steffen (2021),
Sect. 6-7 [GS21]).

:class:`~.add.ADDManager` keeps one Python list entry per node field and a dict entry per node
(about 1 KB per node with its Apply cache). :class:`CompactADD` holds the same diagrams -- the
same predicate order, the same reduction rules, hence the same canonical nodes -- in flat arrays
and runs the aggregation's hot loops compiled by numba [Lam15] (:mod:`.add_kernels`):

- a node is one row ``(level, hi, lo)`` of an int32 array (12 bytes); a terminal's class vector
  is one row of an int64 array; two open-addressing unique tables (node ids, at most half full)
  give one id per node;
- Apply of vector addition runs on an explicit frame stack (results travel up the frames) with a
  direct-mapped computed table [BRB90] whose size follows the node count; it stops after a slice
  of steps so that a :class:`~rfexplain.core.budget.Budget` is polled, and resumes from its frames;
- *early decision* (an addition to [GS21], optional): a partial sum over some trees whose
  winner the other trees can no longer change (bounds on what each tree adds to each class)
  becomes a class terminal that absorbs later additions, so the regions already decided stop
  growing; the final majority-vote ADD is the same canonical diagram;
- dead nodes are removed by mark-and-compact between the aggregation's rounds;
- the majority-vote map ``Δ_C`` runs compiled too; the finished diagrams are written out into an
  :class:`~.add.ADDManager` (children first, ids renumbered), where the explanations, counts and
  drawings of :mod:`.add_explain` read them.

The node arrays are allocated at the node budget with ``numpy.empty``, so the operating system
commits only the pages the nodes use. Class vectors must fit int64 (votes always do; soft-vote
weights of very large forests may not: :func:`~.add.aggregate` checks against
:data:`LARGEST_SUM` and aggregates those in Python).

Example
-------
>>> from rfexplain import Forest
>>> from rfexplain.comparators.add import aggregate
>>> raw = {"feature": [0, -1, -1], "threshold": [0.5, 0, 0], "left": [1, -1, -1],
...        "right": [2, -1, -1], "label": [-1, 0, 1]}
>>> forest = Forest.from_raw_trees([raw, raw], n_features=1, classes=["a", "b"])
>>> aggregate(forest, core="compact").stats()["majority_nodes"]
3
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np

from rfexplain.comparators import add_kernels as K
from rfexplain.core.budget import Budget
from rfexplain.core.errors import ADDTooLargeError

__all__ = ["CompactADD", "LARGEST_SUM", "warm_up"]

#: Apply steps per compiled slice, between two budget polls
SLICE = 1 << 20
#: smallest and largest computed table (rows)
CACHE_MIN, CACHE_MAX = 1 << 16, 1 << 24
#: no garbage collection below this many nodes
GC_MIN = 1 << 22
#: the largest class-vector entry the store holds (int64 with room to spare)
LARGEST_SUM = 2**62


def warm_up() -> None:
    """Load (or, on a fresh install, compile) the store's compiled loops now, by running each on
    two one-test diagrams, so that no later aggregation pays for it (a fraction of a second per
    process from numba's cache, seconds on a fresh install)."""
    store = CompactADD([0], 2, reduce=True, max_nodes=64)
    # nodes 0, 1: the terminals (1, 0) and (0, 1); nodes 2, 3: x0 <= t0 ? one : the other
    store.load([-1, -1, 0, 0], [-1, -1, 0, 1], [-1, -1, 1, 0], [(1, 0), (0, 1), None, None], -1)
    exact = store.add(2, 3)
    early = store.add(2, 2, others=(np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)))
    store.depth(store.to_class(exact))
    kept = store.collect([exact, early])
    store.export(kept, -1, release=True)


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


class CompactADD:
    """ADDs over one predicate order in flat arrays (see the module docstring).

    Parameters
    ----------
    level_feature : sequence of int
        The feature each predicate level tests (the order of :class:`~.add.PredicateOrder`).
    n_classes : int
        Length of the class vectors.
    reduce : bool
        The infeasible-path reduction of :class:`~.add.ADDManager` (Sect. 7).
    max_nodes : int
        Node budget: :class:`~rfexplain.core.errors.ADDTooLargeError` when the store would hold
        more.
    """

    def __init__(self, level_feature: Sequence[int], n_classes: int, *, reduce: bool, max_nodes: int) -> None:
        self.n_classes = int(n_classes)
        self.reduce = bool(reduce)
        self.max_nodes = int(max_nodes)
        self.vfeature = np.array(list(level_feature) or [0], dtype=np.int32)
        self.nd = np.empty((self.max_nodes, 3), dtype=np.int32)
        self.vals = np.empty((self.max_nodes, self.n_classes + 1), dtype=np.int64)
        self.cnt = np.array([0, 0, self.max_nodes], dtype=np.int64)
        self.utab = self.ttab = np.empty(0, dtype=np.int32)
        self._rehash()
        self.cache = np.full((CACHE_MIN, 4), -1, dtype=np.int32)
        #: computed-table epoch of each early-decision context (bounds on the other trees' gains)
        self._epochs: dict[bytes, int] = {b"": 0}
        self._no_gain = np.zeros(self.n_classes, dtype=np.int64)
        self.frames = np.zeros((len(self.vfeature) + 2, 8), dtype=np.int32)
        #: the most nodes held at once
        self.peak_nodes = 0

    def __len__(self) -> int:
        return int(self.cnt[K.N_NODES])

    # ------------------------------------------------------------------ in and out
    def load(
        self, level: Sequence[int], hi: Sequence[int], lo: Sequence[int], value: Sequence[Any], terminal_level: int
    ) -> None:
        """Take the diagrams of an empty store's caller: node ``n`` tests ``level[n]`` (children
        before parents), or is a terminal (level ``terminal_level``) holding the class vector
        ``value[n]``; node ids stay the same."""
        if len(self):
            raise ValueError("load() needs an empty store")
        if len(level) > self.max_nodes:
            raise ADDTooLargeError(
                f"the ADD store reached its budget of {self.max_nodes:,} nodes (max_nodes=, or max_memory=)"
            )
        rows = 0
        for n, lv in enumerate(level):
            if lv == terminal_level:
                self.vals[rows, : self.n_classes] = value[n]
                self.vals[rows, self.n_classes] = K.VECTOR
                self.nd[n] = (K.TERM, rows, -1)
                rows += 1
            else:
                self.nd[n] = (lv, hi[n], lo[n])
        self.cnt[K.N_NODES] = len(level)
        self.cnt[K.N_VALS] = rows
        self._rehash()

    def export(
        self, roots: Sequence[int], terminal_level: int, release: bool = False
    ) -> tuple[array[int], array[int], array[int], list[Any], list[int]]:
        """The diagrams ``roots`` with ids renumbered (children first): per node its level
        (``terminal_level`` for a terminal), ``hi`` and ``lo`` (``-1`` for a terminal) as int64
        arrays, and its value (a class-vector tuple, a class index, ``None`` for an internal
        node); then the roots' new ids. With ``release`` the store's arrays are freed first (the
        store is then empty and unusable), so that what the caller builds does not pile onto
        them."""
        order_ids = np.flatnonzero(self._reachable(roots))
        position = np.full(len(self), -1, dtype=np.int64)
        position[order_ids] = np.arange(len(order_ids))
        rows = self.nd[order_ids]
        terminal = rows[:, 0] == K.TERM
        level = np.where(terminal, terminal_level, rows[:, 0].astype(np.int64))
        hi = np.where(terminal, -1, position[np.where(terminal, 0, rows[:, 1])])
        lo = np.where(terminal, -1, position[np.where(terminal, 0, rows[:, 2])])
        terminal_rows = self.vals[rows[terminal, 1]]
        new_roots = [int(position[r]) for r in roots]
        if release:
            self._release()
        values: list[Any] = [None] * len(order_ids)
        k = self.n_classes
        for i, row in zip(np.flatnonzero(terminal).tolist(), terminal_rows):
            values[i] = int(row[0]) if row[k] == K.CLASS else tuple(int(v) for v in row[:k])
        level_a, hi_a, lo_a = (array("q", column.astype(np.int64).tobytes()) for column in (level, hi, lo))
        return level_a, hi_a, lo_a, values, new_roots

    # ------------------------------------------------------------------ operations
    def add(
        self, a: int, b: int, budget: Budget | None = None, others: tuple[np.ndarray, np.ndarray] | None = None
    ) -> int:
        """The class-vector sum of ``a`` and ``b`` (Apply, [GS21] Theorem 7).

        ``others = (low, high)``: the trees outside the sum add between ``low[c]`` and
        ``high[c]`` to class ``c``; a sum that decides the vote whatever they add becomes that
        class's terminal (*early decision*), which absorbs every later addition. Only the
        majority map of the result is then the forest's (its vector terminals stay exact).
        """
        self._fit_cache()
        if others is None:
            early, low, high, epoch = False, self._no_gain, self._no_gain, 0
        else:
            low, high = (np.ascontiguousarray(g, dtype=np.int64) for g in others)
            early = True
            epoch = self._epochs.setdefault(low.tobytes() + high.tobytes(), len(self._epochs))
        self.frames[0, 0], self.frames[0, 1], self.frames[0, 3] = a, b, 0
        depth = 1
        while True:
            status, result, depth = K.apply_add(
                self.nd, self.vals, self.cnt, self.utab, self.ttab, self.vfeature, self.reduce,
                self.cache, self.frames, depth, SLICE, early, low, high, epoch,
            )  # fmt: skip
            self.peak_nodes = max(self.peak_nodes, len(self))
            if status == K.DONE:
                return int(result)
            self._after(status)
            if budget is not None:
                budget.check("applying an ADD operation")

    def to_class(self, root: int) -> int:
        """The majority-vote diagram of a class-vector diagram ([GS21] Def. 22)."""
        seen = self._reachable([root])
        image = np.full(len(seen), -1, dtype=np.int64)
        start = 0
        while True:
            status, start = K.map_to_class(
                self.nd, self.vals, self.cnt, self.utab, self.ttab, self.vfeature, self.reduce, seen, image, start
            )
            self.peak_nodes = max(self.peak_nodes, len(self))
            if status == K.DONE:
                return int(image[root])
            self._after(status)

    def size(self, roots: Sequence[int] | int) -> int:
        """Number of nodes (terminals included) reachable from ``roots``."""
        return int(self._reachable([roots] if isinstance(roots, int) else roots).sum())

    def depth(self, root: int) -> int:
        """Largest number of tests on a path from ``root`` to a terminal."""
        return int(K.depth(self.nd, self._reachable([root]), root))

    def collect(self, roots: Sequence[int]) -> list[int]:
        """Keep only the nodes reachable from ``roots``; returns their new ids (every other id
        becomes invalid)."""
        seen = self._reachable(roots)
        new = np.full(len(seen), -1, dtype=np.int64)
        K.compact(self.nd, self.vals, self.cnt, seen, new)
        self._rehash()
        self.cache.fill(-1)
        return [int(new[r]) for r in roots]

    def maybe_collect(self, roots: list[int], live_after_last: int) -> tuple[list[int], int]:
        """:meth:`collect` when the store holds more than twice the nodes live after the last
        collection (and at least :data:`GC_MIN`, or half the budget); returns the roots and the
        live count."""
        threshold = min(max(GC_MIN, 2 * live_after_last), self.max_nodes // 2)
        if len(self) <= threshold:
            return roots, live_after_last
        roots = self.collect(roots)
        return roots, len(self)

    def nbytes(self) -> int:
        """Bytes of the arrays in use (node rows and terminal rows used, tables, cache)."""
        n, rows = len(self), int(self.cnt[K.N_VALS])
        return (
            n * self.nd.itemsize * 3
            + rows * self.vals.itemsize * self.vals.shape[1]
            + self.utab.nbytes
            + self.ttab.nbytes
            + self.cache.nbytes
        )

    # ------------------------------------------------------------------ internals
    def _rehash(self, size: int = 0) -> None:
        """New unique tables of ``size`` slots (default: the fit for the nodes held)."""
        size = max(size, CACHE_MIN, _pow2_at_least(2 * (len(self) + 1)))
        self.utab = np.full(size, -1, dtype=np.int32)
        self.ttab = np.full(size, -1, dtype=np.int32)
        K.rehash(self.nd, self.vals, len(self), self.utab, self.ttab)

    def _release(self) -> None:
        """Free every array (the store holds nothing afterwards)."""
        self.nd = np.empty((0, 3), dtype=np.int32)
        self.vals = np.empty((0, self.n_classes + 1), dtype=np.int64)
        self.utab = self.ttab = np.empty(0, dtype=np.int32)
        self.cache = np.empty((0, 4), dtype=np.int32)
        self.cnt[:] = 0

    def _after(self, status: int) -> None:
        """Act on a kernel's stop: grow the tables, or raise at the node budget."""
        if status == K.GROW:
            self._rehash(2 * self.utab.shape[0])
        elif status == K.FULL:
            raise ADDTooLargeError(
                f"the ADD store reached its budget of {self.max_nodes:,} nodes (max_nodes=, or max_memory=)"
            )

    def _reachable(self, roots: Sequence[int]) -> np.ndarray:
        """``True`` for every node reachable from ``roots``."""
        n = len(self)
        seen = np.zeros(n, dtype=np.bool_)
        K.reachable(self.nd, np.asarray(list(roots), dtype=np.int64), seen, np.empty(n + 1, dtype=np.int64))
        return seen

    def _fit_cache(self) -> None:
        """Grow the computed table to the power of two at or above the node count (within
        :data:`CACHE_MIN`, :data:`CACHE_MAX`); growing clears it."""
        want = min(CACHE_MAX, max(CACHE_MIN, _pow2_at_least(len(self))))
        if want > self.cache.shape[0]:
            self.cache = np.full((want, 4), -1, dtype=np.int32)
