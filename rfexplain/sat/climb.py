"""Counterexample search by coordinate ascent on the vote margin, with random restarts.

A satisfiable query of the SAT engine ("some input agreeing with the instance on the fixed
features makes the forest not predict ``c``", or "predict ``t``") can keep both exact searches
busy for minutes on scikit-learn's unlimited-depth forests: the reduced formula's solver
(:mod:`rfexplain.sat.reduced`) and the branch and bound (:mod:`rfexplain.sat.prefilter`) each walk
a huge space in a fixed order. On the default forest of 100 trees on ring (row 9 of the
``practical_forests`` test rows) three deletion steps with 15-16 free features took them 14.8,
14.6 and 230 s; this search found a counterexample for each in 0.07-0.08 s.

The search works on the cells of the free features (states no reachable leaf tells apart, so one
state per cell decides every point of it) and the boxes of the reachable leaves. From a random
cell per feature it moves one feature at a time to the cell that maximises the condition's
margin with the other features held: for the hard vote the margin is the best challenger's votes
minus the class's (under "predicts ``t``", ``t``'s votes minus its strongest rival's), less half
a vote where the tie rule goes the wrong way; for the soft vote the same over the leaves'
probability vectors. One move evaluates every cell of the feature at once with a difference
array over the leaves that agree with the point on every other feature, in time linear in the
leaves. A restart ends when a sweep over the features improves nothing (moves to an equally
good cell are taken half the time, to cross the plateaus of the hard vote's integer margin).
This is the greedy local search of adversarial attacks on tree ensembles (Zhang, Zhang and Hsieh
(2020) [ZZH20] move between neighbouring leaf tuples the same way), with each coordinate searched
exhaustively over its cells.

The SAT engine runs it under the hard vote beside the reduced formula's solver and the branch
and bound (:meth:`~rfexplain.sat.prefilter.InstanceFilter.decide_reduced`). It is a heuristic for
the satisfiable side only: it proves nothing when it finds nothing, and
the cell it finds is confirmed by the caller with the forest's exact vote before it is used as a
witness. Its random numbers come from a generator seeded per query, so a query gets the same
witness on every run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["MarginClimb"]

#: Float slack under which a soft-vote margin counts as reached (the caller decides it exactly).
SLACK = 1e-9


class MarginClimb:
    """Coordinate ascent over the free features' cells toward a point where the condition holds.

    Parameters
    ----------
    first, last : int arrays of shape (leaves, free features)
        Each reachable leaf's box as an inclusive range of cell indices per free feature.
    margins : float array of shape (leaves, challengers)
        Per leaf, its contribution to each challenger's margin (as
        :meth:`~rfexplain.sat.prefilter.LeafTable.margins` gives them).
    penalty : float array of shape (challengers,)
        What each challenger's summed margin must exceed besides.
    n_cells : sequence of int
        The number of cells of each free feature.
    any_challenger : bool
        The condition holds when some challenger's margin is reached (``"not"``), else when every
        one is (``"predicts"``).
    seed : int
        Seed of the generator of starting points and tie breaks.
    """

    def __init__(
        self,
        first: np.ndarray,
        last: np.ndarray,
        margins: np.ndarray,
        penalty: np.ndarray,
        n_cells: Sequence[int],
        *,
        any_challenger: bool,
        seed: int = 0,
    ) -> None:
        self.first = first
        self.last = last
        self.margins = margins
        self.penalty = penalty
        self.n_cells = [int(m) for m in n_cells]
        self.any_challenger = any_challenger
        self.rng = np.random.default_rng(seed)

    def run(self, restarts: int) -> np.ndarray | None:
        """Climb from up to ``restarts`` random starting points; the cell indices of the first
        point found where the condition holds (up to :data:`SLACK`), else ``None``."""
        for _ in range(restarts):
            found = self._climb()
            if found is not None:
                return found
        return None

    def _score(self, sums: np.ndarray) -> np.ndarray:
        """The condition's margin for rows of per-challenger sums (last axis)."""
        reached = sums - self.penalty
        return reached.max(axis=-1) if self.any_challenger else reached.min(axis=-1)

    def _climb(self) -> np.ndarray | None:
        first, last, rng = self.first, self.last, self.rng
        n_free = len(self.n_cells)
        point = np.asarray([rng.integers(m) for m in self.n_cells], dtype=np.int64)
        inside = (first <= point) & (point <= last)
        missed = n_free - inside.sum(axis=1)
        current = float(self._score(self.margins[missed == 0].sum(axis=0)))
        if current > -SLACK:
            return point
        improved = True
        while improved:
            improved = False
            for j in rng.permutation(n_free).tolist():
                # the leaves the point reaches once feature j is set to any of its cells
                rows = np.flatnonzero(missed - ~inside[:, j] == 0)
                values = self._line(j, rows)
                score = self._score(values)
                best = float(score.max())
                if best > -SLACK:
                    point[j] = int(rng.choice(np.flatnonzero(score > -SLACK)))
                    return point
                if best > current or (best == current and rng.random() < 0.5):
                    improved = improved or best > current
                    current = best
                    point[j] = int(rng.choice(np.flatnonzero(score == best)))
                    was = inside[:, j].copy()
                    inside[:, j] = (first[:, j] <= point[j]) & (point[j] <= last[:, j])
                    missed += was.astype(np.int64) - inside[:, j]
        return None

    def _line(self, j: int, rows: np.ndarray) -> np.ndarray:
        """Per cell of free feature ``j``, the summed margins of the leaves among ``rows`` whose
        box on ``j`` holds the cell (a difference array over the cells)."""
        m = self.n_cells[j]
        starts = self.first[rows, j]
        stops = self.last[rows, j] + 1
        weights = self.margins[rows]
        sums = np.empty((m, weights.shape[1]), dtype=np.float64)
        for d in range(weights.shape[1]):
            delta = np.bincount(starts, weights=weights[:, d], minlength=m + 1)
            delta -= np.bincount(stops, weights=weights[:, d], minlength=m + 1)
            sums[:, d] = np.cumsum(delta[:m])
        return sums
