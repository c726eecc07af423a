"""Explaining a regression forest's prediction: :class:`RegressionExplainer`.

A question about a regression forest names a band: "why is the prediction within ``[a, b]``",
"at least ``t``", "at most ``t``" (:class:`~rfexplain.regression.band.Band`); by default the band
is the prediction ``± delta``. The band's classifier (:meth:`RegressionForest.band_forest
<rfexplain.regression.model.RegressionForest.band_forest>`, classes ``inside``/``below``/
``above``) is explained by any engine that decides an additive vote (``"sat"``, ``"oracle"``), so
a sufficient reason keeps the prediction inside the band whatever the free features do (missing
values included, for a model read with them), a necessary reason is a set of features whose
change can push it out, and robustness and shortest flips count the features that must change
to leave it. :meth:`RegressionDecision.prediction_range` answers "how far can the prediction move
if only these features change" exactly (:mod:`rfexplain.regression.range_search`).

Example
-------
>>> from sklearn.datasets import load_diabetes
>>> from sklearn.ensemble import RandomForestRegressor
>>> X, y = load_diabetes(return_X_y=True)
>>> model = RandomForestRegressor(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
>>> explainer = RegressionExplainer(model, engine="oracle")
>>> decision = explainer.explain(X[0], at_least=100.0)
>>> decision.prediction, decision.band
('inside', Band(low=100.0, high=None))
>>> reason = decision.sufficient_reason()
>>> decision.prediction_range(free=reason.features).low >= 100
True
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from rfexplain.core.budget import Budget
from rfexplain.core.errors import QueryArgumentError
from rfexplain.core.instances import model_input
from rfexplain.core.records import BatchRecord
from rfexplain.decision import Decision
from rfexplain.engines.base import Instance
from rfexplain.regression.band import Band, asked_band
from rfexplain.regression.batch import BandBatch
from rfexplain.regression.model import RegressionForest
from rfexplain.regression.range_search import LeafBoxes, PredictionRange, prediction_range

__all__ = ["RegressionExplainer", "RegressionDecision", "DEFAULT_DELTA_FRACTION"]

#: The default half-width of the band around the prediction, as a fraction of the spread of the
#: forest's leaf values (largest minus smallest leaf value).
DEFAULT_DELTA_FRACTION = 0.1
#: How many bands' explainers a :class:`RegressionExplainer` keeps (the least recently asked go;
#: a decision already made keeps its own).
KEPT_BANDS = 8


class RegressionDecision(Decision):
    """The decision "is the prediction inside ``band``" on one instance (``prediction`` is
    ``"inside"``, ``"below"`` or ``"above"``), with every query of a :class:`Decision`, the exact
    prediction (``value``, a fraction; ``sklearn_value``, the model's own ``predict``) and
    :meth:`prediction_range`."""

    def __init__(
        self, explainer: Any, instance: Instance, owner: RegressionExplainer, band: Band, sklearn_value: float | None
    ) -> None:
        super().__init__(explainer, instance)
        self.band = band
        self.owner = owner
        #: The exact mean of the trees' leaf values on the instance.
        self.value: Fraction = owner.regression.exact_prediction(instance.states)
        self.sklearn_value = sklearn_value

    def prediction_range(self, free: Iterable[int | str], *, timeout: float | None = None) -> PredictionRange:
        """The exact lowest and highest prediction over the inputs that agree with the instance on
        every feature but ``free`` (indices or names), with inputs reaching them."""
        return self.owner.prediction_range(self.instance, free, timeout=timeout)


class RegressionExplainer:
    """Formal explanations of a fitted ``RandomForestRegressor``, ``ExtraTreesRegressor`` or
    ``DecisionTreeRegressor``.

    Parameters
    ----------
    model : fitted scikit-learn tree regressor (or a pipeline of nothing but one)
    engine : str
        An engine that decides an additive vote: ``"sat"`` (default) or ``"oracle"``.
    feature_names, missing
        As for :class:`~rfexplain.Explainer`.
    delta : float, optional
        The default band's half-width around the prediction; by default
        :data:`DEFAULT_DELTA_FRACTION` of the spread of the forest's leaf values.
    **options
        Passed to the engine.
    """

    def __init__(
        self,
        model: Any,
        engine: str = "sat",
        *,
        feature_names: Sequence[str] | None = None,
        missing: Any = "learned",
        delta: float | None = None,
        **options: Any,
    ) -> None:
        self.model = model
        self._setup(RegressionForest.from_sklearn(model, feature_names=feature_names, missing=missing), engine, delta)
        self.options = options

    @classmethod
    def from_forest(
        cls, regression: RegressionForest, engine: str = "sat", *, delta: float | None = None, **options: Any
    ) -> RegressionExplainer:
        """The explainer of a regression forest already read (no scikit-learn model: decisions
        have no ``sklearn_value``); a batch's workers build theirs this way."""
        explainer = cls.__new__(cls)
        explainer.model = None
        explainer._setup(regression, engine, delta)
        explainer.options = options
        return explainer

    def _setup(self, regression: RegressionForest, engine: str, delta: float | None) -> None:
        self.regression = regression
        self.forest = regression.base
        self.engine_name = engine
        low, high = regression.value_range()
        self.delta = float(delta) if delta is not None else DEFAULT_DELTA_FRACTION * (high - low)
        if not self.delta >= 0:
            raise QueryArgumentError(f"delta must be a non-negative number, got {delta!r}")
        self._explainers: dict[Band, Any] = {}

    @functools.cached_property
    def _boxes(self) -> LeafBoxes:
        return LeafBoxes(self.regression)

    def band_explainer(self, band: Band) -> Any:
        """The :class:`~rfexplain.Explainer` of the band's classifier, kept for the
        :data:`KEPT_BANDS` bands asked most recently (the default band moves with each row's
        prediction: a batch would otherwise keep one engine per row)."""
        from rfexplain.explainer import Explainer

        explainer = self._explainers.pop(band, None)
        if explainer is None:
            explainer = Explainer(self.regression.band_forest(band), self.engine_name, **self.options)
        self._explainers[band] = explainer  # the most recent last
        while len(self._explainers) > KEPT_BANDS:
            del self._explainers[next(iter(self._explainers))]
        return explainer

    def explain(
        self,
        x: Any,
        *,
        within: tuple[float, float] | None = None,
        at_least: float | None = None,
        at_most: float | None = None,
    ) -> RegressionDecision:
        """The decision "is the prediction on ``x`` inside the band": ``within=(a, b)``,
        ``at_least=t``, ``at_most=t`` (or both of the last two); by default within ``delta`` of
        the prediction."""
        instance = Instance.of(self.forest, x)
        band = self.band_of(instance, within=within, at_least=at_least, at_most=at_most)
        sklearn_value = None
        if self.model is not None:
            row = np.asarray([instance.values], dtype=np.float32)
            sklearn_value = float(np.asarray(self.model.predict(model_input(self.model, row)))[0])
        return self.decide(x, band, sklearn_value)

    def band_of(
        self,
        instance: Instance,
        *,
        within: tuple[float, float] | None = None,
        at_least: float | None = None,
        at_most: float | None = None,
    ) -> Band:
        """The band a question names (see :meth:`explain`); by default the instance's prediction
        ``± delta``."""
        band = asked_band(within, at_least, at_most)
        if band is not None:
            return band
        centre = float(self.regression.exact_prediction(instance.states))
        return Band(centre - self.delta, centre + self.delta)

    def decide(self, x: Any, band: Band, sklearn_value: float | None = None) -> RegressionDecision:
        """The decision "is the prediction on ``x`` inside ``band``" (``sklearn_value``: the
        model's own prediction, when known)."""
        explainer = self.band_explainer(band)
        return RegressionDecision(explainer, Instance.of(explainer.forest, x), self, band, sklearn_value)

    def explain_many(
        self,
        X: Any,
        query: str = "sufficient_reason",
        *,
        within: tuple[float, float] | None = None,
        at_least: float | None = None,
        at_most: float | None = None,
        as_frame: bool = False,
        **batch_args: Any,
    ) -> list[BatchRecord] | Any:
        """Ask ``query`` about the band of every row of ``X`` (the same band, or by default each
        row's prediction ``± delta``), in parallel: :meth:`rfexplain.Explainer.explain_many`'s
        batch (``n_jobs``, ``timeout``, ``progress``, ``indices``, ``chunk_size``, ``backend``,
        ``row_errors`` and the query's own arguments), each record with its ``band`` and, as
        ``prediction``, whether the prediction is ``"inside"``, ``"below"`` or ``"above"`` it.
        ``as_frame=True`` gives a DataFrame (:func:`rfexplain.viz.records_to_frame`)."""
        from rfexplain.batch import explain_many

        batch = BandBatch(self, within=within, at_least=at_least, at_most=at_most)
        records = explain_many(batch, X, query, **batch_args)
        if not as_frame:
            return records
        from rfexplain.viz.frames import records_to_frame

        index = X.index if hasattr(X, "iloc") and getattr(X, "ndim", 0) == 2 else None
        return records_to_frame(records, index=index)

    def iter_explain(
        self,
        X: Any,
        query: str = "sufficient_reason",
        *,
        within: tuple[float, float] | None = None,
        at_least: float | None = None,
        at_most: float | None = None,
        **batch_args: Any,
    ) -> Iterator[BatchRecord]:
        """:meth:`explain_many`'s records one at a time, as they finish (see
        :meth:`rfexplain.Explainer.iter_explain`)."""
        from rfexplain.batch import iter_explain

        batch = BandBatch(self, within=within, at_least=at_least, at_most=at_most)
        return iter_explain(batch, X, query, **batch_args)

    def close(self) -> None:
        """Close the engines of the bands kept (decisions made with them can no longer ask)."""
        for explainer in self._explainers.values():
            explainer.close()
        self._explainers.clear()

    def prediction_range(self, x: Any, free: Iterable[int | str], *, timeout: float | None = None) -> PredictionRange:
        """The exact range of the prediction over the inputs agreeing with ``x`` (raw values or an
        :class:`~rfexplain.engines.base.Instance`) on every feature but ``free``."""
        instance = x if isinstance(x, Instance) else Instance.of(self.forest, x)
        features = [self._index(f) for f in free]
        with Budget(timeout=timeout).active() as budget:
            return prediction_range(self.regression, self._boxes, instance.states, instance.values, features, budget)

    def _index(self, feature: int | str) -> int:
        names = self.forest.feature_names
        if isinstance(feature, str):
            if feature not in names:
                raise QueryArgumentError(f"unknown feature {feature!r}; the features are {list(names)}")
            return names.index(feature)
        if not 0 <= int(feature) < len(names):
            raise QueryArgumentError(f"feature index {feature!r} out of range for {len(names)} features")
        return int(feature)

    def __repr__(self) -> str:
        return f"RegressionExplainer({self.forest.source}, engine={self.engine_name!r}, delta={self.delta!r})"
