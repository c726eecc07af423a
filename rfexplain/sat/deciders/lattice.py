"""The lattice decider: a soft-vote question decided on integer margins that bound it from above.

Under the soft vote a tree adds to the margin of a challenger ``d`` over ``c`` the difference of
its leaf's class probabilities, ``m = p_d - p_c`` in ``[-1, 1]``; a pure leaf adds a whole vote,
``+1``, ``-1`` or (a third class's leaf) ``0``, exactly as under the hard vote. The decider
replaces every leaf's ``m`` by an integer ``r >= K m`` on a lattice of step ``1 / K`` and asks the
hard vote's machinery (the race of :class:`~.race.Race`: box searches, clique search, climbs) the
question on those integers, with the hard vote's exact tie rule (a tie needs no margin when it
goes to the challenger, one lattice step otherwise):

- since the integers bound the exact margins from above, a question the integers rule out is
  ruled out exactly (UNSAT, with the bounds' core when the root box's bounds already settle it);
- a point the integers let through is decided with the forest's exact vote: a witness when the
  condition holds there, else the level gives up (a *spurious* point) and the next, finer lattice
  is asked.

Level ``b`` rounds ``m`` up to a multiple of ``2**-b``. The default (the tuning's
``lattice_levels``) is one level of 24 bits: on it a pure leaf weighs a whole vote (``2**24``)
and an impure leaf nearly its exact margin, so that on a forest whose leaves are nearly all pure
the weights are nearly all equal and the clique search bounds about as well as under the hard
vote; and ties are exact, so that a box whose best point is a tie the tie rule decides against
the condition is pruned (in float64 the soft race cannot tell a tie from a near tie, and must
search every such point and set it aside). A spurious point needs an exact margin within a few
``2**-24`` of a tie. Level ``0`` is the vote lattice, ``r = ceil(m)``: a pure leaf's exact vote
(``-1``, ``0`` for a third class, ``+1``), an impure leaf rounded up to a whole vote or an
abstention (with two classes an abstention is rounded on to ``+1``, so that every leaf weighs a
whole vote: the clique search's equal weights); it is looser than the finer levels and is not
asked by default. Where more than the tuning's ``lattice_impure`` of a question's reachable
leaves are impure, the soft vote is far from the hard one: the lattices' relaxed searches would
only go over the boxes the soft race searches next, and the decider leaves the question to it.
On more than ``lattice_clique_leaves`` reachable leaves it races without the clique search,
whose graph costs about as many checks as pairs of leaves. The integers are computed from the
forest's exact leaf weights (:meth:`~rfexplain.core.vote.Vote.integer_weights`), and their sums
stay below ``2**53``, so that every comparison of the search is exact in float64. The cost of a
question thus follows how far the soft vote is from the hard one: how many reachable leaves are
impure, and how close the question's margins come to their rounding. A question no level settles
(a spurious point at the finest level, or a level's box budget spent) is left to the soft vote's
own race (:mod:`.portfolio`), and after a spurious point for at most ``lattice_nodes`` boxes
before the full CNF: its points within rounding of a tie are as many near-ties for the soft
race's boxes.

This is abstraction refinement in the manner of CEGAR (Clarke, Grumberg, Jha, Lu and Veith,
2000 [CGJ00]) with over-approximating integer weights, as the rounding of weights in
pseudo-Boolean solving keeps a constraint implied (Elffers and Nordström, 2018 [EN18]).

[CGJ00] Clarke, Grumberg, Jha, Lu and Veith, "Counterexample-Guided Abstraction Refinement",
CAV 2000. [EN18] Elffers and Nordström, "Divide and Conquer: Towards Faster Pseudo-Boolean
Solving", IJCAI 2018.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection
from typing import Protocol

import numpy as np

from rfexplain.sat.deciders.base import Answer, Question
from rfexplain.sat.deciders.leaves import InstanceLeaves, LeafTable

__all__ = ["Lattice", "lattice_table", "lattice_scores", "lattice_levels"]

#: Largest magnitude a lattice sum may reach: float64 adds integers exactly below ``2**53``.
_EXACT_SUMS = 2**52


class Searches(Protocol):
    """What a race of one question is to the lattice decider (:class:`~.race.Race`):
    :meth:`decide` runs it for :attr:`nodes` more boxes (or units of the clique search's work);
    :attr:`finished`: no search is left."""

    nodes: int

    @property
    def finished(self) -> bool: ...

    def decide(self, question: Question) -> Answer | None: ...


class RaceFactory(Protocol):
    """How the lattice decider builds a race (:class:`~.race.Race`, given by the portfolio)."""

    def __call__(
        self,
        leaves: InstanceLeaves,
        free: list[int],
        rows: np.ndarray,
        boxes: tuple[np.ndarray, np.ndarray],
        kind: str,
        cls: int,
        deciders: Collection[str],
        *,
        nodes: int,
    ) -> Searches: ...


#: How the lattice decider asks a table's bounds (:func:`.bounds.ruled_out`, given by the
#: portfolio): UNSAT with a core, or ``None``.
BoundsCheck = Callable[[InstanceLeaves, np.ndarray, Question], Answer | None]


def lattice_scores(table: LeafTable, kind: str, cls: int, bits: int) -> np.ndarray:
    """Per leaf of the soft-vote ``table``, class scores whose hard-vote reading bounds the
    condition ``(kind, cls)`` from above on the lattice of level ``bits`` (module docstring):
    ``cls`` scores 0; another class ``d`` scores ``r_d``, the rounded-up margin of ``d`` over
    ``cls`` ("not") or minus that of ``cls`` over ``d`` ("predicts"), so that the hard vote's
    margins of the table (:meth:`.LeafTable.margins`) are exactly the ``r``."""
    exponent = table.forest.aggregation.integer_weights()[0]
    n_classes = table.score.shape[1]
    whole = 1 << exponent
    scores = np.zeros((len(table.exact), n_classes), dtype=np.float64)
    others = [d for d in range(n_classes) if d != cls]
    for i, weights in enumerate(table.exact):
        own = weights[cls]
        for d in others:
            diff = weights[d] - own if kind == "not" else own - weights[d]  # m * 2**exponent
            if bits == 0:  # ceil(m), with two classes 0 rounded on to a whole vote
                r = 1 if diff > 0 or (diff > -whole and n_classes == 2) else (0 if diff > -whole else -1)
            else:
                r = -((-(diff << bits)) >> exponent)  # ceil(m * 2**bits), exactly
            scores[i, d] = r if kind == "not" else -r
    return scores


def lattice_table(table: LeafTable, kind: str, cls: int, bits: int) -> LeafTable:
    """The soft-vote ``table`` as a hard-vote table on the lattice of level ``bits`` for the
    condition ``(kind, cls)`` (:func:`lattice_scores`): the same leaves and boxes, integer scores;
    built once per table (:attr:`.LeafTable.lattices`)."""
    key = (kind, cls, bits)
    if key not in table.lattices:
        relaxed = copy.copy(table)
        relaxed.soft = False
        relaxed.exact = []
        relaxed.score = lattice_scores(table, kind, cls, bits)
        relaxed.lattices = {}
        relaxed._margins = {}
        table.lattices[key] = relaxed
    return table.lattices[key]


def lattice_levels(table: LeafTable, levels: tuple[int, ...]) -> tuple[int, ...]:
    """The lattice levels ``levels`` whose sums stay exact in float64 for this table's forest."""
    trees = table.forest.n_trees
    return tuple(b for b in levels if trees << b < _EXACT_SUMS)


class Lattice:
    """The lattice decider of one soft-vote question (module docstring), in turns resumed where
    the last one stopped.

    ``rows``: the question's reachable leaves, ``boxes`` their boxes on the ``free`` features
    (:meth:`.InstanceLeaves.free_boxes`); ``deciders``: those of the races (box searches, clique
    search, climb) that are on; ``race`` and ``bounds``: how it builds a race and asks a table's
    bounds (the portfolio's :class:`~.race.Race` and :func:`~.bounds.ruled_out`)."""

    name = "lattice"

    def __init__(
        self,
        leaves: InstanceLeaves,
        rows: np.ndarray,
        free: list[int],
        boxes: tuple[np.ndarray, np.ndarray],
        deciders: Collection[str],
        *,
        race: RaceFactory,
        bounds: BoundsCheck,
    ) -> None:
        self.leaves, self.rows, self.free, self.boxes = leaves, rows, free, boxes
        self.race, self.bounds = race, bounds
        tuning, table = leaves.tuning, leaves.table
        near = (float(table.impure[rows].mean()) if len(rows) else 0.0) <= tuning.lattice_impure
        #: the levels still to ask, coarsest first; none where many leaves are impure (the soft
        #: race then answers alone: the lattices would search the same boxes first)
        self.levels = list(lattice_levels(table, tuning.lattice_levels)) if near else []
        # the clique search bounds well on weights that are nearly all equal, and its graph costs
        # about as many checks as pairs of leaves
        cliques = near and len(rows) <= tuning.lattice_clique_leaves
        self.deciders = frozenset(deciders) if cliques else frozenset(deciders) - {"cliques"}
        #: the current level's race, once built, and the boxes it may still take
        self._race: Searches | None = None
        self._left = 0
        #: Whether the last level asked gave up on a spurious point: the question has points
        #: within rounding of an exact tie, where the soft race's boxes do no better.
        self.spurious = False

    @staticmethod
    def applies(table: LeafTable) -> bool:
        """Whether the decider takes on the table's questions: the soft vote."""
        return table.soft

    @property
    def done(self) -> bool:
        """Whether the decider has answered, or no level is left."""
        return not self.levels

    def decide(self, question: Question, budget: int | None) -> Answer | None:
        """At most ``budget`` boxes (``None``: every level's) of the question asked on the
        lattices, coarsest first: on each, the lattice's bounds, then its race under hard-vote
        rules for at most ``lattice_nodes`` boxes (the last lattice: ``bnb_nodes``, the soft
        race's own); the vote lattice and the clique search as the module docstring says.
        UNSAT on a lattice is UNSAT; a lattice's point is confirmed by the exact vote, else the
        next lattice is asked. ``None``: not settled in this turn, or by no lattice
        (:attr:`done`)."""
        tuning = self.leaves.tuning
        kind, cls = question.kind, question.cls
        while self.levels:
            race = self._race
            if race is None:
                relaxed = copy.copy(self.leaves)
                relaxed.table = lattice_table(self.leaves.table, kind, cls, self.levels[0])
                relaxed._found = list(self.leaves._found)  # the climbs start from the exact witnesses
                answer = self.bounds(relaxed, self.rows, question)
                if answer is not None:
                    self.levels = []
                    return answer.given_by(self.name)
                self._left = tuning.lattice_nodes if len(self.levels) > 1 else tuning.bnb_nodes
                race = self._race = self.race(
                    relaxed, self.free, self.rows, self.boxes, kind, cls, self.deciders, nodes=0
                )
            race.nodes = self._left if budget is None else min(budget, self._left)
            answer = race.decide(question)
            if answer is None:
                self._left -= race.nodes
                if self._left > 0 and not race.finished:
                    return None  # the turn is over
            elif not answer.sat:
                self.levels = []
                return Answer(False, by=self.name)
            else:
                confirmed = self.confirm(answer, kind, cls)
                if confirmed is not None:
                    self.levels = []
                    return confirmed
            self.spurious = answer is not None
            self.levels.pop(0)  # its boxes spent, or a spurious point: the next level
            self._race = None
        return None

    def confirm(self, answer: Answer, kind: str, cls: int) -> Answer | None:
        """A lattice's witness ``answer`` decided with the forest's exact vote on the condition
        ``(kind, cls)``: the witness when it holds there, else ``None`` (a spurious point)."""
        assert answer.witness is not None
        free = self.free
        point = np.asarray(answer.witness, dtype=np.int64)[free]
        holds, _ = self.leaves.evaluate(point[None, :], free, self.rows, kind, cls)
        if not holds[0]:
            return None
        return self.leaves.witness(free, point).given_by(self.name)
