"""Deciding easy SAT queries without the solver: leaf-box bounds and small boxes searched whole.

A query of the SAT engine asks whether some input that agrees with the instance on a set of
fixed features makes the forest *not* predict ``c`` (or predict ``t``). Both answers are often
plain to see from the leaves the instance can still reach (the "per-instance simplification"
in the SAT engine; reachable leaves as in the abductive reasoning of Izza and Marques-Silva (2021),
Section 4 [IM21], where every path inconsistent with the fixed features is dead):

- **Bounds.** A leaf is reachable iff its box contains the instance's state on every fixed
  feature. Summing, over trees, the best score a challenger ``d`` can get against ``c`` among a
  tree's reachable leaves bounds the margin of ``d`` over ``c`` from above; when no challenger's
  bound reaches a win, no counterexample exists (UNSAT) and the solver is not called.
- **Small boxes.** States of a free feature that no reachable leaf's box tells apart (one
  *cell*) send every point to the same leaves, so one state per cell stands for them all. When
  the free features have few cell combinations (at most :data:`BOX_POINTS`), every combination is
  evaluated with the forest's exact vote; the answer is exact either way, with the first
  counterexample (in the combinations' lexicographic order) as the witness. The branch and
  bound's kernel walks the combinations depth first, keeping per feature the leaves that hold
  the states chosen so far and skipping a prefix whose leaves' bound rules the condition out
  (:func:`.box_kernels._search_whole`). The branch and
  bound below does this in its first box (so it is not tested apart before it); only the
  hitting-set loops' queries that get no branch and bound test it here.
- **Branch and bound.** Then the free features' intervals are split until every box is ruled out
  by its bounds or small enough to search whole (at most :data:`BNB_NODES` boxes; under the
  hard vote :data:`HARD_BNB_NODES`, or :data:`SHORT_BNB_NODES` in enumerations; the loop is
  compiled, :mod:`.box_kernels`): the answer is exact either way. The more promising half of a
  box is searched first. Two split rules (at the median leaf end, or where the trees' best
  leaves leave both halves) are raced on the queries that run long (:data:`RACE_AFTER`).
- **Paired trees.** The per-tree bound lets every tree take its best leaf, though two trees'
  best leaves may need opposite sides of one threshold. A query the first split rule has not
  settled in its first slice (:data:`FIRST_SLICE` boxes; with three classes or more, one
  slice later: :data:`PAIR_AFTER`) is also searched on a leaf table where such trees are merged in pairs
  (:func:`_paired`: a pair's rows are its compatible leaf pairs, so its bound is the best
  *consistent* pair), pairs matched greedily by how much merging lowers their bound, as the
  tree-merging bounds of Chen et al. (2019) [Che19] and Devos et al. (2021) [DMD21] do with
  cliques of trees. A round of pairing that would grow the table too much is not taken
  (:data:`PAIR_GROWTH`).
- **Pair bound (two classes).** Without building that table, a query the first search has not
  settled in :data:`PAIR_BOUND_AFTER` boxes restarts with every child box the per-tree bound
  keeps judged again by a *pair bound* (:func:`.box_kernels.pair_bound`): trees paired as for
  the paired table, each pair adding the best margin of two of its leaves in the box that share
  a point, found by walking both trees' leaves in decreasing margin. It is used with two
  classes only. The search on the paired table uses it too (pairs of paired trees).
- **Cliques (hard vote, two classes).** A query the first slice (:data:`FIRST_SLICE`) has not settled is also
  searched as a largest clique of the challenger's reachable leaves in their intersection graph
  (:mod:`rfexplain.sat.cliques`; boxes that meet pairwise share a point), which then takes all
  but one slice in :data:`CLIQUE_TURNS`: its colour classes gather leaves of many trees that miss
  each other, a far tighter bound than each tree's best leaf where trees are deep. Its slices
  count its colourings' work (:data:`.clique_kernels.WORK_UNIT`). Under the soft vote almost
  every leaf weighs something and the weighted colourings bound poorly; with three classes or more
  the same (:meth:`.CliqueSearch.applies`), so there it is not used.
- **Climbs.** Where the clique search does not join (soft vote, three classes or more), the
  counterexample search by coordinate ascent (:mod:`rfexplain.sat.climb`) takes
  :data:`SLICE_CLIMBS` restarts at the end of every slice after the first: the box searches find
  the counterexamples of wide satisfiable steps late, the climb often in a restart or two. Its
  first restarts start from the counterexamples the
  instance's filter found last (:data:`WARM_STARTS`), as do those of the climb beside the
  reduced formula's solver. Where the clique search joins, the race climbs too from its turn
  :data:`CLIQUE_RACE_CLIMB_AFTER` (:data:`CLIQUE_RACE_CLIMBS` restarts a slice) until a solver
  runs beside it.
- **Cores.** An UNSAT answer by the bounds alone comes with a core: the fixed features left after
  deleting, one at a time, those the bounds can do without (as a solver's core, it lets the
  deletion loops skip calls).

Anything else goes to the solver, whose formula is built only then; under the hard vote the
branch and bound a node budget stopped goes on beside the solver of the reduced formula
(:meth:`InstanceFilter.decide_reduced`), and whichever answers first decides. The answers are exactly the
solver's (both are exact), so the explanations do not change; only the witnesses of satisfiable
calls and the cores of unsatisfiable ones may differ.

Scores are float64: hard votes are counts (exact); soft-vote sums are decided again in exact
integer arithmetic whenever two classes are within :data:`NEAR_TIE` (sums of at most a few
thousand float64 probabilities err by far less), and a bound counts as "no win" only when it is
below zero by more than :data:`NEAR_TIE`.

The constants below are the search's tuning; the measurements that chose them, and the variants
measured and dropped, are in ``docs/decisions.md`` ("SAT engine: the prefilter").
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfexplain.core.budget import Budget
from rfexplain.sat.climb import MarginClimb
from rfexplain.sat.cliques import CliqueSearch
from rfexplain.sat.encodings import ForestEncoding
from rfexplain.sat.encodings.softvote import soft_winner
from rfexplain.sat.reduced import ReducedQuery, cell_ranges
from rfexplain.sat.solving import CONFLICT_CHUNK

__all__ = ["BOX_POINTS", "NEAR_TIE", "LeafTable", "InstanceFilter", "Settled", "warm_up"]

#: Most free-feature state combinations searched whole instead of calling the solver.
BOX_POINTS = 256

#: Float64 distance under which two soft-vote sums are compared again exactly.
NEAR_TIE = 1e-9

#: Boxes the soft vote's branch and bound may examine before it leaves a query to the solver
#: (the budget is polled all along). The search is exact and complete; the cap only hands a query
#: over.
BNB_NODES = 20_000_000

#: Boxes the hard vote's branch and bound examines alone (0: none); a query it has not settled
#: by then goes to the solver, and on the reduced formula the search goes on beside it
#: (:meth:`InstanceFilter.decide_reduced`). Its solver calls are cheap, so the branch and bound
#: gets a shorter leash alone than the soft vote's.
HARD_BNB_NODES = 16384

#: Boxes the hard vote's branch and bound may examine in the queries of the hitting-set loops
#: (enumerations): their solver calls are cheaper still (the solver is warm, the witnesses any).
SHORT_BNB_NODES = 64

#: Boxes the compiled branch and bound examines between two polls of the budget.
BNB_SLICE = 2048

#: The first slice of a query's branch and bound, after which the clique search joins (and,
#: with two classes, the paired table: :data:`PAIR_AFTER`): the hard vote's satisfiable steps
#: that the box search does not settle in a few hundred boxes, the clique search often settles in
#: a few more.
FIRST_SLICE = 256

#: ... but at least one box per this many reachable leaves (at most :data:`BNB_SLICE`): the
#: clique search's graph costs about as many checks as pairs of leaves, which on large tables
#: outweighs the boxes it saves.
FIRST_SLICE_ROWS = 4

#: The split rules of the branch and bound (``guided`` flags of :func:`.box_kernels.search`):
#: the first searches alone, the second joins it in a race after :data:`RACE_AFTER` slices.
SPLIT_RULES = (False, True)

#: Slices of :data:`BNB_SLICE` boxes the first split rule searches alone before the race starts.
RACE_AFTER = 16

#: In the race, the second rule's search takes one slice in this many: its boxes cost more (it
#: sweeps every free feature for its split).
RACE_TURNS = 4

#: The slice after which a query the first split rule has not settled is also searched on the
#: leaf table with trees merged in pairs (:func:`_paired`), with the guided split rule: 0, after
#: the first, with two classes; :data:`PAIR_AFTER_MORE` with more.
PAIR_AFTER = 0

#: :data:`PAIR_AFTER` with three classes or more: 1, after the first full slice.
PAIR_AFTER_MORE = 1

#: In that race, the search on the paired table takes all but one slice in this many; the
#: leaf-end search keeps a share for the satisfiable queries it settles first.
PAIR_TURNS = 4

#: Rounds of pairing (pairs, then pairs of pairs, ...).
PAIR_ROUNDS = 2

#: Most growth of the leaf table one round of pairing may cause (merged rows over rows): a round
#: that would grow it more is not taken.
PAIR_GROWTH = 3.0

#: The slice after which the hard vote's queries are also searched as a heaviest clique of the
#: reachable leaves (:mod:`rfexplain.sat.cliques`): 0, after the first.
CLIQUE_AFTER = 0

#: Once it has joined, the clique search takes all but one slice in this many.
CLIQUE_TURNS = 8

#: Conflicts the reduced formula's solver takes per turn when it takes turns with a stopped
#: branch and bound (:meth:`InstanceFilter.decide_reduced`).
RACE_CONFLICTS = 500

#: The solver's CPU time over the branch and bound's in those turns: the branch and bound
#: settles most of the queries they share, so it gets the larger share.
SOLVER_SHARE = 0.1

#: CPU seconds the branch and bound searches beside the solver before the solver's first turn,
#: which builds its formula (:meth:`InstanceFilter.decide_reduced`): a query the search settles
#: soon pays for no formula.
SOLVER_JOINS = 0.1

#: The counterexample search's CPU time (:mod:`rfexplain.sat.climb`) over the solver's and the
#: branch and bound's in :meth:`InstanceFilter.decide_reduced`: it takes the first turn, then one
#: whenever its share falls below this.
CLIMB_SHARE = 0.2

#: CPU seconds of climbing in one query after which the climb's share falls to
#: :data:`CLIMB_LATE`: with its restarts kicked from the best end point and started from the
#: instance's last counterexamples (:mod:`rfexplain.sat.climb`), a counterexample the climb finds
#: it mostly finds early.
CLIMB_LONG = 0.1
CLIMB_LATE = 0.05

#: Restarts of the counterexample search per turn.
CLIMB_RESTARTS = 8

#: Restarts of the counterexample search (:mod:`rfexplain.sat.climb`) at the end of every slice
#: of a branch and bound that the clique search does not join (soft vote, or three classes or
#: more), from the end of the first slice (:data:`FIRST_SLICE`) on: turns counted in boxes, so
#: that a query is searched alike on every run. The box searches find the counterexamples of wide
#: satisfiable steps late; the climb often finds them in a few restarts.
SLICE_CLIMBS = 1

#: Counterexamples an instance's filter keeps (the latest first) for its climbs to start from
#: (:meth:`InstanceFilter._starts`).
WARM_STARTS = 4

#: Where the clique search joins the race (hard vote, two classes), the turn from which the race
#: climbs too at the end of every slice, and the restarts per slice (the first climb also starts
#: from the latest counterexamples, :meth:`InstanceFilter._starts`), while the race runs alone:
#: beside the solver the query's own climb takes over (:meth:`InstanceFilter._solve_beside`).
#: Starting from the third turn, queries settled in two slices pay nothing for it.
CLIQUE_RACE_CLIMB_AFTER = 2
CLIQUE_RACE_CLIMBS = 4

#: Boxes the branch and bound's stack holds at first (it doubles when full, as its row pool does).
BNB_STACK = 64

#: The branch and bound's row pool at first, in rows of its leaf table (each box on the stack
#: holds its leaves' rows there); growing it leaves and re-enters the compiled loop.
BNB_POOL = 8

#: The pair bound's partners when it is not used (more than two classes, the paired table).
NO_PAIRS = np.zeros(0, dtype=np.int64)

#: Boxes the first search of a query examines before it restarts with the pair bound
#: (:meth:`_BoxRace._join_pair_bound`).
PAIR_BOUND_AFTER = 64

#: Soft-vote near-tie points one branch and bound sets aside for exact arithmetic; past them it
#: leaves the query to the solver (unless a witness turns up).
BNB_TIES = 64


def warm_up(box_dtype: np.dtype, *, cliques: bool = True) -> None:
    """Load (or compile, on a machine's first run) the compiled loops of the queries: the branch
    and bound's for leaf boxes of ``box_dtype`` (:func:`.box_kernels.warm_up`), the climb's
    (:func:`.climb_kernels.warm_up`) and, with ``cliques``, the clique search's
    (:func:`.clique_kernels.warm_up`): a one-off cost of the process that would otherwise land
    inside the first query. Already-loaded
    loops cost nothing more."""
    from rfexplain.sat import box_kernels, climb_kernels, clique_kernels

    box_kernels.warm_up(box_dtype)
    climb_kernels.warm_up(box_dtype)
    if cliques:
        clique_kernels.warm_up()


@dataclass(frozen=True)
class Settled:
    """A query settled without the solver: ``sat`` and, when satisfiable, a witness state vector."""

    sat: bool
    witness: tuple[int, ...] | None = None
    #: UNSAT by the bounds alone: a subset of the fixed features whose bounds rule the condition
    #: out too (a sufficient set, as a solver's core); ``None`` otherwise.
    core: frozenset[int] | None = None


class LeafTable:
    """Every feasible leaf of a forest as a box of states with its score vector (built once per
    forest from its SAT encoding; :class:`InstanceFilter` specialises it to one instance).

    Small boxes never use, as witnesses, the states the encoding excludes (no float32 value in
    them); soft-vote near-ties are decided with the encoding's exact leaf weights.
    """

    def __init__(self, encoding: ForestEncoding) -> None:
        forest = encoding.forest
        self.forest = forest
        self.n_states = forest.states_per_feature
        self.soft = encoding.soft
        first_nodes = forest.first_nodes
        nodes, low, high = forest.leaf_boxes()
        #: Tree of every row; rows are grouped by tree.
        self.tree = np.searchsorted(first_nodes, nodes, side="right") - 1
        local = nodes - first_nodes[self.tree]
        #: Table row of every (feasible) leaf, by its position among all trees' nodes
        #: (:attr:`~rfexplain.core.forest.Forest.first_nodes`).
        self.row_of_node = np.full(sum(tree.n_nodes for tree in forest.trees), -1, dtype=np.int64)
        self.row_of_node[nodes] = np.arange(len(nodes))
        self.low, self.high = low, high
        #: Exact integer score vectors (soft vote only), to settle float64 near-ties.
        self.exact: list[tuple[int, ...]] = []
        if self.soft:
            weights = encoding.weights
            self.exact = [weights[k][leaf] for k, leaf in zip(self.tree.tolist(), local.tolist())]
            self.score = np.asarray(
                [forest.trees[k].proba[leaf] for k, leaf in zip(self.tree.tolist(), local.tolist())],  # type: ignore[index]
                dtype=np.float64,
            ).reshape(len(nodes), forest.n_classes)
        else:
            labels = np.concatenate([np.asarray(t.label, dtype=np.int64) for t in forest.trees])[nodes]
            self.score = np.zeros((len(nodes), forest.n_classes), dtype=np.float64)
            self.score[np.arange(len(nodes)), labels] = 1.0
        #: The deepest tree's depth (the number of steps of a walk down every tree).
        self.depth = max((tree.depth() for tree in forest.trees), default=0)
        #: The states of each feature a witness may use (the encoding excludes the others: no
        #: float32 value lies in them), sorted.
        self.allowed = [
            np.asarray([s for s in range(k) if s not in set(encoding.empty_states.get(f, ()))], dtype=np.int64)
            for f, k in enumerate(self.n_states)
        ]
        self._margins: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        # the compiled loops, loaded with the table rather than in a query
        warm_up(self.low.dtype, cliques=not self.soft and forest.n_classes == 2)  # CliqueSearch.applies

    def margins(self, kind: str, cls: int) -> tuple[np.ndarray, np.ndarray]:
        """Per leaf, its score difference against every other class ``d`` (``d`` against ``cls``
        for ``"not"``, ``cls`` against ``d`` for ``"predicts"``; one column per ``d`` in order),
        and per ``d`` what a win must exceed besides (under the hard vote half a vote where the
        tie goes the wrong way, else 0): the inputs of :func:`.box_kernels.bound`, cached per condition."""
        key = (kind, cls)
        if key not in self._margins:
            others = [d for d in range(self.score.shape[1]) if d != cls]
            own = self.score[:, [cls]]
            diff = self.score[:, others] - own if kind == "not" else own - self.score[:, others]
            ids = np.asarray(others, dtype=np.int64)
            penalty = np.zeros(len(others)) if self.soft else 0.5 * (ids > cls if kind == "not" else ids < cls)
            self._margins[key] = (np.ascontiguousarray(diff), penalty)
        return self._margins[key]


class InstanceFilter:
    """The leaf table seen from one instance: which leaves each fixed feature rules out."""

    def __init__(self, table: LeafTable, states: Sequence[int], *, reduced_solver: str | None = None) -> None:
        self.table = table
        #: Hard vote: the SAT solver :meth:`decide_reduced` uses (``None``: the engine does not
        #: use reduced formulas).
        self.reduced_solver = reduced_solver
        self.states = np.asarray(states, dtype=np.int64)
        #: ``outside[leaf, f]``: the instance's state of ``f`` is outside the leaf's box.
        self.outside = (self.states < table.low) | (self.states > table.high)
        #: The same, packed: bit ``f % 64`` of word ``f // 64`` of a leaf's row (one vectorised
        #: ``and`` per query in :meth:`_reachable`, cheaper than a column selection of ``outside``).
        self._outside_bits = _pack_bits(self.outside)
        #: The hard-vote branch and bound the last :meth:`decide` stopped at its node budget, with
        #: its query ``(fixed, kind, cls)``: :meth:`decide_reduced` resumes it beside the solver.
        self._open: tuple[tuple[tuple[int, ...], str, int], _BoxRace] | None = None
        #: The latest counterexamples found (full state vectors, at most :data:`WARM_STARTS`, the
        #: latest first): the climbs start from them (:meth:`_starts`).
        self._found: list[np.ndarray] = []

    def decide(
        self, fixed: Sequence[int], kind: str, cls: int, budget: Budget | None = None, *, short: bool = False
    ) -> Settled | None:
        """The answer to "is there a counterexample with ``fixed`` at the instance's states?"
        for the condition ``kind`` (``"not"``: the forest does not predict ``cls``;
        ``"predicts"``: it predicts ``cls``), or ``None`` when it is not plain. ``budget`` stops
        a long branch and bound with :class:`~rfexplain.core.budget.BudgetExpired`; ``short``
        gives the hard vote's branch and bound the hitting-set loops' short leash."""
        table = self.table
        self._open = None
        rows = self._reachable(fixed)
        if not self._may_hold(rows, kind, cls):
            return Settled(False, core=self._bound_core(fixed, kind, cls))
        free, lows, highs = self._free_boxes(fixed, rows)
        if table.soft:  # a small box is searched whole by the branch and bound's first box
            return self._branch_and_bound(free, rows, (lows, highs), kind, cls, budget)
        nodes = SHORT_BNB_NODES if short else HARD_BNB_NODES
        if not nodes:
            top = np.asarray([table.n_states[f] - 1 for f in free], dtype=np.int64)
            bottom = np.zeros_like(top)
            if _few_cells(((highs >= bottom) & (highs < top)).sum(axis=0), lows, highs, bottom, top):
                cells = [self._cells(f, lows[:, j], highs[:, j], 0, top[j]) for j, f in enumerate(free)]
                return self._search_box(free, cells, rows, kind, cls)
        else:
            race = _BoxRace(self, free, rows, (lows, highs), kind, cls)
            settled = race.advance(nodes, budget)
            if settled is not None:
                return settled
            if not race.finished:  # resumed beside the solver by decide_reduced
                self._open = ((tuple(fixed), kind, cls), race)
        return None

    def _reachable(self, fixed: Sequence[int]) -> np.ndarray:
        """The table rows of the leaves a point agreeing with the instance on ``fixed`` can reach."""
        fixed_mask = np.zeros((1, len(self.table.n_states)), dtype=bool)
        fixed_mask[0, list(fixed)] = True
        misses = self._outside_bits & _pack_bits(fixed_mask)[0]
        return np.flatnonzero(~misses.any(axis=1))

    def _free_boxes(self, fixed: Sequence[int], rows: np.ndarray) -> tuple[list[int], np.ndarray, np.ndarray]:
        """The free features (those not in ``fixed`` with several states) and the boxes of the
        leaves ``rows`` on them: ``(free, lows, highs)``, one column per free feature."""
        n_states = self.table.n_states
        fixed_set = set(fixed)
        free = [f for f in range(len(n_states)) if f not in fixed_set and n_states[f] > 1]
        columns = np.asarray(free, dtype=np.int64)
        # rows then columns (cheaper than one ``np.ix_`` selection)
        low = self.table.low.take(rows, axis=0).take(columns, axis=1)
        return free, low, self.table.high.take(rows, axis=0).take(columns, axis=1)

    def decide_reduced(self, fixed: Sequence[int], kind: str, cls: int, budget: Budget | None = None) -> Settled:
        """The hard-vote query decided by a SAT solver (:attr:`reduced_solver`, default Glucose)
        on a CNF of the reachable leaves alone (:class:`~rfexplain.sat.reduced.ReducedQuery`):
        exact, with a witness when satisfiable and no core otherwise.

        When the last :meth:`decide` stopped the branch and bound of this very query at its node
        budget, that search goes on beside the solver, the two taking turns by CPU time (the
        solver :data:`RACE_CONFLICTS` conflicts at a time, the search a slice of boxes; the
        solver's share :data:`SOLVER_SHARE`), and the first to settle answers."""
        table = self.table
        if table.soft:
            raise ValueError("the reduced formula encodes the hard vote only")
        race = None
        if self._open is not None and self._open[0] == (tuple(fixed), kind, cls):
            race = self._open[1]
            race.alone = False
        self._open = None
        rows = self._reachable(fixed)
        free, lows, highs = self._free_boxes(fixed, rows)
        cells = [self._cells(f, lows[:, j], highs[:, j], 0, table.n_states[f] - 1) for j, f in enumerate(free)]

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
                solver=self.reduced_solver or "g3",
            )

        climb = self._climber(free, lows, highs, cells, rows, kind, cls)
        return self._solve_beside(encode, cells, race, climb, free, rows, (kind, cls), budget)

    def _climber(
        self,
        free: list[int],
        lows: np.ndarray,
        highs: np.ndarray,
        cells: list[np.ndarray],
        rows: np.ndarray,
        kind: str,
        cls: int,
    ) -> MarginClimb:
        """The counterexample search by coordinate ascent (:mod:`rfexplain.sat.climb`) over the
        cells ``cells`` of the free features ``free``, whose reachable leaves ``rows`` have the
        boxes ``lows..highs`` (seeded by the query's size, so that a query always climbs alike),
        starting from the latest counterexamples (:meth:`_starts`)."""
        first, last = cell_ranges(lows, highs, cells)
        margins, penalty = self.table.margins(kind, cls)
        return MarginClimb(
            first,
            last,
            margins[rows],
            penalty,
            [len(reps) for reps in cells],
            any_challenger=kind == "not",
            seed=len(rows),
            starts=self._starts(free, cells),
        )

    def _solve_beside(
        self,
        encode: Callable[[], ReducedQuery],
        cells: list[np.ndarray],
        race: _BoxRace | None,
        climb: MarginClimb,
        free: list[int],
        rows: np.ndarray,
        condition: tuple[str, int],
        budget: Budget | None,
    ) -> Settled:
        """Run the solver of the query ``encode`` builds to an answer, taking turns with ``race``
        (when given) by CPU time, and with ``climb``, which looks for a counterexample of
        ``condition`` (over the free features' ``cells``) first and then whenever its CPU time
        falls below :data:`CLIMB_SHARE` of the others' (:data:`CLIMB_LATE` once it has climbed
        :data:`CLIMB_LONG` CPU s). A point the climb finds is a witness once
        the forest's exact vote (:meth:`_evaluate`) confirms it.

        The query is encoded at the solver's first turn, and the encoding counts as the solver's
        time, so that a race settled soon pays for no formula."""
        limited = budget is not None and budget.deadline is not None
        solver_time = search_time = climb_time = 0.0
        climbing = True
        query: ReducedQuery | None = None
        try:
            while True:
                if budget is not None:
                    budget.check("solving")
                share = CLIMB_SHARE if climb_time < CLIMB_LONG else CLIMB_LATE
                if climbing and climb_time <= share * (solver_time + search_time):
                    start = time.process_time()
                    found = climb.run(CLIMB_RESTARTS)
                    climb_time += time.process_time() - start
                    if found is not None:
                        point = np.asarray([reps[i] for reps, i in zip(cells, found.tolist())], dtype=np.int64)
                        holds, _ = self._evaluate(point[None, :], free, rows, *condition)
                        if holds[0]:
                            return self._witness(free, point)
                        climbing = False  # cannot happen under the hard vote's exact counts
                elif race is None or (
                    solver_time <= SOLVER_SHARE * search_time and (query is not None or search_time >= SOLVER_JOINS)
                ):
                    start = time.process_time()
                    if query is None:
                        query = encode()
                    conflicts = RACE_CONFLICTS if race is not None else (CONFLICT_CHUNK if limited else None)
                    outcome = query.run(conflicts)
                    solver_time += time.process_time() - start
                    if outcome is not None:
                        return self._witness(free, np.asarray(query.witness)) if outcome else Settled(False)
                else:
                    start = time.process_time()
                    settled = race.advance(BNB_SLICE, budget)
                    search_time += time.process_time() - start
                    if settled is not None:
                        return settled
                    if race.finished:
                        race = None
        finally:
            if query is not None:
                query.close()

    # ------------------------------------------------------------------ bounds
    def _bound_core(self, fixed: Sequence[int], kind: str, cls: int) -> frozenset[int]:
        """A subset of ``fixed`` whose reachable leaves still rule the condition out: deletion in
        ``fixed``'s order, each feature dropped when the bounds without it stay below zero
        (compiled: :func:`.box_kernels.bound_core`, counting for each leaf the fixed features it
        misses)."""
        from rfexplain.sat.box_kernels import bound_core

        margins, penalty = self.table.margins(kind, cls)
        kept = np.zeros(len(fixed), dtype=np.bool_)
        columns = np.asarray(fixed, dtype=np.int64)
        bound_core(self.outside, columns, self.table.tree, margins, penalty, kind == "not", NEAR_TIE, kept)
        return frozenset(f for f, keep in zip(fixed, kept.tolist()) if keep)

    def _may_hold(self, rows: np.ndarray, kind: str, cls: int) -> bool:
        """False only when the reachable leaves (``rows`` of the table) rule the condition out."""
        return self._slack(rows, kind, cls) > -NEAR_TIE

    def _slack(self, rows: np.ndarray, kind: str, cls: int) -> float:
        """An upper bound on the margin by which the condition can hold with the reachable leaves
        ``rows`` of the table: it cannot hold when the bound is below ``-NEAR_TIE``.

        For every other class ``d`` at once: the sum over trees of the best score difference a
        reachable leaf gives (``d`` against ``cls`` for "not", ``cls`` against ``d`` for "predicts")
        bounds the margin from above; "not" needs one challenger, "predicts" beats them all. Under
        the hard vote a win against a lower class index needs a margin of one vote, so such bounds
        lose half a vote; soft-vote bounds are float64 sums, covered by the ``NEAR_TIE`` slack."""
        margins, penalty = self.table.margins(kind, cls)
        from rfexplain.sat.box_kernels import bound

        return float(bound(rows, len(rows), self.table.tree, margins, penalty, kind == "not"))

    # ------------------------------------------------------------------ evaluating points
    def _cells(self, f: int, lows: np.ndarray, highs: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """One state of ``f`` per cell of ``lo..hi`` cut by the leaf boxes ``lows..highs`` (on
        ``f``) of the leaves a point can reach: states in one cell send every point, whatever its
        other states, to the same leaves, so one state per cell decides them all. The state is the
        cell's first one the encoding allows; a cell with none is left out."""
        bounds = np.concatenate((lows, highs + 1, [lo]))
        starts = np.unique(bounds[(bounds >= lo) & (bounds <= hi)])
        ends = np.append(starts[1:] - 1, hi)
        allowed = self.table.allowed[f]
        at = np.searchsorted(allowed, starts)
        picked = allowed[np.minimum(at, len(allowed) - 1)]
        return picked[(at < len(allowed)) & (picked <= ends)]

    def _evaluate(
        self, points: np.ndarray, free: list[int], rows: np.ndarray, kind: str, cls: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """For state rows ``points`` (the free features' states, the instance's elsewhere; every
        leaf they reach among ``rows``): whether the condition holds exactly, and its float64
        margin (positive when it holds).

        The leaves reached are found by testing every point against the boxes of ``rows`` when
        there are few of them (most features fixed), else by walking the trees."""
        table = self.table
        forest = table.forest
        if len(rows) * max(len(free), 1) <= 2 * forest.n_trees * max(table.depth, 1):
            inside = np.ones((len(points), len(rows)), dtype=bool)
            for j, f in enumerate(free):
                column = points[:, j : j + 1]
                inside &= (column >= table.low[rows, f]) & (column <= table.high[rows, f])
            sums = inside.astype(np.float64) @ table.score[rows]

            def reached(p: int) -> np.ndarray:
                return rows[inside[p]]
        else:
            full = np.broadcast_to(self.states, (len(points), len(self.states))).copy()
            full[:, free] = points
            leaves = table.row_of_node[forest.tree_leaves(full) + forest.first_nodes]  # (points, trees)
            sums = table.score[leaves].sum(axis=1)

            def reached(p: int) -> np.ndarray:
                return leaves[p]

        winners = np.argmax(sums, axis=1)
        if table.soft and sums.shape[1] > 1:
            top_two = np.sort(sums, axis=1)[:, -2:]
            for p in np.flatnonzero(top_two[:, 1] - top_two[:, 0] <= NEAR_TIE):
                winners[p] = self._exact_winner(reached(int(p)))
        others = sums.copy()
        others[:, cls] = -np.inf
        if kind == "not":
            return winners != cls, others.max(axis=1) - sums[:, cls]
        return winners == cls, sums[:, cls] - others.max(axis=1)

    def _witness(self, free: list[int], point: np.ndarray) -> Settled:
        witness = self.states.copy()
        witness[free] = point
        self._found = [witness, *(w for w in self._found if not np.array_equal(w, witness))][:WARM_STARTS]
        return Settled(True, tuple(int(s) for s in witness))

    def _starts(self, free: list[int], cells: Sequence[np.ndarray]) -> np.ndarray:
        """The latest counterexamples found, on the free features ``free``, as the indices of
        their cells, whose sorted first states are ``cells[j]`` (a state is in the last cell
        starting at or below it): starting points of a climb."""
        found = np.asarray(self._found, dtype=np.int64).reshape(len(self._found), len(self.states))
        starts = np.zeros((len(found), len(free)), dtype=np.int64)
        for j, (f, reps) in enumerate(zip(free, cells)):
            starts[:, j] = np.maximum(np.searchsorted(reps, found[:, f], side="right") - 1, 0)
        return starts

    # ------------------------------------------------------------------ small boxes
    def _search_box(self, free: list[int], cells: list[np.ndarray], rows: np.ndarray, kind: str, cls: int) -> Settled:
        combinations = list(itertools.product(*cells))
        points = np.array(combinations, dtype=np.int64).reshape(len(combinations), len(free))
        holds, _ = self._evaluate(points, free, rows, kind, cls)
        hits = np.flatnonzero(holds)
        return self._witness(free, points[hits[0]]) if len(hits) else Settled(False)

    # ------------------------------------------------------------------ large boxes: branch and bound
    def _branch_and_bound(
        self,
        free: list[int],
        rows: np.ndarray,
        boxes: tuple[np.ndarray, np.ndarray],
        kind: str,
        cls: int,
        budget: Budget | None = None,
        nodes: int | None = None,
    ) -> Settled | None:
        """Decide the query exactly by splitting the free features' state intervals: a box whose
        reachable leaves rule the condition out (:meth:`_may_hold`) is dropped, a box of at most
        :data:`BOX_POINTS` combinations is searched whole, any other is split in two and the half
        with the larger bound is searched first (``rows``, the leaves the whole box reaches, have
        passed :meth:`_may_hold` already). ``None`` when ``nodes`` boxes (default
        :data:`BNB_NODES`) did not settle it: the solver decides. The loop is compiled
        (:mod:`.box_kernels`) and runs in slices of :data:`BNB_SLICE` boxes, ``budget`` polled
        between them; soft-vote points at a near tie are decided here, in exact arithmetic, after
        the search.

        A query the leaf-end split rule does not settle in its first :data:`PAIR_AFTER` + 1
        slices is raced against a second search with the guided split rule on the paired leaf
        table (:func:`_paired`), which takes all but one slice in :data:`PAIR_TURNS`; when no
        pairing is taken, against the guided rule on the same table from slice
        :data:`RACE_AFTER` on, one slice in :data:`RACE_TURNS`. The first of the two to settle
        answers (both are exact; the node budget counts the boxes of both)."""
        race = _BoxRace(self, free, rows, boxes, kind, cls)
        return race.advance(BNB_NODES if nodes is None else nodes, budget)

    def _decide_ties(
        self, free: list[int], points: np.ndarray, rows: np.ndarray, kind: str, cls: int, overflow: bool
    ) -> Settled | None:
        """After a branch and bound found no witness: the soft-vote near-tie ``points`` it set
        aside, decided exactly (the first where the condition holds is the witness); ``None``
        when more were set aside than kept (``overflow``) and none of those holds."""
        if len(points):
            holds, _ = self._evaluate(points, free, rows, kind, cls)
            hits = np.flatnonzero(holds)
            if len(hits):
                return self._witness(free, points[hits[0]])
        return None if overflow else Settled(False)

    def _exact_winner(self, leaves: np.ndarray) -> int:
        return soft_winner([sum(column) for column in zip(*(self.table.exact[i] for i in leaves))])


class _BoxRace:
    """The branch and bound of one query (:meth:`InstanceFilter._branch_and_bound`): its searches
    (one per split rule and leaf table) taking turns in slices, resumable where a node budget
    stopped it."""

    def __init__(
        self,
        screen: InstanceFilter,
        free: list[int],
        rows: np.ndarray,
        boxes: tuple[np.ndarray, np.ndarray],
        kind: str,
        cls: int,
    ) -> None:
        """``boxes``: the leaves' boxes on the free features (:meth:`InstanceFilter._free_boxes`)."""
        table = screen.table
        self.screen, self.free, self.kind, self.cls = screen, free, kind, cls
        self.top = [table.n_states[f] - 1 for f in free]
        self._set_table(rows, boxes)
        self.runs = [_BoxSearch(self.arguments, self.top, len(rows), guided=SPLIT_RULES[0])]
        #: the trees paired for the pair bound once the first search runs with it
        #: (:meth:`_join_pair_bound`; two classes only), for the searches on this table
        self.partner: np.ndarray | None = None
        if self._pairs_due and PAIR_BOUND_AFTER <= 0:
            self._join_pair_bound()
        self.paired = False
        #: The clique search (:mod:`rfexplain.sat.cliques`; hard vote only), once it has joined.
        self.clique: CliqueSearch | None = None
        #: The counterexample search (:mod:`rfexplain.sat.climb`) once the first slice is over
        #: (:data:`SLICE_CLIMBS`) or, where the clique search joins, from its turn
        #: :data:`CLIQUE_RACE_CLIMB_AFTER` while the race runs :attr:`alone`.
        self.climb: MarginClimb | None = None
        self.climbing = SLICE_CLIMBS > 0
        #: Whether no solver runs beside the race (set off by :meth:`InstanceFilter.decide_reduced`).
        self.alone = True
        #: Slices of :data:`BNB_SLICE` boxes (or units of the clique search's work) so far, those the
        #: box searches took, and what is left of the current one: the turns do not depend on how
        #: many boxes each :meth:`advance` was given.
        self.turn = 0
        self.box_turns = 0
        self.slice_left = min(BNB_SLICE, max(FIRST_SLICE, len(rows) // FIRST_SLICE_ROWS))

    def _set_table(self, rows: np.ndarray, boxes: tuple[np.ndarray, np.ndarray]) -> None:
        """The leaf table of the searches: the table rows ``rows`` (grouped by tree) with their
        ``boxes`` on the free features, as the arguments of :func:`.box_kernels.search`."""
        table = self.screen.table
        margins, penalty = table.margins(self.kind, self.cls)
        allowed = [table.allowed[f] for f in self.free]
        self.rows = rows
        self.arguments = (
            np.ascontiguousarray(boxes[0]),
            np.ascontiguousarray(boxes[1]),
            table.tree[rows],
            np.ascontiguousarray(margins[rows]),
            penalty,
            np.ascontiguousarray(table.score[rows]),
            np.concatenate(allowed).astype(np.int64) if allowed else np.zeros(0, dtype=np.int64),
            np.concatenate(([0], np.cumsum([len(a) for a in allowed]))).astype(np.int64),
            self.cls,
            self.kind == "not",
            table.soft,
            NEAR_TIE,
            max(BOX_POINTS, 1),
        )

    def _join_pair_bound(self) -> None:
        """Restart the first search with the pair bound (:func:`.box_kernels.pair_bound`): the
        rows reordered, each tree's leaves in decreasing margin, and the trees paired for it
        (:func:`_pair_partners`). A query settled in its first :data:`PAIR_BOUND_AFTER` boxes
        pays for neither; the others lose those boxes."""
        order = _margin_order(self.arguments)
        self._set_table(self.rows[order], (self.arguments[0][order], self.arguments[1][order]))
        self.partner = _pair_partners(self.arguments, self.kind == "not")
        self.runs[0] = _BoxSearch(self.arguments, self.top, len(self.rows), guided=SPLIT_RULES[0], partner=self.partner)

    @property
    def _pairs_due(self) -> bool:
        """Whether the first search is still to restart with the pair bound (two classes only)."""
        return self.partner is None and self.arguments[3].shape[1] == 1

    @property
    def finished(self) -> bool:
        """No search is left (each ran out with near ties it could not keep): only the solver can
        decide."""
        return not self.runs and self.clique is None

    def advance(self, nodes: int, budget: Budget | None = None) -> Settled | None:
        """Search at most ``nodes`` more boxes (or units of the clique search's work); the answer, or ``None`` when
        they did not settle it (or :attr:`finished`). ``budget`` is polled between slices."""
        from rfexplain.sat import box_kernels as kernels

        limit = nodes
        while self.runs or self.clique is not None:
            if self.clique is not None and (not self.runs or self._clique_turn()):
                settled, examined = self._advance_clique(min(limit, self.slice_left))
                if settled is not None:
                    return settled
            else:
                runs = self.runs
                run = runs[0] if len(runs) == 1 or not self._second_turn() else runs[-1]
                boxes = min(limit, self.slice_left)
                if self._pairs_due and run is runs[0]:  # stop where the pair bound joins
                    boxes = min(boxes, PAIR_BOUND_AFTER - run.boxes)
                status = run.step(boxes)
                examined = run.examined
                if status == kernels.FOUND:
                    return self.screen._witness(self.free, run.witness)
                if status == kernels.EXHAUSTED:
                    ties, overflow = run.ties[: run.state[kernels.TIES]], bool(run.state[kernels.TIE_OVERFLOW])
                    settled = self.screen._decide_ties(self.free, ties, self.rows, self.kind, self.cls, overflow)
                    if settled is not None:
                        return settled
                    runs.remove(run)  # near ties it could not keep: the other search may still settle it
                    self.slice_left = BNB_SLICE
                    continue
                if self._pairs_due and run is runs[0] and run.boxes >= PAIR_BOUND_AFTER:
                    self._join_pair_bound()
            limit -= examined
            self.slice_left -= examined
            if self.slice_left <= 0:  # the slice is over (whichever calls it took): the next turn
                self._next_turn(budget)
                settled = self._climb_turn()
                if settled is not None:
                    return settled
            if limit <= 0:
                return None
        return None

    def _advance_clique(self, nodes: int) -> tuple[Settled | None, int]:
        """Run the clique search for about ``nodes`` units of work: its answer (``None`` while it
        goes on) and the units it did. A clique's point is confirmed by the forest's exact
        vote; should it not hold, the clique search leaves the query to the others."""
        from rfexplain.sat import clique_kernels

        clique = self.clique
        assert clique is not None
        status = clique.step(nodes)
        if status == clique_kernels.SLICED:
            return None, clique.examined
        self.clique = None
        if status == clique_kernels.EXHAUSTED:
            return Settled(False), clique.examined
        point = clique.witness.copy()
        holds, _ = self.screen._evaluate(point[None, :], self.free, self.rows, self.kind, self.cls)
        return (self.screen._witness(self.free, point) if holds[0] else None), clique.examined

    def _next_turn(self, budget: Budget | None) -> None:
        """End a slice: poll ``budget``, let the searches that join late join (the paired table,
        the clique search, the guided rule) and count the turn."""
        self.slice_left = BNB_SLICE
        box_slice = self.clique is None or not self._clique_turn()
        if box_slice:
            self.box_turns += 1
        if budget is not None:
            budget.check("searching boxes")
        if self.turn == (PAIR_AFTER if self.arguments[3].shape[1] == 1 else PAIR_AFTER_MORE):
            merged = _paired(self.arguments, self.kind == "not")
            if merged is not None:
                partner = None
                if merged[3].shape[1] == 1:  # the pair bound on the paired table: pairs of pairs
                    merged = _by_margin(merged)
                    partner = _pair_partners(merged, self.kind == "not")
                self.runs.append(_BoxSearch(merged, self.top, len(merged[0]), guided=SPLIT_RULES[-1], partner=partner))
                self.paired = True
        if self.turn == CLIQUE_AFTER and CliqueSearch.applies(self.arguments):
            self.clique = CliqueSearch(self.arguments)
        if box_slice and self.box_turns == RACE_AFTER + 1 and not self.paired and len(SPLIT_RULES) > 1:
            self.runs.append(
                _BoxSearch(self.arguments, self.top, len(self.rows), guided=SPLIT_RULES[1], partner=self.partner)
            )
        self.turn += 1

    def _climb_turn(self) -> Settled | None:
        """At the end of a slice: :data:`SLICE_CLIMBS` restarts of the counterexample search
        (built at the first, on the free features' allowed states and the leaf table of the first
        search; that first turn also climbs from each of the latest counterexamples the
        instance's filter found, :meth:`InstanceFilter._starts`), whose point is a witness once
        the forest's exact vote confirms it (a soft-vote near tie may not: then the climb stops,
        as it may find that point again). Where the clique search has joined (hard vote, two
        classes), :data:`CLIQUE_RACE_CLIMBS` restarts from turn :data:`CLIQUE_RACE_CLIMB_AFTER`
        on, and none once a solver runs beside the race."""
        if not self.climbing or self.turn == 0:
            return None
        restarts = SLICE_CLIMBS
        if self.clique is not None:
            if not self.alone or self.turn < CLIQUE_RACE_CLIMB_AFTER:
                return None
            restarts = CLIQUE_RACE_CLIMBS
        if self.climb is None:
            from rfexplain.sat.climb_kernels import representatives

            low, high, _, margins, penalty, _, allowed, allowed_at = self.arguments[:8]
            top = np.asarray(self.top, dtype=np.int64)
            values = np.zeros(int(np.minimum(top + 1, 2 * len(low) + 1).sum()), dtype=np.int64)
            at = np.zeros(len(top) + 1, dtype=np.int64)
            representatives(low, high, top, allowed, allowed_at, np.zeros(2 * len(low) + 1, np.int64), values, at)
            reps = [values[at[j] : at[j + 1]] for j in range(len(top))]
            starts = self.screen._starts(self.free, reps)
            for j in range(len(top)):  # cell indices to the cells' states
                starts[:, j] = reps[j][starts[:, j]]
            self.climb = MarginClimb(
                low,
                high,
                margins,
                penalty,
                top + 1,
                any_challenger=self.kind == "not",
                seed=len(self.rows),
                allowed=(values, at),
                starts=starts,
            )
        point = self.climb.run(restarts)
        if point is None:
            return None
        holds, _ = self.screen._evaluate(point[None, :], self.free, self.rows, self.kind, self.cls)
        if holds[0]:
            return self.screen._witness(self.free, point)
        self.climbing = False
        return None

    def _clique_turn(self) -> bool:
        """Whether the clique search takes the current slice: all but one in :data:`CLIQUE_TURNS`."""
        return self.turn % CLIQUE_TURNS != 0

    def _second_turn(self) -> bool:
        """Whether the second box search of the race takes this slice: all but one slice in
        :data:`PAIR_TURNS` when it searches the paired table, else one in :data:`RACE_TURNS`
        (counted over the slices the box searches take)."""
        if self.paired:
            return self.box_turns % PAIR_TURNS != 0
        return (self.box_turns - RACE_AFTER) % RACE_TURNS == 0


class _BoxSearch:
    """The state of one compiled branch and bound (:func:`.box_kernels.search`) over a query's
    leaf boxes: its box stack, row pool and tie buffer, grown when the kernel asks."""

    def __init__(
        self,
        arguments: tuple[Any, ...],
        top: list[int],
        n_rows: int,
        *,
        guided: bool,
        partner: np.ndarray | None = None,
    ) -> None:
        """``partner``: the trees paired for the pair bound (:func:`.box_kernels.search`), or
        ``None``: no pair bound."""
        from rfexplain.sat import box_kernels

        self.kernels = box_kernels
        n_free = len(top)
        self.arguments = arguments
        self.guided = guided
        self.partner = partner if partner is not None else NO_PAIRS
        self.stack_lo = np.zeros((BNB_STACK, n_free), dtype=np.int64)
        self.stack_hi = np.zeros((BNB_STACK, n_free), dtype=np.int64)
        self.stack_hi[0] = top
        self.stack_rows = np.zeros((BNB_STACK, 2), dtype=np.int64)
        self.stack_rows[0, 1] = n_rows  # the whole box: the caller checked its bounds
        #: per box, its leaf intervals ending inside per free feature, then 1 once they are known
        self.stack_counts = np.zeros((BNB_STACK, n_free + 1), dtype=np.int64)
        #: per box, what the pair bound took off its per-tree bound (+inf: not yet judged)
        self.stack_gain = np.full(BNB_STACK, np.inf)
        self.pool = np.zeros(BNB_POOL * n_rows + 1, dtype=np.int64)
        self.pool[:n_rows] = np.arange(n_rows)
        self.ties = np.zeros((BNB_TIES, n_free), dtype=np.int64)
        self.state = np.zeros(3, dtype=np.int64)
        self.state[box_kernels.STACK_SIZE] = 1
        self.witness = np.zeros(n_free, dtype=np.int64)
        #: boxes the last :meth:`step` examined, and all the steps
        self.examined = 0
        self.boxes = 0

    def step(self, node_limit: int) -> int:
        """Run at most ``node_limit`` boxes; the kernel's status (never ``GROW``: full arrays are
        doubled and the kernel resumes with the same state)."""
        kernels = self.kernels
        self.examined = 0
        while True:
            own = (
                self.guided,
                self.partner,
                self.stack_lo,
                self.stack_hi,
                self.stack_rows,
                self.stack_counts,
                self.stack_gain,
                self.pool,
                self.ties,
                self.state,
            )
            status, examined = kernels.search(*(self.arguments + own + (self.witness, node_limit - self.examined)))
            self.examined += examined
            self.boxes += examined
            if status != kernels.GROW:
                return int(status)
            full = (self.stack_lo, self.stack_hi, self.stack_rows, self.stack_counts, self.stack_gain, self.pool)
            doubled = [np.concatenate((a, np.zeros_like(a))) for a in full]
            self.stack_lo, self.stack_hi, self.stack_rows, self.stack_counts, self.stack_gain, self.pool = doubled


def _pack_bits(flags: np.ndarray) -> np.ndarray:
    """A boolean matrix's rows as 64-bit words: bit ``j % 64`` of word ``j // 64`` is column ``j``."""
    words = (flags.shape[1] + 63) // 64
    padded = np.zeros((flags.shape[0], 64 * words), dtype=bool)
    padded[:, : flags.shape[1]] = flags
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").astype(np.uint64)


def _margin_order(arguments: tuple[Any, ...]) -> np.ndarray:
    """The order of the branch and bound's rows (one other class) that keeps them grouped by
    tree and puts each tree's in decreasing margin, as the pair bound needs."""
    return np.lexsort((-arguments[3][:, 0], arguments[2]))


def _by_margin(arguments: tuple[Any, ...]) -> tuple[Any, ...]:
    """The branch and bound's arguments with their rows in :func:`_margin_order`."""
    order = _margin_order(arguments)
    rows = (0, 1, 2, 3, 5)  # boxes, trees, margins, scores
    return tuple(np.ascontiguousarray(a[order]) if i in rows else a for i, a in enumerate(arguments))


def _pair_partners(arguments: tuple[Any, ...], not_kind: bool) -> np.ndarray:
    """The trees paired for the branch and bound's pair bound (:func:`.box_kernels.pair_bound`)
    on one query's table (the arguments of :func:`.box_kernels.search`), by tree id (-1: none),
    chosen on the query's whole box as the paired table's are (:func:`.box_kernels.pair_partners`)."""
    from rfexplain.sat import box_kernels as kernels

    low, high, trees, margins, penalty = arguments[:5]
    of_run, starts = kernels.pair_partners(low, high, trees, margins, penalty, not_kind)
    partner = np.full(int(trees.max()) + 1 if len(trees) else 0, -1, dtype=np.int64)
    paired = np.flatnonzero(of_run >= 0)
    partner[trees[starts[paired]]] = trees[starts[of_run[paired]]]
    return partner


def _paired(arguments: tuple[Any, ...], not_kind: bool) -> tuple[Any, ...] | None:
    """The branch and bound's arguments (:func:`.box_kernels.search`; ``not_kind``: the condition
    is "not") over the leaf table with
    trees merged in pairs (:func:`.box_kernels.pair_partners`, :func:`.box_kernels.merge_pairs`),
    up to :data:`PAIR_ROUNDS` times (pairs of pairs, ...), each round only while the table grows
    by at most :data:`PAIR_GROWTH`; ``None`` when not even one round is taken."""
    from rfexplain.sat import box_kernels as kernels

    low, high, trees, margins, penalty, scores = arguments[:6]
    merged = None
    for _ in range(PAIR_ROUNDS):
        partner, starts = kernels.pair_partners(low, high, trees, margins, penalty, not_kind)
        if not np.any(partner >= 0):
            break
        total = kernels.merged_rows(low, high, partner, starts)
        if total > PAIR_GROWTH * len(low):
            break
        low, high, trees, margins, scores = kernels.merge_pairs(low, high, margins, scores, partner, starts, total)
        merged = (low, high, trees, margins, penalty, scores, *arguments[6:])
    return merged


def _few_cells(counts: np.ndarray, lows: np.ndarray, highs: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
    """Whether the box ``lo..hi`` has at most :data:`BOX_POINTS` cell combinations, given the
    leaf boxes ``lows..highs`` reaching it and ``counts``, per feature, of their intervals ending
    inside: ``1 + counts`` cells at most, and at least two on every feature with a count (the
    branch and bound's kernel makes the same test)."""
    if math.prod((1 + counts).tolist()) <= max(BOX_POINTS, 1):
        return True
    if 2 ** int(np.count_nonzero(counts)) > max(BOX_POINTS, 1):
        return False
    return math.prod(_cell_counts(lows, highs, lo, hi).tolist()) <= max(BOX_POINTS, 1)


def _cell_counts(lows: np.ndarray, highs: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For every column (a free feature) of the leaf boxes ``lows..highs``: how many cells they cut
    ``lo..hi`` into (at least the number :meth:`InstanceFilter._cells` returns), all columns in a
    few numpy passes."""
    cuts = np.concatenate((lows, highs + 1))
    cuts = np.where((cuts > lo) & (cuts <= hi), cuts, -1)
    cuts.sort(axis=0)
    distinct = (cuts[0] >= 0).astype(np.int64) + ((np.diff(cuts, axis=0) != 0) & (cuts[1:] >= 0)).sum(axis=0)
    return 1 + distinct
