"""The ``rfexplain`` command line.

``rfexplain demo`` explains a few iris decisions with every available engine; ``rfexplain info``
describes a saved forest or model; ``rfexplain train`` fits a forest on a dataset and saves it as
JSON; ``rfexplain explain`` answers one query about one instance; ``rfexplain batch`` answers one
query about many instances in parallel and writes JSON lines, CSV or Parquet; ``rfexplain report``
writes a self-contained HTML report.

Errors: bad input (an :class:`~rfexplain.core.errors.RFExplainError`, a file that cannot be read
or written, or an argparse usage error) prints one line on stderr and exits with status 2. Any
other exception is a bug of rfexplain: one line asking to report it, exit status 1; ``--debug``
prints the traceback too. Ctrl-C prints one line and exits with status 130 (``batch`` has
written every record finished before it; ``--resume`` completes the output); running out of
memory prints one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rfexplain.core.budget import parse_bytes
from rfexplain.core.errors import RFExplainError
from rfexplain.core.jit import CompilingInBackgroundWarning
from rfexplain.core.pyvalues import to_python
from rfexplain.core.queries import QUERY_TABLE, Kind, Query
from rfexplain.core.queries import query as query_named

__all__ = ["main", "build_parser"]

#: Decision queries the command line answers: all but the formula-valued ones.
QUERY_CHOICES = tuple(q.name for q in QUERY_TABLE.values() if q.kind is not Kind.FORMULA)
#: Where bugs are reported (printed with an internal error).
ISSUES = "the rfexplain issue tracker"


class UsageError(RFExplainError):
    """Bad command-line input; reported on one line with exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rfexplain", description="Formal explanations of scikit-learn random forest decisions."
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="explain a few iris decisions with every available engine")
    demo.add_argument("--instances", type=int, default=3, help="number of test instances (default 3)")
    demo.add_argument("--engine", action="append", help="engine(s) to show (default: all available)")
    demo.add_argument(
        "--pipeline", action="store_true", help="explain a scikit-learn pipeline on the built-in loans table instead"
    )

    sub.add_parser(
        "warmup",
        help="compile every compiled loop into the per-user cache now (once per install; "
        "otherwise a background process does it on first use)",
    )

    info = sub.add_parser("info", help="statistics of a saved forest (JSON) or model (joblib/pickle)")
    info.add_argument("model", help="forest JSON, or a joblib/pickle file of a fitted model (trusted files only)")
    info.add_argument("--json", action="store_true", help="machine-readable output")

    train = sub.add_parser("train", help="fit a random forest on a dataset and save it as forest JSON")
    _add_training_options(train, required=True)
    train.add_argument("-o", "--output", required=True, help="where to write the forest JSON")

    explain = sub.add_parser("explain", help="answer one query about one instance")
    explain.add_argument("model", nargs="?", help="forest JSON or joblib/pickle model (or use --dataset)")
    _add_training_options(explain, required=False)
    where = explain.add_mutually_exclusive_group(required=True)
    where.add_argument("--index", type=int, help="row of the dataset (--dataset) to explain")
    where.add_argument(
        "--values",
        help="the instance: comma-separated feature values in the model's order, or name=value pairs "
        "in any order (matched by name; the only way to give a pipeline's original columns); write "
        "--values=-1.5,2,... when the first value is negative",
    )
    explain.add_argument("--query", choices=QUERY_CHOICES, default="sufficient_reason")
    explain.add_argument("--all", action="store_true", help="enumerate all reasons of the query's kind")
    explain.add_argument("--target", help="class label for contrastive_reasons (refused by the other queries)")
    explain.add_argument("--engine", default="sat", help="engine name (default sat)")
    explain.add_argument(
        "--vote",
        choices=("auto", "soft", "hard"),
        default="auto",
        help="decision explained: auto (the model's own predict: soft for forests), soft, hard (majority vote)",
    )
    explain.add_argument("--limit", type=_positive, help="at most this many reasons (at least 1)")
    explain.add_argument(
        "--timeout", type=_seconds, help="time budget in seconds (an enumeration stops, another query fails)"
    )
    explain.add_argument("--json", action="store_true", help="machine-readable output")
    _add_constraint_options(explain)

    batch = sub.add_parser(
        "batch",
        help="answer one query about many instances in parallel (JSON lines or CSV)",
        description="Explain many instances. With --dataset and no model file, a forest is trained on a "
        "train split and the test rows are explained; with a model file, the rows of --dataset or --input "
        "are explained. Each record is written as soon as it is finished, so a Ctrl-C (exit 130) keeps every "
        "finished row and --resume completes the output. A bad row of --input is its own error record. Exit "
        "status 1 when some instance failed (its record says why).",
    )
    batch.add_argument("model", nargs="?", help="forest JSON or joblib/pickle model (or use --dataset)")
    _add_training_options(batch, required=False)
    batch.add_argument("--test-size", type=float, default=0.2, help="test fraction when training here (default 0.2)")
    rows = batch.add_mutually_exclusive_group()
    rows.add_argument("--rows", help="a range START:STOP of the instance pool (default: all of it)")
    rows.add_argument("--input", help="CSV of instances (optional header; an extra last column is taken as the label)")
    batch.add_argument("--query", choices=QUERY_CHOICES, default="sufficient_reason")
    batch.add_argument("--target", help="class label for contrastive_reasons (refused by the other queries)")
    batch.add_argument("--engine", default="sat", help="engine name (default sat)")
    batch.add_argument(
        "--vote",
        choices=("auto", "soft", "hard"),
        default="auto",
        help="decision explained: auto (the model's own predict: soft for forests), soft, hard (majority vote)",
    )
    batch.add_argument(
        "--limit", type=_positive, help="at most this many reasons per instance (enumerations; at least 1)"
    )
    batch.add_argument("--timeout", type=_seconds, help="per-instance time budget in seconds")
    batch.add_argument("--jobs", type=int, default=1, help="parallel worker processes (-1: every core; default 1)")
    batch.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a Dask cluster: a scheduler address (tcp://host:8786) or 'local' for a LocalCluster of --jobs "
        "workers (needs rfexplain[cluster])",
    )
    batch.add_argument(
        "--format",
        choices=("jsonl", "csv", "parquet"),
        help="output format (default: from -o's suffix, else jsonl; parquet needs rfexplain[parquet] and -o)",
    )
    batch.add_argument(
        "-o",
        "--output",
        help="output file (default stdout), written record by record as they finish and put in row order at "
        "the end; OUT.run.json beside it records the run (for --resume)",
    )
    batch.add_argument(
        "--resume",
        action="store_true",
        help="complete the output of an interrupted run of this same command: explain only the rows not in -o "
        "(refused when the model, query, options or rows differ)",
    )
    batch.add_argument("--save-forest", help="also write the explained forest as JSON (reproducibility)")
    bar = batch.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress")
    bar.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")
    _add_constraint_options(batch)
    report = sub.add_parser("report", help="explain many instances into one self-contained HTML report")
    report.add_argument("model", nargs="?", help="forest JSON or joblib/pickle model (or --model, or --dataset)")
    report.add_argument("--model", dest="model_option", help="the same as the positional model")
    _add_training_options(report, required=False)
    report.add_argument("--test-size", type=float, default=0.2, help="test fraction when training here (default 0.2)")
    report_rows = report.add_mutually_exclusive_group()
    report_rows.add_argument("--rows", help="a range START:STOP of the instance pool (default: all of it)")
    report_rows.add_argument("--input", help="CSV of instances (optional header; an extra last column is the label)")
    report.add_argument("--engine", default="sat", help="engine name (default sat)")
    report.add_argument(
        "--vote",
        choices=("auto", "soft", "hard"),
        default="auto",
        help="decision explained: auto (the model's own predict: soft for forests), soft, hard (majority vote)",
    )
    report.add_argument("--compare-engine", help="a second engine run on every row, to show whether they agree")
    report.add_argument("--max-sections", type=int, default=100, help="rows with a detailed section (default 100)")
    report.add_argument("--out", required=True, help="the HTML file to write")
    _add_constraint_options(report)
    return parser


def _add_constraint_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--immutable",
        metavar="NAMES",
        help="comma-separated features that may not change: held at the instance's values in necessary and "
        "contrastive reasons, robustness and flips",
    )
    parser.add_argument(
        "--bounds",
        metavar="SPEC",
        help="value ranges of numeric features, name=low:high,... , or 'data' for the minimum and maximum of the "
        "rows at hand (--dataset's, else --input's): reasons then hold for inputs within them",
    )
    parser.add_argument(
        "--max-memory",
        metavar="BYTES",
        help="memory budget of the compilers, in bytes or with a K/M/G suffix (e.g. 6G), or 'none' "
        "(default: $RFEXPLAIN_MAX_MEMORY, else a quarter of the physical memory)",
    )


def _constraints(args: argparse.Namespace, rows: Any) -> dict[str, Any]:
    """The explainer's ``immutable=``, ``bounds=`` and ``data=`` from ``--immutable`` and ``--bounds``
    (``rows``: the rows ``--bounds data`` takes its ranges from, if any)."""
    options: dict[str, Any] = {}
    if getattr(args, "max_memory", None) is not None:
        try:
            options["max_memory"] = parse_bytes(args.max_memory)
        except ValueError as exc:
            raise UsageError(f"--max-memory: {exc}") from None
    if args.immutable:
        options["immutable"] = [name.strip() for name in args.immutable.split(",") if name.strip()]
    if args.bounds is None:
        return options
    if args.bounds.strip() == "data":
        if rows is None:
            raise UsageError("--bounds data takes the ranges from rows: give --dataset or --input")
        options.update(bounds="data", data=rows)
        return options
    bounds: dict[str, tuple[float, float]] = {}
    for item in args.bounds.split(","):
        name, _, span = item.rpartition("=")
        low, colon, high = span.partition(":")
        try:
            if not name.strip() or not colon:
                raise ValueError
            bounds[name.strip()] = (float(low), float(high))
        except ValueError:
            raise UsageError(f"--bounds takes name=low:high pairs or 'data', got {item!r}") from None
    options["bounds"] = bounds
    return options


def _at_least(convert: Callable[[str], Any], low: float, what: str) -> Callable[[str], Any]:
    """An argparse type: ``convert(text)``, refused (saying it expected ``what``) unless it is
    ``>= low`` (NaN included)."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not value >= low:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


_positive = _at_least(int, 1, "a positive integer")
_seconds = _at_least(float, 0, "a non-negative number of seconds")


def _add_training_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--dataset",
        required=required,
        help="dataset name: iris, wine, breast_cancer, digits, a built-in benchmark (ann-thyroid, magic, ...; "
        "see rfexplain.datasets.available()) or a CSV of --data",
    )
    parser.add_argument(
        "--data",
        help="folder of other CSVs, <name>.csv with the label last (default: $RFEXPLAIN_DATA); "
        "a CSV there overrides the built-in copy of that name",
    )
    parser.add_argument("--trees", type=int, default=20, help="number of trees (default 20)")
    parser.add_argument("--depth", type=int, default=4, help="maximum depth (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


# ---------------------------------------------------------------------- loading models
def _existing_file(path: str, what: str = "a model file") -> Path:
    """``path`` as a :class:`Path`, refused (:class:`UsageError`) when it is a directory (saying
    it is not ``what``) or absent."""
    file = Path(path)
    if file.is_dir():
        raise UsageError(f"{path} is a directory, not {what}")
    if not file.is_file():
        raise UsageError(f"no such file: {path}")
    return file


#: Bytes read from the start of a model file to tell forest JSON from joblib/pickle.
_HEAD_BYTES = 4096


def load_forest_or_model(path: str) -> tuple[Any, Any]:
    """``(forest, model)`` from a forest JSON (``model`` is None) or a joblib/pickle model file.

    An empty file, a directory and a file that is neither forest JSON nor a readable
    joblib/pickle model are each refused (:class:`UsageError`) with a message saying so.
    """
    from rfexplain.core.forest import Forest

    file = _existing_file(path)
    with file.open("rb") as handle:
        head = handle.read(_HEAD_BYTES).lstrip()
    if not head and file.stat().st_size <= _HEAD_BYTES:
        raise UsageError(f"{path} is empty: not a forest or a model file")
    if head[:1] in (b"{", b""):
        return Forest.from_json(file.read_text()), None
    import joblib

    try:
        model = joblib.load(file)
    except (ImportError, AttributeError) as exc:  # pickled from a library or version this Python lacks
        raise UsageError(
            f"cannot read {path}: its model needs what this Python lacks ({type(exc).__name__}: {exc})"
        ) from None
    except Exception as exc:  # unpickling reports every kind of corruption differently (e.g. "KeyError: 208")
        raise UsageError(
            f"cannot read {path}: it is not a readable joblib/pickle model (unpickling failed with "
            f"{type(exc).__name__}) nor forest JSON"
        ) from None
    from rfexplain.pipelines import PipelineModel, is_transforming_pipeline

    if is_transforming_pipeline(model):  # explained in its original columns
        return PipelineModel(model).forest, model
    return Forest.from_sklearn(model), model


def read_input(path: str, forest: Any, model: Any) -> Any:
    """The instances of ``--input``: a numeric array in the forest's column order, or, for a
    pipeline explained in its original columns, a DataFrame of those columns (matched by name);
    either way one extra last column is a label and is ignored."""
    from rfexplain import datasets
    from rfexplain.pipelines import is_transforming_pipeline

    if model is not None and is_transforming_pipeline(model):
        from rfexplain.core.instances import pandas

        frame = pandas().read_csv(_existing_file(path, "a CSV file of instances"), skipinitialspace=True)
        names = set(forest.feature_names)
        if len(frame.columns) == len(names) + 1 and frame.columns[-1] not in names:
            frame = frame.iloc[:, :-1]  # one extra last column is the label, as for a plain model
        return frame
    return datasets.read_instances(path, forest.feature_names)


def read_batch_input(path: str, forest: Any, model: Any) -> tuple[Any, dict[int, str]]:
    """``(instances, bad rows)`` of ``batch --input``: as :func:`read_input`, except that a row
    that is wrong on its own (too few or too many values, a value that is not a number) is kept
    as a placeholder and named in ``bad rows`` (row number -> what is wrong, with its line in the
    file), so that it gets its own error record. A header that does not name the model's columns
    concerns every row and is refused (:class:`~rfexplain.InvalidInstanceError`)."""
    import csv
    import io

    import numpy as np

    from rfexplain.core.instances import pandas, reorder_by_name
    from rfexplain.pipelines import is_transforming_pipeline

    file = _existing_file(path, "a CSV file of instances")
    with file.open(newline="") as handle:
        reader = csv.reader(handle)
        lines = [(reader.line_num, row) for row in reader if row]
    if not lines:
        raise UsageError(f"{path} has no data rows")
    names = list(forest.feature_names)
    width = len(names)
    name = file.name
    bad: dict[int, str] = {}
    if model is not None and is_transforming_pipeline(model):  # original columns, matched by name
        columns = [cell.strip() for cell in lines[0][1]]
        keep = columns[:-1] if len(columns) == width + 1 and columns[-1] not in set(names) else columns
        good: list[list[str]] = []
        for k, (line, row) in enumerate(lines[1:]):
            if len(row) != len(columns):
                bad[k] = f"line {line} of {name} has {len(row)} values, expected {len(columns)} (its header's)"
            else:
                good.append(row[: len(keep)])
        text = io.StringIO()
        csv.writer(text).writerows([keep] + good)
        frame = pandas().read_csv(io.StringIO(text.getvalue()), skipinitialspace=True)
        positions = [k for k in range(len(lines) - 1) if k not in bad]
        frame.index = positions
        frame = frame.reindex(range(len(lines) - 1))
        return frame, bad

    def number(cell: str) -> float | None:
        try:
            return float(cell.strip().strip('"'))
        except ValueError:
            return None

    first = [cell.strip().strip('"') for cell in lines[0][1]]
    numbers = [number(cell) for cell in first[:width]]
    header: list[str] | None = None
    if any(v is None for v in numbers) and (set(first) & set(names) or all(v is None for v in numbers)):
        header, lines = first, lines[1:]
    if not lines:
        raise UsageError(f"{path} has no data rows")
    X = np.full((len(lines), width), np.nan)
    for k, (line, row) in enumerate(lines):
        if len(row) not in (width, width + 1):
            bad[k] = f"line {line} of {name} has {len(row)} values, expected {width} (or {width + 1} with a label)"
            continue
        values = [number(cell) for cell in row[:width]]
        wrong = [j for j, v in enumerate(values) if v is None]
        if wrong:
            column = (header or names)[wrong[0]]
            bad[k] = f"line {line} of {name}: {column!r} is not a number: {row[wrong[0]].strip()!r}"
            continue
        X[k] = values
    if header is not None:
        X = reorder_by_name(X, header[:width], names, what=f"CSV file {path!r}")
    return X, bad


def train_forest(args: argparse.Namespace, test_size: float | None = None) -> Any:
    """Fit a RandomForestClassifier on ``args.dataset`` (see :func:`rfexplain.datasets.train_forest`)."""
    from rfexplain import datasets

    if args.trees < 1 or args.depth < 1:
        raise UsageError("--trees and --depth must be positive")
    return datasets.train_forest(
        args.dataset, trees=args.trees, depth=args.depth, seed=args.seed, test_size=test_size, data_dir=args.data
    )


# ---------------------------------------------------------------------- commands
def cmd_info(args: argparse.Namespace) -> int:
    forest, _ = load_forest_or_model(args.model)
    stats = forest.statistics()
    stats["classes"] = list(forest.classes)
    stats["source"] = forest.source
    if args.json:
        print(json.dumps(stats, default=str))
    else:
        for key, value in stats.items():
            print(f"{key:>18}: {value}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    trained = train_forest(args)
    forest = trained.forest
    Path(args.output).write_text(forest.to_json())
    print(
        f"wrote {args.output}: {forest!r}, "
        f"agreement with sklearn predict {forest.agreement(trained.data.X, trained.model)}"
    )
    return 0


def _instance(args: argparse.Namespace, model: Any, data: Any) -> Any:
    from rfexplain.pipelines import is_transforming_pipeline

    if args.values is not None:
        items = args.values.split(",")
        if all("=" in item for item in items):
            return _named_values(items)
        if model is not None and is_transforming_pipeline(model):
            raise UsageError("a pipeline's instance is given by its original columns: --values name=value,...")
        try:
            return [float(v) for v in items]
        except ValueError:
            raise UsageError(
                f"--values must be comma-separated numbers or name=value pairs, got {args.values!r}"
            ) from None
    if data is None:
        raise UsageError("--index needs --dataset (the rows to index into)")
    if not 0 <= args.index < len(data.X):
        raise UsageError(f"--index must be in [0, {len(data.X) - 1}], got {args.index}")
    return data.X[args.index]


def _named_values(items: list[str]) -> dict[str, Any]:
    """``name=value`` items as one row matched by name; a value is read as a CSV reader would
    (an integer, else a number, else the text itself: a category)."""
    row: dict[str, Any] = {}
    for item in items:
        name, _, text = item.rpartition("=")
        name, text = name.strip(), text.strip()
        if name in row:
            raise UsageError(f"--values names {name!r} twice")
        value: Any = text
        for parse in (int, float):
            try:
                value = parse(text)
                break
            except ValueError:
                continue
        row[name] = value
    return row


def cmd_explain(args: argparse.Namespace) -> int:
    from rfexplain import datasets
    from rfexplain.explainer import Explainer

    data = None
    if args.model:
        forest, model = load_forest_or_model(args.model)
        if args.dataset:
            data = datasets.load(args.dataset, args.data)
    elif args.dataset:
        trained = train_forest(args)
        forest, model, data = trained.forest, trained.model, trained.data
    else:
        raise UsageError("give a model file or --dataset")
    spec = query_named(args.query)
    if args.all and spec.all_of is not None:
        spec = query_named(spec.all_of)
    query = spec.name
    kwargs = _query_arguments(spec, args, forest)
    if args.limit is not None and not spec.enumerates:
        raise UsageError(f"--limit applies to enumerations, not {query} (it answers one result)")
    explainer = Explainer(
        model if model is not None else forest,
        engine=args.engine,
        feature_names=list(forest.feature_names),  # a dataset's names, for a model fitted on arrays
        vote=args.vote,
        **_constraints(args, None if data is None else data.X),
    )
    decision = explainer.explain(_instance(args, model, data))
    result = decision.ask(query, timeout=args.timeout, **kwargs)
    output: dict[str, Any] = {
        "prediction": to_python(decision.prediction),
        "sklearn_prediction": to_python(decision.sklearn_prediction),
        "engine": args.engine,
        "query": query,
    }
    if spec.kind is Kind.NUMBER:
        output["robustness"] = None if result == math.inf else result
    elif hasattr(result, "complete"):
        output["reasons"] = [r.to_dict() for r in result]
        output["complete"] = result.complete
        output["stopped_by"] = result.stopped_by
    else:
        output["reasons"] = [] if result is None else [result.to_dict()]
    explainer.close()
    if args.json:
        print(json.dumps(output, default=str))
        return 0
    print(f"prediction: {output['prediction']!r} (engine {args.engine}, query {query})")
    if spec.kind is Kind.NUMBER:
        print(f"{query}: {'cannot be flipped' if result == math.inf else result}")
    else:
        if not output["reasons"]:
            if output.get("complete") is False:  # none found yet, not none at all
                print("no reason found before the budget ran out")
            else:
                print("no reason: the decision cannot be changed that way")
        for reason in output["reasons"]:
            print(f"  {reason['text']}")
            if reason.get("actions"):  # a flip: the change that gets the other class
                print(f"    {reason['actions']}")
        if output.get("complete") is False:
            print(f"  (incomplete: stopped by {output['stopped_by']})")
    return 0


def _query_arguments(spec: Query, args: argparse.Namespace, forest: Any) -> dict[str, Any]:
    """The query's ``target=`` and ``limit=`` from ``--target`` and ``--limit``: a target is
    required by the queries that take one and refused by the others (:class:`UsageError`);
    ``--limit`` is passed as it is (checked by the caller)."""
    kwargs: dict[str, Any] = {}
    if spec.takes_target:
        if args.target is None:
            raise UsageError(f"{spec.name} needs --target CLASS")
        kwargs["target"] = _label(forest, args.target)
    elif args.target is not None:
        takers = [q.name for q in QUERY_TABLE.values() if q.takes_target]
        raise UsageError(f"{spec.name} takes no target: --target is for {', '.join(takers)}")
    if args.limit is not None:
        kwargs["limit"] = args.limit
    return kwargs


def _parse_rows(text: str, n: int) -> range:
    start, sep, stop = text.partition(":")
    try:
        lo = int(start) if start.strip() else 0
        hi = int(stop) if stop.strip() else n
    except ValueError:
        raise UsageError(f"--rows must be START:STOP (integers), got {text!r}") from None
    if not sep:
        hi = lo + 1
    if sep and lo >= hi:
        raise UsageError(f"--rows {text!r} selects no instance: START must be below STOP")
    if not 0 <= lo < hi <= n:
        raise UsageError(f"--rows {text!r} is outside the {n} instances available")
    return range(lo, hi)


def cmd_batch(args: argparse.Namespace) -> int:
    """``rfexplain batch``: every record is written as soon as it is finished (see
    :class:`~rfexplain.batch.StreamingOutput` for ``-o``; on stdout, in row order as soon as the
    rows before it are done), so a Ctrl-C (exit 130) or a crash keeps every finished row, and
    ``--resume`` completes the output of an interrupted run."""
    import time

    from rfexplain.batch import StreamingOutput
    from rfexplain.explainer import Explainer

    bad: dict[int, str] = {}
    forest, model, pool, pool_ids = _instance_pool(args, args.model, bad)
    chosen = _parse_rows(args.rows, len(pool)) if args.rows else range(len(pool))
    X = pool.iloc[list(chosen)] if hasattr(pool, "iloc") else pool[list(chosen)]
    ids = [pool_ids[k] for k in chosen]
    row_errors = {k: bad[c] for k, c in enumerate(chosen) if c in bad}
    spec = query_named(args.query)
    kwargs = _query_arguments(spec, args, forest)
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
    good = [k for k in range(len(pool)) if k not in bad]  # --bounds data: the rows read whole
    constraints = _constraints(args, pool.iloc[good] if hasattr(pool, "iloc") else pool[good])
    if model is not None:
        names = list(forest.feature_names)
        explainer = Explainer(model, engine=args.engine, feature_names=names, vote=args.vote, **constraints)
    else:
        explainer = Explainer(forest, engine=args.engine, vote=args.vote, **constraints)
    started = time.perf_counter()
    output: Any = None
    summary = _BatchSummary()
    try:
        if args.output:
            run = _run_identity(explainer, args.query, kwargs, args.timeout, fmt, X, ids)
            output = StreamingOutput(args.output, fmt, run, resume=args.resume)
            summary.resumed = len(output.done)
        todo = [k for k, i in enumerate(ids) if output is None or i not in output.done]
        if todo:
            rows = X.iloc[todo] if hasattr(X, "iloc") else X[todo]
            with _dask_backend(args.dask, args.jobs), contextlib.ExitStack() as stack:
                stream = explainer.iter_explain(
                    rows,
                    args.query,
                    n_jobs=-1 if args.dask else args.jobs,
                    timeout=args.timeout,
                    progress=args.progress,
                    indices=[ids[k] for k in todo],
                    row_errors={n: row_errors[k] for n, k in enumerate(todo) if k in row_errors},
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


def _instance_pool(
    args: argparse.Namespace, path: str | None, bad: dict[int, str] | None = None
) -> tuple[Any, Any, Any, list[int]]:
    """``(forest, model, rows, row ids)`` of ``batch`` and ``report``: a saved model or a forest
    trained on ``--dataset``, and the rows to explain (``--input`` CSV, else the dataset's rows).
    Given ``bad``, an ``--input`` row that is wrong on its own is named there (row number ->
    what is wrong, :func:`read_batch_input`) instead of refusing the file."""
    from rfexplain import datasets

    pool: Any = None
    pool_ids: list[int] = []
    if path:
        forest, model = load_forest_or_model(path)
        if args.dataset and not args.input:
            pool = datasets.load(args.dataset, args.data).X
            pool_ids = list(range(len(pool)))
    elif args.dataset:
        forest, model, pool, pool_ids = _train_split(args)
    else:
        raise UsageError("give a model file or --dataset")
    if args.input:
        if bad is None:
            pool = read_input(args.input, forest, model)
        else:
            pool, found = read_batch_input(args.input, forest, model)
            bad.update(found)
        pool_ids = list(range(len(pool)))
    if pool is None:
        raise UsageError("give the instances: --dataset (its rows) or --input CSV")
    return forest, model, pool, pool_ids


def cmd_report(args: argparse.Namespace) -> int:
    from rfexplain.explainer import Explainer
    from rfexplain.viz.report import write_report

    forest, model, pool, pool_ids = _instance_pool(args, args.model or args.model_option)
    chosen = _parse_rows(args.rows, len(pool)) if args.rows else range(len(pool))
    source = model if model is not None else forest
    names = list(forest.feature_names)
    constraints = _constraints(args, pool)
    with Explainer(source, engine=args.engine, feature_names=names, vote=args.vote, **constraints) as explainer:
        rows = write_report(
            explainer,
            pool.iloc[list(chosen)] if hasattr(pool, "iloc") else pool[list(chosen)],  # a pipeline's original rows
            args.out,
            indices=[pool_ids[k] for k in chosen],
            compare_engine=args.compare_engine,
            max_sections=args.max_sections,
        )
    failed = sum(1 for r in rows if r.error)
    print(f"wrote {args.out}: {len(rows)} rows, {failed} failed", file=sys.stderr)
    return 1 if failed else 0


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


def _train_split(args: argparse.Namespace) -> tuple[Any, Any, Any, list[int]]:
    """Fit on a train split of ``args.dataset``: ``(forest, model, test rows, their row numbers)``."""
    import numpy as np

    if not 0 < args.test_size < 1:
        raise UsageError(f"--test-size must be in (0, 1), got {args.test_size}")
    trained = train_forest(args, test_size=args.test_size)
    test = np.sort(trained.test_rows)
    return trained.forest, trained.model, trained.data.X[test], [int(i) for i in test]


def _label(forest: Any, text: str) -> Any:
    for c in forest.classes:
        if str(c) == text:
            return c
    return text


def cmd_warmup(args: argparse.Namespace) -> int:
    """Compile every compiled loop into the cache, one line per step."""
    from rfexplain.core.jit import cache_dir
    from rfexplain.warmup import compile_all

    print(f"compiling rfexplain's loops into {cache_dir()} (once per install)", flush=True)
    total = compile_all(lambda step, seconds: print(f"  {step}: {seconds:.1f} CPU s", flush=True))
    print(f"ready ({total:.1f} CPU s)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse exits with 2 on a usage error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    commands = {
        "info": cmd_info,
        "train": cmd_train,
        "explain": cmd_explain,
        "batch": cmd_batch,
        "report": cmd_report,
        "warmup": cmd_warmup,
    }
    with warnings.catch_warnings():
        default_show = warnings.showwarning

        def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
            """The background compilation's notice as one ``rfexplain: note:`` line on stderr."""
            if issubclass(category, CompilingInBackgroundWarning):
                print(f"rfexplain: note: {message}", file=sys.stderr)
            else:
                default_show(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        return _run(args, commands)


def _run(args: argparse.Namespace, commands: dict[str, Any]) -> int:
    try:
        if args.command == "demo":
            if args.pipeline:
                from rfexplain.pipeline_demo import run_pipeline_demo

                return run_pipeline_demo(n_instances=args.instances)
            from rfexplain.demo import run_demo

            return run_demo(n_instances=args.instances, engines=args.engine)
        return commands[args.command](args)
    except BrokenPipeError:
        # the reader of our output stopped (``rfexplain batch ... | head``): end quietly, as
        # command-line tools do, without a second error when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (RFExplainError, OSError) as exc:
        print(f"rfexplain: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rfexplain: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print("rfexplain: error: out of memory; try a smaller forest or the sat engine", file=sys.stderr)
        return 2
    except Exception as exc:
        if args.debug:
            traceback.print_exc(file=sys.stderr)
        message = " ".join(str(exc).split())
        print(
            f"rfexplain: internal error ({type(exc).__name__}: {message}); this is a bug, please report it to "
            f"{ISSUES}{'' if args.debug else ' with the output of --debug'}",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
