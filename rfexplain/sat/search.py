"""The SAT engine's search procedures: one AXp (a MUS) and one CXp (an MCS) in a fixed feature
order, enumeration of both by hitting-set duality, minimum AXps by minimum hitting sets and minimum CXps by MaxSAT.

Everything works on a :class:`SelectorOracle`: an incremental SAT solver loaded once with one
formula of :class:`~rfexplain.sat.encodings.ForestEncoding` ("the forest does not predict ``c``" or
"the forest predicts ``t``") and queried with the selector literals of a set of features fixed
to the explained instance's states (Izza and Marques-Silva (2021), Section 4 [IM21]: hard part ``H``, soft unit clauses
``S``). A query answers *SAT* with a counterexample state vector (a witness) or *UNSAT* with a
core (a subset of the fixed features that is already sufficient).

References: Izza and Marques-Silva (2021), *On Explaining Random Forests with SAT* [IM21],
Section 4 (AXp = MUS of ``<H, S>``, CXp = MCS, enumeration with MARCO-style hitting-set duality,
after Liffiton et al. (2016) [Lif16] and Ignatiev et al. (2020) [Ign20]); minimum hitting sets
and MaxSAT with PySAT's ``Hitman`` and RC2 (Ignatiev, Morgado and Marques-Silva, 2018 and 2019
[IMM18] [IMM19]).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from pysat.examples.hitman import Hitman
from pysat.examples.rc2 import RC2
from pysat.formula import WCNF

from rfexplain.core.bits import mask_of
from rfexplain.core.budget import Budget
from rfexplain.core.vote import NEAR_TIE
from rfexplain.sat.deciders.base import DECIDERS, Answer, Question
from rfexplain.sat.deciders.full_cnf import FullCnf, SelectorOracle, SolverStats
from rfexplain.sat.deciders.leaves import InstanceLeaves
from rfexplain.sat.deciders.portfolio import Portfolio
from rfexplain.sat.deciders.scheduler import Chunks
from rfexplain.sat.tuning import DEFAULT_TUNING, SatTuning

__all__ = ["SolverStats", "SelectorOracle", "Search", "FoundReason"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FoundReason:
    """A reason found by the search, as features plus witness state vectors.

    A sufficient reason has ``witnesses``: each of its features mapped to a counterexample that
    agrees with the instance on the reason's other features. A necessary (or contrastive) reason
    has one ``counterexample``: a state vector that changes exactly its features' states (or a
    subset of them) and is decided differently. Either may be empty when no witness exists (an
    empty reason, or an enumeration asked without witnesses).
    """

    features: frozenset[int]
    witnesses: dict[int, tuple[int, ...]] = field(default_factory=dict, hash=False, compare=False)
    counterexample: tuple[int, ...] | None = field(default=None, hash=False, compare=False)


#: Deprecated alias of :class:`FoundReason`, kept for one release.
Found = FoundReason


class Search:
    """The search procedures for one instance (its states) against one oracle, each of its
    queries a :class:`~rfexplain.sat.deciders.base.Question` for the instance's portfolio of
    deciders (:mod:`rfexplain.sat.deciders.portfolio`).

    Parameters
    ----------
    oracle : SelectorOracle
        The full CNF's incremental solver for the condition (the reference decider).
    states : sequence of int
        The explained instance's state vector; fixing feature ``f`` means assuming
        ``state(f, states[f])``.
    leaves : InstanceLeaves or None
        The instance's reachable leaves, which the other deciders read; ``None``: the full CNF
        alone.
    deciders : collection of str
        The deciders on (:data:`~rfexplain.sat.deciders.base.DECIDERS`).
    tuning : SatTuning
        Default: the leaves' tuning, else :data:`~rfexplain.sat.tuning.DEFAULT_TUNING`.
    first_conflicts : int or None
        With the reduced CNF: conflicts the full CNF gets first on a question the race leaves
        open (its answer brings a core, which lets the deletion loops skip calls).
    reduced_solver : str
        The reduced CNF's SAT solver.
    compiled : bool
        Whether :meth:`correction_set` may call the compiled reductions (else the same greedy
        reduction in Python, :meth:`~rfexplain.core.forest.Forest.decide` at each step).
    """

    def __init__(
        self,
        oracle: SelectorOracle,
        states: Sequence[int],
        leaves: InstanceLeaves | None = None,
        *,
        deciders: Collection[str] = DECIDERS,
        tuning: SatTuning | None = None,
        first_conflicts: int | None = None,
        reduced_solver: str = "g3",
        compiled: bool = True,
    ) -> None:
        self.oracle = oracle
        self.compiled = compiled
        self.tuning = tuning if tuning is not None else (leaves.tuning if leaves is not None else DEFAULT_TUNING)
        self.encoding = oracle.encoding
        self.v = tuple(states)
        self.features: tuple[int, ...] = self.encoding.features
        self.sel = self.encoding.selectors(self.v)
        self.portfolio = Portfolio(
            leaves,
            FullCnf(oracle, self.sel),
            deciders=deciders,
            tuning=self.tuning,
            first_conflicts=first_conflicts,
            reduced_solver=reduced_solver,
        )
        #: The portfolio's last answer that :meth:`counterexample` recorded.
        self.last: Answer = Answer(False, core=frozenset())

    # ------------------------------------------------------------------ one query
    def question(self, fixed: Iterable[int], *, core: bool = False, short: bool = False) -> Question:
        """Whether a counterexample exists with ``fixed`` features at the instance's states
        (:class:`~rfexplain.sat.deciders.base.Question`), asked of :attr:`portfolio`.

        An UNSAT answer without a core of its own (a box searched whole, the reduced CNF) has
        ``fixed`` itself as its core, so callers that feed cores to a hitting-set loop pass
        ``core=True`` to have the question decided by a decider that gives one. ``short``: the
        hitting-set loops' queries, on which the box search gets a short leash (the tuning's
        ``short_bnb_nodes``)."""
        return Question(tuple(fixed), self.oracle.kind, self.oracle.cls, core=core, short=short)

    def counterexample(self, answer: Answer | None) -> bool:
        """Whether the portfolio's ``answer`` (:meth:`.Portfolio.decide`) found a counterexample,
        recorded as :attr:`last`: SAT (:attr:`last_states` holds the counterexample) or UNSAT
        (``fixed`` is sufficient: :attr:`last_core` holds a subset of it that is sufficient
        too). The search's loops ask the portfolio themselves and pass its answer here, so that
        a question goes from the loop straight to the portfolio."""
        assert answer is not None  # the full CNF is among the portfolio's deciders
        self.last = answer
        return answer.sat

    def has_counterexample(
        self, fixed: Iterable[int], budget: Budget | None = None, *, core: bool = False, short: bool = False
    ) -> bool:
        """:meth:`counterexample` of the portfolio's answer to :meth:`question`;
        :class:`~rfexplain.core.budget.BudgetExpired` when the budget runs out first."""
        return self.counterexample(self.portfolio.decide(self.question(fixed, core=core, short=short), budget))

    @property
    def last_states(self) -> tuple[int, ...]:
        """The counterexample of :attr:`last` (the full CNF's model decoded)."""
        if self.last.witness is not None:
            return self.last.witness
        assert self.last.model is not None
        return self.encoding.decode(self.last.model)

    @property
    def last_core(self) -> frozenset[int]:
        """The core of :attr:`last`."""
        assert self.last.core is not None  # the portfolio gives every UNSAT answer one
        return self.last.core

    # ------------------------------------------------------------------ AXp: deletion in a fixed order
    def _ordered(self, order: Sequence[int] | None) -> list[int]:
        """The encoded features (those with more than one state) in ``order`` (default: index order)."""
        if order is None:
            return list(self.features)
        encoded = set(self.features)
        return [f for f in order if f in encoded]

    def axp(
        self,
        order: Sequence[int] | None = None,
        budget: Budget | None = None,
        *,
        witnesses: bool = True,
        within: frozenset[int] | None = None,
        short: bool = False,
    ) -> FoundReason:
        """The AXp that deletion in ``order`` produces (Izza and Marques-Silva (2021), Section 4,
        "Computing AXps" [IM21], with cores used only to skip calls).

        Plain deletion keeps a set ``S`` (initially every feature) and, for each feature ``f`` in
        ``order``, drops ``f`` iff ``S - {f}`` is sufficient. Its result depends on the order and
        the forest alone. Here the latest UNSAT core ``C`` is kept with the invariant ``C ⊆ S``
        (``C`` is sufficient). When ``f`` is not in ``C``, ``S - {f} ⊇ C`` is sufficient, since
        every superset of a sufficient set is sufficient (fixing more features only removes
        counterexamples), so ``f`` is dropped without a call, exactly as plain deletion would,
        and ``C ⊆ S - {f}`` still holds. When ``f`` is in ``C`` the solver decides ``S - {f}``:
        SAT keeps ``f`` (``S`` and ``C`` unchanged); UNSAT drops it and its core, a subset of
        ``S - {f}``, becomes ``C``. By induction every step takes plain deletion's decision, so
        neither the solver's learned clauses nor the cores it happens to return (which depend on
        its history) can change the answer; they only save calls.

        Blocks (after the tuning's ``axp_block_after`` successful deletions in a row): the call asks
        whether ``S`` minus the next ``w`` features of ``order`` (``w`` = 2, doubled while it
        succeeds) is sufficient. If so, plain deletion drops each of them too, since each of its
        calls fixes a superset of that set; they are dropped at once and the core taken as above.
        If not, ``f`` is decided alone, unless the counterexample changes ``f`` alone among
        them, which makes it a counterexample for ``S - {f}`` (``f`` kept, no call). This is the
        block-wise step of the algorithms for minimal sets over monotone predicates (the
        progression of Marques-Silva, Janota and Belov (2013) [MJB13]; QuickXplain, Junker
        (2004) [Jun04]) with the blocks taken in ``order``, so the answer is still plain
        deletion's.

        Every kept feature ``f`` was tested by a satisfiable call fixing a superset of the final
        reason minus ``f``, whose counterexample is ``f``'s witness: the result is subset-minimal.

        ``within``: a set already known to be sufficient (an UNSAT core) to start from instead of
        every feature; the AXp is then one of its subsets. ``short``: as in
        :meth:`question` (the enumerations' shrinking).
        """
        features = self._ordered(order)
        if within is not None:
            features = [f for f in features if f in within]
            core = frozenset(features)
        elif self.counterexample(self.portfolio.decide(self.question(features), budget)):
            raise RuntimeError("the instance admits a counterexample with every feature fixed (internal error)")
        else:
            core = self.last_core
        kept = set(features)
        block_after = self.tuning.axp_block_after
        found: dict[int, tuple[int, ...]] = {}
        width = 1  # the features from f on that the next call may drop at once
        streak = 0  # successful deletions in a row
        i = 0
        progress = budget or Budget.current()
        while i < len(features):
            if progress is not None:
                progress.step(i, len(features))
            f = features[i]
            if f not in core:
                kept.discard(f)
                i += 1
                continue
            window = features[i : i + width]
            if sum(g in core for g in window) > 1:
                if not self.counterexample(
                    self.portfolio.decide(self.question(sorted(kept.difference(window)), short=short), budget)
                ):
                    kept.difference_update(window)  # each of them would have been dropped
                    core = self.last_core
                    i += len(window)
                    width *= 2
                    continue
                width = 1
                z = self.last_states
                if all(z[g] == self.v[g] for g in window[1:]):  # it changes f alone: f's witness
                    if witnesses:
                        found[f] = z
                    streak = 0
                    i += 1
                    continue
            if self.counterexample(self.portfolio.decide(self.question(sorted(kept - {f}), short=short), budget)):
                if witnesses:
                    found[f] = self.last_states
                streak = 0
            else:
                kept.discard(f)
                core = self.last_core
                streak += 1
                width = 2 if block_after and streak >= block_after else 1
            i += 1
        if progress is not None:
            progress.step(len(features), len(features))
        return FoundReason(frozenset(kept), found)

    # ------------------------------------------------------------------ CXp: fixing back in a fixed order
    def cxp(self, order: Sequence[int] | None = None, budget: Budget | None = None) -> FoundReason:
        """The CXp that fixing back in ``order`` produces, or an empty :class:`FoundReason`
        without counterexample when nothing can change the decision.

        The dual of :meth:`axp`: start with every feature free (some counterexample exists),
        then for each feature ``f`` in ``order`` fix ``f`` back to the instance's state iff the
        fixed set plus ``f`` still admits a counterexample. The features left free form a
        subset-minimal set whose change can flip the decision (a CXp), determined by the order
        and the forest alone. Models are used only to skip calls: the latest counterexample
        ``z`` agrees with the instance on every fixed feature (invariant); when ``z`` also
        agrees on ``f``, ``z`` itself shows the fixed set plus ``f`` is satisfiable, so ``f`` is
        fixed without a call and ``z`` keeps the invariant. Otherwise the solver is first asked
        the stronger question "fixed set plus ``f`` plus every later feature ``z`` agrees on":
        a counterexample to it is one to the weaker question too (it fixes a subset), and it
        agrees with the instance on many later features, so later calls are skipped. If the
        stronger set has no counterexample and its core avoids those later features, the core
        (a subset of the fixed set plus ``f``) refutes the exact question too; otherwise the
        exact question is asked. Either way ``f`` is fixed iff the fixed set plus ``f`` admits
        a counterexample. The returned counterexample is the latest ``z``: it changes only
        features of the CXp.
        """
        if not self.counterexample(self.portfolio.decide(self.question([]), budget)):
            return FoundReason(frozenset())
        z = self.last_states
        features = self._ordered(order)
        fixed: list[int] = []
        free: list[int] = []
        progress = budget or Budget.current()
        for k, f in enumerate(features):
            if progress is not None:
                progress.step(k, len(features))
            if z[f] == self.v[f]:
                fixed.append(f)
                continue
            agreeing = [g for g in features[k + 1 :] if z[g] == self.v[g]]
            if agreeing:
                if self.counterexample(self.portfolio.decide(self.question(sorted([*fixed, f, *agreeing])), budget)):
                    z = self.last_states
                    fixed.append(f)
                    continue
                if not self.last_core & set(agreeing):  # the core alone refutes fixed + f
                    free.append(f)
                    continue
            if self.counterexample(self.portfolio.decide(self.question(sorted([*fixed, f])), budget)):
                z = self.last_states
                fixed.append(f)
            else:
                free.append(f)
        if progress is not None:
            progress.step(len(features), len(features))
        return FoundReason(frozenset(free), counterexample=z)

    def correction_set(self, z: Sequence[int]) -> FoundReason:
        """A correction set from the counterexample ``z``: every feature where ``z`` differs from
        the instance, in feature order, is set back to the instance's state when the forest still
        meets the oracle's condition (the exact vote: :meth:`~rfexplain.core.forest.Forest.decide`,
        or its compiled twins :func:`.point_kernels.reduce_hard_point` and, under the soft vote,
        :func:`.point_kernels.reduce_soft_point`, which decides in float64 and leaves each near tie
        to the exact vote); the features still changed form the set, with the reduced point as
        its counterexample. Not always a CXp (subset-minimal), but every sufficient set meets it."""
        forest = self.encoding.forest
        kind, cls = self.oracle.kind, self.oracle.cls

        def holds(point: Sequence[int]) -> bool:
            decided = forest.decide(point)
            return decided != cls if kind == "not" else decided == cls

        wrong = f"SAT engine internal error: {tuple(z)} is not a counterexample"
        if not self.compiled:
            if not holds(z):
                raise RuntimeError(wrong)
            point = list(z)
            for f in self.features:
                if point[f] != self.v[f]:
                    previous, point[f] = point[f], self.v[f]
                    if not holds(point):
                        point[f] = previous
        elif forest.aggregation.is_majority:
            from rfexplain.sat.point_kernels import reduce_hard_point

            reduced = np.asarray(z, dtype=np.int64)
            order = np.asarray(self.features, dtype=np.int64)
            target = np.asarray(self.v, dtype=np.int64)
            counts = np.zeros(forest.n_classes, dtype=np.int64)
            feature, split, left, right, label, roots = self._flat_trees
            if not reduce_hard_point(
                reduced, target, order, feature, split, left, right, label, roots, cls, kind == "not", counts
            ):
                raise RuntimeError(wrong)
            point = reduced.tolist()
        else:  # compiled in float64; a near tie is decided here, exactly (Forest.decide)
            from rfexplain.sat.point_kernels import reduce_soft_point

            if not holds(z):
                raise RuntimeError(wrong)
            reduced = np.asarray(z, dtype=np.int64)
            order = np.asarray(self.features, dtype=np.int64)
            target = np.asarray(self.v, dtype=np.int64)
            sums = np.zeros(forest.n_classes, dtype=np.float64)
            feature, split, left, right, _, roots = self._flat_trees
            at = 0
            while at < len(order):
                at = reduce_soft_point(
                    reduced,
                    target,
                    order,
                    at,
                    feature,
                    split,
                    left,
                    right,
                    self._flat_proba,
                    roots,
                    cls,
                    kind == "not",
                    NEAR_TIE,
                    sums,
                )
                if at < len(order):
                    f = int(order[at])
                    if not holds(reduced.tolist()):
                        reduced[f] = z[f]  # its state before this step (each feature comes once)
                    at += 1
            point = reduced.tolist()
        changed_features = frozenset(f for f in self.features if point[f] != self.v[f])
        return FoundReason(changed_features, counterexample=tuple(int(s) for s in point))

    @functools.cached_property
    def _flat_trees(self) -> tuple[np.ndarray, ...]:
        """:meth:`~rfexplain.core.flat.FlatForest.walk_arrays`, once per instance's search."""
        return self.encoding.forest.flat.walk_arrays()

    @functools.cached_property
    def _flat_proba(self) -> np.ndarray:
        """The leaves' probability vectors by node of :attr:`_flat_trees` (soft vote)."""
        return self.encoding.forest.flat.scores

    # ------------------------------------------------------------------ enumeration (MARCO style)
    def _witness_from_sets(
        self, hs: frozenset[int], sets: Sequence[FoundReason], masks: _Masks, budget: Budget | None
    ) -> dict[int, tuple[int, ...]]:
        """Witnesses for an AXp ``hs`` that is a minimal hitting set of the correction ``sets``
        (``masks`` are their feature bit sets): for each ``f``, a set meeting ``hs`` only in ``f``
        has a counterexample fixing ``hs - {f}`` (the latest such set is taken)."""
        witnesses: dict[int, tuple[int, ...]] = {}
        for f, k in masks.latest_private(mask_of(hs)).items():
            witness = sets[k].counterexample
            assert witness is not None  # correction_set always sets it
            witnesses[f] = witness
        for f in sorted(hs - witnesses.keys()):  # not a minimal hitting set after all: ask
            outcome = self.counterexample(self.portfolio.decide(self.question(sorted(hs - {f})), budget))
            if not outcome:
                raise RuntimeError(f"hitting set {sorted(hs)} is not subset-minimal")
            witnesses[f] = self.last_states
        return witnesses

    def sufficient_reasons(self, budget: Budget, *, minimum: bool = False) -> Iterator[FoundReason]:
        """Every AXp (``minimum``: every minimum-size AXp) by hitting-set duality.

        A minimal (``minimum``: minimum) hitting set of the correction sets found so far is
        tested: if it is sufficient it is an AXp (a smaller set misses a known correction set) and
        is yielded and blocked; otherwise its counterexample gives a new correction set to hit.

        The sets to hit need not be CXps: every sufficient set meets every *correction set*
        (features whose freeing admits a counterexample), so a minimal (minimum) hitting set of
        correction sets that is sufficient is an AXp (a minimum AXp): the implicit hitting set
        scheme of Ignatiev, Previti, Liffiton and Marques-Silva (2015), "Smallest MUS extraction
        with minimal hitting set dualization" [IPLM15]. The counterexample is therefore only
        reduced toward the instance by evaluating the forest (:meth:`correction_set`), with no
        solver call, instead of being shrunk to a CXp by a linear search of solver calls.
        """
        if not self.features:
            outcome = self.counterexample(self.portfolio.decide(self.question([]), budget))
            if outcome is False:
                yield FoundReason(frozenset())
            return
        hitman = Hitman(htype="rc2", solver="g3") if minimum else Hitman(htype="sat", solver="mgh")
        hit_sets: list[FoundReason] = []
        masks = _Masks(self.encoding.forest.n_features)
        best: int | None = None
        try:
            while True:
                budget.check("enumerating reasons")
                hs_list = hitman.get()
                if hs_list is None:
                    return
                hs = frozenset(int(f) for f in hs_list)
                if best is not None and len(hs) > best:
                    return
                outcome = self.counterexample(self.portfolio.decide(self.question(sorted(hs), short=True), budget))
                if outcome:
                    cx = self.correction_set(self.last_states)
                    hit_sets.append(cx)
                    masks.append(mask_of(cx.features))
                    hitman.hit(sorted(cx.features))
                    continue
                witnesses = self._witness_from_sets(hs, hit_sets, masks, budget)
                if minimum and best is None:
                    best = len(hs)
                yield FoundReason(hs, witnesses)
                if not hs:
                    return
                hitman.block(sorted(hs))
        finally:
            hitman.delete()

    def necessary_reasons(self, budget: Budget) -> Iterator[FoundReason]:
        """Every CXp by the dual loop: a minimal hitting set of the AXps found so far is freed
        (every other feature fixed); a counterexample makes it a CXp (yielded with that witness
        and blocked), otherwise the core is hit: shrunk to an AXp first when it is larger than
        every AXp shrunk so far (sufficient either way, so every CXp meets it): raw cores can be
        far from minimal, while shrinking every core costs solver calls where cores are
        near-minimal already. With the "predicts t" formula this enumerates the contrastive
        reasons toward ``t``.

        Under the hard vote an unsatisfiable query the screen settles without a core (a box
        searched whole) goes to the solver for one. Under the soft vote it does not: the fixed set
        itself is the core (it is sufficient), shrunk to an AXp as above, since the soft-vote
        solver is far slower than the screen."""
        hitman = Hitman(htype="sat", solver="mgh")
        cores = not self.encoding.soft  # the solver's, where they are cheap
        largest = 0  # the size of the largest AXp shrunk from a core so far
        everything = frozenset(self.features)
        try:
            while True:
                budget.check("enumerating reasons")
                hs_list = hitman.get()
                if hs_list is None:
                    return
                hs = frozenset(int(f) for f in hs_list)
                question = self.question(sorted(everything - hs), core=cores, short=True)
                outcome = self.counterexample(self.portfolio.decide(question, budget))
                if outcome:
                    yield FoundReason(hs, counterexample=self.last_states)
                    if not hs:
                        return
                    hitman.block(sorted(hs))
                    continue
                core = self.last_core
                if not core:
                    return  # an empty sufficient set: nothing can change the outcome
                if len(core) > largest:
                    # shrunk to an AXp (MARCO's shrink): a raw core can be far from minimal, and
                    # hitting it leaves the loop exponentially many hitting sets to try
                    core = self.axp(budget=budget, witnesses=False, within=core, short=True).features
                    largest = max(largest, len(core))
                hitman.hit(sorted(core))
        finally:
            hitman.delete()

    # ------------------------------------------------------------------ minimum CXps: MaxSAT
    def minimum_necessary_reasons(
        self, budget: Budget, *, first_only: bool = False, limit: int | None = None
    ) -> Iterator[FoundReason]:
        """Every minimum-size CXp with RC2: hard clauses the formula, one soft unit clause per
        selector; each optimum frees a minimum CXp, which is then blocked (with its supersets)
        until the optimum cost grows. With ``limit``, CXps of growing size are produced until
        ``limit`` of them (each optimum after blocking the earlier ones is a subset-minimal CXp).
        RC2's own SAT calls run in conflict chunks under a deadline (:class:`_ChunkedRC2`), so the
        budget stops them too.

        Without ``limit``: a feature whose change alone flips the decision is a CXp of size one,
        hence minimum, and when there is one the minimum CXps are exactly these. They are looked
        for first, one query each with every other feature fixed (boxes of one free feature,
        searched whole by the screen), and the MaxSAT solver runs only when there is none."""
        if limit is None:
            singles = False
            for f in self.features:
                budget.check("looking for a single feature that flips the decision")  # a query may not poll
                question = self.question([g for g in self.features if g != f])
                if self.counterexample(self.portfolio.decide(question, budget)):
                    yield FoundReason(frozenset({f}), counterexample=self.last_states)
                    if first_only:
                        return
                    singles = True
            if singles:
                return
        hard, top = self.encoding.maxsat_hard(self.oracle.formula)  # RC2 takes no clauses between calls
        wcnf = WCNF()
        wcnf.hard = list(hard)  # RC2 may append to the list, never changes its clauses
        wcnf.soft = [[self.sel[f]] for f in self.features]
        wcnf.wght = [1] * len(wcnf.soft)
        wcnf.topw = 1 + len(wcnf.soft)
        wcnf.nv = max([top, *(abs(self.sel[f]) for f in self.features)])
        rc2 = _ChunkedRC2(wcnf, solver=self.oracle.solver_name, budget=budget, chunk=self.tuning.conflict_chunk)
        best: int | None = None
        produced = 0
        try:
            while True:
                budget.check("enumerating reasons")
                model = rc2.compute()
                if model is None:
                    return
                if limit is None and best is not None and rc2.cost > best:
                    return
                best = rc2.cost
                z = self.encoding.decode(model)
                freed = frozenset(f for f in self.features if z[f] != self.v[f])
                yield FoundReason(freed, counterexample=z)
                produced += 1
                if first_only or not freed or (limit is not None and produced >= limit):
                    return
                rc2.add_clause([self.sel[f] for f in sorted(freed)])
        finally:
            rc2.delete()


class _ChunkedRC2(RC2):  # type: ignore[misc]
    """PySAT's RC2 whose SAT calls (all made through :meth:`RC2._call_oracle`) run in the SAT
    engine's chunked-deadline loop: :class:`~rfexplain.sat.deciders.scheduler.Chunks`, turns of
    ``chunk`` conflicts with ``budget`` polled between them (one turn without a deadline)."""

    def __init__(self, formula: WCNF, *, solver: str, budget: Budget, chunk: int) -> None:
        self.budget = budget
        self.chunk = chunk
        super().__init__(formula, solver=solver)

    def _call_oracle(self, assumptions: Sequence[int] = (), expect_interrupt: bool = False) -> bool:
        def run(assumed: Sequence[int], conflicts: int | None) -> bool | None:
            if conflicts is not None:
                self.oracle.conf_budget(conflicts)
            outcome = self.oracle.solve_limited(assumptions=list(assumed), expect_interrupt=expect_interrupt)
            return None if outcome is None else bool(outcome)

        answer = Chunks(run, self.chunk, "computing a minimum necessary reason").decide(assumptions, self.budget)
        assert answer is not None  # a solver call always answers
        return answer.sat


class _Masks:
    """The feature bit sets of the correction sets an enumeration has hit, in order, and for a
    set ``hs`` the latest of them meeting ``hs`` in a single feature, per feature.

    With fewer than 63 features they are kept in an int64 array and searched in one numpy pass
    (a scan of Python ints one by one grows with the number of sets, for every AXp)."""

    def __init__(self, n_features: int) -> None:
        self.compact = n_features < 63
        #: the masks: an int64 array (its first ``size`` rows) when compact, else Python ints
        self.array = np.zeros(1024 if self.compact else 0, dtype=np.int64)
        self.items: list[int] = []
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def append(self, mask: int) -> None:
        if not self.compact:
            self.items.append(mask)
        else:
            if self.size == len(self.array):
                self.array = np.concatenate((self.array, np.zeros_like(self.array)))
            self.array[self.size] = mask
        self.size += 1

    def latest_private(self, hs_mask: int) -> dict[int, int]:
        """``{feature: index}`` of the latest mask meeting ``hs_mask`` in ``feature`` alone."""
        if not self.compact:
            found: dict[int, int] = {}
            size = hs_mask.bit_count()
            for k in range(self.size - 1, -1, -1):
                common = self.items[k] & hs_mask
                if common and common & (common - 1) == 0:
                    found.setdefault(common.bit_length() - 1, k)
                    if len(found) == size:
                        break
            return found
        meet = self.array[: self.size] & hs_mask
        single = np.flatnonzero((meet != 0) & ((meet & (meet - 1)) == 0))[::-1]
        bits, first = np.unique(meet[single], return_index=True)
        return {int(b).bit_length() - 1: int(k) for b, k in zip(bits.tolist(), single[first].tolist())}
