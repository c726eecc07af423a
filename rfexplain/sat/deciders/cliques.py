"""The clique decider: a question as a heaviest clique of the reachable leaves' boxes.

Boxes that meet pairwise share a point (the Helly property of axis-parallel boxes), so the sets
of leaves some point reaches are the maximal cliques of the reachable leaves' intersection
graph: the maximum-clique view of tree-ensemble verification (Kantchelian, Tygar and Joseph
(2016) [KTJ16]; Chen et al. (2019) [Che19]), searched exactly by a colouring branch and bound
(:class:`~rfexplain.sat.cliques.CliqueSearch`, compiled in :mod:`rfexplain.sat.clique_kernels`).
It is used where its colourings bound well: the hard vote between two classes
(:meth:`Cliques.applies`). A clique's point is confirmed by the forest's exact vote.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfexplain.sat.cliques import CliqueSearch
from rfexplain.sat.deciders.base import Answer, Question
from rfexplain.sat.deciders.leaves import InstanceLeaves
from rfexplain.sat.tuning import SatTuning

__all__ = ["Cliques"]


class Cliques:
    """The clique search of one question, over the box search's ``arguments`` (those of
    :func:`.box_kernels.search`), run in slices of its work units."""

    name = "cliques"

    def __init__(self, leaves: InstanceLeaves, arguments: tuple[Any, ...], free: list[int], rows: np.ndarray) -> None:
        tuning = leaves.tuning
        self.leaves, self.free, self.rows = leaves, free, rows
        self.kind, self.cls = ("not" if arguments[9] else "predicts"), int(arguments[8])
        self.search = CliqueSearch(arguments, tuning=tuning)
        #: whether the search has ended (answered, or found a point the exact vote refutes)
        self.done = False
        #: units of work the last :meth:`decide` did
        self.spent = 0

    @staticmethod
    def applies(arguments: tuple[Any, ...], tuning: SatTuning) -> bool:
        """Whether the clique search takes on a question with these box-search ``arguments``
        (:meth:`.CliqueSearch.applies`: the hard vote between two classes, at most the tuning's
        ``max_leaves`` reachable leaves)."""
        return CliqueSearch.applies(arguments, max_leaves=tuning.max_leaves)

    def decide(self, question: Question, budget: int | None) -> Answer | None:
        """Search for about ``budget`` units (``None``: to the end): its answer, or ``None`` while
        it goes on or when its point does not hold, which ends it (:attr:`done`); :attr:`spent`:
        the units it did."""
        from rfexplain.sat import clique_kernels

        search = self.search
        status = search.step(budget if budget is not None else int(np.iinfo(np.int64).max))
        self.spent = search.examined
        if status == clique_kernels.SLICED:
            return None
        self.done = True
        if status == clique_kernels.EXHAUSTED:
            return Answer(False)
        point = search.witness.copy()
        holds, _ = self.leaves.evaluate(point[None, :], self.free, self.rows, self.kind, self.cls)
        return self.leaves.witness(self.free, point) if holds[0] else None
