"""The SAT engine's tuning: every limit, slice and share of its deciders in one frozen object.

:class:`SatTuning` holds the numbers that set how the deciders (:mod:`rfexplain.sat.deciders`)
share a query's time and how far each searches before it hands a query on. None of them changes
an answer (every decider is exact, and the canonical reasons depend on the feature order alone);
they change which decider answers, and so the speed and the witnesses. An engine takes them as
``SatEngine(forest, tuning=SatTuning(...))`` or ``tuning={"box_points": 64, ...}``
(:meth:`SatTuning.of`); the defaults are :data:`DEFAULT_TUNING`. The measurements that chose the
defaults are in ``docs/decisions.md`` (its "SAT engine" sections).

The vote's own tolerance is not tuning: :data:`rfexplain.core.vote.NEAR_TIE`, the float64
distance under which two soft-vote sums are compared again in exact integer arithmetic, is part
of the exact decision.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rfexplain.core.errors import InvalidOptionError

__all__ = ["SatTuning", "DEFAULT_TUNING"]


@dataclass(frozen=True)
class SatTuning:
    """The SAT engine's tuning (frozen; :meth:`replace` gives a changed copy).

    Box search (:mod:`rfexplain.sat.deciders.boxes`, the branch and bound over the reachable
    leaves' boxes, its loop in :mod:`rfexplain.sat.box_kernels`):

    - ``box_points``: most free-feature state combinations a box may have to be searched whole.
    - ``box_runs``: most boxes of intervals a box question with gaps in its sets of states is
      split into for the box searches (:meth:`~rfexplain.sat.engine.SatEngine.box_counterexample`;
      past it, or where a search gives up, the question goes to the full formula).
    - ``bnb_nodes``: boxes the soft vote's search may examine before it hands the query on (the
      budget is polled all along; the search is exact, the cap only hands the query over).
    - ``hard_bnb_nodes``: boxes the hard vote's search examines alone (0: none, small boxes
      only) before the reduced CNF's solver joins it.
    - ``short_bnb_nodes``: the same in the hitting-set loops' queries (enumerations).
    - ``bnb_slice``: boxes between two polls of the budget (a slice, the portfolio's turn).
    - ``first_slice``, ``first_slice_rows``: the first slice's boxes, at least one per
      ``first_slice_rows`` reachable leaves (at most ``bnb_slice``).
    - ``split_rules``: the searches' split rules (``guided`` flags of
      :func:`.box_kernels.search`): the first searches alone, the second joins after
      ``race_after`` slices and takes one slice in ``race_turns``.
    - ``pair_after``, ``pair_after_more``: the slice after which the search on the leaf table
      with trees merged in pairs joins, with two classes and with more; it then takes all but one
      slice in ``pair_turns``; ``pair_rounds`` rounds of pairing, each only while the table grows
      by at most ``pair_growth``.
    - ``progress_after``: boxes both searches of a race (the split rules', or the paired
      table's) examine before the one whose estimated remaining work is smaller takes the
      favoured share of the slices, the ``pair_turns`` or ``race_turns`` above
      (:meth:`.Boxes.second_turn`; ``1 << 62``: never).
    - ``pair_bound_after``: boxes of the first search before it restarts with the pair bound
      (two classes); ``pair_gate``: the pair bound judges a child box only when its margin of the
      per-tree bound is at most this many times what its parent's pairs took off their parent's
      bound.
    - ``bnb_stack``, ``bnb_pool``: the search's box stack (boxes) and row pool (rows per table
      row) at first; both double when full, and the table's later searches start at the sizes
      reached (:class:`~rfexplain.sat.deciders.leaves.BoxCapacity`).
    - ``bnb_ties``: soft-vote near-tie points one search sets aside for exact arithmetic.
    - ``nearest_box_points``, ``nearest_pair_after_more``, ``nearest_pair_bound_after``:
      ``box_points``, ``pair_after_more`` and ``pair_bound_after`` of the searches for a
      counterexample nearest to a bound of an inflated reason
      (:meth:`~rfexplain.sat.engine.SatEngine.box_nearest`; a slice count no search reaches:
      the paired table never joins with three classes or more; the first search restarts with
      the pair bound only in a long search, once it has examined 4096 boxes).

    Lattices (:mod:`rfexplain.sat.deciders.lattice`, soft vote):

    - ``lattice_levels``: the lattices a soft-vote question is asked on, coarsest first (``b``:
      margins rounded up to multiples of ``2**-b``; ``0``: whole votes); a level is skipped where
      its sums could pass ``2**52``.
    - ``lattice_nodes``: boxes (or units of the clique search's work) the race of one level may
      take before the next level is asked; the last level takes up to ``bnb_nodes``, and a
      question it leaves open goes to the soft vote's own race (for at most ``lattice_nodes``
      boxes when the last level gave up on a spurious point, then the full CNF).
    - ``lattice_impure``: the share of impure leaves among a question's reachable leaves above
      which no lattice is asked (the soft race answers alone); the lattices' races run without
      the clique search on more than ``lattice_clique_leaves`` reachable leaves.

    Clique search (:mod:`rfexplain.sat.cliques`, hard vote, two classes):

    - ``clique_after``: the slice after which it joins; it then takes all but one slice in
      ``clique_turns``.
    - ``cube_depth``, ``cube_vertices``, ``max_vertices``: its cube splitting's limits
      (:class:`~rfexplain.sat.cliques.CliqueSearch`); ``max_leaves``: most reachable leaves of a
      query it takes on.
    - ``clique_work_unit``: words of bitsets its colourings sweep per unit of its work (on top of
      one per branching), so that a unit costs about what a box of the box search does and the
      race's slices share time fairly.
    - ``clique_failed_literals``: the largest colour class whose vertices its MaxCLQ bound tries
      one by one (failed literals) when propagation alone finds no inconsistent set.

    Climbing (:mod:`rfexplain.sat.climb`, counterexamples by coordinate ascent):

    - ``slice_climbs``: restarts at the end of every slice after the first where the clique
      search does not join; where it joins, ``clique_race_climbs`` restarts from turn
      ``clique_race_climb_after`` while no solver runs beside the race.
    - ``warm_starts``: counterexamples an instance keeps for the climbs to start from.
    - ``climb_kick``, ``climb_patience``: features a restart moves at random from the best end
      point so far (iterated local search), and the restarts in a row that may fail to improve
      on it before one starts from a random point.
    - ``climb_restarts``: restarts per turn beside the reduced CNF's solver, where the climb
      takes a turn whenever its CPU time falls below ``climb_share`` of the others' (``climb_late``
      once it has climbed ``climb_long`` CPU seconds).

    Solvers (:mod:`rfexplain.sat.deciders.reduced_cnf`, :mod:`rfexplain.sat.deciders.full_cnf`):

    - ``race_conflicts``: conflicts the reduced CNF's solver takes per turn beside a box search;
      its CPU time is at most ``solver_share`` of the box search's, and it joins after
      ``solver_joins`` CPU seconds of the search (its first turn builds its formula).
    - ``conflict_chunk``: conflicts of one ``solve_limited`` round under a deadline (CaDiCaL
      cannot be interrupted, so every solver polls the deadline between rounds).
    - ``first_conflicts``, ``whole_formula_leaves``: with reduced CNFs, forests of at most
      ``whole_formula_leaves`` leaves first give each open query to the full CNF's solver for
      ``first_conflicts`` conflicts (its cores let the deletion loops skip calls).
    - ``reduced_card``: the reduced CNF's cardinality encoding.
    - ``coarse_literals``: soft vote, the size of the full CNF's redundant rounded-up cardinality
      constraint per comparison (:mod:`rfexplain.sat.encodings.softvote`): about this many unary
      literals, each tree's weight between 2 and 32 steps.

    Search (:mod:`rfexplain.sat.search`):

    - ``axp_block_after``: successful deletions in a row after which the AXp's deletion tries
      blocks of features (0: never).
    """

    box_points: int = 256
    box_runs: int = 4096
    bnb_nodes: int = 20_000_000
    hard_bnb_nodes: int = 16384
    short_bnb_nodes: int = 64
    bnb_slice: int = 2048
    first_slice: int = 256
    first_slice_rows: int = 4
    split_rules: tuple[bool, ...] = (False, True)
    race_after: int = 16
    race_turns: int = 4
    pair_after: int = 0
    pair_after_more: int = 1
    pair_turns: int = 4
    pair_rounds: int = 2
    pair_growth: float = 3.0
    progress_after: int = 4096
    pair_bound_after: int = 64
    pair_gate: float = 1.0
    bnb_stack: int = 64
    bnb_pool: int = 8
    bnb_ties: int = 64
    nearest_box_points: int = 16
    nearest_pair_after_more: int = 1 << 30
    nearest_pair_bound_after: int = 4096
    lattice_levels: tuple[int, ...] = (24,)
    lattice_nodes: int = 65_536
    lattice_impure: float = 0.1
    lattice_clique_leaves: int = 8192
    clique_after: int = 0
    clique_turns: int = 8
    cube_depth: int = 6
    cube_vertices: int = 512
    max_vertices: int = 20_000
    max_leaves: int = 200_000
    clique_work_unit: int = 16384
    clique_failed_literals: int = 8
    slice_climbs: int = 1
    clique_race_climb_after: int = 2
    clique_race_climbs: int = 4
    warm_starts: int = 4
    climb_kick: int = 4
    climb_patience: int = 5
    climb_restarts: int = 8
    climb_share: float = 0.2
    climb_long: float = 0.1
    climb_late: float = 0.05
    race_conflicts: int = 500
    solver_share: float = 0.1
    solver_joins: float = 0.1
    conflict_chunk: int = 2000
    first_conflicts: int = 1000
    whole_formula_leaves: int = 20_000
    reduced_card: str = "kmtotalizer"
    coarse_literals: int = 512
    axp_block_after: int = 3

    @classmethod
    def of(cls, options: SatTuning | Mapping[str, Any] | None) -> SatTuning:
        """The tuning an engine option gives: a :class:`SatTuning` as is, a mapping of field
        names to values over the defaults, ``None`` the defaults; an unknown name is an
        :class:`~rfexplain.core.errors.InvalidOptionError`."""
        if options is None:
            return DEFAULT_TUNING
        if isinstance(options, SatTuning):
            return options
        if not isinstance(options, Mapping):
            raise InvalidOptionError(f"tuning must be a SatTuning or a mapping. Got {options!r} instead.")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise InvalidOptionError(f"unknown tuning {unknown}; the names are {sorted(names)}")
        return cls(**dict(options))

    def replace(self, **changes: Any) -> SatTuning:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)


#: The engine's default tuning.
DEFAULT_TUNING = SatTuning()
