"""The ``"sat"`` engine: the RFxpl approach of Izza and Marques-Silva (2021) [IM21].

The forest is encoded once into CNF (:mod:`rfexplain.sat.encodings`: order-encoded feature domains,
path clauses, one vote per tree, majority vote with cardinality networks and the exact tie rule);
for each decision ``c`` the formula "the forest does not predict ``c``" is loaded into an
incremental SAT solver that stays open for the engine's life, and an instance enters only through
assumptions fixing features to its states (the soft unit clauses of the paper's Section 4).

- one sufficient reason (AXp): deletion over the selectors in a fixed feature order (section 4),
  cores only skipping calls, so the answer is the canonical one every engine gives;
- one necessary reason (CXp): fixing features back in a fixed order (an MCS), likewise canonical;
- all AXps / all CXps: MARCO-style enumeration through AXp/CXp hitting-set duality;
- all minimum AXps: minimum hitting sets of the CXps (RC2 inside python-sat's ``Hitman``);
- all minimum CXps and the robustness: MaxSAT (RC2) with the selectors as soft clauses;
- contrastive reasons toward ``t``: the CXp enumeration against "the forest predicts ``t``".

The two single answers are canonical (the same on every engine and after any history). The
enumerations yield every reason exactly once, in the order the search finds them: that order,
and hence the first item with ``limit=1``, depends on the solver's state (learned clauses, cores,
models), which is the price of not computing every reason before the first is yielded.

Every reason carries witnesses (counterexamples found by the solver, turned into raw values), so
``rfexplain.verify(reason, model)`` can check it with scikit-learn alone.

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> import rfexplain as rx
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
>>> decision = rx.Explainer(model, engine="sat").explain(X[0])
>>> bool(rx.verify(decision.sufficient_reason(), model))
True
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from pysat.solvers import SolverNames

from rfexplain.core import jit
from rfexplain.core.budget import Budget
from rfexplain.core.errors import InvalidOptionError
from rfexplain.core.forest import Forest
from rfexplain.core.reasons import Reason, Witness
from rfexplain.core.vote import NEAR_TIE
from rfexplain.engines.base import EngineBase, Instance
from rfexplain.engines.general import interval_parts
from rfexplain.sat.deciders.base import COMPILED_DECIDERS, DECIDERS, Answer, Question
from rfexplain.sat.deciders.bounds import slack
from rfexplain.sat.deciders.leaves import InstanceLeaves, LeafTable, warm_up
from rfexplain.sat.deciders.race import Race
from rfexplain.sat.deciders.scheduler import Chunks
from rfexplain.sat.encodings import ForestEncoding
from rfexplain.sat.encodings.cnf import SOFT_BITS
from rfexplain.sat.encodings.pool import Var
from rfexplain.sat.search import FoundReason, Search, SelectorOracle, SolverStats
from rfexplain.sat.tuning import SatTuning

__all__ = ["SatEngine", "DEFAULT_SOLVER"]


#: Glucose 3: incremental, gives cores, and can be budgeted (CaDiCaL works too via ``solver=``).
DEFAULT_SOLVER = "g3"


def _solver_aliases() -> list[str]:
    names: list[str] = []
    for attr in dir(SolverNames):
        if not attr.startswith("_"):
            value = getattr(SolverNames, attr)
            if isinstance(value, tuple):
                names.extend(value)
    return sorted(set(names))


class SatEngine(EngineBase):
    """Explanations of a forest's decisions with incremental SAT (engine name ``"sat"``).

    Parameters
    ----------
    forest : Forest
    solver : str
        A python-sat solver alias with assumptions and cores (default ``"g3"``; e.g. ``"cd195"``,
        ``"g4"``, ``"mgh"``). Kissat is refused (no assumptions).
    card : str
        Cardinality encoding of the vote: ``"mtotalizer"`` (default), ``"cardnetwrk"``
        (the papers'), ``"seqcounter"``, ``"sortnetwrk"``, ``"totalizer"`` or ``"kmtotalizer"``.
    multiclass : str
        With three classes or more, how "some class beats c" is built: ``"selectors"`` (default,
        the paper's two-constraint construction) or ``"challengers"`` (one guarded constraint per
        challenger class).
    soft_bits : int or None
        Soft vote only: each comparison starts relaxed to this many bits per tree weight and is
        made exact when a candidate counterexample needs it (default
        :data:`~rfexplain.sat.encodings.cnf.SOFT_BITS`); ``None`` encodes everything exactly.
    prefilter : bool or None
        Whether the queries go to the whole portfolio of deciders
        (:mod:`rfexplain.sat.deciders.portfolio`) or to the full CNF alone. ``None`` (the
        default): the portfolio once the compiled loops are ready
        (:func:`rfexplain.core.jit.compiled_loops_ready`; on a fresh install they compile in the
        background meanwhile, and only the deciders that need no compiled loop run: the full
        CNF), ``True``: the portfolio at once (compiling in this process on first use),
        ``False``: the full CNF alone. The answers are the same either way; only witnesses may
        differ.
    reduced : bool
        Hard vote: let the reduced CNF (:mod:`rfexplain.sat.deciders.reduced_cnf`, with
        ``solver``) decide the questions the race leaves open instead of the full CNF (default
        on; ``False`` is ``deciders`` without ``"reduced_cnf"``).
    deciders : collection of str or None
        The deciders the portfolio may use (:data:`~rfexplain.sat.deciders.base.DECIDERS`;
        default all). ``"full_cnf"``, the reference decider, is always on.
    tuning : SatTuning, mapping or None
        The deciders' tuning (:class:`~rfexplain.sat.tuning.SatTuning`, or a mapping of its
        field names to values over the defaults).

    The measurements behind these defaults are in ``docs/decisions.md`` ("SAT engine: options").
    """

    name = "sat"
    queries = frozenset(
        {
            "sufficient_reason",
            "necessary_reason",
            "sufficient_reasons",
            "necessary_reasons",
            "shortest_sufficient_reasons",
            "shortest_necessary_reasons",
            "contrastive_reasons",
            "robustness",
            "inflated_sufficient_reason",
            "general_sufficient_reasons",
            "general_necessary_reasons",
            "shortest_flips",
        }
    )

    def __init__(
        self,
        forest: Forest,
        *,
        solver: str = DEFAULT_SOLVER,
        card: str = "mtotalizer",
        multiclass: str = "selectors",
        soft_bits: int | None = SOFT_BITS,
        prefilter: bool | None = None,
        reduced: bool = True,
        deciders: Collection[str] | None = None,
        tuning: SatTuning | Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(forest)
        aliases = _solver_aliases()
        no_assumptions = set(getattr(SolverNames, "kissat404", ()))
        if solver not in aliases or solver in no_assumptions:
            aliases = [a for a in aliases if a not in no_assumptions]
            raise InvalidOptionError(f"solver must be one of {aliases}. Got {solver!r} instead.")
        self.solver = solver
        self.card = card
        self.multiclass = multiclass
        self.tuning = SatTuning.of(tuning)
        self.encoding = ForestEncoding(
            forest, card=card, multiclass=multiclass, soft_bits=soft_bits, coarse_literals=self.tuning.coarse_literals
        )
        self.stats = SolverStats()
        chosen = set(DECIDERS if deciders is None else deciders)
        unknown = sorted(chosen - set(DECIDERS))
        if unknown:
            raise InvalidOptionError(f"deciders must be among {list(DECIDERS)}. Got {unknown} instead.")
        if not reduced:
            chosen.discard("reduced_cnf")
        chosen.add("full_cnf")
        #: The deciders the portfolio may use when the compiled loops are (:attr:`deciders`).
        self._deciders = frozenset(chosen)
        self._prefilter_option = prefilter
        small = sum(t.n_leaves for t in forest.trees) <= self.tuning.whole_formula_leaves
        self._first_conflicts = self.tuning.first_conflicts if small else None
        self._leaf_table: LeafTable | None = None
        #: :meth:`FlatForest.walk_arrays`, once the hard vote's witnesses are checked (:meth:`_classify`)
        self._flat_trees: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._oracles: dict[tuple[str, int], SelectorOracle] = {}
        self._representatives: dict[tuple[int, int], float] = {}
        self._cache_instance: Instance | None = None
        self._cache: dict[tuple[int, ...], tuple[tuple[float, ...], int]] = {}
        #: the last instance :meth:`_values` read, with its values rounded to float32
        self._rounded: tuple[Instance, list[float]] | None = None
        #: how many activation literals the categorical boxes of :meth:`box_counterexample` have taken
        self._box_switches = 0
        #: the leaves of the last instance :meth:`_box_by_leaves` asked about, and of the last
        #: one :meth:`box_nearest` asked about (with the tuning of its searches)
        self._box_leaves: InstanceLeaves | None = None
        self._nearest_leaves: InstanceLeaves | None = None
        #: CPU seconds spent loading (or compiling, under ``$RFEXPLAIN_JIT=wait`` on an empty
        #: cache) the compiled loops when the engine was built, outside every query's budget
        self.compile_seconds = 0.0
        if self.prefilter:
            start = time.process_time()
            warm_up(np.dtype(np.int32), cliques=forest.n_classes == 2)  # hard vote or lattices
            self.compile_seconds = time.process_time() - start

    # ------------------------------------------------------------------ plumbing
    def oracle(self, kind: str, cls: int) -> SelectorOracle:
        """The incremental solver for ``("not", c)`` or ``("predicts", t)``; its formula and
        solver are built when a query first needs them."""
        key = (kind, cls)
        if key not in self._oracles:
            self._oracles[key] = SelectorOracle(self.encoding, kind, cls, solver=self.solver, stats=self.stats)
        if self._leaf_table is None and self.prefilter:
            self._leaf_table = LeafTable(self.encoding, self.tuning)
        return self._oracles[key]

    @property
    def compiled(self) -> bool:
        """Whether the queries use the compiled loops now (the ``prefilter`` option's ``None``:
        once they are ready, :mod:`rfexplain.core.jit`; a background compilation starts when
        they are not)."""
        if self._prefilter_option is not None:
            return True
        if jit.compiled_loops_ready():
            return True
        jit.start_background_compilation()
        return False

    @property
    def prefilter(self) -> bool:
        """Whether the queries go to the portfolio of deciders now (the ``prefilter`` option),
        rather than to the full CNF alone."""
        return bool(self._prefilter_option) if self._prefilter_option is not None else self.compiled

    @property
    def deciders(self) -> frozenset[str]:
        """The deciders the queries use now: the chosen ones with the portfolio, else (before
        the compiled loops are ready, or ``prefilter=False``) those that need no compiled loop."""
        if self.prefilter:
            return self._deciders
        return self._deciders - COMPILED_DECIDERS

    @property
    def reduced(self) -> bool:
        """Whether the hard vote's open questions go to the reduced CNF now."""
        return "reduced_cnf" in self.deciders and not self.encoding.soft

    def _search(self, instance: Instance, target: int | None = None) -> Search:
        oracle = self.oracle("not", instance.prediction) if target is None else self.oracle("predicts", target)
        deciders = self.deciders
        leaves = None
        if self._leaf_table is not None and deciders & COMPILED_DECIDERS:
            leaves = InstanceLeaves(self._leaf_table, instance.states)
        return Search(
            oracle,
            instance.states,
            leaves,
            deciders=deciders,
            tuning=self.tuning,
            first_conflicts=self._first_conflicts,
            reduced_solver=self.solver,
            compiled=self.compiled,
        )

    def _classify(self, z: tuple[int, ...]) -> int:
        """The forest's decision on a state vector under its vote mode (:meth:`Forest.decide`;
        the hard vote walked by the compiled :func:`.point_kernels.hard_winner`: every CXp of an
        enumeration checks its witness here, 24,601 of them on twonorm's third sample instance)."""
        if not (self.forest.aggregation.is_majority and self.compiled):
            return self.forest.decide(z)
        from rfexplain.sat.point_kernels import hard_winner

        if self._flat_trees is None:
            self._flat_trees = self.forest.flat.walk_arrays()
        feature, split, left, right, label, roots = self._flat_trees
        counts = np.zeros(self.forest.n_classes, dtype=np.int64)
        return int(hard_winner(np.asarray(z, dtype=np.int64), feature, split, left, right, label, roots, counts))

    def _classify_all(self, instance: Instance, zs: Sequence[tuple[int, ...]]) -> None:
        """Cache the values and decisions of the state vectors ``zs`` for :meth:`_witness`, for
        those not cached yet: under the hard vote with the compiled loops, one compiled walk each
        (:meth:`_classify`); else one vectorised :meth:`Forest.predict_states` call."""
        cache = self._cache_of(instance)
        new = list(dict.fromkeys(z for z in zs if z not in cache))
        if new and self.forest.aggregation.is_majority and self.compiled:
            for z in new:
                cache[z] = (self._values(instance, z), self._classify(z))
        elif new:
            decided = self.forest.predict_states(np.asarray(new, dtype=np.int64)).tolist()
            for z, prediction in zip(new, decided):
                cache[z] = (self._values(instance, z), int(prediction))

    def _cache_of(self, instance: Instance) -> dict[tuple[int, ...], tuple[tuple[float, ...], int]]:
        """The witnesses' values and decisions cached for ``instance`` (emptied for another one)."""
        if self._cache_instance != instance:
            self._cache_instance = instance
            self._cache.clear()
        return self._cache

    def _witness(self, instance: Instance, z: tuple[int, ...], dropped: int | None, target: int | None) -> Witness:
        cache = self._cache_of(instance)
        if z not in cache:
            cache[z] = (self._values(instance, z), self._classify(z))
        values, prediction = cache[z]
        wrong = prediction != target if target is not None else prediction == instance.prediction
        if wrong:
            raise RuntimeError(
                f"SAT engine internal error: counterexample {z} is classified {prediction} "
                f"(instance decision {instance.prediction}, target {target})"
            )
        return Witness(values, prediction, dropped=dropped)

    def _witness_values(self, instance: Instance, z: Sequence[int]) -> tuple[float, ...]:
        """:meth:`EngineBase._witness_values` with the state representatives cached (:meth:`_values`)."""
        return self._values(instance, tuple(z))

    def _values(self, instance: Instance, z: tuple[int, ...]) -> tuple[float, ...]:
        """``forest.values_for_states(z, instance.values)``, with state representatives cached
        (the instance's value where its state is kept, a representative of the state elsewhere)."""
        if self._rounded is None or self._rounded[0] is not instance:
            self._rounded = (instance, [float(np.float32(v)) for v in instance.values])
        out = list(self._rounded[1])
        for f, (s, vs) in enumerate(zip(z, instance.states)):
            if s != vs:
                key = (f, s)
                if key not in self._representatives:
                    self._representatives[key] = self.forest.state_value(f, s)
                out[f] = self._representatives[key]
        return tuple(out)

    def _reason(self, kind: str, instance: Instance, found: FoundReason, target: int | None = None) -> Reason:
        if kind == "sufficient":
            self._classify_all(instance, [found.witnesses[f] for f in found.features])
            witnesses = [self._witness(instance, found.witnesses[f], f, None) for f in sorted(found.features)]
        else:
            assert found.counterexample is not None  # necessary reasons always carry one
            witnesses = [self._witness(instance, found.counterexample, None, target)]
        return Reason.of(
            kind,
            {f: {instance.states[f]} for f in sorted(found.features)},
            target=target,
            space=self.forest.space,
            instance=instance.values,
            decision=instance.prediction,
            witnesses=witnesses,
        )

    # ------------------------------------------------------------------ single answers
    def sufficient_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason:
        """The canonical AXp: deletion in ``order`` (default: feature index order), see
        :meth:`~rfexplain.sat.search.Search.axp`."""
        found = self._search(instance).axp(order)
        return self._reason("sufficient", instance, found)

    def necessary_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason | None:
        """The canonical CXp: fixing back in ``order`` (default: feature index order), see
        :meth:`~rfexplain.sat.search.Search.cxp`; ``None`` when no change of features flips
        the decision."""
        found = self._search(instance).cxp(order)
        if found.counterexample is None:
            return None
        return self._reason("necessary", instance, found)

    def box_counterexample(self, instance: Instance, box: Mapping[int, frozenset[int]]) -> tuple[int, ...] | None:
        """Whether the box holds a point not decided as the instance. With the compiled loops,
        first the deciders over the leaf boxes, a box with gaps one box of intervals at a time
        (:meth:`_box_by_runs`); then (or else) one call of the solver of "not the instance's
        class" (the full formula, with the soft vote's refinement): an interval of states is two
        assumptions on the order variables ``x_f > t_j`` of its ends, any other set a clause over
        its states' selectors, switched on by a fresh assumption."""
        oracle = self.oracle("not", instance.prediction)
        settled = self._box_by_runs(instance, box)
        if settled is not None:
            return settled[0]
        pool = self.encoding.pool
        assumptions: list[int] = []
        for f, allowed in sorted(box.items()):
            n = self.forest.states_per_feature[f]
            if n <= 1 or len(allowed) == n:
                continue
            low, high = min(allowed), max(allowed)
            if len(allowed) == high - low + 1:
                if low > 0:
                    assumptions.append(pool.var(Var.gt(f, low - 1)))
                if high < n - 1:
                    assumptions.append(-pool.var(Var.gt(f, high)))
            else:
                switch = pool.var(Var.aux("box", self._box_switches))
                self._box_switches += 1
                oracle.solver.add_clause([-switch, *(self.encoding.selector(f, s) for s in sorted(allowed))])
                assumptions.append(switch)
        found = Chunks(oracle.run, self.tuning.conflict_chunk, "searching a box").decide(assumptions)
        assert found is not None  # a solver call always answers
        return self.encoding.decode(oracle.model()) if found.sat else None

    def box_example(self, instance: Instance, box: Mapping[int, frozenset[int]]) -> tuple[int, ...] | None:
        """Whether the box holds a point decided like the instance (the general necessary reasons'
        flip boxes, :mod:`rfexplain.engines.general`). With two classes, a point decided
        otherwise than the other class (:meth:`box_counterexample`, whose deciders take boxes of
        intervals); else one call of the solver of "predicts the instance's class", a set of
        states as assumptions: the order variables of its ends and the negated state variables
        of the states it skips between them."""
        if self.forest.n_classes == 2:
            return self.box_counterexample(dataclasses.replace(instance, prediction=1 - instance.prediction), box)
        budget = Budget.current()
        if budget is not None:
            budget.check("searching a box")
        oracle = self.oracle("predicts", instance.prediction)
        pool = self.encoding.pool
        assumptions: list[int] = []
        for f, allowed in sorted(box.items()):
            n = self.forest.states_per_feature[f]
            if n <= 1 or len(allowed) == n:
                continue
            low, high = min(allowed), max(allowed)
            if low > 0:
                assumptions.append(pool.var(Var.gt(f, low - 1)))
            if high < n - 1:
                assumptions.append(-pool.var(Var.gt(f, high)))
            assumptions.extend(-self.encoding.selector(f, s) for s in range(low + 1, high) if s not in allowed)
        found = Chunks(oracle.run, self.tuning.conflict_chunk, "searching a box").decide(assumptions)
        assert found is not None  # a solver call always answers
        return self.encoding.decode(oracle.model()) if found.sat else None

    def _box_by_runs(
        self, instance: Instance, box: Mapping[int, frozenset[int]]
    ) -> tuple[tuple[int, ...] | None] | None:
        """:meth:`_box_by_leaves` on the boxes of intervals that make up the box
        (:func:`.interval_parts`; the box holds a point iff one of them does), in order, when
        there are at most the tuning's ``box_runs``:
        ``(witness,)`` from the first that has one, ``(None,)`` when they all settle sufficient,
        ``None`` when one is left open; when there are more, the whole box (left open unless it
        is one of intervals)."""
        parts = interval_parts(box, self.tuning.box_runs)
        if parts is None:
            return self._box_by_leaves(instance, box)
        for part in parts:
            settled = self._box_by_leaves(instance, part)
            if settled is None or settled[0] is not None:
                return settled
        return (None,)

    def _box_by_leaves(
        self, instance: Instance, box: Mapping[int, frozenset[int]]
    ) -> tuple[tuple[int, ...] | None] | None:
        """A box of intervals asked of the bounds and box-search deciders over the leaves that
        meet it (:meth:`_box_race`): ``(witness,)`` or ``(None,)`` when they settle it, ``None``
        when they leave it open (or the box has a set of states that is not an interval, or they
        are off)."""
        race = self._box_race(instance, box)
        if race is None or isinstance(race, Answer):
            return None if race is None else (None,)
        answer = race.decide(Question((), "not", instance.prediction))  # no feature fixed: the box is the root
        if answer is None:
            return None
        return (answer.witness if answer.sat else None,)

    def box_nearest(
        self, instance: Instance, box: Mapping[int, frozenset[int]], f: int, upward: bool
    ) -> tuple[tuple[int, ...] | None, bool]:
        """The counterexample in a box of intervals with the largest (``upward``) or smallest
        state on ``f``, by one race of box searches (:meth:`_box_race`): after each witness the
        searches go on, their boxes clipped past it on ``f`` (:meth:`.Boxes.clip`), until they
        find none (the last is the nearest) or give up (``(best so far, False)``; also where the
        box search does not apply)."""
        race = self._box_race(instance, box, nearest=True)
        if race is None or isinstance(race, Answer):
            return None, race is not None
        boxes = race.boxes
        if f not in race.free:
            return None, False
        j = race.free.index(f)
        boxes.aim(j, upward)
        question = Question((), "not", instance.prediction)
        best: tuple[int, ...] | None = None
        while True:
            answer = race.decide(question)
            if answer is None:
                return best, False
            if not answer.sat:
                return best, True
            best = answer.witness
            assert best is not None  # a SAT answer carries its witness
            if upward:
                boxes.clip(j, best[f] + 1, boxes.top[j], upward=True)
            else:
                boxes.clip(j, boxes.bottom[j], best[f] - 1, upward=False)
            if boxes.bottom[j] > boxes.top[j]:
                return best, True

    def box_around(
        self, instance: Instance, box: Mapping[int, frozenset[int]], f: int
    ) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None, bool]:
        """The counterexamples in a box of intervals nearest the instance's state on ``f``, below
        and above it, by one race of box searches as in :meth:`box_nearest`, aimed at that state:
        after each witness the searches go on, their boxes clipped on ``f`` between the nearest
        witnesses found on each side, until they find none (both are the nearest) or give up
        (``(below, above, False)``; also where the box search does not apply). The box's slice at
        the instance's state must be sufficient (as the box before ``f`` is widened): a witness on
        it raises ``RuntimeError``."""
        race = self._box_race(instance, box, nearest=True)
        if race is None or isinstance(race, Answer):
            return None, None, race is not None
        boxes = race.boxes
        if f not in race.free:
            return None, None, False
        j = race.free.index(f)
        state = instance.states[f]
        boxes.aim(j, True, around=state)
        question = Question((), "not", instance.prediction)
        below: tuple[int, ...] | None = None
        above: tuple[int, ...] | None = None
        while True:
            answer = race.decide(question)
            if answer is None:
                return below, above, False
            if not answer.sat:
                return below, above, True
            z = answer.witness
            assert z is not None  # a SAT answer carries its witness
            if z[f] < state:
                below = z
                boxes.clip(j, z[f] + 1, boxes.top[j], around=state)
            elif z[f] > state:
                above = z
                boxes.clip(j, boxes.bottom[j], z[f] - 1, around=state)
            else:
                raise RuntimeError(f"a counterexample on the instance's state of feature {f}: {z}")

    def _box_race(
        self, instance: Instance, box: Mapping[int, frozenset[int]], *, nearest: bool = False
    ) -> Race | Answer | None:
        """The race of box searches over the leaves that meet a box of intervals
        (:meth:`.InstanceLeaves.reachable_in_box`; its root box the intervals), or ``Answer(False)``
        when the bounds decider settles the box at once, or ``None`` when the box has a set of
        states that is not an interval or those deciders are off. ``nearest``: for
        :meth:`box_nearest`, with the tuning's ``nearest_box_points``, ``nearest_pair_after_more``
        and ``nearest_pair_bound_after``."""
        budget = Budget.current()
        if budget is not None:
            budget.check("searching a box")
        table = self._leaf_table
        deciders = self.deciders
        if table is None or not {"bounds", "boxes"} & deciders:
            return None
        intervals: dict[int, tuple[int, int]] = {}
        for f, allowed in box.items():
            low, high = min(allowed), max(allowed)
            if len(allowed) != high - low + 1:
                return None
            intervals[f] = (low, high)
        leaves = self._nearest_leaves if nearest else self._box_leaves
        if leaves is None or leaves.states.tolist() != list(instance.states):
            tuning = self.tuning
            if nearest:
                tuning = tuning.replace(
                    box_points=tuning.nearest_box_points,
                    pair_after_more=tuning.nearest_pair_after_more,
                    pair_bound_after=tuning.nearest_pair_bound_after,
                )
            leaves = InstanceLeaves(table, instance.states, tuning=tuning)
            if nearest:
                self._nearest_leaves = leaves
            else:
                self._box_leaves = leaves
        free, rows, lows, highs = leaves.reachable_in_box(intervals)
        c = instance.prediction
        if "bounds" in deciders and slack(leaves, rows, "not", c) <= -NEAR_TIE:
            return Answer(False)
        if "boxes" not in deciders:
            return None
        bottom = [intervals.get(f, (0, 0))[0] for f in free]
        top = [intervals[f][1] if f in intervals else table.n_states[f] - 1 for f in free]
        nodes = self.tuning.bnb_nodes if table.soft else self.tuning.hard_bnb_nodes
        return Race(leaves, free, rows, (lows, highs), "not", c, {"boxes"}, bottom=bottom, top=top, nodes=nodes)

    def robustness(self, instance: Instance) -> float:
        """Size of a minimum CXp (MaxSAT), ``math.inf`` if the decision cannot be flipped."""
        budget = Budget.current()
        for found in self._search(instance).minimum_necessary_reasons(budget or Budget(), first_only=True):
            return len(found.features)
        return math.inf

    # ------------------------------------------------------------------ enumerations
    def sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        for found in self._search(instance).sufficient_reasons(budget):
            yield self._reason("sufficient", instance, found)

    def necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        for found in self._search(instance).necessary_reasons(budget):
            yield self._reason("necessary", instance, found)

    def shortest_sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        for found in self._search(instance).sufficient_reasons(budget, minimum=True):
            yield self._reason("sufficient", instance, found)

    def shortest_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        for found in self._search(instance).minimum_necessary_reasons(budget):
            yield self._reason("necessary", instance, found)

    def contrastive_reasons(self, instance: Instance, target: int, budget: Budget) -> Iterator[Reason]:
        if not 0 <= target < self.forest.n_classes:
            raise InvalidOptionError(
                f"target must be a class index in [0, {self.forest.n_classes}). Got {target!r} instead."
            )
        for found in self._search(instance, target).necessary_reasons(budget):
            yield self._reason("contrastive", instance, found, target)

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Delete every SAT solver this engine opened."""
        for oracle in self._oracles.values():
            oracle.delete()
        self._oracles.clear()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: solvers may already be gone
            pass

    def describe(self) -> dict[str, Any]:
        """Options and formula sizes built so far."""
        return {
            "solver": self.solver,
            "card": self.card,
            "multiclass": self.multiclass,
            "formulas": {
                o.formula.name: (o.formula.n_vars, o.formula.n_clauses) for o in self._oracles.values() if o.loaded
            },
        }
