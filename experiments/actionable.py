"""Actionable explanations: the inflated sufficient reason against the canonical AXp it widens.

``python -m experiments actionable [--quick]``. On the SAT paper's forests (Izza and
Marques-Silva (2021), Table 1 settings: 100 trees, the paper's depth, ``criterion="entropy"``)
and on scikit-learn's default forests (100 trees, unlimited depth) of the practitioners' datasets
(``practical_forests``), each under the default vote (``vote="auto"``: ``model.predict``'s soft
vote), the first test rows (80/20 split, seed 0) are explained by the SAT engine:

- CPU seconds of the canonical AXp, and of the inflation on top of it (the inflated query's time
  less the AXp's), and their ratio (target: at most 3 on every dataset);
- the share of the inflated reason's numeric conditions that are one-sided (a bound reached the end
  of the feature's range);
- per numeric condition, the fraction of the feature's data range (training data's min to max) it
  covers, inflated against the AXp's cell;
- CPU seconds of one shortest flip in the SAT engine (the first item of ``shortest_flips``:
  a minimum CXp and its flip boxes; target: mean at most 2 s on every forest of the SAT paper).

A query past ``--query-cap`` CPU seconds is stopped and counted in ``past_cap``.
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from experiments._common import (
    DATA_HELP,
    DATASETS_HELP,
    cpu_budget,
    data_dir,
    dataset_names,
    markdown_table,
    write_report,
)
from experiments._resume import NO_CHECKPOINT, RESUME_HELP, Checkpoint, checkpoint
from experiments.sat_table1 import DEPTHS, SEED, TREES

log = logging.getLogger("experiments.actionable")

QUICK_DATASETS = ("iris", "new-thyroid")
PRACTICAL = ("banknote", "ionosphere", "magic", "segmentation", "twonorm")
COLUMNS = (
    "dataset",
    "forest",
    "rows",
    "axp_cpu",
    "inflation_cpu",
    "ratio",
    "one_sided_pct",
    "range_cell_pct",
    "range_inflated_pct",
    "shortest_flip_cpu",
    "past_cap",
)


def _cpu(query: Any, cap: float) -> tuple[Any, float | None]:
    """``query(budget)``'s answer and CPU seconds, ``(None, None)`` when the cap stopped it."""
    from rfexplain import BudgetExpired

    budget = cpu_budget(cap)
    start = time.process_time()
    try:
        with budget.active():
            answer = query(budget)
    except BudgetExpired:
        return None, None
    return answer, time.process_time() - start


def _coverage(reason: Any, forest: Any, low: np.ndarray, high: np.ndarray) -> list[float]:
    """Per numeric condition, the fraction of the feature's data range ``[low, high]`` inside it."""
    out = []
    space = forest.space
    for f, states in reason.literals.items():
        if space.category_labels(f) is not None or high[f] <= low[f]:
            continue
        cuts = space.thresholds[f]
        a = cuts[min(states) - 1] if min(states) > 0 else -math.inf
        b = cuts[max(states)] if max(states) < len(cuts) else math.inf
        covered = max(0.0, min(b, high[f]) - max(a, low[f]))
        out.append(covered / (high[f] - low[f]))
    return out


def instance_row(explainer: Any, row: np.ndarray, cap: float, low: np.ndarray, high: np.ndarray) -> dict[str, Any]:
    """One test row: the AXp's and the inflation's CPU seconds, which inflated numeric conditions
    are one-sided, and the coverage of the AXp's cells and of the inflated conditions
    (``{"past_cap": True}`` when a query ran past ``cap``)."""
    instance = explainer.explain(row).instance
    engine = explainer.engine  # called directly, so that the CPU budget of _cpu is the active one
    axp, t_axp = _cpu(lambda _: engine.sufficient_reason(instance), cap)
    inflated, t_all = _cpu(lambda _: engine.inflated_sufficient_reason(instance), cap)
    if axp is None or inflated is None or t_axp is None or t_all is None:
        return {"past_cap": True}
    _, t_flip = _cpu(lambda budget: next(iter(engine.shortest_flips(instance, budget)), None), cap)
    n_states = explainer.forest.states_per_feature
    one_sided = [
        bool(min(states) == 0 or max(states) == n_states[f] - 1)
        for f, states in inflated.literals.items()
        if explainer.forest.space.category_labels(f) is None
    ]
    return {
        "axp_cpu": t_axp,
        "inflation_cpu": max(0.0, t_all - t_axp),
        "one_sided": one_sided,
        "cells": _coverage(axp, explainer.forest, low, high),
        "inflated": _coverage(inflated, explainer.forest, low, high),
        "flip_cpu": t_flip,
        "flip_past_cap": t_flip is None,
    }


def forest_row(
    name: str, kind: str, directory: Path, n_rows: int, cap: float, done: Checkpoint = NO_CHECKPOINT
) -> dict[str, Any]:
    """The row of one forest; each test row is a unit of ``done`` (kept by ``--resume``)."""
    import rfexplain as rx
    from rfexplain.datasets import train_forest

    if kind == "sat paper":
        trained = train_forest(
            name, trees=TREES, depth=DEPTHS[name], seed=SEED, test_size=0.2, data_dir=directory, criterion="entropy"
        )
    else:
        trained = train_forest(name, trees=100, depth=None, seed=0, test_size=0.2, data_dir=directory)
    X = trained.data.X
    low, high = X.min(axis=0), X.max(axis=0)
    explainer = rx.Explainer(trained.forest, engine="sat")
    rows = trained.data.X[np.sort(trained.test_rows)[:n_rows]]
    per = [
        done.unit((kind, name, k), partial(instance_row, explainer, row, cap, low, high)) for k, row in enumerate(rows)
    ]
    explainer.close()
    answered = [r for r in per if not r.get("past_cap")]
    past_cap = len(per) - len(answered)
    axp_times = [r["axp_cpu"] for r in answered]
    inflation_times = [r["inflation_cpu"] for r in answered]
    one_sided = [flag for r in answered for flag in r["one_sided"]]
    cells = [c for r in answered for c in r["cells"]]
    inflated_cov = [c for r in answered for c in r["inflated"]]
    flip_times = [r["flip_cpu"] for r in answered if r.get("flip_cpu") is not None]
    flips_past_cap = sum(bool(r.get("flip_past_cap")) for r in answered)
    mean = statistics.fmean
    axp_mean = mean(axp_times) if axp_times else None
    inflation_mean = mean(inflation_times) if inflation_times else None
    row = {
        "dataset": name,
        "forest": "SAT paper" if kind == "sat paper" else "default, 100 trees",
        "rows": len(rows),
        "axp_cpu": axp_mean,
        "inflation_cpu": inflation_mean,
        "ratio": inflation_mean / axp_mean if axp_mean and inflation_mean is not None else None,
        "one_sided_pct": 100 * mean(one_sided) if one_sided else None,
        "range_cell_pct": 100 * mean(cells) if cells else None,
        "range_inflated_pct": 100 * mean(inflated_cov) if inflated_cov else None,
        "shortest_flip_cpu": mean(flip_times) if flip_times else None,
        "past_cap": past_cap + flips_past_cap,
    }
    log.info("%s", row)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments actionable", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two small SAT-paper forests, 3 rows each")
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--datasets", nargs="+", help=DATASETS_HELP)
    parser.add_argument("--rows", type=int, help="test rows per forest (default 10)")
    parser.add_argument("--query-cap", type=float, default=120.0, help="CPU seconds per query (default 120)")
    parser.add_argument("--no-practical", action="store_true", help="only the SAT paper's forests")
    parser.add_argument("--results-dir", help="output folder (default experiments/results)")
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    args = parser.parse_args(argv)
    directory = data_dir(args.data)
    names = dataset_names(args.datasets, list(QUICK_DATASETS) if args.quick else list(DEPTHS), DEPTHS)
    n_rows = args.rows or (3 if args.quick else 10)
    from rfexplain.core import jit
    from rfexplain.warmup import compile_all

    if not jit.compiled_loops_ready():
        compile_all()
    forests = [(name, "sat paper") for name in names]
    if not (args.quick or args.no_practical or args.datasets):
        forests += [(name, "practical") for name in PRACTICAL]
    resume = {"quick": args.quick, "options": vars(args), "resume": args.resume, "directory": args.results_dir}
    with checkpoint("actionable", **resume) as done:
        rows = [
            done.unit(("forest", kind, name), partial(forest_row, name, kind, directory, n_rows, args.query_cap, done))
            for name, kind in forests
        ]
        ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
        flips = [r["shortest_flip_cpu"] for r in rows if r["forest"] == "SAT paper"]
        fast = sum(t is not None and t <= 2 for t in flips)
        summary = (
            f"Inflation within 3x the AXp's CPU time on {sum(r <= 3 for r in ratios)} of {len(ratios)} forests "
            f"(target: all). One shortest flip within 2 CPU s on average on {fast} of {len(flips)} SAT-paper "
            f"forests (target: all). {n_rows} rows per forest, default vote, CPU seconds of this process, queries "
            f"capped at {args.query_cap:g} CPU s."
        )
        markdown = "# Inflated sufficient reasons against the AXp (SAT engine)\n\n" + summary + "\n\n"
        markdown += markdown_table(rows, COLUMNS)
        write_report(
            "actionable", rows, markdown, quick=args.quick, options=vars(args), seed=SEED, directory=args.results_dir
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
