"""The engine contract: what every explanation engine implements (docs/architecture.md).

An engine is constructed once per forest (``EngineClass(forest, **options)``) and then answers
queries about many instances. Each query method receives the :class:`Instance` (its raw float32
values, its state vector and the forest's decision on it); enumerations also receive a
:class:`~rfexplain.core.budget.Budget` and must poll ``budget.expired()`` in long searches.

The two single-reason queries have one canonical answer, defined by the semantics alone, so
every engine returns the same reason (features and literals) for the same instance, whatever it
computed before (:func:`canonical_order`):

- ``sufficient_reason(instance, order)``: the AXp that *deletion in order* produces: start with
  every feature fixed to the instance's state and, for each feature in ``order``, free it iff
  the features still fixed guarantee the decision;
- ``necessary_reason(instance, order)``: the CXp that *fixing back in order* produces: start with
  every feature free (some change flips the decision; otherwise the answer is ``None``) and, for
  each feature in ``order``, fix it back iff the decision can still be flipped; the features
  left free are the reason.

``order`` is a permutation of the feature indices, ``None`` meaning index order ``0, 1, ...``.
Engines may skip checks whose outcome they can prove (cores, models, bounds) but never change
the result. Witnesses are valid but engine-chosen: they are not part of the canonical answer.

Engines subclass :class:`EngineBase`, list the queries they answer in ``queries``, and leave the
others alone: the base class raises :class:`~rfexplain.core.errors.UnsupportedQueryError` for them, naming
the registered engines that do answer them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from rfexplain.core.budget import Budget
from rfexplain.core.errors import InvalidInstanceError, QueryArgumentError, UnsupportedQueryError
from rfexplain.core.forest import Forest
from rfexplain.core.queries import QUERY_TABLE
from rfexplain.core.reasons import Reason, Witness
from rfexplain.engines.general import general_necessary, general_sufficient, minimum_flip_sets
from rfexplain.engines.inflation import inflate

__all__ = [
    "Instance",
    "Engine",
    "EngineBase",
    "ReasonFormula",
    "QUERIES",
    "ENGINE_HOOKS",
    "ENUMERATION_QUERIES",
    "canonical_order",
]

#: Methods an engine may implement besides the queries, which :class:`EngineBase`'s generic
#: queries build on (``box_counterexample``: :meth:`EngineBase.inflated_sufficient_reason`,
#: :meth:`EngineBase.general_sufficient_reasons` and :meth:`EngineBase.shortest_flips`;
#: ``box_example``: :meth:`EngineBase.general_necessary_reasons` and
#: :meth:`EngineBase.shortest_flips`; ``box_nearest``, optional: the inflated reason's bounds in
#: one search each; ``box_around``, optional: both bounds of a feature in one search).
ENGINE_HOOKS: tuple[str, ...] = ("box_counterexample", "box_example", "box_nearest", "box_around")
#: Every query of the Decision API, by name (from :data:`rfexplain.core.queries.QUERY_TABLE`).
QUERIES: tuple[str, ...] = tuple(QUERY_TABLE)

#: Queries that enumerate and therefore take ``limit=`` and ``timeout=``.
ENUMERATION_QUERIES: frozenset[str] = frozenset(q.name for q in QUERY_TABLE.values() if q.enumerates)


def canonical_order(forest: Forest, order: Sequence[int | str] | None) -> tuple[int, ...]:
    """The feature order of the canonical single reasons: ``order`` checked to be a permutation
    of the features (given by index or by name), or index order when ``order`` is None.

    >>> from rfexplain.core.forest import Forest
    >>> leaf = {"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0]}
    >>> forest = Forest.from_raw_trees([leaf], n_features=3, classes=["a", "b"])
    >>> canonical_order(forest, None), canonical_order(forest, ["x2", 0, 1])
    ((0, 1, 2), (2, 0, 1))
    """
    n = forest.n_features
    if order is None:
        return tuple(range(n))
    if isinstance(order, (str, bytes)):
        raise QueryArgumentError(f"order must be a sequence of features, got {order!r}")
    names = {name: f for f, name in enumerate(forest.feature_names)}
    out: list[int] = []
    for item in order:
        if isinstance(item, str):
            if item not in names:
                raise QueryArgumentError(f"order names an unknown feature {item!r}")
            out.append(names[item])
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool) and 0 <= item < n:
            out.append(int(item))
        else:
            raise QueryArgumentError(f"order must hold feature indices in [0, {n}) or names, got {item!r}")
    if sorted(out) != list(range(n)):
        raise QueryArgumentError(f"order must list each of the {n} features exactly once, got {list(order)!r}")
    return tuple(out)


@dataclass(frozen=True)
class Instance:
    """One explained input: raw float32 values, states, and the forest's decision (class index)."""

    values: tuple[float, ...]
    states: tuple[int, ...]
    prediction: int

    @classmethod
    def of(cls, forest: Forest, x: Any) -> Instance:
        """Validate a raw instance and compute its states and decision."""
        values = forest.check_instances(x)
        if values.shape[0] != 1:
            raise InvalidInstanceError(f"expected one instance, got {values.shape[0]}")
        states = forest.checked_states(values)
        return cls(
            values=tuple(float(v) for v in values[0]),
            states=tuple(int(s) for s in states[0]),
            prediction=int(forest.predict_states(states)[0]),
        )

    @classmethod
    def from_states(cls, forest: Forest, states: Sequence[int]) -> Instance:
        """An instance given by its state vector (raw values are state representatives)."""
        st = tuple(int(s) for s in states)
        values = tuple(forest.state_value(f, s) for f, s in enumerate(st))
        return cls(values=values, states=st, prediction=int(forest.predict_states(np.asarray([st]))[0]))


@runtime_checkable
class ReasonFormula(Protocol):
    """A complete or general reason: a formula over state vectors (engine-specific form)."""

    def __contains__(self, states: object) -> bool:
        """Whether a state vector is a model of the formula."""


class Engine(Protocol):
    """The interface every engine implements (subclass :class:`EngineBase` to get it)."""

    name: ClassVar[str]
    queries: ClassVar[frozenset[str]]

    def sufficient_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason: ...
    def inflated_sufficient_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason: ...
    def necessary_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason | None: ...
    def sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]: ...
    def necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]: ...
    def shortest_sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]: ...
    def shortest_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]: ...
    def contrastive_reasons(self, instance: Instance, target: int, budget: Budget) -> Iterator[Reason]: ...
    def robustness(self, instance: Instance) -> float: ...
    def complete_reason(self, instance: Instance) -> ReasonFormula: ...
    def general_reason(self, instance: Instance) -> ReasonFormula: ...
    def general_sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]: ...
    def general_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]: ...
    def shortest_flips(self, instance: Instance, budget: Budget) -> Iterator[Reason]: ...
    def close(self) -> None: ...


class EngineBase:
    """Default implementations: every query this engine does not list raises UnsupportedQueryError.

    The query methods here and in :class:`Engine` follow
    :data:`~rfexplain.core.queries.QUERY_TABLE` (a test checks that they match it): a query taking
    a target receives the target's class index before the budget, an enumeration receives a
    :class:`~rfexplain.core.budget.Budget`.
    """

    name: ClassVar[str] = "base"
    queries: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, forest: Forest, **options: Any) -> None:
        if options:
            raise TypeError(f"engine {self.name!r} takes no options {sorted(options)}")
        self.forest = forest

    def _unsupported(self, query: str) -> UnsupportedQueryError:
        from rfexplain.engines.registry import engines_supporting

        others = [name for name in engines_supporting(query) if name != self.name]
        where = f"; engines that answer it: {others}" if others else "; no installed engine answers it"
        return UnsupportedQueryError(f"engine {self.name!r} does not answer {query}(){where}")

    def sufficient_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason:
        raise self._unsupported("sufficient_reason")

    def box_counterexample(self, instance: Instance, box: Mapping[int, frozenset[int]]) -> tuple[int, ...] | None:
        """A state vector whose features lie in ``box`` (feature -> allowed states; features not
        in it are free) decided differently from ``instance``, or ``None`` when every such
        vector gets the instance's decision (the box is a sufficient reason). An engine that
        implements it answers :meth:`inflated_sufficient_reason`. Runs under the active budget."""
        raise self._unsupported("inflated_sufficient_reason")

    def _dropped_states(self, instance: Instance, axp: Reason) -> dict[int, tuple[int, ...]]:
        """The state vectors of the AXp's witnesses, by the feature each drops: those that agree
        with the instance on the AXp's other features and are decided otherwise (checked here, so
        that :func:`~rfexplain.engines.inflation.inflate` may take them as known counterexamples)."""
        witnesses = [w for w in axp.witnesses if w.dropped is not None and w.dropped in axp.features]
        if not witnesses:
            return {}
        states = self.forest.states(np.asarray([w.values for w in witnesses], dtype=np.float64))
        decided = self.forest.predict_states(states)
        known: dict[int, tuple[int, ...]] = {}
        for w, z, c in zip(witnesses, states.tolist(), decided.tolist()):
            f = w.dropped
            assert f is not None  # kept above
            agrees = all(z[g] == instance.states[g] for g in axp.features if g != f)
            if agrees and int(c) != instance.prediction:
                known[f] = tuple(int(s) for s in z)
        return known

    def _witness_values(self, instance: Instance, z: Sequence[int]) -> tuple[float, ...]:
        """Raw values realising the state vector ``z``: the instance's where its state is kept,
        a representative of the state elsewhere (:meth:`~rfexplain.core.forest.Forest.values_for_states`)."""
        return self.forest.values_for_states(z, instance.values)

    def box_around(
        self, instance: Instance, box: Mapping[int, frozenset[int]], f: int
    ) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None, bool]:
        """The state vectors in ``box`` decided differently from ``instance`` whose states on
        ``f`` are the nearest below and above the instance's (``None`` where there is none), and
        whether they are proven so; ``(None, None, True)``: the box is sufficient. The default
        searches nothing: ``(None, None, False)``, and :meth:`inflated_sufficient_reason` widens
        each bound alone."""
        return None, None, False

    def box_nearest(
        self, instance: Instance, box: Mapping[int, frozenset[int]], f: int, upward: bool
    ) -> tuple[tuple[int, ...] | None, bool]:
        """A state vector in ``box`` decided differently from ``instance`` whose state on ``f`` is
        the largest (``upward``) or the smallest of all such vectors, and whether it is proven so
        (``(None, True)``: the box is sufficient); ``(z, False)``: the search gave up, having
        found ``z`` (or nothing, ``None``). The default searches nothing: ``(None, False)``, and
        :meth:`inflated_sufficient_reason` bisects with :meth:`box_counterexample` alone."""
        return None, False

    def inflated_sufficient_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason:
        """The canonical AXp in ``order`` inflated (:mod:`rfexplain.engines.inflation`), its
        literals checked by :meth:`box_counterexample` (both bounds of a feature first searched
        by :meth:`box_around`, else each by :meth:`box_nearest`), with one witness per bound
        that cannot move."""
        if "inflated_sufficient_reason" not in self.queries:
            raise self._unsupported("inflated_sufficient_reason")
        axp = self.sufficient_reason(instance, order)
        order = tuple(order) if order is not None else tuple(range(self.forest.n_features))
        space = self.forest.space
        box, refused = inflate(
            [f for f in order if f in axp.features],
            instance.states,
            self.forest.states_per_feature,
            lambda f: space.category_labels(f) is not None,
            lambda b: self.box_counterexample(instance, b),
            nearest=lambda b, f, upward: self.box_nearest(instance, b, f, upward),
            around=lambda b, f: self.box_around(instance, b, f),
            known=self._dropped_states(instance, axp),
        )
        worlds = np.asarray([z for _, z in refused], dtype=np.int64).reshape(len(refused), self.forest.n_features)
        decided = self.forest.predict_states(worlds).tolist() if len(refused) else []
        witnesses = [
            Witness(self._witness_values(instance, z), int(c), dropped=f) for (f, z), c in zip(refused, decided)
        ]
        return Reason.of(
            "sufficient",
            box,
            space=space,
            instance=instance.values,
            decision=instance.prediction,
            witnesses=witnesses,
            inflated=True,
        )

    def necessary_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason | None:
        raise self._unsupported("necessary_reason")

    def sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        raise self._unsupported("sufficient_reasons")

    def necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        raise self._unsupported("necessary_reasons")

    def shortest_sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        raise self._unsupported("shortest_sufficient_reasons")

    def shortest_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        raise self._unsupported("shortest_necessary_reasons")

    def contrastive_reasons(self, instance: Instance, target: int, budget: Budget) -> Iterator[Reason]:
        raise self._unsupported("contrastive_reasons")

    def robustness(self, instance: Instance) -> float:
        raise self._unsupported("robustness")

    def complete_reason(self, instance: Instance) -> ReasonFormula:
        raise self._unsupported("complete_reason")

    def general_reason(self, instance: Instance) -> ReasonFormula:
        raise self._unsupported("general_reason")

    def box_example(self, instance: Instance, box: Mapping[int, frozenset[int]]) -> tuple[int, ...] | None:
        """A state vector whose features lie in ``box`` (as in :meth:`box_counterexample`)
        decided *like* ``instance``, or ``None`` when every such vector is decided otherwise. An
        engine that implements it (and lists the queries) answers :meth:`general_necessary_reasons`
        and :meth:`shortest_flips`. Runs under the active budget."""
        raise self._unsupported("general_necessary_reasons")

    def general_sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        """The maximal boxes of each AXp of :meth:`sufficient_reasons` that hold no input
        :meth:`box_counterexample` finds (:func:`rfexplain.engines.general.general_sufficient`)."""
        if "general_sufficient_reasons" not in self.queries:
            raise self._unsupported("general_sufficient_reasons")
        axps = self.sufficient_reasons(instance, budget)
        return general_sufficient(self.forest, instance, axps, partial(self.box_counterexample, instance), budget)

    def general_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        """The maximal flip boxes of each CXp of :meth:`necessary_reasons`, checked by
        :meth:`box_example` (:func:`rfexplain.engines.general.general_necessary`)."""
        if "general_necessary_reasons" not in self.queries:
            raise self._unsupported("general_necessary_reasons")
        cxps = (reason.features for reason in self.necessary_reasons(instance, budget))
        return general_necessary(
            self.forest,
            instance,
            cxps,
            partial(self.box_example, instance),
            partial(self.box_counterexample, instance),
            budget,
        )

    def shortest_flips(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        """The general necessary reasons of the minimum CXps, found as minimum hitting sets of the
        canonical AXps of :meth:`sufficient_reason` checked by :meth:`box_counterexample`
        (:func:`rfexplain.engines.general.minimum_flip_sets`)."""
        if "shortest_flips" not in self.queries:
            raise self._unsupported("shortest_flips")
        cxps = minimum_flip_sets(
            instance,
            self.forest.states_per_feature,
            partial(self.box_counterexample, instance),
            partial(self.sufficient_reason, instance),
            budget,
        )
        return general_necessary(
            self.forest,
            instance,
            cxps,
            partial(self.box_example, instance),
            partial(self.box_counterexample, instance),
            budget,
        )

    def close(self) -> None:
        """Release solver resources; the default has none."""

    def __enter__(self) -> EngineBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
