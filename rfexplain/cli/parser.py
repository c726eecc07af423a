"""The argument parser of the ``rfexplain`` command: its subcommands and their options."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rfexplain.core.queries import QUERY_TABLE, Kind

__all__ = ["QUERY_CHOICES", "build_parser"]


#: Decision queries the command line answers: all but the formula-valued ones.
QUERY_CHOICES = tuple(q.name for q in QUERY_TABLE.values() if q.kind is not Kind.FORMULA)


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
    explain.add_argument(
        "--query",
        choices=QUERY_CHOICES,
        help="what to ask (default: inflated_sufficient_reason, each condition widened as far as it stays "
        "sufficient; sufficient_reasons with --all)",
    )
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
    band = _add_band_options(explain)
    band.add_argument(
        "--range",
        dest="range_free",
        help="instead of a query: the exact range of the prediction when only these features change "
        "(comma-separated names or indices)",
    )

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
        "--chunk-size",
        type=_positive,
        metavar="N",
        help="rows a worker takes at a time (default: about four tasks per worker, at most 64 rows); the rows of a "
        "chunk unfinished at a Ctrl-C are not kept, so 1 keeps every finished row, at some cost in throughput on "
        "quick queries; unused with --jobs 1",
    )
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
    _add_band_options(batch)
    report = sub.add_parser("report", help="explain many instances into one self-contained HTML report")
    report.add_argument("model", nargs="?", help="forest JSON or joblib/pickle model (or --model, or --dataset)")
    report.add_argument("--model", dest="model_option", help="the same as the positional model")
    _add_training_options(report, required=False)
    report.add_argument("--test-size", type=float, default=0.2, help="test fraction when training here (default 0.2)")
    report_rows = report.add_mutually_exclusive_group()
    report_rows.add_argument("--rows", help="a range START:STOP of the instance pool (default: all of it)")
    report_rows.add_argument(
        "--input",
        help="CSV of instances (optional header; an extra last column is the label); a bad row (too short, not a "
        "number, NaN) is a failed row of its own, only a header naming other columns refuses the file",
    )
    report.add_argument("--engine", default="sat", help="engine name (default sat)")
    report.add_argument(
        "--vote",
        choices=("auto", "soft", "hard"),
        default="auto",
        help="decision explained: auto (the model's own predict: soft for forests), soft, hard (majority vote)",
    )
    report.add_argument("--compare-engine", help="a second engine run on every row, to show whether they agree")
    report.add_argument("--max-sections", type=int, default=100, help="rows with a detailed section (default 100)")
    report.add_argument("--jobs", type=int, default=1, help="rows explained at once, in processes (-1: all cores)")
    report.add_argument("--out", required=True, help="the HTML file to write")
    _add_constraint_options(report)
    return parser


def _add_band_options(parser: argparse.ArgumentParser) -> Any:
    """The band a tree regressor's question is about (``--within``, ``--at-least``, ``--at-most``,
    ``--delta``); the option group, for more."""
    band = parser.add_argument_group("regression models (a tree regressor's prediction, docs/design.md)")
    band.add_argument(
        "--within", nargs=2, type=float, metavar=("LOW", "HIGH"), help="explain why the prediction is in [LOW, HIGH]"
    )
    band.add_argument("--at-least", type=float, help="explain why the prediction is at least this")
    band.add_argument("--at-most", type=float, help="explain why the prediction is at most this")
    band.add_argument(
        "--delta", type=float, help="default band: the prediction +- this (default: a tenth of the leaf values' spread)"
    )
    return band


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
