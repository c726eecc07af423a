"""The user-facing facade: :class:`Explainer` and :class:`Decision` (DESIGN.md section 3).

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
>>> explainer = Explainer(model, engine="oracle")
>>> decision = explainer.explain(X[0])
>>> decision.prediction
0
>>> reason = decision.sufficient_reason()
>>> reason.kind
'sufficient'
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from rfexplain.core.budget import Budget, Enumeration
from rfexplain.engines.base import Instance, ReasonFormula
from rfexplain.engines.registry import engine_class
from rfexplain.core.forest import Forest
from rfexplain.core.reasons import Reason

if TYPE_CHECKING:  # pragma: no cover
    from rfexplain.batch import BatchRecord

__all__ = ["Explainer", "Decision", "SoftVoteWarning"]


class SoftVoteWarning(UserWarning):
    """scikit-learn's ``predict`` (soft vote) decides the explained instance differently from the
    hard majority vote that rfexplain explains."""


class Explainer:
    """Explains the decisions of one forest with one engine.

    Parameters
    ----------
    model_or_forest : fitted scikit-learn classifier or Forest
        ``RandomForestClassifier``, ``ExtraTreesClassifier``, ``DecisionTreeClassifier`` (or a
        pipeline ending in one with no transforming step), or a :class:`~rfexplain.Forest`.
    engine : str
        A registered engine name: ``"sat"``, ``"circuit"``, ``"oracle"`` or a plug-in's.
    feature_names : sequence of str, optional
        Names used in rendered reasons (defaults to the model's ``feature_names_in_``).
    **options
        Passed to the engine (e.g. ``solver=`` and ``card=`` for ``"sat"``).
    """

    def __init__(
        self,
        model_or_forest: Any,
        engine: str = "sat",
        *,
        feature_names: Any = None,
        **options: Any,
    ) -> None:
        if isinstance(model_or_forest, Forest):
            self.forest = model_or_forest
            self.model = None
        else:
            self.forest = Forest.from_sklearn(model_or_forest, feature_names=feature_names)
            self.model = model_or_forest
        self.engine_name = engine
        self.options = dict(options)
        self.engine = engine_class(engine)(self.forest, **options)

    def explain(self, x: Any) -> "Decision":
        """The decision on one instance (array, list or pandas row), ready to be queried."""
        instance = Instance.of(self.forest, x)
        sklearn_prediction = None
        if self.model is not None:
            sklearn_prediction = np.asarray(self.model.predict(np.asarray([instance.values], dtype=np.float32)))[0]
            if isinstance(sklearn_prediction, np.generic):
                sklearn_prediction = sklearn_prediction.item()
            ours = self.forest.classes[instance.prediction]
            if sklearn_prediction != ours:
                warnings.warn(
                    f"scikit-learn's predict (soft vote) gives {sklearn_prediction!r} on this instance but the "
                    f"hard majority vote explained here gives {ours!r}",
                    SoftVoteWarning,
                    stacklevel=2,
                )
        return Decision(self, instance, sklearn_prediction)

    def explain_many(
        self,
        X: Any,
        query: str = "sufficient_reason",
        *,
        n_jobs: int | None = None,
        timeout: float | None = None,
        progress: bool | None = None,
        indices: Sequence[int] | None = None,
        chunk_size: int | None = None,
        backend: Any = None,
        as_frame: bool = False,
        **query_args: Any,
    ) -> "list[BatchRecord] | Any":
        """Answer one Decision query on many instances, in parallel (see :mod:`rfexplain.batch`).

        Parameters
        ----------
        X : 2-D array-like or DataFrame
            The instances, one per row.
        query : str
            A Decision query name (``"sufficient_reason"``, ``"necessary_reasons"``,
            ``"robustness"``, ``"contrastive_reasons"``, ...).
        n_jobs : int, optional
            joblib's ``n_jobs`` (``-1``: every core). With one job the queries run in this
            process with this explainer's engine; otherwise every worker builds the engine once
            and reuses it. The active joblib backend is used (processes by default; a Dask
            cluster inside ``joblib.parallel_config(backend="dask")``).
        timeout : float, optional
            Per-instance wall-clock budget in seconds (cooperative; see :mod:`rfexplain.batch`).
        progress : bool, optional
            Show a progress bar on stderr; by default only when stderr is a terminal.
        indices : sequence of int, optional
            Distinct ids reported in the records instead of the row numbers.
        chunk_size : int, optional
            Instances per task (default: about four tasks per worker, at most 64 instances).
        backend : str or joblib backend, optional
            Force a joblib backend instead of the active one.
        as_frame : bool
            Return a pandas DataFrame (:func:`rfexplain.viz.records_to_frame`, needs
            ``rfexplain[frames]``) instead of the records.
        **query_args
            The query's own arguments (``limit=``, ``target=``).

        Returns
        -------
        list of BatchRecord
            One record per instance, in the order of ``X``; a failure is recorded on its
            instance (``error``) and never loses the others.

        Examples
        --------
        >>> records = explainer.explain_many(X_test, "necessary_reasons", n_jobs=2, limit=5)  # doctest: +SKIP
        >>> [len(r.result) for r in records if r.ok]                                            # doctest: +SKIP
        """
        from rfexplain.batch import explain_many

        records = explain_many(
            self,
            X,
            query,
            n_jobs=n_jobs,
            timeout=timeout,
            progress=progress,
            indices=indices,
            chunk_size=chunk_size,
            backend=backend,
            **query_args,
        )
        if as_frame:
            from rfexplain.viz.frames import records_to_frame

            return records_to_frame(records)
        return records

    def report(self, X: Any, path: Any, **options: Any) -> Any:
        """Write a self-contained HTML report explaining every row of ``X`` to ``path``
        (see :func:`rfexplain.viz.write_report` for ``queries=``, ``compare_engine=``, ...)."""
        from rfexplain.viz.report import write_report

        return write_report(self, X, path, **options)

    def close(self) -> None:
        """Release the engine's resources (solvers kept open for the explainer's life)."""
        self.engine.close()

    def __enter__(self) -> "Explainer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Explainer({self.forest!r}, engine={self.engine_name!r})"


class Decision:
    """The forest's decision on one instance and every question one can ask about it.

    Attributes
    ----------
    prediction : label
        The class (as in ``classes_``) decided by hard majority, ties to the lowest index.
    prediction_index : int
        Its index in ``classes_``.
    sklearn_prediction : label or None
        What the scikit-learn model's own ``predict`` says (soft vote), when a model was given.
    """

    def __init__(self, explainer: Explainer, instance: Instance, sklearn_prediction: Any = None) -> None:
        self.explainer = explainer
        self.forest = explainer.forest
        self.engine = explainer.engine
        self.instance = instance
        self.prediction_index = instance.prediction
        self.prediction = self.forest.classes[instance.prediction]
        self.sklearn_prediction = sklearn_prediction

    @property
    def values(self) -> tuple[float, ...]:
        return self.instance.values

    @property
    def states(self) -> tuple[int, ...]:
        return self.instance.states

    # ---------------------------------------------------------------- single answers
    def sufficient_reason(self) -> Reason:
        """One sufficient reason (AXp): a subset-minimal set of the instance's feature values
        that guarantees the decision."""
        return self.engine.sufficient_reason(self.instance)

    def necessary_reason(self) -> Reason | None:
        """One necessary reason (CXp), or ``None`` when no change of any features can flip the
        decision."""
        return self.engine.necessary_reason(self.instance)

    def robustness(self) -> float:
        """Minimum number of features whose change flips the decision; ``math.inf`` if none does."""
        value = self.engine.robustness(self.instance)
        return value if value == math.inf else int(value)

    def complete_reason(self) -> ReasonFormula:
        """The complete reason (a formula over state vectors; its form depends on the engine)."""
        return self.engine.complete_reason(self.instance)

    def general_reason(self) -> ReasonFormula:
        """The general reason (a formula over state vectors; its form depends on the engine)."""
        return self.engine.general_reason(self.instance)

    # ---------------------------------------------------------------- enumerations
    def _enumerate(self, source: Any, limit: int | None, timeout: float | None) -> Enumeration[Reason]:
        return Enumeration(source, Budget(limit=limit, timeout=timeout))

    def sufficient_reasons(self, limit: int | None = None, timeout: float | None = None) -> Enumeration[Reason]:
        """Every sufficient reason (AXp), as an :class:`~rfexplain.core.budget.Enumeration`."""
        return self._enumerate(lambda b: self.engine.sufficient_reasons(self.instance, b), limit, timeout)

    def necessary_reasons(self, limit: int | None = None, timeout: float | None = None) -> Enumeration[Reason]:
        """Every necessary reason (CXp)."""
        return self._enumerate(lambda b: self.engine.necessary_reasons(self.instance, b), limit, timeout)

    def shortest_sufficient_reasons(
        self, limit: int | None = None, timeout: float | None = None
    ) -> Enumeration[Reason]:
        """Every sufficient reason of minimum size."""
        return self._enumerate(lambda b: self.engine.shortest_sufficient_reasons(self.instance, b), limit, timeout)

    def shortest_necessary_reasons(
        self, limit: int | None = None, timeout: float | None = None
    ) -> Enumeration[Reason]:
        """Every necessary reason of minimum size (their size is the robustness)."""
        return self._enumerate(lambda b: self.engine.shortest_necessary_reasons(self.instance, b), limit, timeout)

    def contrastive_reasons(
        self, target: Any, limit: int | None = None, timeout: float | None = None
    ) -> Enumeration[Reason]:
        """Every subset-minimal set of features whose change can make the forest predict ``target``."""
        index = self.forest.class_index(target)
        if index == self.prediction_index:
            raise ValueError(f"target must differ from the prediction {self.prediction!r}")
        return self._enumerate(lambda b: self.engine.contrastive_reasons(self.instance, index, b), limit, timeout)

    def general_sufficient_reasons(
        self, limit: int | None = None, timeout: float | None = None
    ) -> Enumeration[Reason]:
        """Every general sufficient reason (variable-minimal prime implicant of the general reason)."""
        return self._enumerate(lambda b: self.engine.general_sufficient_reasons(self.instance, b), limit, timeout)

    def general_necessary_reasons(
        self, limit: int | None = None, timeout: float | None = None
    ) -> Enumeration[Reason]:
        """Every general necessary reason (variable-minimal prime implicate of the general reason)."""
        return self._enumerate(lambda b: self.engine.general_necessary_reasons(self.instance, b), limit, timeout)

    def shortest_flips(self, limit: int | None = None, timeout: float | None = None) -> Enumeration[Reason]:
        """All shortest flips, as the shortest general necessary reasons: every way of moving each
        feature of one of them outside its literal flips the decision, at minimum distance."""
        return self._enumerate(lambda b: self.engine.shortest_flips(self.instance, b), limit, timeout)

    def plot(self, **options: Any) -> Any:
        """The decision's reasons on each feature's own axis: a matplotlib ``Figure`` (needs
        ``rfexplain[plot]``; see :func:`rfexplain.viz.plot_decision`)."""
        from rfexplain.viz.plot import plot_decision

        return plot_decision(self, **options)

    def _repr_html_(self) -> str:
        from rfexplain.viz.notebook import decision_html

        return decision_html(self)

    def __repr__(self) -> str:
        return f"Decision(prediction={self.prediction!r}, engine={self.explainer.engine_name!r})"
