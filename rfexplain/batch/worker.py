"""One task of a batch, as a worker runs it: build (or reuse) the engine, answer a chunk.

Every task carries an :class:`EngineSpec` (the forest as JSON, the engine class and its options);
every worker process (or worker thread, under Dask) builds the engine **once**, keeps it in a
small per-thread cache, and reuses it for every chunk it receives (:func:`run_chunk`), so SAT
solvers and compiled circuits are built once per worker, not once per instance. With one job the
runner calls :func:`explain_one` with the explainer's own engine, in its own process.

An exception on one instance becomes that instance's record (``error``); the others go on. A row
that is not a valid instance gets an error naming its row
(:func:`~rfexplain.core.records.row_error`).

``timeout`` is a per-instance wall-clock budget in seconds, enforced cooperatively by the engines
(they poll it): an enumeration cut short keeps the reasons found, any other query cut short gives
no result; either way the record says ``complete=False, stopped_by="timeout"``. The timeout does
not bound engine construction (``Explainer(..., timeout=)`` does).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from rfexplain.core.budget import BudgetExpired, Enumeration
from rfexplain.core.forest import Forest
from rfexplain.core.queries import Kind, Query
from rfexplain.core.queries import query as query_named
from rfexplain.core.records import BatchRecord, row_error
from rfexplain.decision import Decision, Explaining, hold_immutable
from rfexplain.engines.base import Engine, Instance
from rfexplain.engines.registry import engine_class, register

__all__ = ["ExplainerLike", "EngineSpec", "Item", "explain_one", "run_chunk"]

log = logging.getLogger(__name__)

#: Engines kept alive per worker thread (older ones are closed).
_CACHE_SIZE = 2


class ExplainerLike(Explaining, Protocol):
    """What the batch runner needs of an :class:`~rfexplain.Explainer`."""

    model: Any
    options: dict[str, Any]

    def close(self) -> None: ...


@dataclass
class _WorkerExplainer:
    """A worker's forest-only explainer: the forest, its engine and the engine's options."""

    forest: Forest
    engine: Engine
    engine_name: str
    options: dict[str, Any]
    model: Any = None
    #: Features held at each instance's states in the queries about changes.
    immutable: tuple[int, ...] = ()
    #: The memory budget of its queries (the parent explainer's ``max_memory``).
    max_memory: int | str | None = "default"

    def close(self) -> None:
        self.engine.close()


@dataclass(frozen=True)
class EngineSpec:
    """Everything a worker needs to build the engine: forest JSON, engine class and options.

    An explainer that answers through something other than a forest-only explainer (a
    regression batch, :mod:`rfexplain.regression.batch`) names a ``builder``: a module-level
    function (so that it pickles by name) that makes the worker's explainer from this spec and
    the explainer's own ``settings``.
    """

    forest_json: str
    engine: str
    engine_cls: Any
    options: tuple[tuple[str, Any], ...] = ()
    immutable: tuple[int, ...] = ()
    key: str = field(default="", compare=False)
    #: The explainer's memory budget, in bytes (``None``: none), for the worker's queries.
    max_memory: int | str | None = "default"
    builder: Callable[[EngineSpec], ExplainerLike] | None = None
    settings: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, explainer: ExplainerLike) -> EngineSpec:
        forest_json = explainer.forest.to_json()
        options = tuple(sorted(getattr(explainer, "options", {}).items()))
        immutable = tuple(getattr(explainer, "immutable", ()))
        builder = getattr(explainer, "batch_builder", None)
        settings = tuple(sorted(getattr(explainer, "batch_settings", {}).items()))
        engine_cls = getattr(explainer, "engine_cls", None) or type(explainer.engine)
        digest = hashlib.sha1(
            f"{forest_json}\0{explainer.engine_name}\0{engine_cls.__module__}.{engine_cls.__qualname__}"
            f"\0{options!r}\0{immutable!r}\0{settings!r}".encode()
        ).hexdigest()
        memory = getattr(explainer, "max_memory", "default")
        return cls(
            forest_json,
            explainer.engine_name,
            engine_cls,
            options,
            immutable,
            digest,
            max_memory=memory,
            builder=builder,
            settings=settings,
        )

    def build(self) -> ExplainerLike:
        """The worker's explainer: the builder's, else a forest-only explainer with this engine."""
        register(self.engine, self.engine_cls)  # a plug-in registered only in the parent process
        if self.builder is not None:
            return self.builder(self)
        forest = Forest.from_json(self.forest_json)
        options = dict(self.options)
        engine = engine_class(self.engine)(forest, **options)
        return _WorkerExplainer(
            forest, engine, self.engine, options, immutable=self.immutable, max_memory=self.max_memory
        )


_local = threading.local()


def _worker_explainer(spec: EngineSpec) -> ExplainerLike:
    """The engine of ``spec`` for this worker thread, built on first use and then reused."""
    cache: OrderedDict[str, Any] | None = getattr(_local, "cache", None)
    if cache is None:
        cache = _local.cache = OrderedDict()
    if spec.key in cache:
        cache.move_to_end(spec.key)
        return cache[spec.key]
    while len(cache) >= _CACHE_SIZE:
        _, old = cache.popitem(last=False)
        old.close()
    started = time.perf_counter()
    explainer = spec.build()
    log.debug("worker built engine %r in %.3fs", spec.engine, time.perf_counter() - started)
    cache[spec.key] = explainer
    return explainer


def _answer(
    decision: Decision, spec: Query, args: dict[str, Any], timeout: float | None
) -> tuple[Any, bool, str | None]:
    """``(result, complete, stopped_by)`` for one query on one decision."""
    if spec.enumerates:
        enumeration: Enumeration[Any] = decision.ask(spec.name, **args, timeout=timeout)
        reasons = [r.to_dict() for r in enumeration]
        return reasons, bool(enumeration.complete), enumeration.stopped_by
    try:
        value = decision.ask(spec.name, **args, timeout=timeout)
    except BudgetExpired:
        return None, False, "timeout"
    if spec.kind is Kind.FORMULA:
        return str(value), True, None
    if spec.kind is Kind.REASON:
        return ([] if value is None else [value.to_dict()]), True, None
    return value, True, None


def explain_one(
    explainer: ExplainerLike,
    index: int,
    row: Any,
    query: str,
    args: dict[str, Any],
    timeout: float | None,
    sklearn_prediction: Any,
    where: str = "",
) -> BatchRecord:
    """The record of one instance: its answer, or the error that stopped it (a row that is not
    a valid instance is named by ``where``, else by its index)."""
    base: dict[str, Any] = dict(
        index=int(index), query=query, engine=explainer.engine_name, sklearn_prediction=sklearn_prediction
    )
    try:
        instance = Instance.of(explainer.forest, row)
    except Exception as exc:
        return BatchRecord(**base, error=row_error(exc, where or f"row {index}"))
    started = time.perf_counter()
    try:
        decide = getattr(explainer, "batch_decision", None)  # a regression batch's band decision
        if decide is None:
            decision = Decision(explainer, instance, sklearn_prediction)
        else:
            decision = decide(row, instance, sklearn_prediction)
    except Exception as exc:
        log.debug("instance %s failed", index, exc_info=True)
        return BatchRecord(**base, time=time.perf_counter() - started, error=f"{type(exc).__name__}: {exc}")
    made = decision.instance
    base.update(
        prediction=decision.explainer.forest.classes[made.prediction],
        prediction_index=made.prediction,
        band=_band_of(decision),
    )
    try:
        spec = query_named(query)
        decision.progress = False  # the batch draws its own bar
        if spec.changes:
            hold_immutable(decision, getattr(explainer, "immutable", ()), getattr(explainer, "options", {}))
        result, complete, stopped_by = _answer(decision, spec, args, timeout)
    except Exception as exc:
        log.debug("instance %s failed", index, exc_info=True)
        return BatchRecord(**base, time=time.perf_counter() - started, error=f"{type(exc).__name__}: {exc}")
    return BatchRecord(
        **base, result=result, time=time.perf_counter() - started, complete=complete, stopped_by=stopped_by
    )


def _band_of(decision: Decision) -> tuple[float | None, float | None] | None:
    """A regression decision's band as ``(low, high)``; ``None`` for a classifier's."""
    band = getattr(decision, "band", None)
    return None if band is None else (band.low, band.high)


#: One instance to answer: ``(index, row, scikit-learn's prediction, the row named for errors)``.
Item = tuple[int, Any, Any, str]


def run_chunk(
    chunk_id: int,
    spec: EngineSpec,
    items: list[Item],
    query: str,
    args: dict[str, Any],
    timeout: float | None,
) -> tuple[int, list[BatchRecord]]:
    """A worker's task: build (or reuse) the engine and answer every instance of the chunk."""
    try:
        explainer = _worker_explainer(spec)
    except Exception as exc:
        message = f"engine construction failed: {type(exc).__name__}: {exc}"
        return chunk_id, [
            BatchRecord(index=int(i), query=query, engine=spec.engine, sklearn_prediction=sk, error=message)
            for i, _, sk, _ in items
        ]
    return chunk_id, [explain_one(explainer, i, row, query, args, timeout, sk, w) for i, row, sk, w in items]
