"""The batch runner: :func:`iter_explain` (records as they finish) and :func:`explain_many` (all).

A checked :class:`~rfexplain.batch.plan.Plan` is answered in this process with one job, else by
the worker pool (:mod:`rfexplain.batch.pool`). Nothing finished is lost: records leave the workers
a chunk at a time (one instance at a time with one job) and :func:`iter_explain` yields each at
once; a Ctrl-C stops the workers (none outlives the batch) and :func:`explain_many` raises
:class:`BatchInterrupted`, a ``KeyboardInterrupt`` carrying the records finished before it (in
row order) and the indices of the others. A record still inside a worker's unfinished chunk is
not finished: ``chunk_size=1`` makes every instance its own chunk, at some cost in throughput on
quick queries.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Generator, Mapping, Sequence
from typing import Any

from rfexplain.batch.plan import Plan, make_plan
from rfexplain.batch.pool import run_parallel, uses_processes
from rfexplain.batch.worker import EngineSpec, ExplainerLike, explain_one
from rfexplain.core.records import BatchRecord
from rfexplain.decision import SoftVoteWarning, soft_vote_differs
from rfexplain.progress import Progress

__all__ = ["BatchInterrupted", "iter_explain", "explain_many"]


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


def _stream(
    explainer: ExplainerLike,
    plan: Plan,
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
        if not uses_processes(n_jobs, backend):  # in the order of the rows, the refused ones included
            refused = {r.index: r for r in plan.refused}
            items = {item[0]: item for item in plan.items}
            for index in plan.ids:
                if index in refused:
                    record = refused[index]
                else:
                    i, row, s, where = items[index]
                    record = explain_one(explainer, i, row, query, plan.args, timeout, s, where)
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
            for chunk_records in run_parallel(chunks, spec, query, plan.args, timeout, n_jobs, backend):
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
    plan = make_plan(explainer, X, query, query_args, timeout, n_jobs, chunk_size, indices, row_errors, labels)
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
    plan = make_plan(explainer, X, query, query_args, timeout, n_jobs, chunk_size, indices, row_errors, labels)
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
