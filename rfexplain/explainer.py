"""The user-facing facade: :class:`Explainer`, which binds a forest to an engine and makes
:class:`~rfexplain.decision.Decision` objects (re-exported here with :class:`SoftVoteWarning`).

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

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from rfexplain.batch import BatchRecord, explain_many
from rfexplain.core.budget import Budget
from rfexplain.core.forest import Forest
from rfexplain.core.pyvalues import to_python
from rfexplain.decision import Decision, SoftVoteWarning, soft_vote_differs
from rfexplain.engines.base import Instance
from rfexplain.engines.registry import engine_class

__all__ = ["Explainer", "Decision", "SoftVoteWarning"]


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
    timeout : float, optional
        Seconds allowed for building the engine (:class:`~rfexplain.core.budget.BudgetExpired`
        past them). The circuit engine compiles each class formula at its first query, within
        that query's own ``timeout=``.
    **options
        Passed to the engine (e.g. ``solver=`` and ``card=`` for ``"sat"``).
    """

    def __init__(
        self,
        model_or_forest: Any,
        engine: str = "sat",
        *,
        feature_names: Any = None,
        timeout: float | None = None,
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
        with Budget(timeout=timeout).active() as budget:
            self.engine = engine_class(engine)(self.forest, **options)
            budget.check(f"building the {engine} engine")

    def explain(self, x: Any) -> Decision:
        """The decision on one instance (array, list or pandas row), ready to be queried."""
        instance = Instance.of(self.forest, x)
        sklearn_prediction = None
        if self.model is not None:
            predicted = np.asarray(self.model.predict(np.asarray([instance.values], dtype=np.float32)))[0]
            sklearn_prediction = to_python(predicted)
            ours = self.forest.classes[instance.prediction]
            if soft_vote_differs(sklearn_prediction, ours):
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
    ) -> list[BatchRecord] | Any:
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
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> model = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
        >>> explainer = Explainer(model, engine="sat")
        >>> records = explainer.explain_many(X[:3], "necessary_reasons", n_jobs=1, limit=5)
        >>> [len(r.result) for r in records if r.ok]
        [1, 1, 1]
        """
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

    def __enter__(self) -> Explainer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Explainer({self.forest!r}, engine={self.engine_name!r})"
