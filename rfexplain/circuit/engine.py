"""The knowledge-compilation engine, ``engine="circuit"`` (Ji and Darwiche, 2026 [JD26];
Darwiche and Ji, 2022 [DJ22]).

The forest is compiled, lazily and once per class, into a class formula: a conjunction of weak
test-once decision graphs (Algorithm 3B, the default) or a single such graph (Algorithm 3A,
``compiler="3A"``). Each decision graph compares the votes of two classes; by default it is
built directly in a fixed variable order (``method="count"``,
:mod:`rfexplain.circuit.compilers.votecount`), which gives the very graph the paper's sorting network
with Apply would (``method="sortnet"``) in a fraction of the time. For an instance ``v``
decided ``c``, the complete reason (Darwiche and Ji (2022),
Proposition 7) and the general reason are read off the class formula of ``c`` in linear time as NNF
circuits, and every query is answered from them:

==============================  ===========================================================
sufficient reasons              prime implicants of the complete reason
necessary reasons               prime implicates of the complete reason
shortest sufficient/necessary   Algorithm 2 (ssr) / Algorithm 1 (snr) of [DJ22]
contrastive reasons toward t    prime implicates of the "why not t" complete reason of the
                                negated Algorithm 3A class formula of ``t`` (Table 4 of [JD26])
robustness                      Algorithm 5 of [JD26]
shortest flips                  Algorithms 6-7 of [JD26] (shortest general necessary reasons),
                                on the general reason restricted to the features of V
general necessary reasons       Algorithms 6-7 with the variable sets of all necessary reasons
general sufficient reasons      maximal boxes inside the class formula over each AXp's features
==============================  ===========================================================

One sufficient (necessary) reason is the canonical one every engine gives (deletion, or fixing
back, in a feature order), each step evaluating the monotone complete reason.
Every reason carries witnesses found on the decision graphs, exactly like the other engines'.

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> from rfexplain import Explainer
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
>>> d = Explainer(model, engine="circuit", vote="hard").explain(X[0])  # the majority vote
>>> d.robustness() >= 1
True
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from rfexplain.circuit.compilers import dd_core, dgraph
from rfexplain.circuit.compilers.classformula import ClassFormulas
from rfexplain.circuit.compilers.nnf import Circuit, NNFManager
from rfexplain.circuit.logic.closed_forms import complete_reason, general_reason
from rfexplain.circuit.logic.flips import (
    Clause,
    general_necessary_reasons,
    one_set_at_a_time,
    shortest_general_necessary_reasons,
)
from rfexplain.circuit.logic.general import false_projections, find_world, maximal_boxes
from rfexplain.circuit.logic.implicants import (
    holds,
    prime_implicants,
    prime_implicates,
    robustness,
    shortest_prime_implicants,
    shortest_prime_implicates,
)
from rfexplain.core import jit
from rfexplain.core.bits import bits_of, lowest_bit, mask_of
from rfexplain.core.budget import Budget
from rfexplain.core.errors import CompilationTooLargeError, UnsupportedQueryError
from rfexplain.core.forest import Forest
from rfexplain.core.reasons import Reason, Witness
from rfexplain.engines.base import QUERIES, EngineBase, Instance

__all__ = ["CircuitEngine"]

log = logging.getLogger(__name__)


def _load_graph_loops(core: str) -> float:
    """Load (or compile, on a fresh install) the decision graphs' compiled loops, and the compact
    core's with ``core="compact"``; CPU seconds."""
    start = time.process_time()
    if core == "compact":
        dd_core.warm_up()  # the decision graphs' loops too
    else:
        dgraph.warm_up()
    spent = time.process_time() - start
    if spent > 1.0:
        log.info("compiled the decision graphs' loops in %.1f CPU s (once per install)", spent)
    return spent


COMPILERS = ("3A", "3B")


class _Analysis:
    """Complete and general reason of one decision, built once and shared by the queries."""

    def __init__(self, engine: CircuitEngine, instance: Instance, budget: Budget | None = None) -> None:
        self.engine = engine
        self.instance = instance
        self.v = tuple(int(s) for s in instance.states)
        self.c = instance.prediction
        self.conjuncts = engine.class_formula(self.c, budget)
        self.nnf = NNFManager(engine.forest.states_per_feature)
        self._cr: int | None = None
        self._gr: int | None = None

    @property
    def cr(self) -> int:
        if self._cr is None:
            self._cr = complete_reason(self.engine.formulas.dg, self.conjuncts, self.v, self.nnf)
        return self._cr

    @property
    def gr(self) -> int:
        if self._gr is None:
            self._gr = general_reason(self.engine.formulas.dg, self.conjuncts, self.v, self.nnf)
        return self._gr

    def general_reason_on(self, variables: int) -> int:
        """The general reason with the literals outside the features ``variables`` (a bit mask)
        set to true: all that Algorithm 6 keeps when it wants clauses within them."""
        return general_reason(self.engine.formulas.dg, self.conjuncts, self.v, self.nnf, variables=variables)


class CircuitEngine(EngineBase):
    """Explanations read off compiled class formulas (``engine="circuit"``).

    Parameters
    ----------
    forest : Forest
    compiler : {"3B", "3A"}
        Class formulas as conjunctions of decision graphs (Algorithm 3B) or as single graphs
        (Algorithm 3A). Contrastive reasons always use Algorithm 3A for the target class.
    method : {"count", "sortnet"}
        How Algorithm 3B builds each vote-threshold graph: by direct counting (default) or by the
        paper's sorting network with Apply; both give the same graph
        (:class:`~rfexplain.circuit.compilers.classformula.ClassFormulas`).
    order : {"depth", "trees", "frequency", "index"}
        The variable order of the decision graphs.
    max_nodes : int, optional
        The size budget of compilation: :class:`~rfexplain.core.errors.CompilationTooLargeError`
        (a ``MemoryError``) once the decision graphs reach that many nodes.
    core : {"compact", "python"} or None
        Which core counts the votes of ``method="count"``: flat arrays with compiled loops, or
        Python objects; both give the same graphs. ``None`` (the default): the compact core once
        the compiled loops are ready (:func:`rfexplain.core.jit.compiled_loops_ready`; on a fresh
        install they compile in the background meanwhile), else the Python one. The decision
        graphs' own unique table is compiled either way: on a fresh install the engine compiles
        it when it is built, before any query's budget starts
        (:attr:`compile_seconds` says how long that took).

    Raises
    ------
    UnsupportedQueryError
        For a forest deciding by soft vote (unless its soft and hard votes are the same function:
        :attr:`~rfexplain.core.forest.Forest.aggregation`): the class formulas count votes, and
        explaining the hard vote of a soft-vote model would explain another classifier. The
        message names the engines that answer (``sat``, ``oracle``).
    """

    name = "circuit"
    queries = frozenset(QUERIES)

    def __init__(
        self,
        forest: Forest,
        *,
        compiler: str = "3B",
        method: str = "count",
        order: str = "depth",
        max_nodes: int | None = None,
        core: str | None = None,
    ) -> None:
        super().__init__(forest)
        if not forest.aggregation.is_majority:
            raise UnsupportedQueryError(
                "engine 'circuit' explains the hard majority vote only, and this forest decides by "
                f"{forest.aggregation.described}: engines that answer it: ['oracle', 'sat']"
                + (
                    " (or build the forest with vote='hard' to explain the majority vote instead)"
                    if forest.vote == "soft"
                    else ""
                )
            )
        if compiler not in COMPILERS:
            raise ValueError(f"compiler must be one of {list(COMPILERS)}. Got {compiler!r} instead.")
        self.compiler = compiler
        if core is None:
            core = "compact" if jit.compiled_loops_ready() else "python"
            if core == "python":
                jit.start_background_compilation()
        #: CPU seconds spent loading (or, on a fresh install, compiling) the decision graphs'
        #: compiled loops when the engine was built, outside every query's budget
        self.compile_seconds = _load_graph_loops(core)
        self.formulas = ClassFormulas(forest, method=method, order=order, core=core)
        self.formulas.dg.max_nodes = max_nodes
        self.relevant = mask_of(forest.tested_features)
        self._cache: OrderedDict[tuple[int, ...], _Analysis] = OrderedDict()

    # ------------------------------------------------------------------ plumbing
    def class_formula(self, cls: int, budget: Budget | None = None) -> tuple[int, ...]:
        """The compiled class formula of ``cls``: decision graphs to be conjoined. Compiling
        stops with :class:`~rfexplain.core.budget.BudgetExpired` when ``budget`` expires (an
        enumeration then ends as stopped by its timeout)."""
        try:
            return self.formulas.conjuncts(cls, self.compiler, budget if budget is not None else Budget.current())
        except MemoryError as exc:
            if isinstance(exc, CompilationTooLargeError):
                raise
            raise CompilationTooLargeError(
                f"compiling the class formula of class {cls} ran out of memory at {len(self.formulas.dg):,} "
                "decision-graph nodes; set max_nodes= to stop earlier, or use the sat engine"
            ) from None

    def _analysis(self, instance: Instance, budget: Budget | None = None) -> _Analysis:
        key = tuple(instance.states)
        a = self._cache.get(key)
        if a is None or a.instance.values != instance.values:
            a = _Analysis(self, instance, budget)
            self._cache[key] = a
            while len(self._cache) > 16:
                self._cache.popitem(last=False)
        return a

    def _reason(
        self,
        kind: str,
        instance: Instance,
        literals: Mapping[int, Sequence[int]],
        witnesses: Sequence[Witness],
        target: int | None = None,
    ) -> Reason:
        return Reason.of(
            kind,
            literals,
            target=target,
            space=self.forest.space,
            instance=instance.values,
            decision=instance.prediction,
            witnesses=witnesses,
        )

    def _witness(self, instance: Instance, world: tuple[int, ...] | None, dropped: int | None = None) -> Witness:
        if world is None:
            raise RuntimeError("internal error: no witness world found for a reason (please report)")
        prediction = int(self.forest.predict_states(np.asarray([world], dtype=np.int64))[0])
        values = self.forest.values_for_states(world, instance.values)
        return Witness(values, prediction, dropped=dropped)

    def _flip_world(self, a: _Analysis, keep: Sequence[int]) -> tuple[int, ...] | None:
        """A state vector decided differently that agrees with the instance on ``keep``."""
        fixed = {f: a.v[f] for f in keep}
        return find_world(self.formulas.dg, a.conjuncts, 0, fixed, a.v)

    def _sufficient(
        self, a: _Analysis, mask: int, kind: str = "sufficient", literals: Mapping[int, Sequence[int]] | None = None
    ) -> Reason:
        feats = bits_of(mask)
        witnesses = []
        for f in feats:
            keep = [g for g in feats if g != f]
            witnesses.append(self._witness(a.instance, self._flip_world(a, keep), dropped=f))
        lits = literals if literals is not None else {f: [a.v[f]] for f in feats}
        return self._reason(kind, a.instance, lits, witnesses)

    def _necessary(self, a: _Analysis, mask: int) -> Reason:
        keep = [f for f in range(self.forest.n_features) if not mask >> f & 1]
        world = self._flip_world(a, keep)
        return self._reason(
            "necessary", a.instance, {f: [a.v[f]] for f in bits_of(mask)}, [self._witness(a.instance, world)]
        )

    @staticmethod
    def _ordered(masks: Sequence[int]) -> list[int]:
        return sorted(masks, key=lambda m: (m.bit_count(), m))

    # ------------------------------------------------------------------ sufficient / necessary
    def _in_order(self, order: Sequence[int] | None) -> list[int]:
        """The tested features, in ``order`` (default: index order)."""
        features = bits_of(self.relevant) if order is None else order
        return [f for f in features if self.relevant >> f & 1]

    def sufficient_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason:
        """The canonical AXp: deletion in ``order``, each check "do the kept features guarantee
        the decision" evaluated on the monotone complete reason in linear time."""
        a = self._analysis(instance)
        kept = self.relevant
        for f in self._in_order(order):
            if holds(a.nnf, a.cr, kept & ~(1 << f)):
                kept &= ~(1 << f)
        return self._sufficient(a, kept)

    def necessary_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason | None:
        """The canonical CXp: from every feature free, fix each feature in ``order`` back
        whenever the fixed ones still do not imply the complete reason (a flip remains)."""
        a = self._analysis(instance)
        if holds(a.nnf, a.cr, 0):
            return None
        changed = self.relevant
        for f in self._in_order(order):
            trial = changed & ~(1 << f)
            if not holds(a.nnf, a.cr, self.relevant & ~trial):
                changed = trial
        return self._necessary(a, changed)

    def sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        a = self._analysis(instance, budget)
        masks = prime_implicants(a.nnf, a.cr, budget)
        for m in self._ordered(masks):
            yield self._sufficient(a, m)

    def necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        a = self._analysis(instance, budget)
        masks = prime_implicates(a.nnf, a.cr, budget)
        for m in self._ordered(masks):
            yield self._necessary(a, m)

    def shortest_sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        a = self._analysis(instance, budget)
        for m in self._ordered(shortest_prime_implicants(a.nnf, a.cr, budget)):
            yield self._sufficient(a, m)

    def shortest_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        a = self._analysis(instance, budget)
        for m in self._ordered(shortest_prime_implicates(a.nnf, a.cr, budget)):
            yield self._necessary(a, m)

    def contrastive_reasons(self, instance: Instance, target: int, budget: Budget) -> Iterator[Reason]:
        if not 0 <= target < self.forest.n_classes:
            raise ValueError(f"target must be a class index in [0, {self.forest.n_classes}). Got {target!r} instead.")
        a = self._analysis(instance, budget)
        root = self.formulas.dg_3a(target, budget)
        nnf = NNFManager(self.forest.states_per_feature)
        why_not = complete_reason(self.formulas.dg, [root], a.v, nnf, negated=True)
        masks = prime_implicates(nnf, why_not, budget)
        for m in self._ordered(masks):
            fixed = {f: a.v[f] for f in range(self.forest.n_features) if not m >> f & 1}
            world = find_world(self.formulas.dg, [root], 1, fixed, a.v)
            yield self._reason(
                "contrastive",
                instance,
                {f: [a.v[f]] for f in bits_of(m)},
                [self._witness(instance, world)],
                target=target,
            )

    def box_counterexample(self, instance: Instance, box: Mapping[int, frozenset[int]]) -> tuple[int, ...] | None:
        """A path to ``false`` in one of the class formula's conjuncts whose edges each allow a
        state of the box (:func:`~rfexplain.circuit.logic.general.find_world`): the decision
        graphs test each feature at most once on a path, so a path is a box of worlds."""
        a = self._analysis(instance, Budget.current())
        allowed = {f: mask_of(states) for f, states in box.items()}
        return find_world(self.formulas.dg, a.conjuncts, 0, {}, a.v, allowed)

    def robustness(self, instance: Instance) -> float:
        a = self._analysis(instance)
        r, _ = robustness(a.nnf, a.cr)
        return r if r == math.inf else int(r)

    # ------------------------------------------------------------------ complete / general reasons
    def complete_reason(self, instance: Instance) -> Circuit:
        a = self._analysis(instance)
        return Circuit(a.nnf, a.cr, self.forest.feature_names, title="complete reason")

    def general_reason(self, instance: Instance) -> Circuit:
        a = self._analysis(instance)
        return Circuit(a.nnf, a.gr, self.forest.feature_names, title="general reason")

    def general_sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        a = self._analysis(instance, budget)
        axps = prime_implicants(a.nnf, a.cr, budget)
        full = self.formulas.dg.full
        for m in self._ordered(axps):
            feats = bits_of(m)
            proj = false_projections(self.formulas.dg, a.conjuncts, feats, budget)
            boxes = maximal_boxes(proj, [a.v[f] for f in feats], [full[f] for f in feats], budget)
            base = None
            for box in boxes:
                if base is None:
                    base = self._sufficient(a, m)
                literals = {f: bits_of(b) for f, b in zip(feats, box)}
                yield Reason.of(
                    "general_sufficient",
                    literals,
                    space=self.forest.space,
                    instance=instance.values,
                    decision=instance.prediction,
                    witnesses=base.witnesses,
                )

    def _gnr_reasons(self, a: _Analysis, clauses: list[Clause]) -> list[Reason]:
        out = []
        full = self.formulas.dg.full
        for clause in clauses:
            world = list(a.v)
            for f, m in clause:
                world[f] = lowest_bit(full[f] & ~m)
            literals = {f: bits_of(m) for f, m in clause}
            out.append(
                self._reason("general_necessary", a.instance, literals, [self._witness(a.instance, tuple(world))])
            )
        return sorted(out, key=lambda r: (len(r), sorted(r.features), [sorted(l.states) for l in r.conditions]))

    def general_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        a = self._analysis(instance, budget)
        nrs = prime_implicates(a.nnf, a.cr, budget)
        clauses = one_set_at_a_time(general_necessary_reasons, a.nnf, a.general_reason_on, nrs, budget)
        yield from self._gnr_reasons(a, clauses)

    def shortest_flips(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        a = self._analysis(instance, budget)
        r, V = robustness(a.nnf, a.cr)
        if r == math.inf:
            return
        clauses = one_set_at_a_time(shortest_general_necessary_reasons, a.nnf, a.general_reason_on, V, budget)
        yield from self._gnr_reasons(a, clauses)

    def close(self) -> None:
        self._cache.clear()
