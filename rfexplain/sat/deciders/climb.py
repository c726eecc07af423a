"""The climbing decider: counterexamples by coordinate ascent on the vote margin.

A heuristic for the satisfiable side (:class:`~rfexplain.sat.climb.MarginClimb`, the greedy
local search of adversarial attacks on tree ensembles, Zhang, Zhang and Hsieh (2020) [ZZH20],
with iterated-local-search restarts, Lourenço, Martin and Stützle (2003) [LMS03]): it proves
nothing when it finds nothing, and the point it finds is a witness only once the forest's exact
vote confirms it (:meth:`.InstanceLeaves.evaluate`). Its first restarts start from the latest
counterexamples the instance's deciders found (:meth:`.InstanceLeaves.starts`). The portfolio
runs it at the end of the box searches' slices (:meth:`Climb.over_boxes`) and beside the reduced
CNF's solver (:meth:`Climb.over_cells`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rfexplain.sat.climb import MarginClimb
from rfexplain.sat.deciders.base import Answer, Question
from rfexplain.sat.deciders.leaves import InstanceLeaves
from rfexplain.sat.deciders.reduced_cnf import cell_ranges

__all__ = ["Climb"]


class Climb:
    """The climb of one question over its free features ``free`` and reachable leaves ``rows``:
    :meth:`run` answers with a confirmed witness or ``None``; once a point it found is refuted by
    the exact vote (a soft-vote near tie), it stops (:attr:`climbing`), as it may find that
    point again."""

    name = "climb"

    def __init__(
        self,
        leaves: InstanceLeaves,
        climb: MarginClimb,
        free: list[int],
        rows: np.ndarray,
        kind: str,
        cls: int,
        cells: Sequence[np.ndarray] | None = None,
    ) -> None:
        """``cells``: per free feature, its cells' states when the climb moves over cell indices
        (:meth:`over_cells`); ``None`` when it moves over states (:meth:`over_boxes`)."""
        self.leaves, self.climb, self.free, self.rows, self.kind, self.cls = leaves, climb, free, rows, kind, cls
        self.cells = cells
        self.climbing = True

    @classmethod
    def over_boxes(
        cls, leaves: InstanceLeaves, arguments: tuple[Any, ...], top: list[int], free: list[int], rows: np.ndarray
    ) -> Climb:
        """The climb of a box search's question (the arguments of :func:`.box_kernels.search`,
        ``top`` the free features' last states), on one state per cell of each free feature
        (:func:`.climb_kernels.representatives`), seeded by the number of reachable leaves."""
        from rfexplain.sat.climb_kernels import representatives

        low, high, _, margins, penalty, _, allowed, allowed_at, target, not_kind = arguments[:10]
        tops = np.asarray(top, dtype=np.int64)
        values = np.zeros(int(np.minimum(tops + 1, 2 * len(low) + 1).sum()), dtype=np.int64)
        at = np.zeros(len(tops) + 1, dtype=np.int64)
        representatives(low, high, tops, allowed, allowed_at, np.zeros(2 * len(low) + 1, np.int64), values, at)
        reps = [values[at[j] : at[j + 1]] for j in range(len(tops))]
        starts = leaves.starts(free, reps)
        for j in range(len(tops)):  # cell indices to the cells' states
            starts[:, j] = reps[j][starts[:, j]]
        climb = MarginClimb(
            low,
            high,
            margins,
            penalty,
            tops + 1,
            any_challenger=bool(not_kind),
            seed=len(rows),
            allowed=(values, at),
            starts=starts,
            kick=leaves.tuning.climb_kick,
            patience=leaves.tuning.climb_patience,
        )
        return cls(leaves, climb, free, rows, "not" if not_kind else "predicts", int(target))

    @classmethod
    def over_cells(
        cls,
        leaves: InstanceLeaves,
        free: list[int],
        lows: np.ndarray,
        highs: np.ndarray,
        cells: list[np.ndarray],
        rows: np.ndarray,
        kind: str,
        target: int,
    ) -> Climb:
        """The climb over the cells ``cells`` of the free features ``free``, whose reachable
        leaves ``rows`` have the boxes ``lows..highs`` (seeded by the question's size, so that a
        question always climbs alike), starting from the latest counterexamples."""
        first, last = cell_ranges(lows, highs, cells)
        margins, penalty = leaves.table.margins(kind, target)
        climb = MarginClimb(
            first,
            last,
            margins[rows],
            penalty,
            [len(reps) for reps in cells],
            any_challenger=kind == "not",
            seed=len(rows),
            starts=leaves.starts(free, cells),
            kick=leaves.tuning.climb_kick,
            patience=leaves.tuning.climb_patience,
        )
        return cls(leaves, climb, free, rows, kind, target, cells)

    def decide(self, question: Question, budget: int | None) -> Answer | None:
        """``budget`` more restarts (``None``: one): a witness the exact vote confirms, else
        ``None``."""
        found = self.climb.run(budget if budget is not None else 1)
        if found is None:
            return None
        if self.cells is None:
            point = found
        else:
            point = np.asarray([reps[i] for reps, i in zip(self.cells, found.tolist())], dtype=np.int64)
        holds, _ = self.leaves.evaluate(point[None, :], self.free, self.rows, self.kind, self.cls)
        if holds[0]:
            return self.leaves.witness(self.free, point)
        self.climbing = False
        return None
