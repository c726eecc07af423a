"""Explaining many instances at once, in parallel processes or on a Dask cluster.

:meth:`rfexplain.Explainer.explain_many` is the entry point; this module holds the machinery.

How it runs
-----------
Instances are cut into chunks and handed to :mod:`joblib`. Each task carries an
:class:`EngineSpec` (the forest as JSON, the engine class and its options); every worker process
(or worker thread, under Dask) builds the engine **once**, keeps it in a small per-thread cache,
and reuses it for every chunk it receives, so SAT solvers and compiled circuits are built once
per worker, not once per instance. With one job the explainer's own engine is used in-process.

The joblib backend is whatever is active: processes (``loky``) by default, or a Dask cluster
inside ``joblib.parallel_config(backend="dask")`` with a ``dask.distributed.Client`` open.

Failures
--------
An exception on one instance becomes that instance's record (``error``); the others go on. If a
worker process dies (a crash in native code, the out-of-memory killer), the chunks in flight
are retried instance by instance in fresh workers, so one poisonous instance costs only its own
record. With a ``timeout``, a task still running past its instances' deadlines plus a grace
(:func:`task_deadline`) has its worker killed and replaced the same way; the instance that
outlived its deadline gets ``complete=False, stopped_by="timeout"``.

Budgets
-------
``timeout`` is a per-instance wall-clock budget in seconds, enforced cooperatively by the engines
(they poll it): an enumeration cut short keeps the reasons found, any other query cut short gives
no result; either way the record says ``complete=False, stopped_by="timeout"``. The timeout does
not bound engine construction (``Explainer(..., timeout=)`` does).

Arguments
---------
The query, its arguments (``limit=``, ``target=``: no other keyword), ``timeout`` and ``n_jobs``
are checked once, before any work, and refused with a
:class:`~rfexplain.core.errors.RFExplainError`. A row that is not a valid instance (wrong length,
not numbers, NaN) gets its own error record; the other rows are answered.

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> from rfexplain import Explainer
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
>>> records = Explainer(model, engine="oracle").explain_many(X[:4], n_jobs=1)
>>> [r.index for r in records], records[0].complete, records[0].error
([0, 1, 2, 3], True, None)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import math
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

import numpy as np

from rfexplain.core.budget import BudgetExpired, Enumeration, check_limit, check_timeout
from rfexplain.core.errors import InvalidInstanceError, QueryArgumentError
from rfexplain.core.forest import Forest
from rfexplain.core.instances import in_model_order, mapping_rows, model_input
from rfexplain.core.pyvalues import to_python
from rfexplain.core.queries import Kind, Query
from rfexplain.core.queries import query as query_named
from rfexplain.core.records import BatchRecord
from rfexplain.decision import Decision, Explaining, SoftVoteWarning, hold_immutable, soft_vote_differs
from rfexplain.engines.base import Engine, Instance
from rfexplain.engines.registry import engine_class, register
from rfexplain.progress import Progress

__all__ = [
    "BatchRecord",
    "EngineSpec",
    "explain_many",
    "write_jsonl",
    "write_csv",
    "CSV_COLUMNS",
]

log = logging.getLogger(__name__)

#: Engines kept alive per worker thread (older ones are closed).
_CACHE_SIZE = 2


# ---------------------------------------------------------------------- engines in workers
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

    def close(self) -> None:
        self.engine.close()


@dataclass(frozen=True)
class EngineSpec:
    """Everything a worker needs to build the engine: forest JSON, engine class and options."""

    forest_json: str
    engine: str
    engine_cls: Any
    options: tuple[tuple[str, Any], ...] = ()
    immutable: tuple[int, ...] = ()
    key: str = field(default="", compare=False)

    @classmethod
    def of(cls, explainer: ExplainerLike) -> EngineSpec:
        forest_json = explainer.forest.to_json()
        options = tuple(sorted(getattr(explainer, "options", {}).items()))
        immutable = tuple(getattr(explainer, "immutable", ()))
        digest = hashlib.sha1(
            f"{forest_json}\0{explainer.engine_name}\0{type(explainer.engine).__module__}."
            f"{type(explainer.engine).__qualname__}\0{options!r}\0{immutable!r}".encode()
        ).hexdigest()
        return cls(forest_json, explainer.engine_name, type(explainer.engine), options, immutable, digest)

    def build(self) -> ExplainerLike:
        """A forest-only explainer with this engine."""
        register(self.engine, self.engine_cls)  # a plug-in registered only in the parent process
        forest = Forest.from_json(self.forest_json)
        options = dict(self.options)
        engine = engine_class(self.engine)(forest, **options)
        return _WorkerExplainer(forest, engine, self.engine, options, immutable=self.immutable)


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


# ---------------------------------------------------------------------- one instance
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


def _explain_one(
    explainer: ExplainerLike,
    index: int,
    row: Any,
    query: str,
    args: dict[str, Any],
    timeout: float | None,
    sklearn_prediction: Any,
) -> BatchRecord:
    base = dict(index=int(index), query=query, engine=explainer.engine_name, sklearn_prediction=sklearn_prediction)
    try:
        instance = Instance.of(explainer.forest, row)
    except Exception as exc:
        return BatchRecord(**base, error=f"{type(exc).__name__}: {exc}")
    base.update(prediction=explainer.forest.classes[instance.prediction], prediction_index=instance.prediction)
    started = time.perf_counter()
    try:
        spec = query_named(query)
        decision = Decision(explainer, instance, sklearn_prediction)
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


def _run_chunk(
    chunk_id: int,
    spec: EngineSpec,
    items: list[tuple[int, Any, Any]],
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
            for i, _, sk in items
        ]
    return chunk_id, [_explain_one(explainer, i, row, query, args, timeout, sk) for i, row, sk in items]


# ---------------------------------------------------------------------- the driver
def _rows(X: Any, feature_names: Sequence[str]) -> list[Any]:
    """The rows of ``X`` in the model's feature order (named input is matched by name); a list of
    rows of different lengths stays a list (each row is then checked on its own), and so do rows
    given as mappings of feature names to values (each matched by name when it is explained)."""
    mappings = mapping_rows(X)
    if mappings is not None:
        return mappings
    X = in_model_order(X, feature_names)
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    if not isinstance(X, np.ndarray) and isinstance(X, (list, tuple)):
        if X and all(isinstance(row, (list, tuple, np.ndarray)) for row in X):
            return [np.asarray(row, dtype=object) for row in X]
    arr = np.asarray(X, dtype=object if not isinstance(X, np.ndarray) else None)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise InvalidInstanceError(f"X must be a 2-D array of instances, got {arr.ndim} dimensions")
    return [np.asarray(row) for row in arr]


def _check_arguments(
    explainer: ExplainerLike, query: str, query_args: dict[str, Any], timeout: Any, n_jobs: Any
) -> dict[str, Any]:
    """The query's arguments, checked once before any work (limit as a plain int)."""
    spec = query_named(query)  # UnknownQueryError
    allowed = {"limit"} if spec.enumerates else set()
    if spec.takes_target:
        allowed.add("target")
    unknown = sorted(set(query_args) - allowed)
    if "limit" in unknown:
        raise QueryArgumentError(f"{query} takes no limit= (it answers one result)")
    if unknown:
        takes = f"takes only {sorted(allowed)}" if allowed else "takes no argument"
        raise QueryArgumentError(f"{query} {takes}; got {unknown}")
    args = dict(query_args)
    if spec.takes_target:
        if args.get("target") is None:
            raise QueryArgumentError(f"{query} needs a target class")
        explainer.forest.class_index(args["target"])  # UnknownClassError
    if "limit" in args:
        args["limit"] = check_limit(args["limit"])
    check_timeout(timeout)
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0):
        raise QueryArgumentError(f"n_jobs must be a non-zero integer or None. Got {n_jobs!r} instead.")
    return args


def _sklearn_predictions(explainer: ExplainerLike, rows: list[np.ndarray]) -> list[Any]:
    """scikit-learn's own (soft-vote) predictions, in one call; row by row if some row is invalid."""
    if explainer.model is None or not rows:
        return [None] * len(rows)
    model = explainer.model

    def predict(values: np.ndarray) -> np.ndarray:
        own = getattr(explainer, "sklearn_predict", None)  # an Explainer knows its model's inputs
        if own is not None:
            return np.asarray(own(values))
        return np.asarray(model.predict(model_input(model, np.asarray(values, dtype=np.float32))))

    try:
        return [to_python(v) for v in predict(np.asarray(rows, dtype=np.float64))]
    except Exception:
        pass
    out: list[Any] = []
    for row in rows:
        try:
            out.append(to_python(predict(np.asarray([row], dtype=np.float64))[0]))
        except Exception:
            out.append(None)
    return out


def _uses_processes(n_jobs: int | None, backend: Any) -> bool:
    import joblib
    from joblib.parallel import get_active_backend

    if backend is not None:
        return not (isinstance(backend, str) and backend in ("sequential",))
    active, active_n = get_active_backend()
    if "dask" in type(active).__name__.lower():
        return True
    return joblib.effective_n_jobs(n_jobs if n_jobs is not None else (active_n or 1)) > 1


def explain_many(
    explainer: ExplainerLike,
    X: Any,
    query: str = "sufficient_reason",
    *,
    n_jobs: int | None = None,
    timeout: float | None = None,
    progress: bool | None = None,
    indices: Sequence[int] | None = None,
    chunk_size: int | None = None,
    backend: Any = None,
    **query_args: Any,
) -> list[BatchRecord]:
    """Answer ``query`` on every row of ``X``; see :meth:`rfexplain.Explainer.explain_many`."""
    import joblib

    query_args = _check_arguments(explainer, query, query_args, timeout, n_jobs)
    n_jobs = None if n_jobs is None else int(n_jobs)
    rows = _rows(X, explainer.forest.feature_names)
    ids = list(range(len(rows))) if indices is None else [int(i) for i in indices]
    if len(ids) != len(rows):
        raise InvalidInstanceError(f"indices has {len(ids)} entries for {len(rows)} instances")
    position = {i: k for k, i in enumerate(ids)}
    if len(position) != len(ids):
        raise InvalidInstanceError("indices must be distinct")
    sk = _sklearn_predictions(explainer, rows)
    items = list(zip(ids, rows, sk))
    records: dict[int, list[BatchRecord]] = {}
    bar = Progress(len(items), f"{query} ({explainer.engine_name})", enabled=progress)

    def collect(chunk_id: int, chunk_records: list[BatchRecord]) -> None:
        records[chunk_id] = chunk_records
        bar.update(len(chunk_records), failed=sum(1 for r in chunk_records if r.error))

    try:
        if not _uses_processes(n_jobs, backend):
            for k, (i, row, s) in enumerate(items):
                collect(k, [_explain_one(explainer, i, row, query, query_args, timeout, s)])
        else:
            workers = max(1, joblib.effective_n_jobs(n_jobs if n_jobs is not None else -1))
            size = chunk_size or max(1, min(64, math.ceil(len(items) / (4 * workers))))
            chunks = [items[k : k + size] for k in range(0, len(items), size)]
            spec = EngineSpec.of(explainer)
            _run_parallel(chunks, spec, query, query_args, timeout, n_jobs, backend, collect)
    finally:
        bar.close()
    out = sorted((r for chunk in records.values() for r in chunk), key=lambda r: position[r.index])
    _warn_soft_vote(explainer, out)
    return out


#: Seconds a worker may run past an instance's deadline before it is killed.
GRACE = 1.0
#: Seconds granted to every task for building (or loading) its engine.
BUILD_GRACE = 5.0


def task_deadline(timeout: float | None, n_instances: int) -> float | None:
    """Seconds after which a task of ``n_instances`` instances has its worker killed."""
    if timeout is None:
        return None
    return n_instances * (timeout + GRACE) + BUILD_GRACE


def _parallel(n_jobs: int | None, backend: Any, deadline: float | None) -> Any:
    import joblib

    kwargs: dict[str, Any] = {"n_jobs": n_jobs, "return_as": "generator_unordered", "timeout": deadline}
    if backend is not None:
        kwargs["backend"] = backend
    return joblib.Parallel(**kwargs)


def _run_parallel(
    chunks: list[list[tuple[int, Any, Any]]],
    spec: EngineSpec,
    query: str,
    args: dict[str, Any],
    timeout: float | None,
    n_jobs: int | None,
    backend: Any,
    collect: Any,
) -> None:
    import joblib

    done: set[int] = set()

    def run(tasks: list[tuple[int, list[tuple[int, Any, Any]]]]) -> Exception | None:
        deadline = task_deadline(timeout, max(len(chunk) for _, chunk in tasks))
        try:
            for chunk_id, chunk_records in _parallel(n_jobs, backend, deadline)(
                joblib.delayed(_run_chunk)(cid, spec, chunk, query, args, timeout) for cid, chunk in tasks
            ):
                done.add(chunk_id)
                collect(chunk_id, chunk_records)
        except Exception as exc:  # a worker died or the cluster failed: keep what finished
            return exc
        return None

    tasks = list(enumerate(chunks))
    failure = run(tasks)
    if failure is None:
        return
    log.warning(
        "parallel run failed (%s: %s); retrying unfinished instances one by one", type(failure).__name__, failure
    )
    counter = [len(chunks)]

    def isolate(singles: list[list[tuple[int, Any, Any]]]) -> None:
        # Every unfinished instance is its own task; a group that fails again is halved until
        # the instance that kills its worker is alone, and that one gets an error record.
        numbered = []
        for single in singles:
            numbered.append((counter[0], single))
            counter[0] += 1
        failure = run(numbered)
        if failure is None:
            return
        left = [single for cid, single in numbered if cid not in done]
        if len(left) == 1:
            ((i, _, s),) = left[0]
            cid = counter[0]
            counter[0] += 1
            done.add(cid)
            base = dict(index=int(i), query=query, engine=spec.engine, sklearn_prediction=s)
            if isinstance(failure, TimeoutError) or type(failure).__name__ == "TimeoutError":
                elapsed = float(task_deadline(timeout, 1) or 0.0)
                collect(cid, [BatchRecord(**base, time=elapsed, complete=False, stopped_by="timeout")])
                return
            message = f"worker died: {type(failure).__name__}: {failure}"
            collect(cid, [BatchRecord(**base, error=message)])
            return
        half = max(1, len(left) // 2)
        isolate(left[:half])
        isolate(left[half:])

    isolate([[item] for cid, chunk in tasks if cid not in done for item in chunk])


def _warn_soft_vote(explainer: ExplainerLike, records: list[BatchRecord]) -> None:
    if explainer.forest.vote != "hard":  # SoftVoteWarning is about explaining the hard vote only
        return
    differ = [r.index for r in records if soft_vote_differs(r.sklearn_prediction, r.prediction)]
    if differ:
        warnings.warn(
            f"{len(differ)} of {len(records)} instances (indices {differ[:10]}{'...' if len(differ) > 10 else ''}) "
            "are decided differently by scikit-learn's predict (soft vote) "
            "and by the hard majority vote explained here",
            SoftVoteWarning,
            stacklevel=3,
        )


# ---------------------------------------------------------------------- output
#: Columns of :func:`write_csv`.
CSV_COLUMNS = (
    "index",
    "query",
    "engine",
    "prediction",
    "sklearn_prediction",
    "n_reasons",
    "features",
    "reasons",
    "value",
    "time",
    "complete",
    "stopped_by",
    "error",
)


def write_jsonl(records: Iterable[BatchRecord], stream: IO[str]) -> None:
    """One JSON object per record and line (``BatchRecord.to_dict``)."""
    for record in records:
        stream.write(json.dumps(record.to_dict(), default=str) + "\n")


def write_csv(records: Iterable[BatchRecord], stream: IO[str]) -> None:
    """A flat CSV: reason feature sets as JSON lists, reason texts joined by `` | ``."""
    writer = csv.writer(stream)
    writer.writerow(CSV_COLUMNS)
    for r in records:
        is_reasons = isinstance(r.result, list)
        value = "" if is_reasons or r.result is None else ("inf" if r.result == math.inf else r.result)
        writer.writerow(
            [
                r.index,
                r.query,
                r.engine,
                to_python(r.prediction) if r.prediction is not None else "",
                to_python(r.sklearn_prediction) if r.sklearn_prediction is not None else "",
                len(r.result) if is_reasons else "",
                json.dumps([sorted(f) for f in r.feature_sets()]) if is_reasons else "",
                " | ".join(d.get("text", "") for d in r.reasons) if is_reasons else "",
                value,
                f"{r.time:.6f}",
                "" if r.complete is None else r.complete,
                r.stopped_by or "",
                r.error or "",
            ]
        )


def records_to_text(records: Iterable[BatchRecord], fmt: str = "jsonl") -> str:
    """The records as JSON lines (``"jsonl"``) or CSV (``"csv"``) text."""
    out = io.StringIO()
    (write_csv if fmt == "csv" else write_jsonl)(records, out)
    return out.getvalue()
