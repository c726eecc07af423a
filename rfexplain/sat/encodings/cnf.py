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
:attr:`~rfexplain.core.forest.Forest.votes_agree`) keeps the smaller hard-vote encoding.

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

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rfexplain.core.errors import InvalidOptionError
from rfexplain.core.forest import Forest
from rfexplain.sat.encodings.domains import decode_state, domain_clauses, state_literal
from rfexplain.sat.encodings.pool import Var, VarPool
from rfexplain.sat.encodings.softvote import TreeValues, soft_not_class, soft_predicts_class, tree_value_clauses
from rfexplain.sat.encodings.trees import TreeVotes, tree_clauses
from rfexplain.sat.encodings.votes import CARD_ENCODINGS, MULTICLASS_CONSTRUCTIONS, not_class, predicts_class

__all__ = ["ForestEncoding", "Formula"]

log = logging.getLogger(__name__)

Clause = list[int]


@dataclass(frozen=True)
class Formula:
    """A CNF over the encoding's variables: base clauses plus the clauses of one condition."""

    name: str
    clauses: tuple[tuple[int, ...], ...]

    @property
    def n_clauses(self) -> int:
        return len(self.clauses)

    @property
    def n_vars(self) -> int:
        """Distinct variables occurring in the clauses."""
        return len({abs(lit) for cl in self.clauses for lit in cl})


def _realisable(forest: Forest, feature: int, state: int) -> bool:
    """Whether some float32 value falls in the state's interval."""
    try:
        forest.state_value(feature, state)
    except ValueError:
        return False
    return True


class ForestEncoding:
    """Variables and base clauses of a forest, and its formulas (built lazily, cached).

    Parameters
    ----------
    forest : Forest
    card : str
        The cardinality encoding (one of :data:`~.votes.CARD_ENCODINGS`), default ``"cardnetwrk"``.
    multiclass : str
        ``"selectors"`` (default, the paper's construction) or ``"challengers"``; see :mod:`.votes`.
    """

    def __init__(self, forest: Forest, *, card: str = "cardnetwrk", multiclass: str = "selectors") -> None:
        if card not in CARD_ENCODINGS:
            raise InvalidOptionError(f"card must be one of {list(CARD_ENCODINGS)}. Got {card!r} instead.")
        if multiclass not in MULTICLASS_CONSTRUCTIONS:
            raise InvalidOptionError(
                f"multiclass must be one of {list(MULTICLASS_CONSTRUCTIONS)}. Got {multiclass!r} instead."
            )
        self.forest = forest
        self.card = card
        self.multiclass = multiclass
        self.pool = VarPool()
        self.n_states: tuple[int, ...] = forest.states_per_feature
        #: Features with more than one state: the only ones a reason can mention.
        self.features: tuple[int, ...] = tuple(f for f, n in enumerate(self.n_states) if n > 1)
        base: list[Clause] = []
        #: Feature -> states no float32 value falls in (excluded from the domain).
        self.empty_states: dict[int, tuple[int, ...]] = {}
        for f in self.features:
            base.extend(domain_clauses(self.pool, f, self.n_states[f]))
            empty = tuple(s for s in range(self.n_states[f]) if not _realisable(forest, f, s))
            if empty:
                self.empty_states[f] = empty
                base.extend([-state_literal(self.pool, f, s)] for s in empty)
        if self.empty_states:
            log.warning(
                "%d states contain no float32 value and are excluded: %s",
                sum(map(len, self.empty_states.values())),
                self.empty_states,
            )
        #: Whether the vote is encoded as the soft vote's weighted comparisons.
        self.soft = not forest.votes_agree
        self.trees: list[TreeVotes] = []
        self.values: list[TreeValues] = []
        if self.soft:
            _, weights = forest.soft_weights()
            for k, tree in enumerate(forest.trees):
                clauses, values = tree_value_clauses(self.pool, k, tree, self.n_states, weights[k])
                base.extend(clauses)
                self.values.append(values)
        else:
            for k, tree in enumerate(forest.trees):
                clauses, votes = tree_clauses(self.pool, k, tree, self.n_states)
                base.extend(clauses)
                self.trees.append(votes)
        self.base: tuple[tuple[int, ...], ...] = tuple(tuple(cl) for cl in base)
        self._formulas: dict[tuple[str, int], Formula] = {}
        self._order_vars: list[list[int]] | None = None

    def _formula(self, name: str, cls: int, extra: Iterable[Clause]) -> Formula:
        return Formula(f"{name}({cls})", self.base + tuple(tuple(cl) for cl in extra))

    def not_class(self, c: int) -> Formula:
        """The forest does not predict class ``c``."""
        key = ("not", c)
        if key not in self._formulas:
            if self.soft:
                extra = soft_not_class(self.pool, self.values, self.forest.n_classes, c)
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
            if self.soft:
                extra = soft_predicts_class(self.pool, self.values, self.forest.n_classes, t)
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
            return tuple(sum(1 for x in xs if model[x - 1] > 0) for xs in self._order_vars)
        true_vars = {lit for lit in model if lit > 0}
        return tuple(decode_state(self.pool, true_vars, f, n) if n > 1 else 0 for f, n in enumerate(self.n_states))
