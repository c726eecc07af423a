"""A regression forest's band question over many rows, as the batch runner takes it.

:class:`BandBatch` is a :class:`~rfexplain.regression.RegressionExplainer` bound to one band
question (a fixed band, or each row's prediction ``± delta``): the batch runner
(:mod:`rfexplain.batch`) checks and answers it as it does a classifier's explainer, each row's
decision being the band's (:meth:`RegressionExplainer.decide
<rfexplain.regression.RegressionExplainer.decide>`), and its workers rebuild it from the
regression forest's JSON by :func:`build_worker`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from rfexplain.core.forest import Forest
from rfexplain.decision import Decision
from rfexplain.engines.base import Instance
from rfexplain.engines.registry import engine_class
from rfexplain.regression.band import Band, asked_band
from rfexplain.regression.model import RegressionForest

if TYPE_CHECKING:
    from rfexplain.batch.worker import EngineSpec


class BandOwner(Protocol):
    """What a :class:`BandBatch` asks of its :class:`~rfexplain.regression.RegressionExplainer`."""

    forest: Forest
    engine_name: str
    options: dict[str, Any]
    model: Any
    delta: float

    def band_of(
        self,
        instance: Instance,
        *,
        within: tuple[float, float] | None = None,
        at_least: float | None = None,
        at_most: float | None = None,
    ) -> Band: ...

    def decide(self, x: Any, band: Band, sklearn_value: float | None = None) -> Decision: ...


__all__ = ["BandBatch", "BandOwner", "build_worker"]


class BandBatch:
    """``owner`` asked whether each row's prediction is inside the band ``within`` /
    ``at_least`` / ``at_most`` (none: the row's prediction ``± owner.delta``).

    It has the attributes the batch runner reads of an explainer (``forest``: the regression
    forest's, on which each row is checked; ``engine_name``, ``options``, ``model``) and no
    engine of its own: each band's decision has its engine.
    """

    def __init__(
        self,
        owner: BandOwner,
        *,
        within: tuple[float, float] | None = None,
        at_least: float | None = None,
        at_most: float | None = None,
    ) -> None:
        asked_band(within, at_least, at_most)  # a bad band is refused before any row
        self.owner = owner
        self.band_arguments: dict[str, Any] = {
            "within": None if within is None else (float(within[0]), float(within[1])),
            "at_least": at_least,
            "at_most": at_most,
        }
        self.forest: Forest = owner.forest
        self.engine: Any = None
        self.engine_name: str = owner.engine_name
        self.engine_cls = engine_class(owner.engine_name)
        self.options: dict[str, Any] = owner.options
        self.model: Any = owner.model
        self.immutable: tuple[int, ...] = ()
        #: What a worker rebuilds it from (:class:`~rfexplain.batch.worker.EngineSpec`).
        self.batch_builder = build_worker
        self.batch_settings: dict[str, Any] = {"owner": type(owner), "delta": owner.delta, **self.band_arguments}

    def batch_decision(self, row: Any, instance: Instance, sklearn_prediction: Any) -> Decision:
        """The row's band decision (``instance``: the row checked on the regression forest)."""
        band = self.owner.band_of(instance, **self.band_arguments)
        value = None if sklearn_prediction is None else float(sklearn_prediction)
        return self.owner.decide(row, band, value)

    def close(self) -> None:
        """Nothing to close: the owner keeps (and closes) its bands' engines."""


def build_worker(spec: EngineSpec) -> BandBatch:
    """A worker's :class:`BandBatch`, rebuilt from its spec (the regression forest's JSON, the
    engine, its options and the batch's settings: the explainer's class, its ``delta`` and the
    band)."""
    settings = dict(spec.settings)
    regression = RegressionForest(Forest.from_json(spec.forest_json))
    owner_class = settings.pop("owner")
    owner = owner_class.from_forest(regression, spec.engine, delta=settings.pop("delta"), **dict(spec.options))
    return BandBatch(owner, **settings)
