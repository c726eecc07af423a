"""The portfolio: which decider answers a question, and how they share its time.

A portfolio of exact deciders in the manner of algorithm portfolios for SAT (Xu, Hutter, Hoos
and Leyton-Brown (2008), SATzilla [XHHL08]; here the members run in turn on one core, each in
slices, and the first to settle answers). For one question (:meth:`Portfolio.decide`):

1. **Bounds** (:mod:`.bounds`): the reachable leaves' per-tree bounds; UNSAT with a core.
2. **The race** (:class:`Race`): the box searches (:mod:`.boxes`) in slices of the tuning's
   ``bnb_slice`` boxes; from the end of the first slice the clique search (:mod:`.cliques`,
   hard vote, two classes) takes all but one slice in ``clique_turns``, the climb
   (:mod:`.climb`) runs at the end of slices, the paired table and the second split rule join
   the box searches. Under the soft vote the race runs to the end (``bnb_nodes``); under the
   hard vote it runs ``hard_bnb_nodes`` boxes alone (``short_bnb_nodes`` in enumerations) and,
   when it has not answered, goes on beside a solver.
3. **The reduced CNF** (:mod:`.reduced_cnf`, hard vote): its solver takes turns by CPU time
   with the stopped race (at most ``solver_share`` of the race's time, ``race_conflicts`` at a
   time, joining after ``solver_joins`` seconds) and with the climb (``climb_share``), the
   first to settle answering (:meth:`Portfolio.decide_reduced`). On small forests the full CNF
   gets ``first_conflicts`` conflicts before it, for the core its answer brings.
4. **The full CNF** (:mod:`.full_cnf`), the reference decider, answers whatever is left (and
   every question that needs a core another decider cannot give), in conflict chunks under a
   deadline (:func:`in_chunks`, the one chunked-deadline loop of the engine).

Deciders switched off (``SatEngine(deciders=...)``) are skipped; the full CNF cannot be. The
answers are exact whichever decider gives them, so the explanations do not change; only
witnesses and cores may.

[XHHL08] Xu, Hutter, Hoos and Leyton-Brown, "SATzilla: Portfolio-based Algorithm Selection for
SAT", JAIR 2008.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Collection

import numpy as np

from rfexplain.core.budget import Budget
from rfexplain.sat.deciders.base import DECIDERS, Answer, Question
from rfexplain.sat.deciders.bounds import Bounds
from rfexplain.sat.deciders.boxes import Boxes, few_cells, search_whole
from rfexplain.sat.deciders.climb import Climb
from rfexplain.sat.deciders.cliques import Cliques
from rfexplain.sat.deciders.full_cnf import FullCnf
from rfexplain.sat.deciders.leaves import InstanceLeaves
from rfexplain.sat.deciders.reduced_cnf import ReducedQuery
from rfexplain.sat.tuning import DEFAULT_TUNING, SatTuning

__all__ = ["Portfolio", "Race", "in_chunks"]


def in_chunks(step: Callable[[int | None], bool | None], budget: Budget | None, chunk: int, what: str) -> bool:
    """Run ``step`` (a solver call limited to the conflicts it is given, ``None`` when they run
    out) to an answer: at once without a deadline, else in rounds of ``chunk`` conflicts with
    ``budget`` checked before each (CaDiCaL cannot be interrupted, so a deadline is enforced for
    every solver alike between rounds); :class:`~rfexplain.core.budget.BudgetExpired` when it
    passes first."""
    if budget is None or budget.deadline is None:
        outcome = step(None)
        assert outcome is not None  # no conflict limit
        return outcome
    while True:
        budget.check(what)
        outcome = step(chunk)
        if outcome is not None:
            return bool(outcome)


def _by(answer: Answer, name: str) -> Answer:
    """``answer`` marked as given by the decider ``name``."""
    return dataclasses.replace(answer, by=name)


class Portfolio:
    """The deciders of one instance and the order and turns in which they are asked.

    Parameters
    ----------
    leaves : InstanceLeaves or None
        The instance's reachable leaves, which every other decider reads; ``None``: the full CNF
        alone.
    full_cnf : FullCnf or None
        The reference decider (always on; ``None`` only for a portfolio asked through
        :meth:`settle` and :meth:`decide_reduced` alone).
    deciders : collection of str
        The deciders on (:data:`~.base.DECIDERS`).
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
        self.bounds = Bounds(leaves) if leaves is not None and "bounds" in self.deciders else None
        #: whether the hard vote's open questions go to the reduced CNF
        self.reduced = leaves is not None and "reduced_cnf" in self.deciders and not leaves.table.soft
        #: The hard-vote race the last :meth:`settle` stopped at its node budget, with its
        #: question ``(fixed, kind, cls)``: :meth:`decide_reduced` resumes it beside the solver.
        self._open: tuple[tuple[tuple[int, ...], str, int], Race] | None = None

    def decide(self, question: Question, budget: Budget | None = None) -> Answer:
        """The answer to ``question`` (module docstring); ``budget`` (default: the current one)
        stops a long question with :class:`~rfexplain.core.budget.BudgetExpired`."""
        budget = budget if budget is not None else Budget.current()
        if budget is not None:  # every question polls it: a loop of short questions stops too
            budget.check("deciding")
        assert self.full_cnf is not None
        stats = self.full_cnf.oracle.stats
        if self.leaves is not None:
            answer = self.settle(question, budget)
            if answer is not None and (answer.sat or not question.core or answer.core is not None):
                stats.record_screened(answer.sat)
                return answer
        if self.reduced and self.first_conflicts is not None:
            first = self._full(question, budget, conflicts=self.first_conflicts)
            if first is not None:
                return first
        if self.reduced and not question.core:
            answer = self.decide_reduced(question, budget)
            stats.record_screened(answer.sat)
            return answer
        answer = self._full(question, budget)
        assert answer is not None  # no conflict limit
        return answer

    def _full(self, question: Question, budget: Budget | None, *, conflicts: int | None = None) -> Answer | None:
        """The full CNF's answer; with ``conflicts``, one call limited to that many (``None``
        when they run out first)."""
        start = time.process_time()
        full = self.full_cnf
        assert full is not None
        oracle = full.oracle
        assumptions = full.assumptions(question.fixed)
        if conflicts is not None:
            if oracle.formula.relaxed:
                raise ValueError("a conflict-limited call needs an exact formula")
            if budget is not None:
                budget.check("solving")
            limited = oracle.run(assumptions, conflicts)
            if limited is None:
                return None
            outcome = limited
        else:
            outcome = in_chunks(lambda c: oracle.run(assumptions, c), budget, self.tuning.conflict_chunk, "solving")
        oracle.stats.record(outcome, time.process_time() - start)
        return full.answer(outcome)

    # ------------------------------------------------------------------ before any solver
    def settle(self, question: Question, budget: Budget | None = None) -> Answer | None:
        """The answer of the deciders that need no solver (bounds, the race), or ``None`` when
        they leave the question open; a hard-vote race stopped at its node budget is kept for
        :meth:`decide_reduced`."""
        leaves = self.leaves
        assert leaves is not None
        table, tuning, deciders = leaves.table, self.tuning, self.deciders
        fixed, kind, cls = question.fixed, question.kind, question.cls
        self._open = None
        rows = leaves.reachable(fixed)
        if self.bounds is not None:
            answer = self.bounds.decide(question, rows)
            if answer is not None:
                return answer
        free, lows, highs = leaves.free_boxes(fixed, rows)
        if table.soft:  # a small box is searched whole by the box search's first box
            race = Race(leaves, free, rows, (lows, highs), kind, cls, deciders)
            return race.advance(tuning.bnb_nodes, budget)
        nodes = tuning.short_bnb_nodes if question.short else tuning.hard_bnb_nodes
        if not nodes:
            if "boxes" not in deciders:
                return None
            top = np.asarray([table.n_states[f] - 1 for f in free], dtype=np.int64)
            bottom = np.zeros_like(top)
            if few_cells(((highs >= bottom) & (highs < top)).sum(axis=0), lows, highs, bottom, top, tuning.box_points):
                cells = [leaves.cells(f, lows[:, j], highs[:, j], 0, top[j]) for j, f in enumerate(free)]
                return _by(search_whole(leaves, free, cells, rows, kind, cls), "boxes")
            return None
        race = Race(leaves, free, rows, (lows, highs), kind, cls, deciders)
        answer = race.advance(nodes, budget)
        if answer is not None:
            return answer
        if not race.finished:  # resumed beside the solver by decide_reduced
            self._open = ((tuple(fixed), kind, cls), race)
        return None

    # ------------------------------------------------------------------ the reduced CNF
    def decide_reduced(self, question: Question, budget: Budget | None = None) -> Answer:
        """The hard-vote question decided by the reduced CNF's solver, taking turns by CPU time
        with the race the last :meth:`settle` stopped on this very question (when there is one)
        and with the climb; exact, with a witness when satisfiable and no core otherwise."""
        leaves = self.leaves
        assert leaves is not None
        table = leaves.table
        if table.soft:
            raise ValueError("the reduced formula encodes the hard vote only")
        fixed, kind, cls = question.fixed, question.kind, question.cls
        race = None
        if self._open is not None and self._open[0] == (tuple(fixed), kind, cls):
            race = self._open[1]
            race.alone = False
        self._open = None
        rows = leaves.reachable(fixed)
        free, lows, highs = leaves.free_boxes(fixed, rows)
        cells = [leaves.cells(f, lows[:, j], highs[:, j], 0, table.n_states[f] - 1) for j, f in enumerate(free)]

        def encode() -> ReducedQuery:
            return ReducedQuery(
                lows,
                highs,
                table.tree[rows],
                np.argmax(table.score[rows], axis=1),
                cells,
                table.forest.n_classes,
                kind,
                cls,
                solver=self.reduced_solver,
                card=self.tuning.reduced_card,
            )

        climb = None
        if "climb" in self.deciders:
            climb = Climb.over_cells(leaves, free, lows, highs, cells, rows, kind, cls)
        return self._beside(encode, race, climb, free, budget)

    def _beside(
        self,
        encode: Callable[[], ReducedQuery],
        race: Race | None,
        climb: Climb | None,
        free: list[int],
        budget: Budget | None,
    ) -> Answer:
        """Run the solver of the question ``encode`` builds to an answer, taking turns with
        ``race`` (when given) by CPU time, and with ``climb`` (when given), which goes first and
        then whenever its CPU time falls below the tuning's ``climb_share`` of the others'
        (``climb_late`` once it has climbed ``climb_long`` seconds).

        The question is encoded at the solver's first turn, and the encoding counts as the
        solver's time, so that a race settled soon pays for no formula."""
        leaves = self.leaves
        assert leaves is not None
        tuning = self.tuning
        limited = budget is not None and budget.deadline is not None
        solver_time = search_time = climb_time = 0.0
        climbing = climb is not None
        query: ReducedQuery | None = None
        try:
            while True:
                if budget is not None:
                    budget.check("solving")
                share = tuning.climb_share if climb_time < tuning.climb_long else tuning.climb_late
                if climbing and climb_time <= share * (solver_time + search_time):
                    assert climb is not None
                    start = time.process_time()
                    found = climb.run(tuning.climb_restarts)
                    climb_time += time.process_time() - start
                    if found is not None:
                        return _by(found, "climb")
                    climbing = climb.climbing  # refuted: cannot happen under the hard vote's exact counts
                elif race is None or (
                    solver_time <= tuning.solver_share * search_time
                    and (query is not None or search_time >= tuning.solver_joins)
                ):
                    start = time.process_time()
                    if query is None:
                        query = encode()
                    if race is not None:
                        outcome = query.run(tuning.race_conflicts)
                    else:
                        outcome = query.run(tuning.conflict_chunk if limited else None)
                    solver_time += time.process_time() - start
                    if outcome is not None:
                        answer = leaves.witness(free, np.asarray(query.witness)) if outcome else Answer(False)
                        return _by(answer, "reduced_cnf")
                else:
                    start = time.process_time()
                    raced = race.advance(tuning.bnb_slice, budget)
                    search_time += time.process_time() - start
                    if raced is not None:
                        return raced
                    if race.finished:
                        race = None
        finally:
            if query is not None:
                query.close()


class Race:
    """The deciders of one question that need no solver, taking turns in slices: the box
    searches, the clique search and the climb (module docstring, step 2); resumable where a node
    budget stopped it.

    The turns are counted in slices of the tuning's ``bnb_slice`` boxes (or units of the clique
    search's work), the first one shorter (``first_slice``, at least one box per
    ``first_slice_rows`` reachable leaves), so that a question is searched alike however many
    boxes each :meth:`advance` is given."""

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
    ) -> None:
        """``boxes``: the leaves' boxes on the free features (:meth:`.InstanceLeaves.free_boxes`);
        ``bottom``, ``top``: the root box on them (default: every state), for the box searches
        alone (a box question runs without the clique search and the climb, which search every
        state)."""
        self.leaves, self.free = leaves, free
        self.tuning = tuning = leaves.tuning
        self.boxes = Boxes(
            leaves, free, rows, boxes, kind, cls, searching="boxes" in deciders, bottom=bottom, top=top
        )
        self.use_cliques = "cliques" in deciders
        #: The clique search once it has joined (at once when the box searches are off).
        self.clique: Cliques | None = None
        if not self.boxes.runs and self.use_cliques and Cliques.applies(self.boxes.arguments, tuning):
            self.clique = Cliques(leaves, self.boxes.arguments, free, self.boxes.rows)
        #: The climb once the first slice is over (``slice_climbs``) or, where the clique search
        #: joins, from its turn ``clique_race_climb_after`` while the race runs :attr:`alone`.
        self.climb: Climb | None = None
        self.climbing = "climb" in deciders and tuning.slice_climbs > 0
        #: Whether no solver runs beside the race (set off by :meth:`Portfolio.decide_reduced`).
        self.alone = True
        #: Slices so far, those the box searches took, and what is left of the current one.
        self.turn = 0
        self.box_turns = 0
        self.slice_left = min(tuning.bnb_slice, max(tuning.first_slice, len(rows) // tuning.first_slice_rows))

    @property
    def finished(self) -> bool:
        """No search is left (each ran out with near ties it could not keep): only a solver can
        decide."""
        return not self.boxes.runs and self.clique is None

    def advance(self, nodes: int, budget: Budget | None = None) -> Answer | None:
        """Search at most ``nodes`` more boxes (or units of the clique search's work); the
        answer, or ``None`` when they did not settle it (or :attr:`finished`). ``budget`` is
        polled between slices."""
        boxes = self.boxes
        limit = nodes
        while boxes.runs or self.clique is not None:
            if self.clique is not None and (not boxes.runs or self._clique_turn()):
                answer, examined = self.clique.step(min(limit, self.slice_left))
                if self.clique.done:
                    self.clique = None
                if answer is not None:
                    return _by(answer, "cliques")
            else:
                answer, examined, exhausted = boxes.step(min(limit, self.slice_left), self.box_turns)
                if answer is not None:
                    return _by(answer, "boxes")
                if exhausted:  # near ties it could not keep: the other search may still settle it
                    self.slice_left = self.tuning.bnb_slice
                    continue
            limit -= examined
            self.slice_left -= examined
            if self.slice_left <= 0:  # the slice is over (whichever calls it took): the next turn
                self._next_turn(budget)
                answer = self._climb_turn()
                if answer is not None:
                    return _by(answer, "climb")
            if limit <= 0:
                return None
        return None

    def _next_turn(self, budget: Budget | None) -> None:
        """End a slice: poll ``budget``, let the searches that join late join (the paired table,
        the clique search, the guided rule) and count the turn."""
        tuning, boxes = self.tuning, self.boxes
        self.slice_left = tuning.bnb_slice
        box_slice = self.clique is None or not self._clique_turn()
        if box_slice:
            self.box_turns += 1
        if budget is not None:
            budget.check("searching boxes")
        searching = boxes.searching
        pair_after = tuning.pair_after if boxes.arguments[3].shape[1] == 1 else tuning.pair_after_more
        if searching and self.turn == pair_after:
            boxes.join_paired()
        if searching and self.use_cliques and self.turn == tuning.clique_after:
            if Cliques.applies(boxes.arguments, tuning):
                self.clique = Cliques(self.leaves, boxes.arguments, self.free, boxes.rows)
        if searching and box_slice and self.box_turns == tuning.race_after + 1:
            boxes.join_guided()
        self.turn += 1

    def _climb_turn(self) -> Answer | None:
        """At the end of a slice: ``slice_climbs`` restarts of the climb (built at the first);
        where the clique search has joined, ``clique_race_climbs`` restarts from turn
        ``clique_race_climb_after`` on, and none once a solver runs beside the race."""
        tuning = self.tuning
        if not self.climbing or self.turn == 0:
            return None
        restarts = tuning.slice_climbs
        if self.clique is not None:
            if not self.alone or self.turn < tuning.clique_race_climb_after:
                return None
            restarts = tuning.clique_race_climbs
        if self.climb is None:
            boxes = self.boxes
            self.climb = Climb.over_boxes(self.leaves, boxes.arguments, boxes.top, self.free, boxes.rows)
        answer = self.climb.run(restarts)
        if answer is None and not self.climb.climbing:
            self.climbing = False
        return answer

    def _clique_turn(self) -> bool:
        """Whether the clique search takes the current slice: all but one in ``clique_turns``."""
        return self.turn % self.tuning.clique_turns != 0
