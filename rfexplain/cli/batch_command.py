"""``rfexplain batch``: one query about many instances, each record written as it finishes.

With ``-o`` the output is a :class:`~rfexplain.batch.StreamingOutput` (resumable with
``--resume``); on stdout the records come in row order, each as soon as the rows before it are
done. A Dask cluster (``--dask``) runs the workers when asked.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rfexplain.cli.models import instance_pool, is_regressor, rows_read_whole
from rfexplain.cli.options import UsageError, explainer_options, parse_rows, query_arguments
from rfexplain.cli.regression_command import band_arguments, regression_batch
from rfexplain.core.pyvalues import to_python
from rfexplain.core.queries import query as query_named

__all__ = ["cmd_batch"]


def cmd_batch(args: argparse.Namespace) -> int:
    """``rfexplain batch``: every record is written as soon as it is finished (see
    :class:`~rfexplain.batch.StreamingOutput` for ``-o``; on stdout, in row order as soon as the
    rows before it are done), so a Ctrl-C (exit 130) or a crash keeps every finished row, and
    ``--resume`` completes the output of an interrupted run."""
    import time

    from rfexplain.batch import StreamingOutput
    from rfexplain.explainer import Explainer
    from rfexplain.viz.run_metadata import run_metadata

    bad: dict[int, str] = {}
    forest, model, pool, pool_ids = instance_pool(args, args.model, bad)
    chosen = parse_rows(args.rows, len(pool)) if args.rows else range(len(pool))
    X = pool.iloc[list(chosen)] if hasattr(pool, "iloc") else pool[list(chosen)]
    ids = [pool_ids[k] for k in chosen]
    row_errors = {k: bad[c] for k, c in enumerate(chosen) if c in bad}
    spec = query_named(args.query)
    kwargs = query_arguments(spec, args, forest)
    if "target" in kwargs:
        forest.class_index(kwargs["target"])
    if args.limit is not None and not spec.enumerates:
        raise UsageError(f"--limit applies to enumerations, not {args.query}")
    suffix = Path(args.output).suffix if args.output else ""
    fmt = args.format or {".csv": "csv", ".parquet": "parquet"}.get(suffix, "jsonl")
    if fmt == "parquet" and not args.output:
        raise UsageError("--format parquet needs -o FILE")
    if args.resume and not args.output:
        raise UsageError("--resume needs -o FILE: the output of the run to complete")
    if fmt == "parquet":
        from rfexplain.viz.extras import require

        require("pyarrow", "parquet", "writing Parquet")
    if args.save_forest:
        Path(args.save_forest).write_text(forest.to_json())
    constraints = explainer_options(args, rows_read_whole(pool, bad))
    band = band_arguments(args, is_regressor(model))
    explainer: Any
    if is_regressor(model):
        explainer, asked = regression_batch(args, model, band)
    elif model is not None:
        names = list(forest.feature_names)
        explainer = asked = Explainer(model, engine=args.engine, feature_names=names, vote=args.vote, **constraints)
    else:
        explainer = asked = Explainer(forest, engine=args.engine, vote=args.vote, **constraints)
    started = time.perf_counter()
    output: Any = None
    summary = _BatchSummary()
    try:
        if args.output:
            run = _run_identity(asked, args.query, kwargs, args.timeout, fmt, X, ids)
            metadata = run_metadata(asked, args.query, {**band, **kwargs}) if fmt == "parquet" else None
            output = StreamingOutput(args.output, fmt, run, resume=args.resume, metadata=metadata)
            summary.resumed = len(output.done)
        todo = [k for k, i in enumerate(ids) if output is None or i not in output.done]
        if todo:
            rows = X.iloc[todo] if hasattr(X, "iloc") else X[todo]
            with _dask_backend(args.dask, args.jobs), contextlib.ExitStack() as stack:
                stream = explainer.iter_explain(
                    rows,
                    args.query,
                    n_jobs=-1 if args.dask else args.jobs,
                    chunk_size=args.chunk_size,
                    timeout=args.timeout,
                    progress=args.progress,
                    indices=[ids[k] for k in todo],
                    row_errors={n: row_errors[k] for n, k in enumerate(todo) if k in row_errors},
                    **band,
                    **kwargs,
                )
                stack.callback(stream.close)  # stops the workers at once on an interrupt
                if output is not None:
                    for record in stream:
                        output.write(record)
                        summary.add(record)
                else:
                    _write_in_order(stream, ids, fmt, summary)
        if output is not None:
            output.finish(ids)
            summary.failed, summary.cut = len(output.failed), len(output.cut)
    finally:
        if output is not None:
            output.close()
        explainer.close()
    elapsed = time.perf_counter() - started
    total = summary.resumed + summary.count
    resumed = f" ({summary.resumed} already in {args.output})" if summary.resumed else ""
    print(
        f"rfexplain batch: {total} instances{resumed}, {total - summary.failed - summary.cut} complete, "
        f"{summary.cut} cut by the budget, {summary.failed} failed, {elapsed:.2f}s (engine {args.engine}, "
        f"query {args.query}, {'dask ' + args.dask if args.dask else 'jobs ' + str(args.jobs)})",
        file=sys.stderr,
    )
    return 1 if summary.failed else 0


class _BatchSummary:
    """Counts of a batch's records, for its last line on stderr."""

    def __init__(self) -> None:
        self.resumed = self.count = self.failed = self.cut = 0

    def add(self, record: Any) -> None:
        self.count += 1
        self.failed += record.error is not None
        self.cut += record.error is None and record.complete is False


def _write_in_order(stream: Iterator[Any], ids: list[int], fmt: str, summary: _BatchSummary) -> None:
    """The records on stdout in row order, each as soon as every row before it is done; on an
    interrupt, the finished ones still waiting are written before it goes on."""
    import csv

    from rfexplain.batch import CSV_COLUMNS, csv_row

    writer = csv.writer(sys.stdout) if fmt == "csv" else None

    def emit(record: Any) -> None:
        summary.add(record)
        if writer is not None:
            writer.writerow(csv_row(record))
        else:
            sys.stdout.write(json.dumps(record.to_dict(), default=str) + "\n")
        sys.stdout.flush()

    if writer is not None:
        writer.writerow(CSV_COLUMNS)
    waiting: dict[int, Any] = {}
    next_row = 0
    try:
        for record in stream:
            waiting[record.index] = record
            while next_row < len(ids) and ids[next_row] in waiting:
                emit(waiting.pop(ids[next_row]))
                next_row += 1
    finally:
        rank = {i: k for k, i in enumerate(ids)}
        for index in sorted(waiting, key=rank.__getitem__):
            emit(waiting[index])


def _run_identity(
    explainer: Any, query: str, kwargs: dict[str, Any], timeout: Any, fmt: str, X: Any, ids: list[int]
) -> dict[str, Any]:
    """What ``--resume`` checks an output was written by: fingerprints of the forest, engine and
    its options (with the constraints), and of the rows; the query, its arguments, the timeout
    and the format."""
    import hashlib

    import numpy as np

    from rfexplain.batch import EngineSpec

    if hasattr(X, "to_json"):
        rows = X.to_json(orient="split", date_format="iso", default_handler=str)
    else:
        rows = json.dumps(np.asarray(X, dtype=np.float64).tolist())
    digest = hashlib.sha256(f"{rows}\0{ids}".encode()).hexdigest()
    return {
        "model": EngineSpec.of(explainer).key,
        "engine": explainer.engine_name,
        "query": query,
        "arguments": json.dumps({k: to_python(v) for k, v in sorted(kwargs.items())}, default=str),
        "timeout": timeout,
        "format": fmt,
        "rows": digest,
    }


@contextlib.contextmanager
def _dask_backend(address: str | None, jobs: int) -> Iterator[None]:
    """Inside: joblib runs on a Dask cluster (``address`` or a LocalCluster); a no-op without one."""
    if not address:
        yield
        return
    try:
        import joblib
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--dask needs dask.distributed: pip install 'rfexplain[cluster]'") from None
    with contextlib.ExitStack() as stack:
        if address == "local":
            workers = jobs if jobs > 0 else None
            cluster = stack.enter_context(
                LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            )
            stack.enter_context(Client(cluster))
        else:
            try:
                stack.enter_context(Client(address, timeout=30))
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        stack.enter_context(joblib.parallel_config(backend="dask"))
        yield
