"""Counterexample search by coordinate ascent on the vote margin, with random restarts.

A satisfiable query of the SAT engine ("some input agreeing with the instance on the fixed
features makes the forest not predict ``c``", or "predict ``t``") can keep both exact searches
busy for minutes on scikit-learn's unlimited-depth forests: the reduced formula's solver
(:mod:`rfexplain.sat.deciders.reduced_cnf`) and the box search (:mod:`rfexplain.sat.deciders.boxes`) each walk
a huge space in a fixed order, where a local search on the margin often finds a
counterexample at once.

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

Restarts are not all random: each starts from the best end point so far with ``kick``
random features moved to random cells, and only after ``patience`` such restarts in a row
that did not improve on it from a random point, the iterated local search of Lourenço, Martin
and Stützle (2003) [LMS03]: the end points of random restarts are spread far apart (on two
satisfiable steps of ring's default forest, margins from -46 to -2 votes), the kicked restarts
stay near the best. Restarts until a counterexample, 8 seeds each, on the two steps above:
random 124 / 243 on average; with a random restart after 20 kicks that did not improve, kicks
of 2 features 111 / 149, of 4 65 / 61, of 6 73 / 124; kicks of 4 and a random restart after 5,
63 / 55. The first restarts may start from given points (:attr:`MarginClimb.starts`): the SAT
engine passes the last counterexamples it found for the same instance in the same call, whose
free features the next query's counterexample often shares.

The SAT engine runs it under the hard vote beside the reduced formula's solver and the branch
and bound (:mod:`rfexplain.sat.deciders.portfolio`, step 3), and in the branch and bound's race
(:mod:`rfexplain.sat.deciders.race`; where the clique search joins, hard vote between two
classes, from its third slice and until the solver joins), on one representative state per
cell. The loop is compiled
(:mod:`.climb_kernels`). It is a heuristic for the satisfiable side only: it proves nothing when
it finds nothing, and the cell it finds is confirmed by the caller with the forest's exact vote
before it is used as a witness. Its random numbers come from a generator seeded per query, so a query (after the same
earlier queries of its call) gets the same witness on every run.

[ZZH20] Zhang, Zhang and Hsieh, "An Efficient Adversarial Attack for Tree Ensembles", NeurIPS
2020. [LMS03] Lourenço, Martin and Stützle, "Iterated Local Search", Handbook of Metaheuristics,
2003.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rfexplain.core.vote import NEAR_TIE
from rfexplain.sat.tuning import DEFAULT_TUNING

__all__ = ["MarginClimb"]


class MarginClimb:
    """Coordinate ascent over the free features' positions (cells, or states) toward a point where
    the condition holds.

    Parameters
    ----------
    first, last : int arrays of shape (leaves, free features)
        Each reachable leaf's box as an inclusive range of positions per free feature.
    margins : float array of shape (leaves, challengers)
        Per leaf, its contribution to each challenger's margin (as
        :meth:`~rfexplain.sat.deciders.leaves.LeafTable.margins` gives them).
    penalty : float array of shape (challengers,)
        What each challenger's summed margin must exceed besides.
    sizes : sequence of int
        The number of positions of each free feature (its cells, or its states).
    any_challenger : bool
        The condition holds when some challenger's margin is reached (``"not"``), else when every
        one is (``"predicts"``).
    seed : int
        Seed of the generator of starting points and tie breaks.
    allowed : pair of int arrays, optional
        The positions a point may take: those of free feature ``j`` are
        ``allowed[0][allowed[1][j]:allowed[1][j + 1]]``, sorted, none empty (default: all).
    starts : int array of shape (points, free features), optional
        Allowed points the first climbs start from, one each, on top of the restarts of the first
        :meth:`run`.
    kick, patience : int
        Features a restart moves at random from the best end point so far (iterated local
        search), and the restarts in a row that may fail to improve on it before one starts from
        a random point (default: the tuning's ``climb_kick`` and ``climb_patience``,
        :class:`~rfexplain.sat.tuning.SatTuning`).
    """

    def __init__(
        self,
        first: np.ndarray,
        last: np.ndarray,
        margins: np.ndarray,
        penalty: np.ndarray,
        sizes: Sequence[int] | np.ndarray,
        *,
        any_challenger: bool,
        seed: int = 0,
        allowed: tuple[np.ndarray, np.ndarray] | None = None,
        starts: np.ndarray | None = None,
        kick: int = DEFAULT_TUNING.climb_kick,
        patience: int = DEFAULT_TUNING.climb_patience,
    ) -> None:
        self.first = first
        self.kick, self.patience = kick, patience
        self.last = last
        self.margins = margins
        self.penalty = penalty
        self.sizes = np.asarray(sizes, dtype=np.int64)
        if allowed is None:
            allowed = (
                np.concatenate([np.arange(m, dtype=np.int64) for m in self.sizes.tolist()] or [np.zeros(0, np.int64)]),
                np.concatenate(([0], np.cumsum(self.sizes))).astype(np.int64),
            )
        self.allowed = allowed
        self.any_challenger = any_challenger
        #: the starting points not climbed from yet
        self.starts = np.zeros((0, len(self.sizes)), dtype=np.int64) if starts is None else starts
        #: the best end point of the climbs so far and (its margin, -inf before the first climb
        #: ends; the kicked restarts since that did not improve on it)
        self.best = np.zeros(len(self.sizes), dtype=np.int64)
        self.memory = np.asarray([-np.inf, 0.0])
        #: the compiled climb's xorshift64* state (:mod:`.climb_kernels`): the seed spread by the
        #: golden-ratio multiplier of splitmix64, never zero
        self.rng = np.asarray([((seed + 1) * 0x9E3779B97F4A7C15) % 2**64 or 1], dtype=np.uint64)

    def run(self, restarts: int) -> np.ndarray | None:
        """Climb from the given :attr:`starts` not climbed from yet, then from up to ``restarts``
        more starting points (kicked or random); the positions of the first point found where
        the condition holds (a soft-vote margin up to :data:`~rfexplain.core.vote.NEAR_TIE`
        short of it counts: the caller decides it exactly), else ``None``."""
        from rfexplain.sat.climb_kernels import climb

        point = np.zeros(len(self.sizes), dtype=np.int64)
        found = climb(
            self.first,
            self.last,
            self.margins,
            self.penalty,
            self.allowed[0],
            self.allowed[1],
            self.sizes,
            self.any_challenger,
            NEAR_TIE,
            len(self.starts) + restarts,
            self.rng,
            point,
            self.starts,
            self.kick,
            self.patience,
            self.best,
            self.memory,
        )
        self.starts = self.starts[:0]
        return point if found else None
