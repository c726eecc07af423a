"""The portfolio: which decider answers a question, and how they share its time.

A portfolio of exact deciders in the manner of algorithm portfolios for SAT (Xu, Hutter, Hoos
and Leyton-Brown (2008), SATzilla [XHHL08]; here the members run in turn on one core, each in
bounded turns, and the first to settle answers). The schedule of one question
(:meth:`Portfolio.turns`):

1. **Bounds** (:mod:`.bounds`): the reachable leaves' per-tree bounds; UNSAT with a core.
   Under the soft vote, the race of step 2 takes its first slice, then the **lattices**
   (:mod:`.lattice`): the race on integer margins bounding the soft vote's from above, coarsest
   first, each up to ``lattice_nodes`` boxes (the last up to ``bnb_nodes``); what they leave
   open goes back to the soft vote's own race (for at most ``lattice_nodes`` boxes where the
   last lattice gave up on a spurious point).
2. **The race** (:class:`.race.Race`): the box searches (:mod:`.boxes`), the clique search
   (:mod:`.cliques`, hard vote, two classes) and the climb (:mod:`.climb`) in slices. Under the
   soft vote the race runs to the end (``bnb_nodes``); under the hard vote it runs
   ``hard_bnb_nodes`` boxes alone (``short_bnb_nodes`` in enumerations; with none, a box of at
   most ``box_points`` cell combinations is still searched whole) and, when it has not
   answered, goes on beside a solver.
3. **The reduced CNF** (:mod:`.reduced_cnf`, hard vote): its solver takes turns by CPU time
   with the stopped race (at most ``solver_share`` of the race's time, ``race_conflicts`` at a
   time, joining after ``solver_joins`` seconds) and with the climb over the question's cells,
   which goes first and then whenever its CPU time falls below ``climb_share`` of the others'
   (``climb_late`` once it has climbed ``climb_long`` seconds): the first to settle answers. On
   small forests the full CNF first gets ``first_conflicts`` conflicts, for the core its answer
   brings.
4. **The full CNF** (:mod:`.full_cnf`), the reference decider, answers whatever is left (and
   every question that needs a core another decider cannot give), in turns of
   ``conflict_chunk`` conflicts under a deadline.

:meth:`Portfolio.decide` (:class:`.scheduler.Scheduler`) runs these turns and polls the deadline
between them. Deciders switched off (``SatEngine(deciders=...)``) are skipped; the full CNF
cannot be. The answers are exact whichever decider gives them, so the explanations do not
change; only witnesses and cores may.

[XHHL08] Xu, Hutter, Hoos and Leyton-Brown, "SATzilla: Portfolio-based Algorithm Selection for
SAT", JAIR 2008.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Generator

import numpy as np

from rfexplain.sat.deciders.base import DECIDERS, Answer, Decider, Question
from rfexplain.sat.deciders.bounds import Bounds, ruled_out
from rfexplain.sat.deciders.boxes import SmallBox, few_cells
from rfexplain.sat.deciders.climb import Climb
from rfexplain.sat.deciders.full_cnf import FullCnf
from rfexplain.sat.deciders.lattice import Lattice
from rfexplain.sat.deciders.leaves import InstanceLeaves
from rfexplain.sat.deciders.race import Race
from rfexplain.sat.deciders.reduced_cnf import ReducedCnf
from rfexplain.sat.deciders.scheduler import Scheduler, Turns
from rfexplain.sat.tuning import DEFAULT_TUNING, SatTuning

__all__ = ["Portfolio"]

#: One turn: the decider and the units of work it may take.
Turn = tuple[Decider[Question], int | None]


class Portfolio(Scheduler[Question]):
    """The deciders of one instance and the order and turns in which they are asked.

    Parameters
    ----------
    leaves : InstanceLeaves or None
        The instance's reachable leaves, which every other decider reads; ``None``: the full CNF
        alone.
    full_cnf : FullCnf or None
        The reference decider (``None``: none; :meth:`decide` then answers ``None`` on a
        question the other deciders leave open).
    deciders : collection of str
        The deciders on (:data:`~.base.DECIDERS`).
    tuning : SatTuning
        With ``leaves``, theirs.
    first_conflicts : int or None
        Conflicts the full CNF gets before the reduced CNF (``None``: none).
    reduced_solver : str
        The reduced CNF's SAT solver.
    """

    def __init__(
        self,
        leaves: InstanceLeaves | None,
        full_cnf: FullCnf | None = None,
        *,
        deciders: Collection[str] = DECIDERS,
        tuning: SatTuning = DEFAULT_TUNING,
        first_conflicts: int | None = None,
        reduced_solver: str = "g3",
    ) -> None:
        self.full_cnf = full_cnf
        self.leaves = leaves
        self.deciders = frozenset(deciders)
        self.tuning = leaves.tuning if leaves is not None else tuning
        self.first_conflicts = first_conflicts
        self.reduced_solver = reduced_solver
        #: whether the hard vote's open questions go to the reduced CNF
        self.reduced = leaves is not None and "reduced_cnf" in self.deciders and not leaves.table.soft

    def turns(self, question: Question, limited: bool) -> Turns[Question]:
        """The schedule of ``question`` (module docstring); an UNSAT answer without a core, when
        one is needed, goes on to the full CNF, and the answer it returns always has a core
        (the fixed features themselves when its decider gives none)."""
        answer = None
        race = None
        if self.leaves is not None:
            answer, race = yield from self._settle(question, limited)
        if answer is None or not (answer.sat or not question.core or answer.core is not None):
            answer = None
            if self.reduced and self.first_conflicts is not None:
                assert self.full_cnf is not None
                answer = yield self.full_cnf, self.first_conflicts
            if answer is None and self.reduced and not question.core:
                answer = yield from self._beside(question, race, limited)
            if answer is None and self.full_cnf is not None:
                work = self.tuning.conflict_chunk if limited else None
                while answer is None:
                    answer = yield self.full_cnf, work
        if answer is None:
            return None
        if self.full_cnf is not None and answer.by != self.full_cnf.name:
            self.full_cnf.oracle.stats.record_screened(answer.sat)
        if not answer.sat and answer.core is None:
            answer = answer.with_core(frozenset(question.fixed))
        return answer

    def _settle(
        self, question: Question, limited: bool
    ) -> Generator[Turn, Answer | None, tuple[Answer | None, Race | None]]:
        """The deciders that need no solver (bounds, the lattices, the race): their answer, with
        the race a node budget stopped (``None``: none, or it finished), which the reduced CNF
        resumes. The lattices take turns of ``bnb_slice`` boxes under a deadline (``limited``),
        else one turn."""
        leaves = self.leaves
        assert leaves is not None
        table, tuning, deciders = leaves.table, self.tuning, self.deciders
        fixed, kind, cls = question.fixed, question.kind, question.cls
        rows = leaves.reachable(fixed)
        if "bounds" in deciders:
            answer = yield Bounds(leaves, rows), None
            if answer is not None:
                return answer, None
        free, lows, highs = leaves.free_boxes(fixed, rows)
        if table.soft:  # a small box is searched whole by the box search's first box
            race = Race(leaves, free, rows, (lows, highs), kind, cls, deciders)
            nodes = tuning.bnb_nodes
            if "lattice" in deciders:
                first = min(race.slice_left, nodes)
                answer = yield from race.slices(first)
                if answer is not None:
                    return answer, None
                nodes -= first
                lattice = Lattice(leaves, rows, free, (lows, highs), deciders, race=Race, bounds=ruled_out)
                work = tuning.bnb_slice if limited else None
                while not lattice.done:
                    answer = yield lattice, work
                    if answer is not None:
                        return answer, None
                if lattice.spurious:  # near-ties the soft race's boxes do no better on
                    nodes = min(nodes, tuning.lattice_nodes)
            return (yield from race.slices(nodes)), None
        nodes = tuning.short_bnb_nodes if question.short else tuning.hard_bnb_nodes
        if not nodes:
            if "boxes" not in deciders:
                return None, None
            top = np.asarray([table.n_states[f] - 1 for f in free], dtype=np.int64)
            bottom = np.zeros_like(top)
            if few_cells(((highs >= bottom) & (highs < top)).sum(axis=0), lows, highs, bottom, top, tuning.box_points):
                cells = [leaves.cells(f, lows[:, j], highs[:, j], 0, top[j]) for j, f in enumerate(free)]
                return (yield SmallBox(leaves, free, cells, rows, kind, cls), None), None
            return None, None
        race = Race(leaves, free, rows, (lows, highs), kind, cls, deciders)
        answer = yield from race.slices(nodes)
        return answer, (race if answer is None and not race.finished else None)

    def _beside(self, question: Question, race: Race | None, limited: bool) -> Turns[Question]:
        """The hard-vote question decided by the reduced CNF's solver, taking turns by CPU time
        with ``race`` (the stopped race, when there is one) and with the climb over the
        question's cells (module docstring, step 3); exact, with a witness when satisfiable and
        no core otherwise."""
        leaves = self.leaves
        assert leaves is not None
        table, tuning = leaves.table, self.tuning
        fixed, kind, cls = question.fixed, question.kind, question.cls
        if race is not None:
            race.alone = False
        rows = leaves.reachable(fixed)
        free, lows, highs = leaves.free_boxes(fixed, rows)
        cells = [leaves.cells(f, lows[:, j], highs[:, j], 0, table.n_states[f] - 1) for j, f in enumerate(free)]
        reduced = ReducedCnf(
            leaves, free, lows, highs, cells, rows, kind, cls, solver=self.reduced_solver, card=tuning.reduced_card
        )
        climb = None
        if "climb" in self.deciders:
            climb = Climb.over_cells(leaves, free, lows, highs, cells, rows, kind, cls)
        solver_time = search_time = climb_time = 0.0
        climbing = climb is not None
        try:
            while True:
                share = tuning.climb_share if climb_time < tuning.climb_long else tuning.climb_late
                start = time.process_time()
                if climbing and climb_time <= share * (solver_time + search_time):
                    assert climb is not None
                    answer = yield climb, tuning.climb_restarts
                    climb_time += time.process_time() - start
                    climbing = climb.climbing  # refuted: cannot happen under the hard vote's exact counts
                elif race is None or (
                    solver_time <= tuning.solver_share * search_time
                    and (reduced.query is not None or search_time >= tuning.solver_joins)
                ):
                    work = tuning.race_conflicts if race is not None else (tuning.conflict_chunk if limited else None)
                    answer = yield reduced, work
                    solver_time += time.process_time() - start
                else:
                    answer = yield from race.slices(tuning.bnb_slice)
                    search_time += time.process_time() - start
                    if answer is None and race.finished:
                        race = None
                if answer is not None:
                    return answer
        finally:
            reduced.close()
