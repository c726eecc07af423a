"""The worker pool of a batch: chunks handed to joblib, records back a chunk at a time.

Instances are cut into chunks and handed to :mod:`joblib`, each chunk a task of
:func:`~rfexplain.batch.worker.run_chunk`. The joblib backend is whatever is active: processes
(``loky``) by default, or a Dask cluster inside ``joblib.parallel_config(backend="dask")`` with a
``dask.distributed.Client`` open. :func:`run_parallel` yields each chunk's records as soon as the
chunk is finished.

If a worker process dies (a crash in native code, the out-of-memory killer), the chunks in flight
are retried instance by instance in fresh workers, so one poisonous instance costs only its own
record. With a ``timeout``, a task still running past its instances' deadlines plus a grace
(:func:`task_deadline`) has its worker killed and replaced the same way; the instance that
outlived its deadline gets ``complete=False, stopped_by="timeout"``.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from typing import Any

from rfexplain.batch.worker import EngineSpec, Item, run_chunk
from rfexplain.core.records import BatchRecord

__all__ = ["GRACE", "BUILD_GRACE", "task_deadline", "uses_processes", "run_parallel"]

log = logging.getLogger(__name__)


def uses_processes(n_jobs: int | None, backend: Any) -> bool:
    """Whether the batch runs in workers (processes, or a Dask cluster) rather than in this process."""
    import joblib
    from joblib.parallel import get_active_backend

    if backend is not None:
        return not (isinstance(backend, str) and backend in ("sequential",))
    active, active_n = get_active_backend()
    if "dask" in type(active).__name__.lower():
        return True
    return joblib.effective_n_jobs(n_jobs if n_jobs is not None else (active_n or 1)) > 1


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


def run_parallel(
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
            joblib.delayed(run_chunk)(cid, spec, chunk, query, args, timeout) for cid, chunk in tasks
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
