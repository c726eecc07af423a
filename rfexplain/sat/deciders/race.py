"""The race of one question's deciders that need no solver: box searches, clique search and climb
in slices.

The box searches (:mod:`.boxes`) take the question in slices of the tuning's ``bnb_slice`` boxes,
the first one shorter (``first_slice``, at least one box per ``first_slice_rows`` reachable
leaves); at the end of a slice the searches that join late join (the paired table after slice
``pair_after``, or ``pair_after_more`` with three classes or more; the second split rule after
``race_after`` of the box searches' slices), and so does the clique search (:mod:`.cliques`,
after slice ``clique_after``, hard vote, two classes), which then takes all but one slice in
``clique_turns``; the climb (:mod:`.climb`) takes ``slice_climbs`` restarts at the end of every
slice after the first (where the clique search has joined, ``clique_race_climbs`` restarts from
slice ``clique_race_climb_after`` on, and none once a solver runs beside the race; with neither
search on, it climbs once alone). The turns
are counted in boxes (or units of the clique search's work), so that a question is searched
alike however many boxes each stretch of the race is given.

The portfolio (:mod:`.portfolio`) runs a race as its second step, for at most a node budget, and
resumes it beside the reduced CNF's solver; a box question of the engine runs one alone
(:meth:`Race.decide`), and so does the lattice decider (:mod:`.lattice`) on each of its
lattices.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from rfexplain.sat.deciders.base import DECIDERS, Question
from rfexplain.sat.deciders.boxes import Boxes
from rfexplain.sat.deciders.climb import Climb
from rfexplain.sat.deciders.cliques import Cliques
from rfexplain.sat.deciders.leaves import InstanceLeaves
from rfexplain.sat.deciders.scheduler import Scheduler, Turns

__all__ = ["Race"]


class Race(Scheduler[Question]):
    """The deciders of one question that need no solver, taking turns in slices (module
    docstring); resumable where a node budget stopped it.

    ``boxes``: the reachable leaves' ``rows`` boxes on the ``free`` features
    (:meth:`.InstanceLeaves.free_boxes`); ``bottom``, ``top``: the root box on them (default:
    every state), for the box searches alone (a box question runs without the clique search and
    the climb, which search every state); ``nodes``: the boxes :meth:`decide` may search."""

    what = "searching boxes"

    def __init__(
        self,
        leaves: InstanceLeaves,
        free: list[int],
        rows: np.ndarray,
        boxes: tuple[np.ndarray, np.ndarray],
        kind: str,
        cls: int,
        deciders: Collection[str] = DECIDERS,
        *,
        bottom: list[int] | None = None,
        top: list[int] | None = None,
        nodes: int = 0,
    ) -> None:
        self.leaves, self.free = leaves, free
        self.tuning = tuning = leaves.tuning
        self.nodes = nodes
        self.boxes = Boxes(leaves, free, rows, boxes, kind, cls, searching="boxes" in deciders, bottom=bottom, top=top)
        self.use_cliques = "cliques" in deciders
        #: The clique search once it has joined (at once when the box searches are off).
        self.clique: Cliques | None = None
        if not self.boxes.runs and self.use_cliques and Cliques.applies(self.boxes.arguments, tuning):
            self.clique = Cliques(leaves, self.boxes.arguments, free, self.boxes.rows)
        #: The climb, built at its first turn (:meth:`climber`).
        self.climb: Climb | None = None
        self.climbing = "climb" in deciders and tuning.slice_climbs > 0
        #: whether a box or clique search runs at all (else the climb, when on, climbs once alone)
        self.searches = bool(self.boxes.runs) or self.clique is not None
        #: Whether no solver runs beside the race (set off by the portfolio when one joins).
        self.alone = True
        #: Slices so far, and what is left of the current one.
        self.turn = 0
        self.slice_left = min(tuning.bnb_slice, max(tuning.first_slice, len(rows) // tuning.first_slice_rows))

    @property
    def finished(self) -> bool:
        """No search is left (each ran out with near ties it could not keep): only a solver can
        decide."""
        return not self.boxes.runs and self.clique is None

    def turns(self, question: Question, limited: bool) -> Turns[Question]:
        """The race alone, for at most :attr:`nodes` boxes."""
        return self.slices(self.nodes)

    def slices(self, nodes: int) -> Turns[Question]:
        """The race's turns for at most ``nodes`` more boxes (or units of the clique search's
        work): its answer, or ``None`` when they did not settle the question (or it is
        :attr:`finished`)."""
        boxes = self.boxes
        if not self.searches and self.climbing:  # no search to take turns with: one climb alone
            self.climbing = False
            return (yield self.climber(), self.tuning.slice_climbs)
        limit = nodes
        while boxes.runs or self.clique is not None:
            if self.clique is not None and (not boxes.runs or self._clique_turn()):
                clique = self.clique
                answer = yield clique, min(limit, self.slice_left)
                if clique.done:
                    self.clique = None
                if answer is not None:
                    return answer
                spent = clique.spent
            else:
                answer = yield boxes, min(limit, self.slice_left)
                if answer is not None:
                    return answer
                if boxes.dropped:  # near ties it could not keep: the other search may still settle it
                    self.slice_left = self.tuning.bnb_slice
                    continue
                spent = boxes.spent
            limit -= spent
            self.slice_left -= spent
            if self.slice_left <= 0:  # the slice is over (whichever turns it took): the next one
                self._next_turn()
                restarts = self.climb_restarts()
                if restarts is not None:
                    climb = self.climber()
                    answer = yield climb, restarts
                    if answer is not None:
                        return answer
                    if not climb.climbing:
                        self.climbing = False
            if limit <= 0:
                return None
        return None

    def _next_turn(self) -> None:
        """End a slice: let the searches that join late join (the paired table, the clique
        search, the guided rule) and count the turn."""
        tuning, boxes = self.tuning, self.boxes
        self.slice_left = tuning.bnb_slice
        box_slice = self.clique is None or not self._clique_turn()
        if box_slice:
            boxes.slices += 1
        searching = boxes.searching
        pair_after = tuning.pair_after if boxes.arguments[3].shape[1] == 1 else tuning.pair_after_more
        if searching and self.turn == pair_after:
            boxes.join_paired()
        if searching and self.use_cliques and self.turn == tuning.clique_after:
            if Cliques.applies(boxes.arguments, tuning):
                self.clique = Cliques(self.leaves, boxes.arguments, self.free, boxes.rows)
        if searching and box_slice and boxes.slices == tuning.race_after + 1:
            boxes.join_guided()
        self.turn += 1

    def climb_restarts(self) -> int | None:
        """The climb's restarts at the end of the current slice, after its climbs from the
        latest counterexamples (:meth:`.InstanceLeaves.starts`): ``slice_climbs``; where the
        clique search has joined, ``clique_race_climbs`` from turn ``clique_race_climb_after``
        on, and no climb once a solver runs beside the race (``None``: no climb)."""
        tuning = self.tuning
        if not self.climbing or self.turn == 0:
            return None
        if self.clique is not None:
            if not self.alone or self.turn < tuning.clique_race_climb_after:
                return None
            return tuning.clique_race_climbs
        return tuning.slice_climbs

    def climber(self) -> Climb:
        """The race's climb (:meth:`.Climb.over_boxes`), built at its first turn."""
        if self.climb is None:
            boxes = self.boxes
            self.climb = Climb.over_boxes(self.leaves, boxes.arguments, boxes.top, self.free, boxes.rows)
        return self.climb

    def _clique_turn(self) -> bool:
        """Whether the clique search takes the current slice: all but one in ``clique_turns``."""
        return self.turn % self.tuning.clique_turns != 0
