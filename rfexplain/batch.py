"""Explaining many instances at once, in parallel processes or on a Dask cluster.

:meth:`rfexplain.Explainer.explain_many` (a list in the order of the rows) and
:meth:`rfexplain.Explainer.iter_explain` (the records one by one as they finish) are the entry
points; this module holds the machinery, and :class:`StreamingOutput`, the resumable output file
of ``rfexplain batch``.

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

Interrupts and streaming
------------------------
Nothing finished is lost. Records leave the workers a chunk at a time (one instance at a time
with one job) and :func:`iter_explain` yields each at once; a Ctrl-C stops the workers (none
outlives the batch) and :func:`explain_many` raises :class:`BatchInterrupted`, a
``KeyboardInterrupt`` carrying the records finished before it (in row order) and the indices of
the others. A record still inside a worker's unfinished chunk is not finished: ``chunk_size=1``
makes every instance its own chunk, at some cost in throughput on quick queries.

:class:`StreamingOutput` writes each record to its file as it arrives (JSON lines and CSV
appended and flushed; Parquet through JSON lines beside it), then rewrites the file in row
order by a temporary file renamed over it, so that no output is ever half of a file: a crash
leaves whole records (a line torn by the crash itself is dropped when resuming). The run that
writes it is recorded beside it (``OUT.run.json``: fingerprints of the forest, engine, options
and rows; the query, its arguments, the timeout and the format), and a resumed run explains only
the rows missing from the output, after checking that it is the same run.

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
:class:`~rfexplain.core.errors.RFExplainError`, and so is a problem of every row (unknown or
missing column names). A row that is not a valid instance (wrong length, not numbers, NaN or
infinite, for a pipeline an unknown category or a string in a numeric column) gets its own error
record, which names its row number (``"InvalidInstanceError: row 3 has NaN in feature 1 ..."``;
``"row 3 (index 'b')"`` for a DataFrame indexed otherwise, ``"row 17"`` by its index when
``indices`` are given); the other rows are answered.

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
import os
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np

from rfexplain.core.budget import BudgetExpired, Enumeration, check_limit, check_timeout
from rfexplain.core.errors import InvalidArgumentError, InvalidInstanceError, QueryArgumentError
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
    "iter_explain",
    "BatchInterrupted",
    "write_jsonl",
    "write_csv",
    "CSV_COLUMNS",
    "StreamingOutput",
    "ResumeError",
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
    #: The memory budget of its queries (the parent explainer's ``max_memory``).
    max_memory: int | str | None = "default"

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
    #: The explainer's memory budget, in bytes (``None``: none), for the worker's queries.
    max_memory: int | str | None = "default"

    @classmethod
    def of(cls, explainer: ExplainerLike) -> EngineSpec:
        forest_json = explainer.forest.to_json()
        options = tuple(sorted(getattr(explainer, "options", {}).items()))
        immutable = tuple(getattr(explainer, "immutable", ()))
        digest = hashlib.sha1(
            f"{forest_json}\0{explainer.engine_name}\0{type(explainer.engine).__module__}."
            f"{type(explainer.engine).__qualname__}\0{options!r}\0{immutable!r}".encode()
        ).hexdigest()
        memory = getattr(explainer, "max_memory", "default")
        return cls(
            forest_json, explainer.engine_name, type(explainer.engine), options, immutable, digest, max_memory=memory
        )

    def build(self) -> ExplainerLike:
        """A forest-only explainer with this engine."""
        register(self.engine, self.engine_cls)  # a plug-in registered only in the parent process
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
    where: str = "",
) -> BatchRecord:
    base = dict(index=int(index), query=query, engine=explainer.engine_name, sklearn_prediction=sklearn_prediction)
    try:
        instance = Instance.of(explainer.forest, row)
    except Exception as exc:
        return BatchRecord(**base, error=row_error(exc, where or f"row {index}"))
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


def row_error(exc: BaseException, where: str) -> str:
    """The error of a row that is not a valid instance, naming the row: ``"InvalidInstanceError:
    row 3 has NaN in feature 1 ..."`` (a message about "instance 0", the only row the check saw,
    is about ``where``)."""
    text = str(exc)
    if text.startswith("instance 0 "):
        return f"{type(exc).__name__}: {where} {text[len('instance 0 ') :]}"
    return f"{type(exc).__name__}: {where}: {text}"


#: One instance to answer: ``(index, row, scikit-learn's prediction, the row named for errors)``.
Item = tuple[int, Any, Any, str]


def _run_chunk(
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
    return chunk_id, [_explain_one(explainer, i, row, query, args, timeout, sk, w) for i, row, sk, w in items]


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


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`explain_many`, carrying the records finished before it.

    A :class:`KeyboardInterrupt` (code that stops on Ctrl-C still stops), raised once the workers
    are stopped. ``records`` holds every record finished before the interrupt, in the order of
    ``X`` (none is lost); ``pending`` the indices of the rows not finished (their work is
    dropped). ``rfexplain batch`` has already written the finished records when it exits with
    status 130.
    """

    def __init__(self, records: list[BatchRecord], pending: list[int]) -> None:
        total = len(records) + len(pending)
        super().__init__(f"interrupted after {len(records)} of {total} instances")
        self.records = records
        self.pending = pending


@dataclass
class _Plan:
    """A batch checked and ready: its arguments, the instances to answer, the rows refused."""

    args: dict[str, Any]
    ids: list[int]
    items: list[Item]
    refused: list[BatchRecord]


def index_labels(X: Any) -> list[Any] | None:
    """A DataFrame's index labels, when they are not its row numbers."""
    index = getattr(X, "index", None)
    if index is None or getattr(X, "ndim", 0) != 2 or not hasattr(X, "iloc"):
        return None
    labels = [to_python(v) for v in index]
    return None if labels == list(range(len(labels))) else labels


def _where(position: int, index: int, labels: Sequence[Any] | None, indexed: bool) -> str:
    """A row as its errors name it: ``"row 3"`` (its row number in ``X``), ``"row 3 (index
    'b')"`` when a DataFrame's index label is not its row number, or, with ``indices`` given,
    ``"row 17"`` by its index (the caller's own row numbers, e.g. the command line's)."""
    if indexed:
        return f"row {index}"
    label = labels[position] if labels is not None else position
    return f"row {position}" if label == position else f"row {position} (index {label!r})"


def _plan(
    explainer: ExplainerLike,
    X: Any,
    query: str,
    query_args: dict[str, Any],
    timeout: Any,
    n_jobs: Any,
    indices: Sequence[int] | None,
    row_errors: Mapping[int, str] | None,
    labels: Sequence[Any] | None,
) -> _Plan:
    """Everything checked before any work: the arguments (refused once), the rows (a problem of
    every row, such as unknown column names, refuses the batch), the rows known to be bad
    (``row_errors``: their error records, without work)."""
    args = _check_arguments(explainer, query, query_args, timeout, n_jobs)
    rows = _rows(X, explainer.forest.feature_names)
    if labels is None:
        labels = index_labels(X)
    elif len(labels) != len(rows):
        raise InvalidInstanceError(f"labels has {len(labels)} entries for {len(rows)} instances")
    ids = list(range(len(rows))) if indices is None else [int(i) for i in indices]
    if len(ids) != len(rows):
        raise InvalidInstanceError(f"indices has {len(ids)} entries for {len(rows)} instances")
    if len(set(ids)) != len(ids):
        raise InvalidInstanceError("indices must be distinct")
    errors = {int(k): str(v) for k, v in (row_errors or {}).items() if 0 <= int(k) < len(rows)}
    good = [k for k in range(len(rows)) if k not in errors]
    sk = _sklearn_predictions(explainer, [rows[k] for k in good])
    items = [(ids[k], rows[k], s, _where(k, ids[k], labels, indices is not None)) for k, s in zip(good, sk)]
    refused = [
        BatchRecord(
            index=ids[k],
            query=query,
            engine=explainer.engine_name,
            error=f"InvalidInstanceError: {_where(k, ids[k], labels, indices is not None)}: {message}",
        )
        for k, message in sorted(errors.items())
    ]
    return _Plan(args, ids, items, refused)


def _stream(
    explainer: ExplainerLike,
    plan: _Plan,
    query: str,
    *,
    n_jobs: int | None,
    timeout: float | None,
    progress: bool | None,
    chunk_size: int | None,
    backend: Any,
    warn: bool,
) -> Generator[BatchRecord, None, None]:
    """The records of ``plan`` as they finish; closing the generator stops the workers."""
    import joblib

    bar = Progress(len(plan.items) + len(plan.refused), f"{query} ({explainer.engine_name})", enabled=progress)
    finished: list[BatchRecord] = []
    try:
        if not _uses_processes(n_jobs, backend):  # in the order of the rows, the refused ones included
            refused = {r.index: r for r in plan.refused}
            items = {item[0]: item for item in plan.items}
            for index in plan.ids:
                if index in refused:
                    record = refused[index]
                else:
                    i, row, s, where = items[index]
                    record = _explain_one(explainer, i, row, query, plan.args, timeout, s, where)
                bar.update(1, failed=int(record.error is not None))
                finished.append(record)
                yield record
            return
        for record in plan.refused:  # finished before any work
            bar.update(1, failed=1)
            finished.append(record)
            yield record
        if plan.items:
            workers = max(1, joblib.effective_n_jobs(n_jobs if n_jobs is not None else -1))
            size = chunk_size or max(1, min(64, math.ceil(len(plan.items) / (4 * workers))))
            chunks = [plan.items[k : k + size] for k in range(0, len(plan.items), size)]
            spec = EngineSpec.of(explainer)
            for chunk_records in _run_parallel(chunks, spec, query, plan.args, timeout, n_jobs, backend):
                bar.update(len(chunk_records), failed=sum(1 for r in chunk_records if r.error))
                for record in chunk_records:
                    finished.append(record)
                    yield record
    finally:
        bar.close()
        if warn and len(finished) == len(plan.ids):  # the whole batch, once
            position = {i: k for k, i in enumerate(plan.ids)}
            _warn_soft_vote(explainer, sorted(finished, key=lambda r: position[r.index]))


def iter_explain(
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
    row_errors: Mapping[int, str] | None = None,
    labels: Sequence[Any] | None = None,
    **query_args: Any,
) -> Generator[BatchRecord, None, None]:
    """The records of :func:`explain_many` one by one, **as they finish** (in the order of ``X``
    with one job; with workers, in the order their chunks finish); see
    :meth:`rfexplain.Explainer.iter_explain`.

    The arguments and rows are checked at once, before the iterator is returned. Closing the
    iterator (``break``, ``.close()``, or a ``KeyboardInterrupt`` while it runs) stops the
    workers; every record received before stays the caller's.
    """
    plan = _plan(explainer, X, query, query_args, timeout, n_jobs, indices, row_errors, labels)
    n_jobs = None if n_jobs is None else int(n_jobs)
    return _stream(
        explainer,
        plan,
        query,
        n_jobs=n_jobs,
        timeout=timeout,
        progress=progress,
        chunk_size=chunk_size,
        backend=backend,
        warn=True,
    )


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
    row_errors: Mapping[int, str] | None = None,
    labels: Sequence[Any] | None = None,
    **query_args: Any,
) -> list[BatchRecord]:
    """Answer ``query`` on every row of ``X``; see :meth:`rfexplain.Explainer.explain_many`.

    On ``KeyboardInterrupt`` the workers are stopped and :class:`BatchInterrupted` (a
    ``KeyboardInterrupt``) is raised carrying the records finished so far."""
    plan = _plan(explainer, X, query, query_args, timeout, n_jobs, indices, row_errors, labels)
    stream = _stream(
        explainer,
        plan,
        query,
        n_jobs=None if n_jobs is None else int(n_jobs),
        timeout=timeout,
        progress=progress,
        chunk_size=chunk_size,
        backend=backend,
        warn=False,
    )
    position = {i: k for k, i in enumerate(plan.ids)}
    finished: list[BatchRecord] = []
    try:
        for record in stream:
            finished.append(record)
    except KeyboardInterrupt as exc:
        stream.close()
        done = {r.index for r in finished}
        kept = sorted(finished, key=lambda r: position[r.index])
        raise BatchInterrupted(kept, [i for i in plan.ids if i not in done]) from exc
    out = sorted(finished, key=lambda r: position[r.index])
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


def _close_quietly(outputs: Any) -> None:
    """Stop a joblib generator (its workers' tasks are aborted) without its early-exit warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close = getattr(outputs, "close", None)
        if close is not None:
            close()


def _run_parallel(
    chunks: list[list[Item]],
    spec: EngineSpec,
    query: str,
    args: dict[str, Any],
    timeout: float | None,
    n_jobs: int | None,
    backend: Any,
) -> Iterator[list[BatchRecord]]:
    """The records of every chunk, a chunk at a time as they finish; a chunk whose worker died is
    retried instance by instance (see the module docstring)."""
    import joblib

    done: set[int] = set()
    failure: list[Exception] = []

    def run(tasks: list[tuple[int, list[Item]]]) -> Iterator[list[BatchRecord]]:
        failure.clear()
        deadline = task_deadline(timeout, max(len(chunk) for _, chunk in tasks))
        outputs = _parallel(n_jobs, backend, deadline)(
            joblib.delayed(_run_chunk)(cid, spec, chunk, query, args, timeout) for cid, chunk in tasks
        )
        try:
            for chunk_id, chunk_records in outputs:
                done.add(chunk_id)
                yield chunk_records
        except Exception as exc:  # a worker died or the cluster failed: keep what finished
            failure.append(exc)
        finally:
            _close_quietly(outputs)

    tasks = list(enumerate(chunks))
    yield from run(tasks)
    if not failure:
        return
    log.warning(
        "parallel run failed (%s: %s); retrying unfinished instances one by one", type(failure[0]).__name__, failure[0]
    )
    counter = [len(chunks)]

    def isolate(singles: list[list[Item]]) -> Iterator[list[BatchRecord]]:
        # Every unfinished instance is its own task; a group that fails again is halved until
        # the instance that kills its worker is alone, and that one gets an error record.
        numbered = []
        for single in singles:
            numbered.append((counter[0], single))
            counter[0] += 1
        yield from run(numbered)
        if not failure:
            return
        error = failure[0]
        left = [single for cid, single in numbered if cid not in done]
        if len(left) == 1:
            ((i, _, s, _),) = left[0]
            cid = counter[0]
            counter[0] += 1
            done.add(cid)
            base = dict(index=int(i), query=query, engine=spec.engine, sklearn_prediction=s)
            if isinstance(error, TimeoutError) or type(error).__name__ == "TimeoutError":
                elapsed = float(task_deadline(timeout, 1) or 0.0)
                yield [BatchRecord(**base, time=elapsed, complete=False, stopped_by="timeout")]
                return
            yield [BatchRecord(**base, error=f"worker died: {type(error).__name__}: {error}")]
            return
        half = max(1, len(left) // 2)
        yield from isolate(left[:half])
        yield from isolate(left[half:])

    yield from isolate([[item] for cid, chunk in tasks if cid not in done for item in chunk])


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


def csv_row(r: BatchRecord) -> list[Any]:
    """The cells of one record in :func:`write_csv`'s columns (:data:`CSV_COLUMNS`)."""
    is_reasons = isinstance(r.result, list)
    value = "" if is_reasons or r.result is None else ("inf" if r.result == math.inf else r.result)
    return [
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


def write_csv(records: Iterable[BatchRecord], stream: IO[str]) -> None:
    """A flat CSV: reason feature sets as JSON lists, reason texts joined by `` | ``."""
    writer = csv.writer(stream)
    writer.writerow(CSV_COLUMNS)
    for r in records:
        writer.writerow(csv_row(r))


def records_to_text(records: Iterable[BatchRecord], fmt: str = "jsonl") -> str:
    """The records as JSON lines (``"jsonl"``) or CSV (``"csv"``) text."""
    out = io.StringIO()
    (write_csv if fmt == "csv" else write_jsonl)(records, out)
    return out.getvalue()


# ---------------------------------------------------------------------- streamed, resumable output
#: Suffix of the side file beside an output of :class:`StreamingOutput`: which run wrote it.
RUN_SUFFIX = ".run.json"
#: Suffix of the JSON lines a Parquet output streams into until it is written at the end.
PARTIAL_SUFFIX = ".partial.jsonl"


#: How a resume error names each field of a run record that differs.
_RUN_FIELDS = {
    "model": "the model (forest, engine class or options)",
    "engine": "the engine",
    "query": "the query",
    "arguments": "the query's arguments",
    "timeout": "the timeout",
    "format": "the format",
    "rows": "the rows",
}


class ResumeError(InvalidArgumentError):
    """An output cannot be resumed: written by another run (model, query, options or rows), or
    not by :class:`StreamingOutput` at all. The message says which and what to do."""


def _csv_line(cells: Sequence[Any]) -> str:
    out = io.StringIO()
    csv.writer(out).writerow(cells)
    return out.getvalue()


def _replace_atomically(path: Path, write: Any) -> None:
    """``write(temporary path)``, then rename it over ``path``: ``path`` is the old file or the
    new one, never half of one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


class StreamingOutput:
    """A batch's output file, written record by record as they finish, and resumable.

    ``jsonl`` and ``csv`` outputs get each finished record appended and flushed at once (in the
    order they finish); ``parquet`` streams into JSON lines beside it (``OUT.partial.jsonl``).
    :meth:`finish` then rewrites the whole output in the order of the rows (write to a
    temporary file, then rename), so a finished output is the same file a run writing everything
    at the end gives. A crash or a Ctrl-C leaves every record finished before it, each on a whole
    line (a line torn by a crash is dropped when resuming).

    Beside the output, ``OUT.run.json`` records the run that writes it: a fingerprint of the
    forest, engine and its options, the query and its arguments, the timeout, the format and the
    rows. With ``resume=True`` an output whose run record matches keeps its records and
    :attr:`done` gives their indices (the caller explains the others); a mismatch, or an output
    without a run record, is refused (:class:`ResumeError`). Resuming where nothing was written
    yet starts afresh.
    """

    def __init__(self, path: str | os.PathLike[str], fmt: str, run: Mapping[str, Any], *, resume: bool = False):
        self.path = Path(path)
        self.fmt = fmt
        self.run = dict(run)
        self.run_path = Path(f"{self.path}{RUN_SUFFIX}")
        self.data_path = Path(f"{self.path}{PARTIAL_SUFFIX}") if fmt == "parquet" else self.path
        #: Finished records by index: their text in the data file, and whether failed / cut.
        self.lines: dict[int, str] = {}
        self.failed: set[int] = set()
        self.cut: set[int] = set()
        fresh = not resume or not (self.run_path.exists() or self.path.exists() or self.data_path.exists())
        if not fresh:
            self._load()
        if fresh or not self.data_path.exists():  # emptied before the run record names this run
            with open(self.data_path, "w", newline="", encoding="utf-8") as handle:
                if fmt == "csv":
                    handle.write(_csv_line(CSV_COLUMNS))
                for line in self.lines.values():
                    handle.write(line)
        self._write_run(complete=False)
        self._file: IO[str] | None = open(self.data_path, "a", newline="", encoding="utf-8")

    @property
    def done(self) -> set[int]:
        """Indices of the records already in the output."""
        return set(self.lines)

    # -------------------------------------------------------------- resuming
    def _load(self) -> None:
        if not self.run_path.exists():
            raise ResumeError(
                f"cannot resume {self.path}: it has no run record ({self.run_path.name}), so it was not written by "
                "rfexplain batch -o; run without --resume to overwrite it"
            )
        try:
            saved = json.loads(self.run_path.read_text(encoding="utf-8"))
        except ValueError:
            raise ResumeError(f"cannot resume {self.path}: its run record {self.run_path} is not JSON") from None
        before = saved.get("run", {}) if isinstance(saved, dict) else {}
        differ = [k for k in sorted(set(before) | set(self.run)) if before.get(k) != self.run.get(k)]
        if differ:
            what = [_RUN_FIELDS.get(k, k) for k in differ]
            listed = what[0] if len(what) == 1 else f"{', '.join(what[:-1])} and {what[-1]}"
            raise ResumeError(
                f"cannot resume {self.path}: it was written by another run ({listed} "
                f"differ{'s' if len(what) == 1 else ''}); run without --resume to start over, or write to another -o"
            )
        if self.fmt == "parquet" and not self.data_path.exists() and self.path.exists():
            from rfexplain.core.instances import pandas
            from rfexplain.viz.frames import frame_to_records

            for record in frame_to_records(pandas().read_parquet(self.path)):
                self._keep(record.index, self._text(record), record)
            return
        if not self.data_path.exists():
            return
        with open(self.data_path, newline="", encoding="utf-8") as handle:
            text = handle.read()
        end = text.rfind("\n") + 1
        if end < len(text):  # a line torn by a crash: dropped, and cut from the file
            with open(self.data_path, "r+", newline="", encoding="utf-8") as handle:
                handle.truncate(len(text[:end].encode()))
            text = text[:end]
        if self.fmt == "csv":
            rows = list(csv.reader(io.StringIO(text)))
            if rows and tuple(rows[0]) != CSV_COLUMNS:
                raise ResumeError(f"cannot resume {self.path}: its header is not rfexplain batch's CSV columns")
            col = {name: k for k, name in enumerate(CSV_COLUMNS)}
            for row in rows[1:]:
                if len(row) != len(CSV_COLUMNS):
                    raise ResumeError(f"cannot resume {self.path}: a row has {len(row)} cells, not {len(CSV_COLUMNS)}")
                index = int(row[col["index"]])
                self.lines[index] = _csv_line(row)
                if row[col["error"]]:
                    self.failed.add(index)
                elif row[col["complete"]] == "False":
                    self.cut.add(index)
            return
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            try:
                doc = json.loads(line)
            except ValueError:
                raise ResumeError(f"cannot resume {self.data_path}: line {number} is not JSON") from None
            index = int(doc["index"])
            self.lines[index] = line
            if doc.get("error"):
                self.failed.add(index)
            elif doc.get("complete") is False:
                self.cut.add(index)

    def _write_run(self, complete: bool) -> None:
        doc = {"rfexplain_batch": 1, "format": self.fmt, "complete": complete, "run": self.run}

        def write(tmp: Path) -> None:
            tmp.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")

        _replace_atomically(self.run_path, write)

    # -------------------------------------------------------------- writing
    def _text(self, record: BatchRecord) -> str:
        if self.fmt == "csv":
            return _csv_line(csv_row(record))
        doc = record.to_dict()
        if self.fmt == "parquet" and isinstance(record.result, float) and math.isinf(record.result):
            doc["result_inf"] = True
        return json.dumps(doc, default=str) + "\n"

    def _keep(self, index: int, text: str, record: BatchRecord) -> None:
        self.lines[index] = text
        if record.error:
            self.failed.add(index)
        elif record.complete is False:
            self.cut.add(index)

    def write(self, record: BatchRecord) -> None:
        """Append one finished record and flush it to the operating system."""
        assert self._file is not None, "the output is closed"
        text = self._text(record)
        self._file.write(text)
        self._file.flush()
        self._keep(record.index, text, record)

    def finish(self, order: Sequence[int]) -> None:
        """Rewrite the output in the order of ``order`` (indices; the others after them), by a
        temporary file renamed over it, and mark the run complete."""
        self.close()
        rank = {i: k for k, i in enumerate(order)}
        indices = sorted(self.lines, key=lambda i: (rank.get(i, len(rank)), i))
        if self.fmt == "parquet":
            from rfexplain.viz.frames import write_parquet

            records = [self._record(json.loads(self.lines[i])) for i in indices]
            _replace_atomically(self.path, lambda tmp: write_parquet(records, str(tmp)))
            self.data_path.unlink(missing_ok=True)
        else:

            def write(tmp: Path) -> None:
                with open(tmp, "w", newline="", encoding="utf-8") as handle:
                    if self.fmt == "csv":
                        handle.write(_csv_line(CSV_COLUMNS))
                    handle.writelines(self.lines[i] for i in indices)

            _replace_atomically(self.path, write)
        self._write_run(complete=True)

    @staticmethod
    def _record(doc: dict[str, Any]) -> BatchRecord:
        if doc.pop("result_inf", False):
            doc["result"] = math.inf
        return BatchRecord(**doc)

    def close(self) -> None:
        """Close the file (what was written stays; the run is not marked complete)."""
        if self._file is not None:
            self._file.close()
            self._file = None
