"""Explanations in original columns against the bare forest on encoded columns.

    python -m experiments pipelines [--quick] [--data DIR] [--results-dir DIR]

For each dataset a ``Pipeline(ColumnTransformer(OneHotEncoder(handle_unknown="ignore"),
StandardScaler), RandomForestClassifier)`` is fitted, and for test rows one sufficient reason
(AXp, SAT engine) is computed twice: by ``Explainer(pipeline)`` in the original columns, and by
``Explainer(pipeline[-1])`` on the encoded columns (the only option before pipelines were
supported). Reported per dataset: conditions per reason (ours; the bare forest's literals, and
the original columns they touch), time per reason, and how often a bare reason mentions two or
more indicator columns of one categorical column (a description through combinations of
indicators, whose free space contains impossible inputs such as two colours at once).

Datasets: the shipped synthetic loans table (four categorical columns), and benchmark datasets
made mixed-type by binning their first columns into quartile categories (``q1`` .. ``q4``).
Results: ``experiments/results/pipelines[_quick].{csv,md}``.
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings
from functools import partial
from typing import Any

import numpy as np

from experiments._common import DATA_HELP, Skip, data_dir, markdown_table, median, write_report
from experiments._resume import RESUME_HELP, checkpoint

log = logging.getLogger("experiments.pipelines")

BINNED = ("iris", "wine-recog", "banknote", "ecoli")


def _binned(name: str, folder: Any, n_binned: int) -> tuple[Any, Any, list[str]]:
    import pandas as pd

    from rfexplain import datasets

    data = datasets.load(name, folder)
    frame = pd.DataFrame(data.X, columns=list(data.feature_names))
    categorical = list(frame.columns[:n_binned])
    for column in categorical:
        frame[column] = pd.qcut(frame[column], 4, labels=["q1", "q2", "q3", "q4"], duplicates="drop").astype(str)
    return frame, pd.Series(data.y), categorical


def _cases(quick: bool, folder: Any) -> list[tuple[str, Any, Any, list[str]]]:
    from rfexplain.datasets import loans
    from rfexplain.pipeline_demo import CATEGORICAL

    X, y = loans()
    cases = [("loans", X, y, list(CATEGORICAL))]
    names = BINNED[:1] if quick else BINNED
    if not folder.is_dir():
        if quick:
            return cases
        raise Skip(f"the data folder {folder} (--data or $RFEXPLAIN_DATA) does not exist")
    for name in names:
        frame, labels, categorical = _binned(name, folder, 2)
        cases.append((f"{name} (2 binned)", frame, labels, categorical))
    return cases


def run_case(name: str, X: Any, y: Any, categorical: list[str], trees: int, depth: int, rows: int) -> dict[str, Any]:
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    import rfexplain as rx

    numeric = [c for c in X.columns if c not in categorical]
    X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.25, random_state=0)
    prep = ColumnTransformer(
        [("cat", OneHotEncoder(handle_unknown="ignore"), categorical), ("num", StandardScaler(), numeric)]
    )
    pipe = Pipeline(
        [("prep", prep), ("forest", RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0))]
    )
    pipe.fit(X_train, y_train)
    started = time.perf_counter()
    ours = rx.Explainer(pipe, engine="sat")
    build_ours = time.perf_counter() - started
    bare = rx.Explainer(pipe[-1], engine="sat")
    encoded = np.asarray(pipe[:-1].transform(X_test), dtype=np.float64)
    out_names = list(pipe[:-1].get_feature_names_out())
    group = [_group(n, categorical) for n in out_names]
    sizes, bare_sizes, bare_columns, combos, t_ours, t_bare = [], [], [], 0, [], []
    for k in range(min(rows, len(X_test))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            started = time.perf_counter()
            reason = ours.explain(X_test.iloc[k]).sufficient_reason()
            t_ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            theirs = bare.explain(encoded[k]).sufficient_reason()
            t_bare.append(time.perf_counter() - started)
        sizes.append(len(reason))
        bare_sizes.append(len(theirs))
        groups = [group[lit.feature] for lit in theirs.conditions]
        bare_columns.append(len(set(groups)))
        categorical_groups = [g for g in groups if g in categorical]
        combos += len(categorical_groups) != len(set(categorical_groups))
    n = len(sizes)
    return {
        "dataset": name,
        "trees": trees,
        "depth": depth,
        "rows": n,
        "columns": X.shape[1],
        "encoded_columns": len(out_names),
        "translate_s": round(build_ours, 3),
        "axp_size_original": round(float(np.mean(sizes)), 2),
        "axp_size_bare_literals": round(float(np.mean(bare_sizes)), 2),
        "axp_size_bare_columns": round(float(np.mean(bare_columns)), 2),
        "bare_with_indicator_combinations_pct": round(100.0 * combos / n, 1) if n else 0.0,
        "median_time_original_s": round(median(t_ours), 4),
        "median_time_bare_s": round(median(t_bare), 4),
    }


def _group(encoded_name: str, categorical: list[str]) -> str:
    """The original column of an encoded column (``cat__color_red`` -> ``color``)."""
    inner = encoded_name.split("__", 1)[1]
    for column in sorted(categorical, key=len, reverse=True):
        if inner.startswith(column + "_"):
            return column
    return inner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments pipelines", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="two datasets, 10 trees, 20 rows")
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--results-dir", help="write results here")
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    args = parser.parse_args(argv)
    trees, depth, rows = (10, 4, 20) if args.quick else (50, 6, 100)
    resume = {"quick": args.quick, "options": vars(args), "resume": args.resume, "directory": args.results_dir}
    with checkpoint("pipelines", **resume) as done:  # each case a unit
        results = [
            done.unit((case[0],), partial(run_case, *case, trees=trees, depth=depth, rows=rows))
            for case in _cases(args.quick, data_dir(args.data))
        ]
        columns = list(results[0])
        name = "pipelines"
        markdown = (
            "# Pipelines: sufficient reasons in original columns vs the bare forest on encoded columns\n\n"
            f"RandomForestClassifier(n_estimators={trees}, max_depth={depth}, random_state=0) after "
            "ColumnTransformer(OneHotEncoder(handle_unknown='ignore'), StandardScaler); SAT engine, one AXp "
            f"per test row (up to {rows}). `bare_with_indicator_combinations_pct`: share of bare reasons "
            "that describe one categorical column through two or more of its indicator columns.\n\n"
            + markdown_table(results, columns)
        )
        paths = write_report(
            name, results, markdown, quick=args.quick, options=vars(args), seed=0, directory=args.results_dir
        )
        log.info("wrote %s", ", ".join(str(p) for p in paths.values()))
    return 0
