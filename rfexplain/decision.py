"""The forest's decision on one instance: :class:`Decision`, the object every query is asked of.

Its query methods follow :data:`rfexplain.core.queries.QUERY_TABLE`: single answers are passed
through from the engine, enumerations are wrapped in an
:class:`~rfexplain.core.budget.Enumeration` with their ``limit`` and ``timeout``, and
:meth:`Decision.ask` answers any query by name. Also here: :class:`SoftVoteWarning` and the
check behind it, used by both :class:`~rfexplain.Explainer` and the batch runner.

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> from rfexplain import Explainer
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
>>> decision = Explainer(model, engine="oracle").explain(X[0])
>>> decision.ask("robustness") == decision.robustness()
True
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from rfexplain.core.budget import Budget, Enumeration
from rfexplain.core.domain import restrict
from rfexplain.core.errors import InvalidTargetError, QueryArgumentError
from rfexplain.core.forest import Forest
from rfexplain.core.pyvalues import to_python
from rfexplain.core.queries import Kind, query
from rfexplain.core.reasons import Reason
from rfexplain.engines.base import Engine, Instance, ReasonFormula, canonical_order
from rfexplain.engines.registry import engine_class
from rfexplain.progress import StepProgress

__all__ = ["Decision", "SoftVoteWarning", "InputRoundingWarning", "Explaining", "hold_immutable", "soft_vote_differs"]


class SoftVoteWarning(UserWarning):
    """scikit-learn's ``predict`` (soft vote) decides the explained instance differently from the
    hard majority vote explained with ``vote="hard"``."""


class InputRoundingWarning(UserWarning):
    """A model comparing float64 inputs (``HistGradientBoostingClassifier``, LightGBM) decides the
    instance as given differently from its float32 rounding, which is what is explained: a value
    lies just above a threshold and rounds onto it (docs/design.md, section 1)."""


def soft_vote_differs(sklearn_prediction: Any, prediction: Any) -> bool:
    """Whether scikit-learn's own prediction is known and differs from the explained one."""
    if sklearn_prediction is None or prediction is None:
        return False
    return bool(to_python(sklearn_prediction) != to_python(prediction))


class Explaining(Protocol):
    """What a :class:`Decision` needs of the explainer that made it: the forest and the engine."""

    forest: Forest
    engine: Engine
    engine_name: str


@dataclass
class _Held:
    """The forest with the immutable features held at one instance's states, and its engine."""

    forest: Forest
    engine: Engine
    engine_name: str
    #: the memory budget of its queries (the explainer's)
    max_memory: int | str | None = "default"


class Decision:
    """The forest's decision on one instance and every question one can ask about it.

    Same question, same answer: :meth:`sufficient_reason` and :meth:`necessary_reason` are
    canonical (defined by a deletion in a feature order, see each), so every engine, a fresh or a
    warm explainer, any ``n_jobs`` or chunking of ``explain_many`` give the same reason. The
    enumerations give the same *set* of reasons on every engine, but their order (and hence the
    first item, e.g. with ``limit=1``) is canonical only on the ``"circuit"`` and ``"oracle"``
    engines, which compute every reason first and yield them by (size, feature bit set). The
    ``"sat"`` engine yields reasons as its hitting-set or MaxSAT search finds them, which depends
    on the solver's state; sorting them would mean computing all of them first, which is what
    makes the enumerations affordable on large forests. For one canonical shortest reason, sort
    a complete ``shortest_sufficient_reasons()`` by ``(len(r), sorted(r.features))``.

    Attributes
    ----------
    prediction : label
        The class (as in ``classes_``) decided under the forest's vote mode (soft or hard), ties
        to the lowest index.
    prediction_index : int
        Its index in ``classes_``.
    sklearn_prediction : label or None
        What the scikit-learn model's own ``predict`` says, when a model was given.
    """

    def __init__(self, explainer: Explaining, instance: Instance, sklearn_prediction: Any = None) -> None:
        self.explainer = explainer
        #: Whether a long single-answer query draws a step bar (the explainer's ``progress``;
        #: ``None``: when stderr is a terminal). Batches and reports, which draw their own bar, turn it off.
        self.progress: bool | None = getattr(explainer, "progress", False)
        self.forest = explainer.forest
        self.engine = explainer.engine
        self.instance = instance
        self.prediction_index = instance.prediction
        self.prediction = self.forest.classes[instance.prediction]
        self.sklearn_prediction = sklearn_prediction
        #: With immutable features: the decision on the forest holding them fixed, which answers
        #: the queries about changes (``Query.changes``).
        self.fixed: Decision | None = None

    @property
    def values(self) -> tuple[float, ...]:
        """The instance's values, one per feature of the forest (a category as its state index)."""
        return self.instance.values

    @property
    def states(self) -> tuple[int, ...]:
        """The instance's state of each feature (the cell between two thresholds, or a category)."""
        return self.instance.states

    # ---------------------------------------------------------------- any query by name
    def ask(
        self,
        name: str,
        *,
        target: Any = None,
        limit: int | None = None,
        timeout: float | None = None,
        order: Sequence[int | str] | None = None,
    ) -> Any:
        """Answer the query called ``name`` (see :data:`~rfexplain.core.queries.QUERY_TABLE`).

        ``target`` is required by the queries that take one and refused by the others; ``limit``
        applies to enumerations only; ``order`` (a permutation of the features, by index or name)
        to the single-reason queries only. ``timeout`` (seconds) bounds every query: an
        enumeration then ends with ``complete == False``, any other query raises
        :class:`~rfexplain.core.budget.BudgetExpired`.

        Parameters
        ----------
        name : str
            A query name (``"sufficient_reason"``, ``"necessary_reasons"``, ``"robustness"``, ...).
        target : label, optional
            The class to reach (contrastive queries only).
        limit : int, optional
            Most results (enumerations only).
        timeout : float, optional
            Seconds.
        order : sequence of int or str, optional
            A permutation of the features (single-reason queries only).

        Returns
        -------
        Reason, Reason or None, int or float, Enumeration or formula
            What the query's method below returns.
        """
        spec = query(name)
        if spec.changes and self.fixed is not None:
            self.fixed.progress = self.progress  # the held decision follows this one's setting
            return self.fixed.ask(name, target=target, limit=limit, timeout=timeout, order=order)
        if spec.takes_target and target is None:
            raise QueryArgumentError(f"{name} needs a target class")
        if not spec.takes_target and target is not None:
            raise QueryArgumentError(f"{name} takes no target")
        if not spec.enumerates and limit is not None:
            raise QueryArgumentError(f"{name} takes no limit (it answers one result)")
        if spec.kind is not Kind.REASON and order is not None:
            raise QueryArgumentError(f"{name} takes no order (only the single-reason queries do)")
        budget = self._budget(limit, timeout)
        args: tuple[Any, ...] = ()
        if spec.takes_target:
            index = self.forest.class_index(target)
            if index == self.prediction_index:
                raise InvalidTargetError(f"target must differ from the prediction {self.prediction!r}")
            args = (index,)
        method = getattr(self.engine, name)
        if spec.enumerates:
            return Enumeration(lambda b: method(self.instance, *args, b), budget)
        if spec.kind is Kind.REASON and order is not None:  # engines default to index order
            args = (canonical_order(self.forest, order),)
        with self._answering(name, budget):
            answer = method(self.instance, *args)
        if spec.kind is Kind.NUMBER and answer != math.inf:
            return int(answer)
        return answer

    def _budget(self, limit: int | None, timeout: float | None) -> Budget:
        return Budget(limit=limit, timeout=timeout, max_memory=getattr(self.explainer, "max_memory", "default"))

    @contextlib.contextmanager
    def _answering(self, name: str, budget: Budget) -> Iterator[None]:
        """The budget of one query active, with its progress bar, while the engine answers it."""
        bar = StepProgress(f"{name} ({self.explainer.engine_name})", enabled=self.progress)
        with budget.active(), bar.following(budget):
            yield

    # ---------------------------------------------------------------- single answers
    def sufficient_reason(self, order: Sequence[int | str] | None = None, timeout: float | None = None) -> Reason:
        """One sufficient reason (AXp): a subset-minimal set of the instance's feature values
        that guarantees the decision.

        The answer is canonical: the AXp that deletion in ``order`` produces (start from every
        feature; drop each feature in turn whenever the features left still guarantee the
        decision). ``order`` is a permutation of the features (indices or names), by default
        index order. Every engine gives this same reason, whatever it explained before.
        ``timeout`` (seconds): :class:`~rfexplain.core.budget.BudgetExpired` past it.

        Parameters
        ----------
        order : sequence of int or str, optional
            A permutation of the features (indices or names) for the canonical deletion; by
            default index order.
        timeout : float, optional
            Seconds; past them the query raises :class:`~rfexplain.core.budget.BudgetExpired`.

        Returns
        -------
        Reason
            A conjunction of literals (kind ``"sufficient"``), with witnesses.
        """
        # the engine asked directly (what :meth:`ask` does for this query, without its dispatch)
        args = () if order is None else (canonical_order(self.forest, order),)
        with self._answering("sufficient_reason", self._budget(None, timeout)):
            return self.engine.sufficient_reason(self.instance, *args)

    def inflated_sufficient_reason(
        self, order: Sequence[int | str] | None = None, timeout: float | None = None
    ) -> Reason:
        """The canonical sufficient reason (:meth:`sufficient_reason`, in ``order``) with each
        literal widened as far as the decision allows (Izza et al., AAAI 2024): a numeric
        feature's interval reaches over as many thresholds below, then above, as keep the reason
        sufficient, a categorical feature takes every category it can, feature by feature in
        ``order``. The result is maximal (no bound can move one threshold further, no category
        can be added; its witnesses show it), canonical (every engine gives it) and reads as
        ranges a person can act on (``worst radius >= 16.3`` rather than a cell
        ``16.315 <= worst radius <= 16.49``); a bound that reaches the end of a feature's range
        prints one-sided. ``timeout`` (seconds): :class:`~rfexplain.core.budget.BudgetExpired`
        past it.

        Parameters
        ----------
        order : sequence of int or str, optional
            A permutation of the features (indices or names) for the canonical deletion; by
            default index order.
        timeout : float, optional
            Seconds; past them the query raises :class:`~rfexplain.core.budget.BudgetExpired`.

        Returns
        -------
        Reason
            Kind ``"sufficient"``, ``inflated=True``, with witnesses.
        """
        return self.ask("inflated_sufficient_reason", order=order, timeout=timeout)

    def necessary_reason(self, order: Sequence[int | str] | None = None, timeout: float | None = None) -> Reason | None:
        """One necessary reason (CXp), or ``None`` when no change of any features can flip the
        decision.

        The answer is canonical: start with every feature free to change, then fix each feature
        in ``order`` (default: index order) back to the instance's value whenever the decision
        can still be flipped; the features left free are the reason. Every engine gives this
        same reason, whatever it explained before. ``timeout`` (seconds):
        :class:`~rfexplain.core.budget.BudgetExpired` past it.

        Parameters
        ----------
        order : sequence of int or str, optional
            A permutation of the features (indices or names) for the canonical deletion; by
            default index order.
        timeout : float, optional
            Seconds; past them the query raises :class:`~rfexplain.core.budget.BudgetExpired`.

        Returns
        -------
        Reason or None
            A disjunction of literals (kind ``"necessary"``) with a witness, or ``None``.
        """
        return self.ask("necessary_reason", order=order, timeout=timeout)

    def robustness(self, timeout: float | None = None) -> float:
        """Minimum number of features whose change flips the decision.

        Parameters
        ----------
        timeout : float, optional
            Seconds; past them the query raises :class:`~rfexplain.core.budget.BudgetExpired`.

        Returns
        -------
        int or float
            The number, or ``math.inf`` when no change of any features flips the decision.
        """
        return self.ask("robustness", timeout=timeout)

    def complete_reason(self, timeout: float | None = None) -> ReasonFormula:
        """The complete reason (a formula over state vectors; its form depends on the engine).

        Parameters
        ----------
        timeout : float, optional
            Seconds; past them the query raises :class:`~rfexplain.core.budget.BudgetExpired`.

        Returns
        -------
        formula
            The engine's formula (a circuit, a CNF, ...); ``str()`` prints it.
        """
        return self.ask("complete_reason", timeout=timeout)

    def general_reason(self, timeout: float | None = None) -> ReasonFormula:
        """The general reason (a formula over state vectors; its form depends on the engine).

        Parameters
        ----------
        timeout : float, optional
            Seconds; past them the query raises :class:`~rfexplain.core.budget.BudgetExpired`.

        Returns
        -------
        formula
            The engine's formula; ``str()`` prints it.
        """
        return self.ask("general_reason", timeout=timeout)

    # ---------------------------------------------------------------- enumerations
    def sufficient_reasons(self, limit: int | None = None, timeout: float | None = None) -> Enumeration[Reason]:
        """Every sufficient reason (AXp), as an :class:`~rfexplain.core.budget.Enumeration`.

        Parameters
        ----------
        limit : int, optional
            Stop after this many results (``complete`` is then ``False``, ``stopped_by`` ``"limit"``).
        timeout : float, optional
            Seconds; past them the enumeration ends with ``complete == False`` and
            ``stopped_by == "timeout"``.

        Returns
        -------
        Enumeration of Reason
            Lazy: each reason is computed when iterated (or shown).
        """
        return self.ask("sufficient_reasons", limit=limit, timeout=timeout)

    def necessary_reasons(self, limit: int | None = None, timeout: float | None = None) -> Enumeration[Reason]:
        """Every necessary reason (CXp).

        Parameters
        ----------
        limit : int, optional
            Stop after this many results (``complete`` is then ``False``, ``stopped_by`` ``"limit"``).
        timeout : float, optional
            Seconds; past them the enumeration ends with ``complete == False`` and
            ``stopped_by == "timeout"``.

        Returns
        -------
        Enumeration of Reason
            Lazy: each reason is computed when iterated (or shown).
        """
        return self.ask("necessary_reasons", limit=limit, timeout=timeout)

    def shortest_sufficient_reasons(
        self, limit: int | None = None, timeout: float | None = None
    ) -> Enumeration[Reason]:
        """Every sufficient reason of minimum size.

        Parameters
        ----------
        limit : int, optional
            Stop after this many results (``complete`` is then ``False``, ``stopped_by`` ``"limit"``).
        timeout : float, optional
            Seconds; past them the enumeration ends with ``complete == False`` and
            ``stopped_by == "timeout"``.

        Returns
        -------
        Enumeration of Reason
            Lazy: each reason is computed when iterated (or shown).
        """
        return self.ask("shortest_sufficient_reasons", limit=limit, timeout=timeout)

    def shortest_necessary_reasons(self, limit: int | None = None, timeout: float | None = None) -> Enumeration[Reason]:
        """Every necessary reason of minimum size (their size is the robustness).

        Parameters
        ----------
        limit : int, optional
            Stop after this many results (``complete`` is then ``False``, ``stopped_by`` ``"limit"``).
        timeout : float, optional
            Seconds; past them the enumeration ends with ``complete == False`` and
            ``stopped_by == "timeout"``.

        Returns
        -------
        Enumeration of Reason
            Lazy: each reason is computed when iterated (or shown).
        """
        return self.ask("shortest_necessary_reasons", limit=limit, timeout=timeout)

    def contrastive_reasons(
        self, target: Any, limit: int | None = None, timeout: float | None = None
    ) -> Enumeration[Reason]:
        """Every subset-minimal set of features whose change can make the forest predict ``target``.

        Parameters
        ----------
        target : label
            The class to reach (one of ``classes``, not the prediction).
        limit : int, optional
            Stop after this many results (``complete`` is then ``False``, ``stopped_by`` ``"limit"``).
        timeout : float, optional
            Seconds; past them the enumeration ends with ``complete == False`` and
            ``stopped_by == "timeout"``.

        Returns
        -------
        Enumeration of Reason
            Lazy: each reason is computed when iterated (or shown).
        """
        return self.ask("contrastive_reasons", target=target, limit=limit, timeout=timeout)

    def general_sufficient_reasons(self, limit: int | None = None, timeout: float | None = None) -> Enumeration[Reason]:
        """Every general sufficient reason (variable-minimal prime implicant of the general reason).

        Parameters
        ----------
        limit : int, optional
            Stop after this many results (``complete`` is then ``False``, ``stopped_by`` ``"limit"``).
        timeout : float, optional
            Seconds; past them the enumeration ends with ``complete == False`` and
            ``stopped_by == "timeout"``.

        Returns
        -------
        Enumeration of Reason
            Lazy: each reason is computed when iterated (or shown).
        """
        return self.ask("general_sufficient_reasons", limit=limit, timeout=timeout)

    def general_necessary_reasons(self, limit: int | None = None, timeout: float | None = None) -> Enumeration[Reason]:
        """Every general necessary reason (variable-minimal prime implicate of the general reason).

        Parameters
        ----------
        limit : int, optional
            Stop after this many results (``complete`` is then ``False``, ``stopped_by`` ``"limit"``).
        timeout : float, optional
            Seconds; past them the enumeration ends with ``complete == False`` and
            ``stopped_by == "timeout"``.

        Returns
        -------
        Enumeration of Reason
            Lazy: each reason is computed when iterated (or shown).
        """
        return self.ask("general_necessary_reasons", limit=limit, timeout=timeout)

    def shortest_flips(self, limit: int | None = None, timeout: float | None = None) -> Enumeration[Reason]:
        """All shortest flips, as the shortest general necessary reasons: every way of moving each
        feature of one of them outside its literal flips the decision, at minimum distance.

        Parameters
        ----------
        limit : int, optional
            Stop after this many results (``complete`` is then ``False``, ``stopped_by`` ``"limit"``).
        timeout : float, optional
            Seconds; past them the enumeration ends with ``complete == False`` and
            ``stopped_by == "timeout"``.

        Returns
        -------
        Enumeration of Reason
            Lazy: each reason is computed when iterated (or shown).
        """
        return self.ask("shortest_flips", limit=limit, timeout=timeout)

    def plot(self, **options: Any) -> Any:
        """The decision's reasons on each feature's own axis, in scikit-learn's display style
        (needs ``rfexplain[plot]``): :meth:`rfexplain.viz.DecisionDisplay.from_decision`.

        Parameters
        ----------
        **options
            Those of :meth:`~rfexplain.viz.DecisionDisplay.from_decision`: ``ax`` (an Axes whose
            area holds the rows, or one Axes per row; by default a new pyplot figure, shown
            inline in a notebook), ``features`` (``"all"``, or names or indices; by default the
            features the reasons mention), ``general``, ``flips``, ``layers``, ``title``,
            ``figsize``.

        Returns
        -------
        DecisionDisplay
            With ``figure_``, ``axes_`` (one Axes per row) and ``ax_``.
        """
        from rfexplain.viz.plot import plot_decision

        return plot_decision(self, **options)

    def describe(self, *, inflated: bool = True) -> str:
        """The decision in words: the prediction with its probability (or vote share) and margin,
        why (the sufficient reason) and the actions that flip it. ``str(decision)`` is
        ``decision.describe()``. Each answer is asked once and remembered for the decision's
        displays (:func:`rfexplain.viz.shown.shown_answer`).

        Parameters
        ----------
        inflated : bool, default True
            Give the inflated sufficient reason (:meth:`inflated_sufficient_reason`: ranges a
            person can act on); ``False``: the canonical one, each feature held to its cell
            (:meth:`sufficient_reason`).

        Returns
        -------
        str
            Three lines: ``prediction 'b' with probability 0.93 (margin 0.86 over 'a') (sat
            engine)``, ``because: ...``, ``to get 'a': ...`` (or ``nothing can flip the decision``).
        """
        from rfexplain.viz.notebook import decision_text

        return decision_text(self, inflated=inflated)

    def __str__(self) -> str:
        return self.describe()

    def _repr_html_(self) -> str:
        from rfexplain.viz.notebook import decision_html

        return decision_html(self)

    def __repr__(self) -> str:
        return f"Decision(prediction={self.prediction!r}, engine={self.explainer.engine_name!r})"


def hold_immutable(decision: Decision, immutable: Sequence[int], options: Mapping[str, Any]) -> None:
    """Make ``decision`` answer the queries about changes (``Query.changes``: necessary and
    contrastive reasons, robustness, flips) with the features ``immutable`` held at its
    instance's states: on the forest restricted to them, with an engine of the same kind built
    with ``options`` (:attr:`Decision.fixed`); nothing to do without such features."""
    if not immutable:
        return
    instance = decision.instance
    fixed = restrict(decision.forest, fixed={f: instance.states[f] for f in immutable})
    name = decision.explainer.engine_name
    memory = getattr(decision.explainer, "max_memory", "default")
    held = _Held(fixed, engine_class(name)(fixed, **options), name, memory)
    decision.fixed = Decision(held, Instance.of(fixed, np.asarray([instance.values])), decision.sklearn_prediction)
