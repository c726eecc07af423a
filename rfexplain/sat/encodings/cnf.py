"""The whole propositional encoding of a forest, one formula per question.

:class:`ForestEncoding` allocates the variables of a forest once (feature domains, tree paths and
votes, :mod:`.domains` and :mod:`.trees`) and builds, on demand and once each, the formulas the
explanation algorithms query:

- ``not_class(c)`` -- the forest does *not* predict ``c`` (:func:`.votes.not_class`): the hard part
  ``H`` of Izza and Marques-Silva (2021), Section 4 [IM21], when explaining a decision ``c``;
- ``predicts(t)`` -- the forest predicts ``t`` (:func:`.votes.predicts_class`): the targeted
  variant used for contrastive reasons toward ``t``.

Under the soft vote the trees' leaves carry their integer weight vectors instead of votes and both
formulas are exact pseudo-Boolean comparisons (:mod:`.softvote`); a soft-vote forest whose soft
and hard votes are the same function (pure leaves, or one tree:
:attr:`~rfexplain.core.forest.Forest.aggregation`) keeps the smaller hard-vote encoding.

Every state must contain a float32 value (the forest model guarantees it by merging thresholds
with no float32 number between them); as a safety net, a state that contains none would be
excluded from the domain (``~state(f, s)``, with a warning), so that every counterexample the
solver finds is a realisable input whose witness the model itself can check.

Each formula is the base clauses plus its vote clauses; an instance enters only through the
selector literals ``state(f, v_f)`` (:meth:`ForestEncoding.selector`), assumed by an incremental
solver, so one formula serves every instance with the same decision.

Example
-------
>>> from rfexplain import Forest
>>> forest = Forest.from_raw_trees([{"feature": [0, -1, -1], "threshold": [0.5, 0, 0],
...     "left": [1, -1, -1], "right": [2, -1, -1], "label": [-1, 0, 1]}], n_features=1, classes=[0, 1])
>>> enc = ForestEncoding(forest)
>>> formula = enc.not_class(0)
>>> formula.n_clauses > 0
True
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rfexplain.core.errors import InvalidOptionError
from rfexplain.core.forest import Forest
from rfexplain.sat.encodings.domains import decode_state, domain_clauses, state_literal
from rfexplain.sat.encodings.pool import Var, VarPool
from rfexplain.sat.encodings.softvote import (
    Comparison,
    SoftFormula,
    TreeValues,
    class_sums,
    exact_comparison,
    soft_not_class,
    soft_predicts_class,
    soft_winner,
    tree_value_clauses,
    truth,
)
from rfexplain.sat.encodings.trees import TreeVotes, tree_clauses
from rfexplain.sat.encodings.votes import CARD_ENCODINGS, MULTICLASS_CONSTRUCTIONS, not_class, predicts_class
from rfexplain.sat.tuning import DEFAULT_TUNING

__all__ = ["ForestEncoding", "Formula"]

log = logging.getLogger(__name__)

Clause = list[int]

#: The default of the ``soft_bits`` option (:class:`ForestEncoding`, and the SAT engine's, which
#: passes it on; read nowhere else): the bits each tree's weight keeps in the relaxed soft-vote
#: comparisons (see :meth:`ForestEncoding.refinement`). A relaxed comparison differs from the
#: exact one only when the exact margin is within ``trees * 2**-SOFT_BITS`` of a tie (in units
#: of the largest leaf weight), and costs about ``SOFT_BITS / 60`` of the exact adders.
SOFT_BITS = 12


@dataclass(frozen=True)
class Formula:
    """A CNF over the encoding's variables: base clauses plus the clauses of one condition.

    Under the soft vote, ``relaxed`` lists the weighted comparisons encoded only approximately
    (implied by the exact ones): a model of ``clauses`` is then a candidate that
    :meth:`ForestEncoding.refinement` confirms or answers with the exact clauses to add.
    """

    kind: str
    cls: int
    clauses: tuple[tuple[int, ...], ...]
    relaxed: tuple[Comparison, ...] = ()

    @property
    def name(self) -> str:
        """``not(c)`` ("the forest does not predict ``c``") or ``predicts(t)``."""
        return f"{self.kind}({self.cls})"

    @property
    def n_clauses(self) -> int:
        return len(self.clauses)

    @property
    def n_vars(self) -> int:
        """Distinct variables occurring in the clauses."""
        return len({abs(lit) for cl in self.clauses for lit in cl})


def _empty_states(forest: Forest, feature: int) -> tuple[int, ...]:
    """The states of ``feature`` that no float32 value falls in. A forest's thresholds are
    float32 numbers, so a state ``(low, high]`` with a finite ``high`` holds ``high`` itself
    unless the feature's bounds cut it: only the others are searched for a value."""
    bounded = bool(forest.bounds) and forest.bounds[feature] is not None
    empty = []
    for state in range(len(forest.thresholds[feature]) + 1):
        if not bounded and math.isfinite(forest.state_interval(feature, state)[1]):
            continue
        try:
            forest.state_value(feature, state)
        except ValueError:
            empty.append(state)
    return tuple(empty)


class ForestEncoding:
    """Variables and base clauses of a forest, and its formulas (built lazily, cached).

    Parameters
    ----------
    forest : Forest
    card : str
        The cardinality encoding (one of :data:`~.votes.CARD_ENCODINGS`), default ``"cardnetwrk"``.
    multiclass : str
        ``"selectors"`` (default, the paper's construction) or ``"challengers"``; see :mod:`.votes`.
    soft_bits : int or None
        Soft vote only: the bits each tree's weight keeps in the relaxed comparisons the formulas
        start from (:data:`SOFT_BITS`); ``None`` encodes every comparison exactly up front.
    coarse_literals : int
        Soft vote only: the size of each comparison's redundant rounded-up cardinality constraint
        (:mod:`.softvote`; the SAT engine's tuning, :class:`~rfexplain.sat.tuning.SatTuning`).
    """

    def __init__(
        self,
        forest: Forest,
        *,
        card: str = "cardnetwrk",
        multiclass: str = "selectors",
        soft_bits: int | None = SOFT_BITS,
        coarse_literals: int = DEFAULT_TUNING.coarse_literals,
    ) -> None:
        if card not in CARD_ENCODINGS:
            raise InvalidOptionError(f"card must be one of {list(CARD_ENCODINGS)}. Got {card!r} instead.")
        if multiclass not in MULTICLASS_CONSTRUCTIONS:
            raise InvalidOptionError(
                f"multiclass must be one of {list(MULTICLASS_CONSTRUCTIONS)}. Got {multiclass!r} instead."
            )
        if soft_bits is not None and (isinstance(soft_bits, bool) or not isinstance(soft_bits, int) or soft_bits < 1):
            raise InvalidOptionError(f"soft_bits must be a positive integer or None. Got {soft_bits!r} instead.")
        self.forest = forest
        self.soft_bits = soft_bits
        self.coarse_literals = coarse_literals
        self.card = card
        self.multiclass = multiclass
        self.pool = VarPool()
        self.n_states: tuple[int, ...] = forest.states_per_feature
        #: Features with more than one state: the only ones a reason can mention.
        self.features: tuple[int, ...] = tuple(f for f, n in enumerate(self.n_states) if n > 1)
        #: Feature -> states no float32 value falls in (excluded from the domain).
        self.empty_states: dict[int, tuple[int, ...]] = {}
        for f in self.features:
            empty = _empty_states(forest, f)
            if empty:
                self.empty_states[f] = empty
        if self.empty_states:
            log.warning(
                "%d states contain no float32 value and are excluded: %s",
                sum(map(len, self.empty_states.values())),
                self.empty_states,
            )
        #: Whether the vote is encoded as the soft vote's weighted comparisons.
        self.soft = not forest.aggregation.is_majority
        #: Soft vote only: every leaf's exact integer weight vector (:meth:`.Vote.integer_weights`).
        self.weights: list[dict[int, tuple[int, ...]]] = forest.aggregation.integer_weights()[1] if self.soft else []
        self._base: tuple[tuple[int, ...], ...] | None = None
        self._trees: list[TreeVotes] = []
        self._values: list[TreeValues] = []
        self._formulas: dict[tuple[str, int], Formula] = {}
        self._exact: dict[Comparison, tuple[Clause, ...]] = {}
        self._maxsat: dict[tuple[str, int], tuple[list[list[int]], int]] = {}
        self._order_vars: list[list[int]] | None = None

    @property
    def base(self) -> tuple[tuple[int, ...], ...]:
        """The clauses every formula shares: the feature domains and the trees' paths (with their
        votes, or their weight vectors under the soft vote). Built on first use: a query the
        decider other than the full CNF answers (:mod:`rfexplain.sat.deciders`) needs none of them, and on
        scikit-learn's default forests they are most of the encoding's time."""
        if self._base is None:
            base: list[Clause] = []
            for f in self.features:
                base.extend(domain_clauses(self.pool, f, self.n_states[f]))
                base.extend([-state_literal(self.pool, f, s)] for s in self.empty_states.get(f, ()))
            for k, tree in enumerate(self.forest.trees):
                if self.soft:
                    clauses, values = tree_value_clauses(self.pool, k, tree, self.n_states, self.weights[k])
                    self._values.append(values)
                else:
                    clauses, votes = tree_clauses(self.pool, k, tree, self.n_states)
                    self._trees.append(votes)
                base.extend(clauses)
            self._base = tuple(tuple(cl) for cl in base)
        return self._base

    @property
    def trees(self) -> list[TreeVotes]:
        """Hard vote: each tree's vote literals (built with :attr:`base`)."""
        self.base  # noqa: B018  (builds them)
        return self._trees

    @property
    def values(self) -> list[TreeValues]:
        """Soft vote: each tree's weight-vector literals (built with :attr:`base`)."""
        self.base  # noqa: B018  (builds them)
        return self._values

    def _formula(self, name: str, cls: int, extra: Iterable[Clause] | SoftFormula) -> Formula:
        if isinstance(extra, SoftFormula):
            clauses = self.base + tuple(tuple(cl) for cl in extra.clauses)
            return Formula(name, cls, clauses, extra.relaxed)
        return Formula(name, cls, self.base + tuple(tuple(cl) for cl in extra))

    # ------------------------------------------------------------------ soft vote: lazy exactness
    def exact_clauses(self, comparison: Comparison) -> tuple[Clause, ...]:
        """The exact clauses of a relaxed comparison (built once, shared by every solver)."""
        if comparison not in self._exact:
            exact = exact_comparison(self.pool, self.values, comparison, coarse=self.coarse_literals)
            self._exact[comparison] = tuple(exact)
        return self._exact[comparison]

    def exact(self, formula: Formula) -> tuple[tuple[int, ...], ...]:
        """Every clause of ``formula`` made exact: its clauses plus those of all its relaxed
        comparisons (for solvers that cannot take clauses between calls, such as MaxSAT)."""
        extra = (tuple(cl) for comparison in formula.relaxed for cl in self.exact_clauses(comparison))
        return formula.clauses + tuple(extra)

    def maxsat_hard(self, formula: Formula) -> tuple[list[list[int]], int]:
        """:meth:`exact` as the lists of clauses a MaxSAT formula's hard part takes, and the
        largest variable in them, built once per formula: a MaxSAT query per instance
        (robustness, minimum CXps) then copies one list instead of appending every clause to a
        fresh ``WCNF``."""
        key = (formula.kind, formula.cls)
        if key not in self._maxsat:
            hard = [list(cl) for cl in self.exact(formula)]
            literals = np.fromiter(itertools.chain.from_iterable(hard), dtype=np.int64)
            self._maxsat[key] = (hard, int(np.abs(literals).max()) if len(literals) else 0)
        return self._maxsat[key]

    def refinement(self, formula: Formula, model: Sequence[int], done: set[Comparison]) -> list[Clause]:
        """Counterexample-guided exactness (CEGAR) for a soft-vote formula.

        ``model`` satisfies ``formula`` with its relaxed comparisons plus the exact clauses of those
        in ``done``. If the soft vote at the model's tree values really meets the condition, the
        model is a true solution and nothing is returned. Otherwise some relaxed comparison the
        model switches on fails exactly: its exact clauses are returned (and added to ``done``),
        which excludes this model; as there are finitely many comparisons, the loop ends, and once
        every comparison is exact no model is ever refuted.
        """
        if not formula.relaxed:
            return []
        sums = class_sums(self.values, model)
        holds = truth(model)
        winner = soft_winner(sums)
        if (winner != formula.cls) if formula.kind == "not" else (winner == formula.cls):
            return []
        out: list[Clause] = []
        for comparison in formula.relaxed:
            if comparison in done:
                continue
            on = comparison.guard is None or holds(comparison.guard)
            delta = 1 if comparison.winner > comparison.loser else 0
            if on and sums[comparison.winner] - sums[comparison.loser] < delta:
                done.add(comparison)
                out.extend(self.exact_clauses(comparison))
        if not out:
            raise RuntimeError(f"soft-vote refinement: a model of {formula.name} breaks no relaxed comparison")
        return out

    def not_class(self, c: int) -> Formula:
        """The forest does not predict class ``c``."""
        key = ("not", c)
        if key not in self._formulas:
            extra: list[Clause] | SoftFormula
            if self.soft:
                extra = soft_not_class(
                    self.pool, self.values, self.forest.n_classes, c, bits=self.soft_bits, coarse=self.coarse_literals
                )
            else:
                extra = not_class(
                    self.pool, self.trees, self.forest.n_classes, c, card=self.card, construction=self.multiclass
                )
            self._formulas[key] = self._formula("not", c, extra)
        return self._formulas[key]

    def predicts(self, t: int) -> Formula:
        """The forest predicts class ``t``."""
        key = ("is", t)
        if key not in self._formulas:
            extra: list[Clause] | SoftFormula
            if self.soft:
                extra = soft_predicts_class(
                    self.pool, self.values, self.forest.n_classes, t, bits=self.soft_bits, coarse=self.coarse_literals
                )
            else:
                extra = predicts_class(self.pool, self.trees, self.forest.n_classes, t, card=self.card)
            self._formulas[key] = self._formula("predicts", t, extra)
        return self._formulas[key]

    def selector(self, feature: int, state: int) -> int:
        """The literal fixing ``feature`` to ``state`` (feature must have several states)."""
        return state_literal(self.pool, feature, state)

    def selectors(self, states: Sequence[int]) -> dict[int, int]:
        """Feature -> selector literal fixing it to its state in ``states`` (relevant features)."""
        return {f: self.selector(f, states[f]) for f in self.features}

    def decode(self, model: Sequence[int]) -> tuple[int, ...]:
        """The state vector of a solver model (python-sat's list of signed literals).

        The state of ``f`` is the number of its order variables ``gt(f, j)`` set true (they form
        a prefix thanks to the order clauses).
        """
        if self._order_vars is None:
            self._order_vars = [
                [self.pool.var(Var.gt(f, j)) for j in range(n - 1)] if n > 1 else []
                for f, n in enumerate(self.n_states)
            ]
        size = len(model)
        if size and abs(model[-1]) == size:
            return tuple(_true_prefix(model, xs) for xs in self._order_vars)
        true_vars = {lit for lit in model if lit > 0}
        return tuple(decode_state(self.pool, true_vars, f, n) if n > 1 else 0 for f, n in enumerate(self.n_states))


def _true_prefix(model: Sequence[int], variables: Sequence[int]) -> int:
    """How many of ``variables`` a full solver ``model`` (literal of variable ``v`` at ``v - 1``)
    sets true, given that they form a prefix (a feature's order variables ``gt(f, j)``): a binary
    search for the first false one, instead of a pass over them all (the AXp enumeration of
    twonorm's third sample instance decoded 43,000 models of 20 features, hundreds of order
    variables each)."""
    lo, hi = 0, len(variables)
    while lo < hi:
        mid = (lo + hi) // 2
        if model[variables[mid] - 1] > 0:
            lo = mid + 1
        else:
            hi = mid
    return lo
